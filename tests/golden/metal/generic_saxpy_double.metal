#include <metal_stdlib>
using namespace metal;
typedef double T;


#line 1 "tests/generic_saxpy_double.pk"
[[kernel]] void saxpy(    device double* y [[buffer(0)]],
    const device double* x [[buffer(1)]],
    constant double& a [[buffer(2)]],
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
    
#line 2 "tests/generic_saxpy_double.pk"
const long i = (((long)thread_position_in_grid.x));
    y[i] = a * x[i] + y[i];
}
}
