#include <metal_stdlib>
using namespace metal;
// Encode float32 to half and decode it again: a scale-and-store in half precision.
//
// h[i] is x[i] * scale rounded to the nearest half (ties to even, as NumPy's
// astype(np.float16)); back[i] is that half read back as a float, exactly. Every device
// stores half: where it has no half arithmetic (PoCL), portakern computes in float and
// converts with vload_half/vstore_half. bits[i] is the half's 16 bits, a bit cast.


#line 7 "portakern/examples/f16_roundtrip.pk"
[[kernel]] void f16_roundtrip(    device half* h [[buffer(0)]],
    device float* back [[buffer(1)]],
    device uint16_t* bits [[buffer(2)]],
    const device float* x [[buffer(3)]],
    constant float& scale [[buffer(4)]],
    constant long& pk_n0 [[buffer(5)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 8 "portakern/examples/f16_roundtrip.pk"
const long i = (((long)thread_position_in_grid.x));
    h[i] = (half)(x[i] * scale);
    back[i] = (float)h[i];
    bits[i] = as_type<uint16_t>( h[i]);
}
}
