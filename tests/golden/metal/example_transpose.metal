#include <metal_stdlib>
using namespace metal;
typedef float T;
// Transpose a 2D array through workgroup memory, with a declared workgroup size.
//
// @kernel(workgroupsize=...) fixes each group at TILE x TILE work-items: a launch
// needs no workgroupsize= (another size is an NDRangeError), and @groupsize(d) is
// a compile-time constant, so it sizes the tile. One padding column keeps the
// transposed reads on different memory banks of a GPU.
//
// A work-item reads in[i][j] but writes another element of out, so the kernel
// opts out of the implicit bounds mask and checks both coordinates itself: every
// work-item of a partial group still loads its slot and reaches the barrier.


#line 11 "portakern/examples/transpose.pk"
[[kernel, max_total_threads_per_threadgroup(256)]] void transpose(    device float* out [[buffer(0)]],
    const device float* in [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    constant long& pk_n1 [[buffer(3)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 12 "portakern/examples/transpose.pk"
threadgroup T tile[16][16 + 1];

    
    
#line 13 "portakern/examples/transpose.pk"
long li = ((long)thread_position_in_threadgroup.y), lj = ((long)thread_position_in_threadgroup.x);
    long gi = ((long)threadgroup_position_in_grid.y), gj = ((long)threadgroup_position_in_grid.x);
    const long h = pk_n0;
    const long w = pk_n1;
    const long i = gi * 16 + li;
    const long j = gj * 16 + lj;
    if (i < h && j < w) {
        tile[li][lj] = in[i * w + j];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    // The group writes its tile to the mirrored block of out: out[oi][oj] = in[oj][oi].
    const long oi = gj * 16 + li;
    const long oj = gi * 16 + lj;
    if (oi < w && oj < h) {
        out[oi * h + oj] = tile[lj][li];
    }

}
