#include <metal_stdlib>
using namespace metal;
typedef float T;
// A fused elementwise expression: y = a*x*x + b*x + c.
//
// NumPy evaluates this as five passes over memory with four temporaries; the
// kernel reads x once and writes y once, which is where a fused kernel wins.


#line 5 "portakern/examples/polynomial.pk"
[[kernel]] void polynomial(    device float* y [[buffer(0)]],
    const device float* x [[buffer(1)]],
    constant float& a [[buffer(2)]],
    constant float& b [[buffer(3)]],
    constant float& c [[buffer(4)]],
    constant long& pk_n0 [[buffer(5)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 6 "portakern/examples/polynomial.pk"
const long i = (((long)thread_position_in_grid.x));
    const T v = x[i];
    y[i] = a * v * v + b * v + c;
}
}
