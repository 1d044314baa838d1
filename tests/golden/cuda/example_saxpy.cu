/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;
// saxpy: y = a * x + y, dtype-generic.
//
// T is a type variable: it is bound from the dtype of y and x at launch
// (float32, float64, int32, ...), and each binding compiles its own variant.


#line 5 "portakern/examples/saxpy.pk"
extern "C" __global__ void saxpy(float* y, const float* __restrict__ x, const float a, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 6 "portakern/examples/saxpy.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    y[i] = a * x[i] + y[i];
}
}
