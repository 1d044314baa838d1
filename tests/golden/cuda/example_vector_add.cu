/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;
// Vector add: c = a + b, elementwise, for any dtype and any ndrange rank.
//
// The linear global index is row-major over the ndrange, so the same kernel
// adds 1D vectors, 2D images or 3D volumes; work-items past the end of the
// ndrange (the rounded-up part of the last workgroup) are masked implicitly.


#line 6 "portakern/examples/vector_add.pk"
extern "C" __global__ void vector_add(float* c, const float* __restrict__ a, const float* __restrict__ b, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 7 "portakern/examples/vector_add.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    c[i] = a[i] + b[i];
}
}
