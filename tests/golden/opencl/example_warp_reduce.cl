/* portakern prelude: OpenCL C */
#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__))
#define PK_MATH __attribute__((overloadable, always_inline))
PK_MATH float pk_min(float a, float b) { return a < b ? a : b; }
PK_MATH char pk_min(char a, char b) { return b < a ? b : a; }
PK_MATH uchar pk_min(uchar a, uchar b) { return b < a ? b : a; }
PK_MATH short pk_min(short a, short b) { return b < a ? b : a; }
PK_MATH ushort pk_min(ushort a, ushort b) { return b < a ? b : a; }
PK_MATH int pk_min(int a, int b) { return b < a ? b : a; }
PK_MATH uint pk_min(uint a, uint b) { return b < a ? b : a; }
PK_MATH long pk_min(long a, long b) { return b < a ? b : a; }
PK_MATH ulong pk_min(ulong a, ulong b) { return b < a ? b : a; }
#undef min
#define min pk_min
#endif
#define PK_GR_FLOATING(T) ((T)0.5 != (T)0)
#define PK_GR_SIGNED(T) ((T)-1 < (T)0)
#define PK_GR_TOP(T) ((T)(((ulong)1 << (sizeof(T) * 8 - 1)) - 1))
#define PK_GR_ID_add(T) ((T)0)
#define PK_GR_ID_min(T) (PK_GR_FLOATING(T) ? (T)(INFINITY) : PK_GR_SIGNED(T) ? PK_GR_TOP(T) : (T)-1)
#define PK_GR_ID_max(T) (PK_GR_FLOATING(T) ? (T)(-INFINITY) : PK_GR_SIGNED(T) ? (T)(-PK_GR_TOP(T) - 1) : (T)0)
#define PK_GR_OP_add(a, b) ((a) + (b))
#define PK_GR_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define PK_GR_OP_max(a, b) ((a) < (b) ? (b) : (a))
#if (defined(cl_khr_subgroups) || defined(__opencl_c_subgroups)) && defined(cl_khr_subgroup_shuffle) && defined(cl_khr_subgroup_shuffle_relative)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define PK_SG_NATIVE 1
#define PK_SG_SIZE ((long)get_max_sub_group_size())
#define PK_SG_LANE(lin) ((long)get_sub_group_local_id())
#define PK_SG_ID(lin) ((long)get_sub_group_id())
#else
#ifndef PK_SG_SLOTS
/* The largest workgroup the local-memory fallback serves: PoCL's maximum. */
#define PK_SG_SLOTS 4096u
#endif
#define PK_SG_SIZE 32L
#define PK_SG_LANE(lin) ((lin) & 31L)
#define PK_SG_ID(lin) ((lin) >> 5)
#endif
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
__kernel void warp_sum(__global float* partial, __global const float* restrict x, const long pk_n0)
{
#line 16 "portakern/examples/warp_reduce.pk"
__local T sums[256];
#line 19 "portakern/examples/warp_reduce.pk"
#ifndef PK_SG_NATIVE
__local T pk_sg0[PK_SG_SLOTS];
#endif

const bool pk_active = ((long)get_global_id(0)) < pk_n0;

    
    
#line 17 "portakern/examples/warp_reduce.pk"
T  v ;if (pk_active) {v =  x[(((long)get_global_id(0)))];}
    for (int o = (int)PK_SG_SIZE / 2; o > 0; o /= 2) {
        T other; {
    const T pk_v = pk_active ? (T)(v) : (T)0;
    const int pk_a = pk_active ? (int)( o) : 0;
#ifdef PK_SG_NATIVE
    const int pk_lane = (int)get_sub_group_local_id();
    const uint pk_w = get_sub_group_size();
    const int pk_src = (pk_a < 0 ? -1 : pk_lane + pk_a);
    const bool pk_ok = (uint)pk_src < pk_w;
    const T pk_u = sub_group_shuffle_down(pk_v, (uint)(pk_ok ? pk_a : 0));
    other = pk_ok ? pk_u : pk_v;
#else
    const uint pk_n = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2)), pk_t = (uint)((((long)get_local_id(0))));
    const int pk_lane = (int)(pk_t & 31u);
    const uint pk_base = pk_t - (uint)pk_lane;
    const uint pk_w = pk_n - pk_base < 32u ? pk_n - pk_base : 32u;
    const int pk_src = (pk_a < 0 ? -1 : pk_lane + pk_a);
    other = pk_v;
    if (pk_t < PK_SG_SLOTS) pk_sg0[pk_t] = pk_v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (pk_base + pk_w <= PK_SG_SLOTS) {
        if ((uint)pk_src < pk_w) other = pk_sg0[pk_base + (uint)pk_src];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
}
#line 19 "portakern/examples/warp_reduce.pk"
;if (pk_active) {
        v += other;
    }}if (pk_active) {
    if (PK_SG_LANE((((long)get_local_id(0)))) == 0) {
        sums[PK_SG_ID((((long)get_local_id(0))))] = v;
    }}
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    // The subgroups that hold elements of the ndrange wrote their slot.
     const long items = min((long)256,
                                    (long)(pk_n0) - (((long)get_group_id(0))) * 256);
     const long count = (items + PK_SG_SIZE - 1) / PK_SG_SIZE;
    T  mine ;if (pk_active) {mine =  0;
    for (long k = PK_SG_LANE((((long)get_local_id(0)))); k < count; k += PK_SG_SIZE) {
        mine += sums[k];
    }}
    T total; {
    const T pk_v = pk_active ? (T)( mine) : PK_GR_ID_add(T);
#ifdef PK_SG_NATIVE
    total = sub_group_reduce_add(pk_v);
#else
    const uint pk_n = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2)), pk_t = (uint)((((long)get_local_id(0))));
    const int pk_lane = (int)(pk_t & 31u);
    const uint pk_base = pk_t - (uint)pk_lane;
    const uint pk_w = pk_n - pk_base < 32u ? pk_n - pk_base : 32u;
    total = pk_v;
    if (pk_t < PK_SG_SLOTS) pk_sg0[pk_t] = pk_v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (pk_base + pk_w <= PK_SG_SLOTS) {
        total = pk_sg0[pk_base]; for (uint pk_k = 1; pk_k < pk_w; ++pk_k) total = PK_GR_OP_add(total, pk_sg0[pk_base + pk_k]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
}
#line 34 "portakern/examples/warp_reduce.pk"
;if (pk_active) {
    if ((((long)get_local_id(0))) == 0) {
        partial[(((long)get_group_id(0)))] = total;
    }
}
}
