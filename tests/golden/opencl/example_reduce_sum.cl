/* portakern prelude: OpenCL C */
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
__kernel void reduce_sum(__global float* partial, __global const float* restrict x, const long pk_n0)
{
#line 19 "portakern/examples/reduce.pk"
__local T pk_gr0[256];
const bool pk_active = ((long)get_global_id(0)) < pk_n0;

    T total; {
    const T pk_v = pk_active ? (T)( x[(((long)get_global_id(0)))]) : PK_GR_ID_add(T);
#if defined(__opencl_c_work_group_collective_functions) || (defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ == 200)
    total = work_group_reduce_add(pk_v);
#else
    const uint pk_n = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
    const uint pk_t = (uint)((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0));
    if (pk_t < 256u) pk_gr0[pk_t] = pk_v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint pk_b = 256u; pk_b < pk_n; pk_b += 256u) {
        if (pk_t >= pk_b && pk_t - pk_b < 256u) pk_gr0[pk_t - pk_b] = PK_GR_OP_add(pk_gr0[pk_t - pk_b], pk_v);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint pk_w = pk_n < 256u ? pk_n : 256u; pk_w > 1u; ) {
        const uint pk_h = (pk_w + 1u) >> 1;
        if (pk_t + pk_h < pk_w) pk_gr0[pk_t] = PK_GR_OP_add(pk_gr0[pk_t], pk_gr0[pk_t + pk_h]);
        barrier(CLK_LOCAL_MEM_FENCE);
        pk_w = pk_h;
    }
    total = pk_gr0[0];
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
}
#line 19 "portakern/examples/reduce.pk"
;if (pk_active) {
    if ((((long)get_local_id(0))) == 0) {
        partial[(((long)get_group_id(0)))] = total;
    }
}
}
