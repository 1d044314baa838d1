#include <metal_stdlib>
using namespace metal;
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
    uint8_t qs[16];
} block_q4_0;

float dequantize(device const block_q4_0* b, int j) {
    const int q = j < QK4_0 / 2 ? (b->qs[j] & 15) : (b->qs[j - QK4_0 / 2] >> 4);
    return b->d * (float)(q - 8);
}
#line 15 "portakern/examples/q4_0.pk"
float dequantize(constant const block_q4_0* b, int j) {
    const int q = j < QK4_0 / 2 ? (b->qs[j] & 15) : (b->qs[j - QK4_0 / 2] >> 4);
    return b->d * (float)(q - 8);
}




#line 20 "portakern/examples/q4_0.pk"
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
    
#line 21 "portakern/examples/q4_0.pk"
const long i = (((long)thread_position_in_grid.x));
    y[i] = dequantize(&blocks[i / QK4_0], (int)(i % QK4_0));
}
}
