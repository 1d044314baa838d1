/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef double T;


#line 1 "tests/generic_saxpy_double.pk"
extern "C" __global__ void saxpy(double* y, const double* __restrict__ x, const double a, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 2 "tests/generic_saxpy_double.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    y[i] = a * x[i] + y[i];
}
}
