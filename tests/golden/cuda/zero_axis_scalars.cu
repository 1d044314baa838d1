/* portakern prelude: CUDA C++ */
#include <cuda_fp16.h>
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }


#line 1 "tests/zero_axis_scalars.pk"
extern "C" __global__ void scalars(unsigned char* out, const bool flag, const signed char a, const unsigned short b, const long long c, const unsigned long long d, const __half h)
{

const bool pk_active = true;
if (pk_active) {
    
#line 2 "tests/zero_axis_scalars.pk"
out[0] = flag ? (unsigned char)(a + b + c + d) : (unsigned char)(float)h;
}
}
