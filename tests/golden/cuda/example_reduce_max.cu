/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
#define PK_GR_FLOATING(T) ((T)0.5 != (T)0)
#define PK_GR_SIGNED(T) ((T)-1 < (T)0)
#define PK_GR_TOP(T) ((T)(((unsigned long long)1 << (sizeof(T) * 8 - 1)) - 1))
#define PK_GR_ID_add(T) ((T)0)
#define PK_GR_ID_min(T) (PK_GR_FLOATING(T) ? (T)(__int_as_float(0x7f800000)) : PK_GR_SIGNED(T) ? PK_GR_TOP(T) : (T)-1)
#define PK_GR_ID_max(T) (PK_GR_FLOATING(T) ? (T)(-__int_as_float(0x7f800000)) : PK_GR_SIGNED(T) ? (T)(-PK_GR_TOP(T) - 1) : (T)0)
#define PK_GR_OP_add(a, b) ((a) + (b))
#define PK_GR_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define PK_GR_OP_max(a, b) ((a) < (b) ? (b) : (a))
template <typename T> __device__ inline T pk_shfl_down(unsigned m, T v, unsigned o) { return __shfl_down_sync(m, v, o); }
__device__ inline bool pk_shfl_down(unsigned m, bool v, unsigned o) { return (bool)__shfl_down_sync(m, (int)v, o); }
__device__ inline char pk_shfl_down(unsigned m, char v, unsigned o) { return (char)__shfl_down_sync(m, (int)v, o); }
__device__ inline signed char pk_shfl_down(unsigned m, signed char v, unsigned o) { return (signed char)__shfl_down_sync(m, (int)v, o); }
__device__ inline unsigned char pk_shfl_down(unsigned m, unsigned char v, unsigned o) { return (unsigned char)__shfl_down_sync(m, (int)v, o); }
__device__ inline short pk_shfl_down(unsigned m, short v, unsigned o) { return (short)__shfl_down_sync(m, (int)v, o); }
__device__ inline unsigned short pk_shfl_down(unsigned m, unsigned short v, unsigned o) { return (unsigned short)__shfl_down_sync(m, (int)v, o); }
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
extern "C" __global__ void reduce_max(float* partial, const float* __restrict__ x, const long long pk_n0)
{
#line 19 "portakern/examples/reduce.pk"
__shared__ T pk_gr0[33];
const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;

    T total; {
    const unsigned pk_n = blockDim.x * blockDim.y * blockDim.z;
    const unsigned pk_t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const unsigned pk_lane = pk_t & 31u, pk_warp = pk_t >> 5;
    const unsigned pk_w = pk_n - (pk_warp << 5) < 32u ? pk_n - (pk_warp << 5) : 32u;
    const unsigned pk_mask = pk_w == 32u ? 0xffffffffu : (1u << pk_w) - 1u;
    T pk_v = pk_active ? (T)( x[(((long long)blockIdx.x * blockDim.x + threadIdx.x))]) : PK_GR_ID_max(T);
    for (unsigned pk_o = 16; pk_o > 0; pk_o >>= 1) {
        const T pk_u = pk_shfl_down(pk_mask, pk_v, pk_o);
        if (pk_lane + pk_o < pk_w) pk_v = PK_GR_OP_max(pk_v, pk_u);
    }
    if (pk_lane == 0) pk_gr0[pk_warp] = pk_v;
    __syncthreads();
    if (pk_warp == 0) {
        pk_v = pk_lane < (pk_n + 31u) >> 5 ? pk_gr0[pk_lane] : PK_GR_ID_max(T);
        for (unsigned pk_o = 16; pk_o > 0; pk_o >>= 1) {
            const T pk_u = pk_shfl_down(pk_mask, pk_v, pk_o);
            if (pk_lane + pk_o < pk_w) pk_v = PK_GR_OP_max(pk_v, pk_u);
        }
        if (pk_lane == 0) pk_gr0[32] = pk_v;
    }
    __syncthreads();
    total = pk_gr0[32];
}
#line 19 "portakern/examples/reduce.pk"
;if (pk_active) {
    if ((((long long)threadIdx.x)) == 0) {
        partial[(((long long)blockIdx.x))] = total;
    }
}
}
