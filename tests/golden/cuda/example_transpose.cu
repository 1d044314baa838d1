/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;
// Transpose a 2D array through workgroup memory, with a declared workgroup size.
//
// @kernel(workgroupsize=...) fixes each group at TILE x TILE work-items: a launch
// needs no workgroupsize= (another size is an NDRangeError), and @groupsize(d) is
// a compile-time constant, so it sizes the tile. One padding column keeps the
// transposed reads on different memory banks of a GPU.
//
// A work-item reads in[i][j] but writes another element of out, so the kernel
// opts out of the implicit bounds mask and checks both coordinates itself: every
// work-item of a partial group still loads its slot and reaches the barrier.


#line 11 "portakern/examples/transpose.pk"
extern "C" __global__ void __launch_bounds__(256) transpose(float* out, const float* __restrict__ in, const long long pk_n0, const long long pk_n1)
{
#line 12 "portakern/examples/transpose.pk"
__shared__ T tile[16][16 + 1];

    
    
#line 13 "portakern/examples/transpose.pk"
long long li = ((long long)threadIdx.y), lj = ((long long)threadIdx.x);
    long long gi = ((long long)blockIdx.y), gj = ((long long)blockIdx.x);
    const long long h = pk_n0;
    const long long w = pk_n1;
    const long long i = gi * 16 + li;
    const long long j = gj * 16 + lj;
    if (i < h && j < w) {
        tile[li][lj] = in[i * w + j];
    }
    __syncthreads();
    // The group writes its tile to the mirrored block of out: out[oi][oj] = in[oj][oi].
    const long long oi = gj * 16 + li;
    const long long oj = gi * 16 + lj;
    if (oi < w && oj < h) {
        out[oi * h + oj] = tile[lj][li];
    }

}
