/* portakern prelude: OpenCL C */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
// Encode float32 to half and decode it again: a scale-and-store in half precision.
//
// h[i] is x[i] * scale rounded to the nearest half (ties to even, as NumPy's
// astype(np.float16)); back[i] is that half read back as a float, exactly. Every device
// stores half: where it has no half arithmetic (PoCL), portakern computes in float and
// converts with vload_half/vstore_half. bits[i] is the half's 16 bits, a bit cast.


#line 7 "portakern/examples/f16_roundtrip.pk"
__kernel void f16_roundtrip(__global half* h, __global float* back, __global ushort* bits, __global const float* restrict x, const float scale, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 8 "portakern/examples/f16_roundtrip.pk"
const long i = (((long)get_global_id(0)));
    h[i] = (half)(x[i] * scale);
    back[i] = (float)h[i];
    bits[i] = as_ushort( h[i]);
}
}
