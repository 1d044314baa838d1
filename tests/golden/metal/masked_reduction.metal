#include <metal_stdlib>
using namespace metal;
#line 1 "tests/masked_reduction.pk"
#define WG 128
// Declarations before a barrier are hoisted above their masked segment.


#line 3 "tests/masked_reduction.pk"
[[kernel]] void block_sum(    device float* partial [[buffer(0)]],
    const device float* x [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 4 "tests/masked_reduction.pk"
threadgroup float buf[WG];
const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;

    
     
#line 5 "tests/masked_reduction.pk"
const long n = pk_n0;
     long  i ;
     long  li ;
    float  v ;float  unused;if (pk_active) {
#line 6 "tests/masked_reduction.pk"
i =  (((long)thread_position_in_grid.x));
#line 7 "tests/masked_reduction.pk"
li =  (((long)thread_position_in_threadgroup.x));
#line 8 "tests/masked_reduction.pk"
v =  x[i];
    buf[li] = v;}
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    for (long s = WG / 2; s > 0; s >>= 1) {if (pk_active) {
        if (li < s && i + s < n) buf[li] += buf[li + s];}
        threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    }if (pk_active) {
    if (li == 0) partial[(((long)threadgroup_position_in_grid.x))] = buf[0];
}
}
