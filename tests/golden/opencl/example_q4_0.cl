/* portakern prelude: OpenCL C */
// q4_0 dequantize: each block is a scale and 16 bytes packing 32 4-bit values.
//
// block_q4_0 is a struct type: the blocks array is a NumPy structured array of
// dtype [('d', float32), ('qs', uint8, (16,))], checked against the layout the
// target gives the struct. Value j of a block is its low nibble (j < 16) or the
// high nibble of byte j - 16, minus 8, times the scale. (ggml's q4_0 stores the
// scale as half; this example uses float, which every device stores.)
#line 8 "portakern/examples/q4_0.pk"
#define QK4_0 32

typedef struct {
    float d;
    uchar qs[16];
} block_q4_0;

float dequantize_pk_g(__global const block_q4_0* b, int j) {
    const int q = j < QK4_0 / 2 ? (b->qs[j] & 15) : (b->qs[j - QK4_0 / 2] >> 4);
    return b->d * (float)(q - 8);
}




#line 20 "portakern/examples/q4_0.pk"
__kernel void q4_0(__global float* y, __global const block_q4_0* restrict blocks, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 21 "portakern/examples/q4_0.pk"
const long i = (((long)get_global_id(0)));
    y[i] = dequantize_pk_g(&blocks[i / QK4_0], (int)(i % QK4_0));
}
}
