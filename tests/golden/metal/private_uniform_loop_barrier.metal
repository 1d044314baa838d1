#include <metal_stdlib>
using namespace metal;
#line 1 "tests/private_uniform_loop_barrier.pk"
#define TILE 8
float clampf(float v) { return fmin(fmax(v, 0.0f), 1.0f); }


#line 3 "tests/private_uniform_loop_barrier.pk"
[[kernel]] void smooth(    device float* y [[buffer(0)]],
    const device float* x [[buffer(1)]],
    constant int& steps [[buffer(2)]],
    constant long& pk_n0 [[buffer(3)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 4 "tests/private_uniform_loop_barrier.pk"
threadgroup float tile[TILE + 2];
const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;

    
     
#line 5 "tests/private_uniform_loop_barrier.pk"
float  acc[2];
     long  li ;
     long  i ;if (pk_active) {
#line 6 "tests/private_uniform_loop_barrier.pk"
li =  (((long)thread_position_in_threadgroup.x));
#line 7 "tests/private_uniform_loop_barrier.pk"
i =  (((long)thread_position_in_grid.x));
    tile[li + 1] = x[i];
    acc[0] = 0;}
    for (int s = 0; s < steps; ++s) {
        threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
        float  left ;float  right ;if (pk_active) {left =  tile[li];right =  tile[li + 2];
        acc[0] += clampf(0.5f * (left + right));}
        threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    }if (pk_active) {
    y[i] = acc[0] + sqrt(fabs(tanh(x[i])));
}
}
