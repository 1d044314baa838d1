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
// Row-wise normalisations with one workgroup per row (ggml's and the MLX docs' shape):
// every work-item of the group strides over the row by the group size, a @groupreduce
// combines the items' partial results, and a second pass over the row writes it.
//
// rms_norm:   y = x / sqrt(mean(x^2) + eps)
// softmax:    y = exp(x - max(x)) / sum(exp(x - max(x)))  (two reductions, then the pass)
// group_norm: ggml's group_norm: x is (groups, n) and each group of n elements is
//             normalised to zero mean and unit variance, y = (x - mean) / sqrt(var + eps);
//             the mean first, then the variance of the centred values (two passes, as ggml).
//
// `n` is the row length (any value; the group size need not divide it) and the ndrange
// is rows * GROUP, so @index(Group, Linear) is the row. The reductions are collectives:
// every work-item reaches them, which is why the kernels take unsafe_indices and no
// work-item returns early.






#line 50 "portakern/examples/rowwise.pk"
extern "C" __global__ void __launch_bounds__(256) group_norm(float* y, const float* __restrict__ x, const long long n, const float eps, const long long pk_n0)
{
#line 58 "portakern/examples/rowwise.pk"
__shared__ float pk_gr0[33];
#line 65 "portakern/examples/rowwise.pk"
__shared__ float pk_gr1[33];

    
#line 52 "portakern/examples/rowwise.pk"
const long long row = (((long long)blockIdx.x)) * n;
    const long long l = (((long long)threadIdx.x));
    float acc = 0.0f;
    for (long long j = l; j < n; j += 256) {
        acc += x[row + j];
    }
    float sum; {
    const unsigned pk_n = blockDim.x * blockDim.y * blockDim.z;
    const unsigned pk_t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const unsigned pk_lane = pk_t & 31u, pk_warp = pk_t >> 5;
    const unsigned pk_w = pk_n - (pk_warp << 5) < 32u ? pk_n - (pk_warp << 5) : 32u;
    const unsigned pk_mask = pk_w == 32u ? 0xffffffffu : (1u << pk_w) - 1u;
    float pk_v = (float)( acc);
    for (unsigned pk_o = 16; pk_o > 0; pk_o >>= 1) {
        const float pk_u = pk_shfl_down(pk_mask, pk_v, pk_o);
        if (pk_lane + pk_o < pk_w) pk_v = PK_GR_OP_add(pk_v, pk_u);
    }
    if (pk_lane == 0) pk_gr0[pk_warp] = pk_v;
    __syncthreads();
    if (pk_warp == 0) {
        pk_v = pk_lane < (pk_n + 31u) >> 5 ? pk_gr0[pk_lane] : PK_GR_ID_add(float);
        for (unsigned pk_o = 16; pk_o > 0; pk_o >>= 1) {
            const float pk_u = pk_shfl_down(pk_mask, pk_v, pk_o);
            if (pk_lane + pk_o < pk_w) pk_v = PK_GR_OP_add(pk_v, pk_u);
        }
        if (pk_lane == 0) pk_gr0[32] = pk_v;
    }
    __syncthreads();
    sum = pk_gr0[32];
}
#line 58 "portakern/examples/rowwise.pk"
;
    const float mean = sum / (float)n;
    float acc2 = 0.0f;
    for (long long j = l; j < n; j += 256) {
        const float d = x[row + j] - mean;
        acc2 += d * d;
    }
    float var; {
    const unsigned pk_n = blockDim.x * blockDim.y * blockDim.z;
    const unsigned pk_t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const unsigned pk_lane = pk_t & 31u, pk_warp = pk_t >> 5;
    const unsigned pk_w = pk_n - (pk_warp << 5) < 32u ? pk_n - (pk_warp << 5) : 32u;
    const unsigned pk_mask = pk_w == 32u ? 0xffffffffu : (1u << pk_w) - 1u;
    float pk_v = (float)( acc2);
    for (unsigned pk_o = 16; pk_o > 0; pk_o >>= 1) {
        const float pk_u = pk_shfl_down(pk_mask, pk_v, pk_o);
        if (pk_lane + pk_o < pk_w) pk_v = PK_GR_OP_add(pk_v, pk_u);
    }
    if (pk_lane == 0) pk_gr1[pk_warp] = pk_v;
    __syncthreads();
    if (pk_warp == 0) {
        pk_v = pk_lane < (pk_n + 31u) >> 5 ? pk_gr1[pk_lane] : PK_GR_ID_add(float);
        for (unsigned pk_o = 16; pk_o > 0; pk_o >>= 1) {
            const float pk_u = pk_shfl_down(pk_mask, pk_v, pk_o);
            if (pk_lane + pk_o < pk_w) pk_v = PK_GR_OP_add(pk_v, pk_u);
        }
        if (pk_lane == 0) pk_gr1[32] = pk_v;
    }
    __syncthreads();
    var = pk_gr1[32];
}
#line 65 "portakern/examples/rowwise.pk"
;
    const float scale = 1.0f / sqrt(var / (float)n + eps);
    for (long long j = l; j < n; j += 256) {
        y[row + j] = (x[row + j] - mean) * scale;
    }

}
