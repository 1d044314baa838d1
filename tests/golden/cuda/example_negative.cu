/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
// Image kernels on uint8 pixels.
//
// rgb_to_gray reads an RGB image stored as three planes (3, H, W) and writes
// a (H, W) gray image, with the ITU-R BT.601 weights in 8.8 fixed point
// (77 + 150 + 29 = 256), so every target computes exactly the same bytes.
// negative and darken are elementwise and work for any image shape.





// out = img * factor, truncated, saturating at 255 (factor > 1 brightens).


#line 19 "portakern/examples/image.pk"
extern "C" __global__ void negative(unsigned char* out, const unsigned char* __restrict__ img, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 20 "portakern/examples/image.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    out[i] = (unsigned char)(255 - img[i]);
}
}
