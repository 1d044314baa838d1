/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
// Image kernels on uint8 pixels.
//
// rgb_to_gray reads an RGB image stored as three planes (3, H, W) and writes
// a (H, W) gray image, with the ITU-R BT.601 weights in 8.8 fixed point
// (77 + 150 + 29 = 256), so every target computes exactly the same bytes.
// negative and darken are elementwise and work for any image shape.





// out = img * factor, truncated, saturating at 255 (factor > 1 brightens).


#line 8 "portakern/examples/image.pk"
extern "C" __global__ void rgb_to_gray(unsigned char* gray, const unsigned char* __restrict__ rgb, const long long pk_n0, const long long pk_n1)
{

const bool pk_active = ((long long)blockIdx.y * blockDim.y + threadIdx.y) < pk_n0 && ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n1;
if (pk_active) {
    
#line 9 "portakern/examples/image.pk"
long long i = ((long long)blockIdx.y * blockDim.y + threadIdx.y), j = ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    const long long w = pk_n1;
    const long long plane = pk_n0 * w;
    const long long p = i * w + j;
    const unsigned int r = rgb[p];
    const unsigned int g = rgb[plane + p];
    const unsigned int b = rgb[2 * plane + p];
    gray[p] = (unsigned char)((77 * r + 150 * g + 29 * b + 128) >> 8);
}
}
