#include <metal_stdlib>
using namespace metal;
// Image kernels on uint8 pixels.
//
// rgb_to_gray reads an RGB image stored as three planes (3, H, W) and writes
// a (H, W) gray image, with the ITU-R BT.601 weights in 8.8 fixed point
// (77 + 150 + 29 = 256), so every target computes exactly the same bytes.
// negative and darken are elementwise and work for any image shape.





// out = img * factor, truncated, saturating at 255 (factor > 1 brightens).


#line 25 "portakern/examples/image.pk"
[[kernel]] void darken(    device uint8_t* out [[buffer(0)]],
    const device uint8_t* img [[buffer(1)]],
    constant float& factor [[buffer(2)]],
    constant long& pk_n0 [[buffer(3)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 26 "portakern/examples/image.pk"
const long i = (((long)thread_position_in_grid.x));
    out[i] = (uint8_t)fmin((float)img[i] * factor, 255.0f);
}
}
