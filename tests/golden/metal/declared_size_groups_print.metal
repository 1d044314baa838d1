#include <metal_stdlib>
using namespace metal;
#define PK_FP_CONTRACT_OFF 1
#pragma clang fp contract(off)


#line 1 "tests/declared_size_groups_print.pk"
[[kernel, max_total_threads_per_threadgroup(32)]] void blocks(    device float* y [[buffer(0)]],
    const device float* a [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    constant long& pk_n1 [[buffer(3)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 2 "tests/declared_size_groups_print.pk"
threadgroup float tile[8][4];
#line 3 "tests/declared_size_groups_print.pk"
threadgroup float total;
const bool pk_active = ((long)thread_position_in_grid.y) < pk_n0 && ((long)thread_position_in_grid.x) < pk_n1;

    
    
    
#line 4 "tests/declared_size_groups_print.pk"
long i = ((long)thread_position_in_grid.y),  j = ((long)thread_position_in_grid.x);
    long li = ((long)thread_position_in_threadgroup.y),  lj = ((long)thread_position_in_threadgroup.x);if (pk_active) {
    if (li == 0 && lj == 0) total = 0;
    tile[li][lj] = a[i * pk_n1 + j];}
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);if (pk_active) {
    y[i * pk_n1 + j] = tile[li][lj] * a[0] + (float)(((long)threadgroups_per_grid.y) * (((long)threadgroups_per_grid.y) * ((long)threadgroups_per_grid.x)));
    if (i == 0 && j == 0) ((void)0);
}
}
