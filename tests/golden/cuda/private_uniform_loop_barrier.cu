/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
#line 1 "tests/private_uniform_loop_barrier.pk"
#define TILE 8
__device__ float clampf(float v) { return fmin(fmax(v, 0.0f), 1.0f); }


#line 3 "tests/private_uniform_loop_barrier.pk"
extern "C" __global__ void smooth(float* y, const float* __restrict__ x, const int steps, const long long pk_n0)
{
#line 4 "tests/private_uniform_loop_barrier.pk"
__shared__ float tile[TILE + 2];
const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;

    
     
#line 5 "tests/private_uniform_loop_barrier.pk"
float  acc[2];
     long long  li ;
     long long  i ;if (pk_active) {
#line 6 "tests/private_uniform_loop_barrier.pk"
li =  (((long long)threadIdx.x));
#line 7 "tests/private_uniform_loop_barrier.pk"
i =  (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    tile[li + 1] = x[i];
    acc[0] = 0;}
    for (int s = 0; s < steps; ++s) {
        __syncthreads();
        float  left ;float  right ;if (pk_active) {left =  tile[li];right =  tile[li + 2];
        acc[0] += clampf(0.5f * (left + right));}
        __syncthreads();
    }if (pk_active) {
    y[i] = acc[0] + sqrt(fabs(tanh(x[i])));
}
}
