/* portakern prelude: CUDA C++ */
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
__device__ // Row-wise argsort of float32 rows of up to 2 * GROUP elements: one workgroup per row,
// a bitonic sort of (key, index) pairs in @localmem (see bitonic.pk for the network).
//
// idx[r, :] = np.argsort(x[r, :], kind="stable"): pairs compare by key, then by index,
// so equal keys keep their order. A row shorter than 2 * GROUP is padded with +inf keys
// whose indices come after every real one, so the padding sorts last and is not written.
// The ndrange is rows * GROUP items (each work-item loads and stores two elements).
//
// `order` is branchless: it always stores both pairs, so g++ vectorises the compare-
// exchange loop across work-items with gathers and scatters where the CPU has them
// (AVX-512); a swap inside an `if` it leaves scalar. The positions are `int`, which fits
// any index of workgroup memory and puts twice as many indices in a vector as `long`.
// Figures and the cost without scatters (AVX2): docs/performance.md, "Compare-exchange".
#line 14 "portakern/examples/argsort_rows.pk"
void order(float& ka, int& ia, float& kb, int& ib, bool ascending) {
    const float a = ka;
    const float b = kb;
    const int x = ia;
    const int y = ib;
    const bool swap = ((a > b) | ((a == b) & (x > y))) == ascending;
    ka = swap ? b : a;
    kb = swap ? a : b;
    ia = swap ? y : x;
    ib = swap ? x : y;
}



#line 26 "portakern/examples/argsort_rows.pk"
extern "C" __global__ void __launch_bounds__(512) argsort_rows(int* idx, const float* __restrict__ x, const long long n, const long long pk_n0)
{
#line 28 "portakern/examples/argsort_rows.pk"
__shared__ float k[2 * 512];
#line 29 "portakern/examples/argsort_rows.pk"
__shared__ int v[2 * 512];

    
    
    
#line 30 "portakern/examples/argsort_rows.pk"
const long long row = (((long long)blockIdx.x)) * n;
    const long long l = (((long long)threadIdx.x));
    k[l] = l < n ? x[row + l] : INFINITY;
    v[l] = (int)l;
    k[l + 512] = l + 512 < n ? x[row + l + 512] : INFINITY;
    v[l + 512] = (int)(l + 512);
    for (long long size = 2; size <= 2 * 512; size <<= 1) {
        for (long long stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            const int pos = (int)(2 * l - (l & (stride - 1)));
            order(k[pos], v[pos], k[pos + stride], v[pos + stride], (l & (size / 2)) == 0);
        }
    }
    __syncthreads();
    if (l < n) {
        idx[row + l] = v[l];
    }
    if (l + 512 < n) {
        idx[row + l + 512] = v[l + 512];
    }

}
