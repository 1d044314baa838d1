/* portakern prelude: CUDA C++ */
#include <cuda_fp16.h>
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
template <typename T, typename F> __device__ inline T pk_bitcast(F f) {
    static_assert(sizeof(T) == sizeof(F), "a bit cast needs T and v of one size");
    union { F f; T t; } u; u.f = f; return u.t;
}
// Encode float32 to half and decode it again: a scale-and-store in half precision.
//
// h[i] is x[i] * scale rounded to the nearest half (ties to even, as NumPy's
// astype(np.float16)); back[i] is that half read back as a float, exactly. Every device
// stores half: where it has no half arithmetic (PoCL), portakern computes in float and
// converts with vload_half/vstore_half. bits[i] is the half's 16 bits, a bit cast.


#line 7 "portakern/examples/f16_roundtrip.pk"
extern "C" __global__ void f16_roundtrip(__half* h, float* back, unsigned short* bits, const float* __restrict__ x, const float scale, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 8 "portakern/examples/f16_roundtrip.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    h[i] = (__half)(x[i] * scale);
    back[i] = (float)h[i];
    bits[i] = pk_bitcast<unsigned short>( h[i]);
}
}
