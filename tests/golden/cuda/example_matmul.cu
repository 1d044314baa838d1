/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;
// Naive matrix multiply: c[M, N] = a[M, K] @ b[K, N], one work-item per output.
//
// The ndrange is (M, N); K is passed by value. Each work-item walks a row of a
// and a column of b straight from global memory (see matmul_tiled.pk for the
// version that shares tiles through workgroup memory).


#line 6 "portakern/examples/matmul.pk"
extern "C" __global__ void matmul(float* c, const float* __restrict__ a, const float* __restrict__ b, const long long K, const long long pk_n0, const long long pk_n1)
{

const bool pk_active = ((long long)blockIdx.y * blockDim.y + threadIdx.y) < pk_n0 && ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n1;
if (pk_active) {
    
#line 7 "portakern/examples/matmul.pk"
long long i = ((long long)blockIdx.y * blockDim.y + threadIdx.y), j = ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    const long long N = pk_n1;
    T acc = 0;
    for (long long k = 0; k < K; ++k) {
        acc += a[i * K + k] * b[k * N + j];
    }
    c[i * N + j] = acc;
}
}
