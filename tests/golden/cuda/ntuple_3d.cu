/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;


#line 1 "tests/ntuple_3d.pk"
extern "C" __global__ void stencil(float* out, const float* __restrict__ in, const long long pk_n0, const long long pk_n1, const long long pk_n2)
{

const bool pk_active = ((long long)blockIdx.z * blockDim.z + threadIdx.z) < pk_n0 && ((long long)blockIdx.y * blockDim.y + threadIdx.y) < pk_n1 && ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n2;
if (pk_active) {
    
#line 2 "tests/ntuple_3d.pk"
long long i = ((long long)blockIdx.z * blockDim.z + threadIdx.z), j = ((long long)blockIdx.y * blockDim.y + threadIdx.y), k = ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    long long gi = ((long long)blockIdx.z), gj = ((long long)blockIdx.y), gk = ((long long)blockIdx.x);
    const long long nj = pk_n1, nk = pk_n2;
    const long long o = (i * nj + j) * nk + k;
    out[o] = in[o] * (T)(gi + gj + gk + ((long long)blockDim.z) + (((long long)blockDim.z) * ((long long)blockDim.y) * ((long long)blockDim.x)));
}
}
