/* portakern prelude: CUDA C++ */
#include <cuda_fp16.h>
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
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
    __half d;
    unsigned char qs[16];
} block_q4_0;

__device__ float dequantize(const block_q4_0* b, int j) {
    const int q = j < QK4_0 / 2 ? (b->qs[j] & 15) : (b->qs[j - QK4_0 / 2] >> 4);
    return (float)b->d * (float)(q - 8);
}



#line 21 "portakern/examples/q4_0.pk"
extern "C" __global__ void q4_0(float* y, const block_q4_0* __restrict__ blocks, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 22 "portakern/examples/q4_0.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    y[i] = dequantize(&blocks[i / QK4_0], (int)(i % QK4_0));
}
}
