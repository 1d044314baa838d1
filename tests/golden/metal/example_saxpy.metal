#include <metal_stdlib>
using namespace metal;
typedef float T;
// saxpy: y = a * x + y, dtype-generic.
//
// T is a type variable: it is bound from the dtype of y and x at launch
// (float32, float64, int32, ...), and each binding compiles its own variant.


#line 5 "portakern/examples/saxpy.pk"
[[kernel]] void saxpy(    device float* y [[buffer(0)]],
    const device float* x [[buffer(1)]],
    constant float& a [[buffer(2)]],
    constant long& pk_n0 [[buffer(3)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 6 "portakern/examples/saxpy.pk"
const long i = (((long)thread_position_in_grid.x));
    y[i] = a * x[i] + y[i];
}
}
