/* portakern prelude: OpenCL C */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable


#line 1 "tests/zero_axis_scalars.pk"
__kernel void scalars(__global uchar* out, const uchar flag, const char a, const ushort b, const long c, const ulong d, const half h)
{

const bool pk_active = true;
if (pk_active) {
    
#line 2 "tests/zero_axis_scalars.pk"
out[0] = flag ? (uchar)(a + b + c + d) : (uchar)(float)h;
}
}
