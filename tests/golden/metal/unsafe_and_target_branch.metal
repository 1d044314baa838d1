#include <metal_stdlib>
using namespace metal;


#line 1 "tests/unsafe_and_target_branch.pk"
[[kernel]] void branch(    device float* y [[buffer(0)]],
    constant long& pk_n0 [[buffer(1)]],
    constant long& pk_n1 [[buffer(2)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{


    
#line 2 "tests/unsafe_and_target_branch.pk"
long i = ((long)thread_position_in_grid.y), j = ((long)thread_position_in_grid.x);

    
#line 6 "tests/unsafe_and_target_branch.pk"
y[i * pk_n1 + j] = 2.0f;


    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 0 * 0.5;

    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 1 * 0.5;

    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 2 * 0.5;


}
