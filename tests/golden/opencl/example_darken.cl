/* portakern prelude: OpenCL C */
#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__))
#define PK_MATH __attribute__((overloadable, always_inline))
PK_MATH float pk_fmin(float a, float b) { return __builtin_isnan(b) || a < b ? a : b; }
#undef fmin
#define fmin pk_fmin
#endif
// Image kernels on uint8 pixels.
//
// rgb_to_gray reads an RGB image stored as three planes (3, H, W) and writes
// a (H, W) gray image, with the ITU-R BT.601 weights in 8.8 fixed point
// (77 + 150 + 29 = 256), so every target computes exactly the same bytes.
// negative and darken are elementwise and work for any image shape.





// out = img * factor, truncated, saturating at 255 (factor > 1 brightens).


#line 25 "portakern/examples/image.pk"
__kernel void darken(__global uchar* out, __global const uchar* restrict img, const float factor, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 26 "portakern/examples/image.pk"
const long i = (((long)get_global_id(0)));
    out[i] = (uchar)fmin((float)img[i] * factor, 255.0f);
}
}
