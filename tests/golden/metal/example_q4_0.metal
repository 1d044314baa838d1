#include <metal_stdlib>
using namespace metal;
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
    uint8_t qs[16];
} block_q4_0;

float dequantize(device const block_q4_0* b, int j) {
    const int q = j < QK4_0 / 2 ? (b->qs[j] & 15) : (b->qs[j - QK4_0 / 2] >> 4);
    return (float)b->d * (float)(q - 8);
}
#line 16 "portakern/examples/q4_0.pk"
float dequantize(constant const block_q4_0* b, int j) {
    const int q = j < QK4_0 / 2 ? (b->qs[j] & 15) : (b->qs[j - QK4_0 / 2] >> 4);
    return (float)b->d * (float)(q - 8);
}




#line 21 "portakern/examples/q4_0.pk"
[[kernel]] void q4_0(    device float* y [[buffer(0)]],
    const device block_q4_0* blocks [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 22 "portakern/examples/q4_0.pk"
const long i = (((long)thread_position_in_grid.x));
    y[i] = dequantize(&blocks[i / QK4_0], (int)(i % QK4_0));
}
}
