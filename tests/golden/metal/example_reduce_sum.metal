#include <metal_stdlib>
using namespace metal;
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
// Workgroup reductions over a 1D ndrange: one partial result per workgroup.
//
// reduce_sum and reduce_max write partial[g], the sum / maximum of the
// elements that workgroup g covers; argmax_groups writes the largest value of
// each group and its index (the first one, on ties, as numpy.argmax does).
// Running a kernel again on its own partial results reduces further, until one
// value is left (the catalog's run(), in portakern/examples/__init__.py, does that).
//
// @groupreduce(op, value) combines one value per work-item over the whole
// workgroup and gives every work-item the result. It is a collective, like
// @synchronize(): every work-item of the group reaches it, and those past the
// end of the ndrange (in a partial last group) contribute the identity of op
// without evaluating the value. Each target lowers it its own way (a SIMD loop
// on the CPU, warp shuffles on CUDA, SIMD-group functions on Metal, work-group
// functions or a local-memory tree on OpenCL): see docs/language.md. Any
// workgroup size works.






// Two reductions: the group's largest value, then the smallest local index holding
// it (items that do not hold it offer the group size, past every local index). The
// index is an int: a group has far fewer than 2^31 items, and an int reduction keeps
// twice as many lanes per SIMD register as a long one (the CPU's lockstep loop) and
// moves half the bytes through shuffles. Work-item 0 turns it into an index of x (a
// group where no value equals the maximum, only NaNs, gives n, past every index).


#line 18 "portakern/examples/reduce.pk"
[[kernel]] void reduce_sum(    device float* partial [[buffer(0)]],
    const device float* x [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 19 "portakern/examples/reduce.pk"
threadgroup T pk_gr0[33];
const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;

    T total; {
    const uint pk_n = threads_per_threadgroup.x * threads_per_threadgroup.y * threads_per_threadgroup.z;
    const uint pk_t = (thread_position_in_threadgroup.z * threads_per_threadgroup.y + thread_position_in_threadgroup.y) * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
    const uint pk_lane = pk_t & 31u, pk_sg = pk_t >> 5;
    T pk_v = pk_active ? (T)( x[(((long)thread_position_in_grid.x))]) : PK_GR_ID_add(T);
    pk_v = simd_sum(pk_v);
    if (pk_lane == 0) pk_gr0[pk_sg] = pk_v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (pk_sg == 0) {
        pk_v = simd_sum(pk_lane < (pk_n + 31u) >> 5 ? pk_gr0[pk_lane] : PK_GR_ID_add(T));
        if (pk_lane == 0) pk_gr0[32] = pk_v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    total = pk_gr0[32];
}
#line 19 "portakern/examples/reduce.pk"
;if (pk_active) {
    if ((((long)thread_position_in_threadgroup.x)) == 0) {
        partial[(((long)threadgroup_position_in_grid.x))] = total;
    }
}
}
