#include <metal_stdlib>
using namespace metal;
template <typename A, typename B> inline decltype(true ? A() : B()) min(A a, B b) { typedef decltype(true ? A() : B()) C; return metal::min((C)a, (C)b); }
template <typename A, typename B> inline decltype(true ? A() : B()) max(A a, B b) { typedef decltype(true ? A() : B()) C; return metal::max((C)a, (C)b); }
#define PK_GR_FLOATING(T) ((T)0.5 != (T)0)
#define PK_GR_SIGNED(T) ((T)-1 < (T)0)
#define PK_GR_TOP(T) ((T)(((ulong)1 << (sizeof(T) * 8 - 1)) - 1))
#define PK_GR_ID_add(T) ((T)0)
#define PK_GR_ID_min(T) (PK_GR_FLOATING(T) ? (T)(INFINITY) : PK_GR_SIGNED(T) ? PK_GR_TOP(T) : (T)-1)
#define PK_GR_ID_max(T) (PK_GR_FLOATING(T) ? (T)(-INFINITY) : PK_GR_SIGNED(T) ? (T)(-PK_GR_TOP(T) - 1) : (T)0)
#define PK_GR_OP_add(a, b) ((a) + (b))
#define PK_GR_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define PK_GR_OP_max(a, b) ((a) < (b) ? (b) : (a))
typedef float T;
// A warp-shuffle reduction, in the style of cuda-samples' reduce5/reduce6 and the
// warpReduceSum of llm.c's softmax: one partial sum per workgroup.
//
// Each work-item holds one element; the subgroup (a CUDA warp, a Metal SIMD-group,
// an OpenCL sub-group, 32 work-items on the CPU) adds its values with a tree of
// @shuffle_down, with no workgroup memory and no barrier; lane 0 of each subgroup
// leaves its sum in workgroup memory, and after one barrier the subgroups' sums are
// added with @subgroupreduce. Running the kernel again on its own partial results
// reduces further, until one value is left (the catalog's run() does that).
//
// Shuffles are collectives: every work-item of the group reaches them, in
// group-uniform control flow (the loop over o depends on @subgroupsize() only).
// Work-items past the end of the ndrange hold zero in every shuffle, so a partial
// last group needs no special case; GROUP is a multiple of every subgroup size.


#line 15 "portakern/examples/warp_reduce.pk"
[[kernel]] void warp_sum(    device float* partial [[buffer(0)]],
    const device float* x [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 16 "portakern/examples/warp_reduce.pk"
threadgroup T sums[256];
#line 19 "portakern/examples/warp_reduce.pk"

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;

    
    
#line 17 "portakern/examples/warp_reduce.pk"
T  v ;if (pk_active) {v =  x[(((long)thread_position_in_grid.x))];}
    for (int o = (int)32L / 2; o > 0; o /= 2) {
        T other; {
    const uint pk_n = threads_per_threadgroup.x * threads_per_threadgroup.y * threads_per_threadgroup.z, pk_t = (uint)((((long)thread_position_in_threadgroup.x)));
    const int pk_lane = (int)(pk_t & 31u);
    const uint pk_w = pk_n - (pk_t - pk_lane) < 32u ? pk_n - (pk_t - pk_lane) : 32u;
    const T pk_v = pk_active ? (T)(v) : (T)0;
    const int pk_a = pk_active ? (int)( o) : 0;
    const int pk_src = (pk_a < 0 ? -1 : pk_lane + pk_a);
    const bool pk_ok = (uint)pk_src < pk_w;
    const T pk_u = simd_shuffle_down(pk_v, (ushort)(pk_ok ? pk_a : 0));
    other = pk_ok ? pk_u : pk_v;
}
#line 19 "portakern/examples/warp_reduce.pk"
;if (pk_active) {
        v += other;
    }}if (pk_active) {
    if ((((((long)thread_position_in_threadgroup.x))) & 31L) == 0) {
        sums[(((((long)thread_position_in_threadgroup.x))) >> 5)] = v;
    }}
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    // The subgroups that hold elements of the ndrange wrote their slot.
     const long items = min((long)256,
                                    (long)(pk_n0) - (((long)threadgroup_position_in_grid.x)) * 256);
     const long count = (items + 32L - 1) / 32L;
    T  mine ;if (pk_active) {mine =  0;
    for (long k = (((((long)thread_position_in_threadgroup.x))) & 31L); k < count; k += 32L) {
        mine += sums[k];
    }}
    T total; {
    const T pk_v = pk_active ? (T)( mine) : PK_GR_ID_add(T);
    total = simd_sum(pk_v);
}
#line 34 "portakern/examples/warp_reduce.pk"
;if (pk_active) {
    if ((((long)thread_position_in_threadgroup.x)) == 0) {
        partial[(((long)threadgroup_position_in_grid.x))] = total;
    }
}
}
