/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
template <typename A, typename B> __device__ inline decltype(true ? A() : B()) min(A a, B b) { typedef decltype(true ? A() : B()) C; return (C)b < (C)a ? (C)b : (C)a; }
template <typename A, typename B> __device__ inline decltype(true ? A() : B()) max(A a, B b) { typedef decltype(true ? A() : B()) C; return (C)a < (C)b ? (C)b : (C)a; }
#define PK_GR_FLOATING(T) ((T)0.5 != (T)0)
#define PK_GR_SIGNED(T) ((T)-1 < (T)0)
#define PK_GR_TOP(T) ((T)(((unsigned long long)1 << (sizeof(T) * 8 - 1)) - 1))
#define PK_GR_ID_add(T) ((T)0)
#define PK_GR_ID_min(T) (PK_GR_FLOATING(T) ? (T)(__int_as_float(0x7f800000)) : PK_GR_SIGNED(T) ? PK_GR_TOP(T) : (T)-1)
#define PK_GR_ID_max(T) (PK_GR_FLOATING(T) ? (T)(-__int_as_float(0x7f800000)) : PK_GR_SIGNED(T) ? (T)(-PK_GR_TOP(T) - 1) : (T)0)
#define PK_GR_OP_add(a, b) ((a) + (b))
#define PK_GR_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define PK_GR_OP_max(a, b) ((a) < (b) ? (b) : (a))
template <typename T> __device__ inline T pk_sg_shfl(unsigned m, T v, int a) { return __shfl_sync(m, v, a); }
template <typename T> __device__ inline T pk_sg_shfl_down(unsigned m, T v, int a) { return __shfl_down_sync(m, v, (unsigned)a); }
template <typename T> __device__ inline T pk_sg_shfl_up(unsigned m, T v, int a) { return __shfl_up_sync(m, v, (unsigned)a); }
template <typename T> __device__ inline T pk_sg_shfl_xor(unsigned m, T v, int a) { return __shfl_xor_sync(m, v, a); }
__device__ inline bool pk_sg_shfl(unsigned m, bool v, int a) { return (bool)pk_sg_shfl(m, (int)v, a); }
__device__ inline bool pk_sg_shfl_down(unsigned m, bool v, int a) { return (bool)pk_sg_shfl_down(m, (int)v, a); }
__device__ inline bool pk_sg_shfl_up(unsigned m, bool v, int a) { return (bool)pk_sg_shfl_up(m, (int)v, a); }
__device__ inline bool pk_sg_shfl_xor(unsigned m, bool v, int a) { return (bool)pk_sg_shfl_xor(m, (int)v, a); }
__device__ inline char pk_sg_shfl(unsigned m, char v, int a) { return (char)pk_sg_shfl(m, (int)v, a); }
__device__ inline char pk_sg_shfl_down(unsigned m, char v, int a) { return (char)pk_sg_shfl_down(m, (int)v, a); }
__device__ inline char pk_sg_shfl_up(unsigned m, char v, int a) { return (char)pk_sg_shfl_up(m, (int)v, a); }
__device__ inline char pk_sg_shfl_xor(unsigned m, char v, int a) { return (char)pk_sg_shfl_xor(m, (int)v, a); }
__device__ inline signed char pk_sg_shfl(unsigned m, signed char v, int a) { return (signed char)pk_sg_shfl(m, (int)v, a); }
__device__ inline signed char pk_sg_shfl_down(unsigned m, signed char v, int a) { return (signed char)pk_sg_shfl_down(m, (int)v, a); }
__device__ inline signed char pk_sg_shfl_up(unsigned m, signed char v, int a) { return (signed char)pk_sg_shfl_up(m, (int)v, a); }
__device__ inline signed char pk_sg_shfl_xor(unsigned m, signed char v, int a) { return (signed char)pk_sg_shfl_xor(m, (int)v, a); }
__device__ inline unsigned char pk_sg_shfl(unsigned m, unsigned char v, int a) { return (unsigned char)pk_sg_shfl(m, (int)v, a); }
__device__ inline unsigned char pk_sg_shfl_down(unsigned m, unsigned char v, int a) { return (unsigned char)pk_sg_shfl_down(m, (int)v, a); }
__device__ inline unsigned char pk_sg_shfl_up(unsigned m, unsigned char v, int a) { return (unsigned char)pk_sg_shfl_up(m, (int)v, a); }
__device__ inline unsigned char pk_sg_shfl_xor(unsigned m, unsigned char v, int a) { return (unsigned char)pk_sg_shfl_xor(m, (int)v, a); }
__device__ inline short pk_sg_shfl(unsigned m, short v, int a) { return (short)pk_sg_shfl(m, (int)v, a); }
__device__ inline short pk_sg_shfl_down(unsigned m, short v, int a) { return (short)pk_sg_shfl_down(m, (int)v, a); }
__device__ inline short pk_sg_shfl_up(unsigned m, short v, int a) { return (short)pk_sg_shfl_up(m, (int)v, a); }
__device__ inline short pk_sg_shfl_xor(unsigned m, short v, int a) { return (short)pk_sg_shfl_xor(m, (int)v, a); }
__device__ inline unsigned short pk_sg_shfl(unsigned m, unsigned short v, int a) { return (unsigned short)pk_sg_shfl(m, (int)v, a); }
__device__ inline unsigned short pk_sg_shfl_down(unsigned m, unsigned short v, int a) { return (unsigned short)pk_sg_shfl_down(m, (int)v, a); }
__device__ inline unsigned short pk_sg_shfl_up(unsigned m, unsigned short v, int a) { return (unsigned short)pk_sg_shfl_up(m, (int)v, a); }
__device__ inline unsigned short pk_sg_shfl_xor(unsigned m, unsigned short v, int a) { return (unsigned short)pk_sg_shfl_xor(m, (int)v, a); }
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
extern "C" __global__ void warp_sum(float* partial, const float* __restrict__ x, const long long pk_n0)
{
#line 16 "portakern/examples/warp_reduce.pk"
__shared__ T sums[256];
#line 19 "portakern/examples/warp_reduce.pk"

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;

    
    
#line 17 "portakern/examples/warp_reduce.pk"
T  v ;if (pk_active) {v =  x[(((long long)blockIdx.x * blockDim.x + threadIdx.x))];}
    for (int o = (int)32LL / 2; o > 0; o /= 2) {
        T other; {
    const unsigned pk_n = blockDim.x * blockDim.y * blockDim.z, pk_t = (unsigned)((((long long)threadIdx.x)));
    const int pk_lane = (int)(pk_t & 31u);
    const unsigned pk_w = pk_n - (pk_t - pk_lane) < 32u ? pk_n - (pk_t - pk_lane) : 32u;
    const unsigned pk_mask = pk_w == 32u ? 0xffffffffu : (1u << pk_w) - 1u;
    const T pk_v = pk_active ? (T)(v) : (T)0;
    const int pk_a = pk_active ? (int)( o) : 0;
    const int pk_src = (pk_a < 0 ? -1 : pk_lane + pk_a);
    const bool pk_ok = (unsigned)pk_src < pk_w;
    const T pk_u = pk_sg_shfl_down(pk_mask, pk_v, pk_ok ? pk_a : 0);
    other = pk_ok ? pk_u : pk_v;
}
#line 19 "portakern/examples/warp_reduce.pk"
;if (pk_active) {
        v += other;
    }}if (pk_active) {
    if ((((((long long)threadIdx.x))) & 31LL) == 0) {
        sums[(((((long long)threadIdx.x))) >> 5)] = v;
    }}
    __syncthreads();
    // The subgroups that hold elements of the ndrange wrote their slot.
     const long long items = min((long long)256,
                                    (long long)(pk_n0) - (((long long)blockIdx.x)) * 256);
     const long long count = (items + 32LL - 1) / 32LL;
    T  mine ;if (pk_active) {mine =  0;
    for (long long k = (((((long long)threadIdx.x))) & 31LL); k < count; k += 32LL) {
        mine += sums[k];
    }}
    T total; {
    const unsigned pk_n = blockDim.x * blockDim.y * blockDim.z, pk_t = (unsigned)((((long long)threadIdx.x)));
    const int pk_lane = (int)(pk_t & 31u);
    const unsigned pk_w = pk_n - (pk_t - pk_lane) < 32u ? pk_n - (pk_t - pk_lane) : 32u;
    const unsigned pk_mask = pk_w == 32u ? 0xffffffffu : (1u << pk_w) - 1u;
    T pk_v = pk_active ? (T)( mine) : PK_GR_ID_add(T);
    for (int pk_o = 16; pk_o > 0; pk_o >>= 1) {
        const T pk_u = pk_sg_shfl_down(pk_mask, pk_v, pk_o);
        if ((unsigned)(pk_lane + pk_o) < pk_w) pk_v = PK_GR_OP_add(pk_v, pk_u);
    }
    total = pk_sg_shfl(pk_mask, pk_v, 0);
}
#line 34 "portakern/examples/warp_reduce.pk"
;if (pk_active) {
    if ((((long long)threadIdx.x)) == 0) {
        partial[(((long long)blockIdx.x))] = total;
    }
}
}
