/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
#line 1 "tests/masked_reduction.pk"
#define WG 128
// Declarations before a barrier are hoisted above their masked segment.


#line 3 "tests/masked_reduction.pk"
extern "C" __global__ void block_sum(float* partial, const float* __restrict__ x, const long long pk_n0)
{
#line 4 "tests/masked_reduction.pk"
__shared__ float buf[WG];
const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;

    
     
#line 5 "tests/masked_reduction.pk"
const long long n = pk_n0;
     long long  i ;
     long long  li ;
    float  v ;float  unused;if (pk_active) {
#line 6 "tests/masked_reduction.pk"
i =  (((long long)blockIdx.x * blockDim.x + threadIdx.x));
#line 7 "tests/masked_reduction.pk"
li =  (((long long)threadIdx.x));
#line 8 "tests/masked_reduction.pk"
v =  x[i];
    buf[li] = v;}
    __syncthreads();
    for (long long s = WG / 2; s > 0; s >>= 1) {if (pk_active) {
        if (li < s && i + s < n) buf[li] += buf[li + s];}
        __syncthreads();
    }if (pk_active) {
    if (li == 0) partial[(((long long)blockIdx.x))] = buf[0];
}
}
