/* portakern prelude: OpenCL C */
// Image kernels on uint8 pixels.
//
// rgb_to_gray reads an RGB image stored as three planes (3, H, W) and writes
// a (H, W) gray image, with the ITU-R BT.601 weights in 8.8 fixed point
// (77 + 150 + 29 = 256), so every target computes exactly the same bytes.
// negative and darken are elementwise and work for any image shape.





// out = img * factor, truncated, saturating at 255 (factor > 1 brightens).


#line 8 "portakern/examples/image.pk"
__kernel void rgb_to_gray(__global uchar* gray, __global const uchar* restrict rgb, const long pk_n0, const long pk_n1)
{

const bool pk_active = ((long)get_global_id(1)) < pk_n0 && ((long)get_global_id(0)) < pk_n1;
if (pk_active) {
    
#line 9 "portakern/examples/image.pk"
long i = ((long)get_global_id(1)), j = ((long)get_global_id(0));
    const long w = pk_n1;
    const long plane = pk_n0 * w;
    const long p = i * w + j;
    const uint r = rgb[p];
    const uint g = rgb[plane + p];
    const uint b = rgb[2 * plane + p];
    gray[p] = (uchar)((77 * r + 150 * g + 29 * b + 128) >> 8);
}
}
