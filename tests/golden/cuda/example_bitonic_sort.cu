/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
__device__ // Bitonic sort of uint32 keys in workgroup memory: each group sorts one segment of
// 2 * GROUP keys (the shared-memory stage of a GPU bitonic sort).
//
// `comparator` takes its two keys by reference and orders them in place. The kernel
// calls it on elements of the @localmem array, so portakern renders the helper for
// local memory: OpenCL C, which has no references, gets a copy taking `__local uint*`
// pointers (called with `&s[...]`), Metal `threadgroup uint&`, CUDA and C++ the
// reference as written.
//
// Every work-item of a group loads two keys (a segment past the end is padded with
// the largest key), so the kernel opts out of the implicit bounds mask and checks
// the end of the array itself. The barrier loops run the same counts on every
// work-item: they are group-uniform.
#line 14 "portakern/examples/bitonic.pk"
void comparator(unsigned int& a, unsigned int& b, bool ascending) {
    if ((a > b) == ascending) {
        const unsigned int t = a;
        a = b;
        b = t;
    }
}



#line 22 "portakern/examples/bitonic.pk"
extern "C" __global__ void __launch_bounds__(256) bitonic_sort(unsigned int* keys, const long long n, const long long pk_n0)
{
#line 23 "portakern/examples/bitonic.pk"
__shared__ unsigned int s[2 * 256];

    
    
#line 24 "portakern/examples/bitonic.pk"
const long long l = (((long long)threadIdx.x));
    const long long base = (((long long)blockIdx.x)) * 2 * 256;
    s[l] = base + l < n ? keys[base + l] : 0xffffffffu;
    s[l + 256] = base + l + 256 < n ? keys[base + l + 256] : 0xffffffffu;
    for (long long size = 2; size <= 2 * 256; size <<= 1) {
        // Pairs of sequences sorted in opposite directions form bitonic sequences;
        // the last merge (size 2 * GROUP) sorts the whole segment ascending.
        for (long long stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            const long long pos = 2 * l - (l & (stride - 1));
            comparator(s[pos], s[pos + stride], (l & (size / 2)) == 0);
        }
    }
    __syncthreads();
    if (base + l < n) {
        keys[base + l] = s[l];
    }
    if (base + l + 256 < n) {
        keys[base + l + 256] = s[l + 256];
    }

}
