/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;
// Tiled matrix multiply: c[M, N] = a[M, K] @ b[K, N] through workgroup memory.
//
// Launch with ndrange (M, N); the kernel declares workgroupsize (TILE, TILE), the
// shape of its tiles. Each workgroup computes one TILE x TILE block of c: it walks
// K one tile at a time, every work-item loads one element of a and one of b into
// the shared tiles, and after a barrier all of them read the whole tile row/column
// from fast local memory. (Declared, the size is a compile-time constant everywhere:
// on the CPU, each row of work-items becomes whole SIMD vectors.)
//
// Why unsafe_indices: with the implicit bounds mask, the work-items of a
// partial last group (row >= M or col >= N) would skip the tile loads, leaving
// stale values in the tiles that their in-range neighbours then read. Here
// every work-item of the group loads its tile element (a zero when it falls
// outside a or b) and reaches both barriers; only the final store is guarded.


#line 15 "portakern/examples/matmul_tiled.pk"
extern "C" __global__ void __launch_bounds__(256) matmul_tiled(float* c, const float* __restrict__ a, const float* __restrict__ b, const long long K, const long long pk_n0, const long long pk_n1)
{
#line 20 "portakern/examples/matmul_tiled.pk"
__shared__ T ta[16][16];
#line 21 "portakern/examples/matmul_tiled.pk"
__shared__ T tb[16][16];

    
#line 16 "portakern/examples/matmul_tiled.pk"
long long row = ((long long)blockIdx.y * blockDim.y + threadIdx.y), col = ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    long long li = ((long long)threadIdx.y), lj = ((long long)threadIdx.x);
    const long long M = pk_n0;
    const long long N = pk_n1;
    
    
    T acc = 0;
    for (long long k0 = 0; k0 < K; k0 += 16) {
        ta[li][lj] = (row < M && k0 + lj < K) ? a[row * K + k0 + lj] : (T)0;
        tb[li][lj] = (k0 + li < K && col < N) ? b[(k0 + li) * N + col] : (T)0;
        __syncthreads();
        // Unrolled at render time: TILE is a compile-time constant.

        acc += ta[li][0] * tb[0][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][1] * tb[1][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][2] * tb[2][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][3] * tb[3][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][4] * tb[4][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][5] * tb[5][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][6] * tb[6][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][7] * tb[7][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][8] * tb[8][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][9] * tb[9][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][10] * tb[10][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][11] * tb[11][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][12] * tb[12][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][13] * tb[13][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][14] * tb[14][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][15] * tb[15][lj];

        __syncthreads();
    }
    if (row < M && col < N) {
        c[row * N + col] = acc;
    }

}
