/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;
// 2D translate: out[i + dy, j + dx] = img[i, j]; writes that land outside the
// image are dropped, and pixels nothing lands on keep out's previous value.
//
// The ndrange is the image shape (H, W): axis 0 is rows, axis 1 (the fastest)
// is columns, as in NumPy.


#line 6 "portakern/examples/translate.pk"
extern "C" __global__ void translate(float* out, const float* __restrict__ img, const long long dy, const long long dx, const long long pk_n0, const long long pk_n1)
{

const bool pk_active = ((long long)blockIdx.y * blockDim.y + threadIdx.y) < pk_n0 && ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n1;
if (pk_active) {
    
#line 7 "portakern/examples/translate.pk"
long long i = ((long long)blockIdx.y * blockDim.y + threadIdx.y), j = ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    const long long h = pk_n0;
    const long long w = pk_n1;
    const long long ti = i + dy;
    const long long tj = j + dx;
    if (ti >= 0 && ti < h && tj >= 0 && tj < w) {
        out[ti * w + tj] = img[i * w + j];
    }
}
}
