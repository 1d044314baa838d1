/* portakern prelude: OpenCL C */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
// q4_0 dequantize: each block is a scale and 16 bytes packing 32 4-bit values.
//
// block_q4_0 is ggml's struct type: the blocks array is a NumPy structured array
// of dtype [('d', float16), ('qs', uint8, (16,))], checked against the layout the
// target gives the struct (18 bytes). Value j of a block is its low nibble
// (j < 16) or the high nibble of byte j - 16, minus 8, times the scale, in float.
// The half scale is stored on every device: on one without half arithmetic
// (PoCL) the field is its 16 bits, read through float.
#line 9 "portakern/examples/q4_0.pk"
#define QK4_0 32

typedef struct {
    half d;
    uchar qs[16];
} block_q4_0;

float dequantize_pk_g(__global const block_q4_0* b, int j) {
    const int q = j < QK4_0 / 2 ? (b->qs[j] & 15) : (b->qs[j - QK4_0 / 2] >> 4);
    return (float)b->d * (float)(q - 8);
}




#line 21 "portakern/examples/q4_0.pk"
__kernel void q4_0(__global float* y, __global const block_q4_0* restrict blocks, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 22 "portakern/examples/q4_0.pk"
const long i = (((long)get_global_id(0)));
    y[i] = dequantize_pk_g(&blocks[i / QK4_0], (int)(i % QK4_0));
}
}
