/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;
// A fused elementwise expression: y = a*x*x + b*x + c.
//
// NumPy evaluates this as five passes over memory with four temporaries; the
// kernel reads x once and writes y once, which is where a fused kernel wins.


#line 5 "portakern/examples/polynomial.pk"
extern "C" __global__ void polynomial(float* y, const float* __restrict__ x, const float a, const float b, const float c, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 6 "portakern/examples/polynomial.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    const T v = x[i];
    y[i] = a * v * v + b * v + c;
}
}
