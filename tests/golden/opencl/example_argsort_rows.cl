/* portakern prelude: OpenCL C */
// Row-wise argsort of float32 rows of up to 2 * GROUP elements: one workgroup per row,
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
void order_pk_llll(__local float* ka, __local int* ia, __local float* kb, __local int* ib, bool ascending) {
    const float a = (*ka);
    const float b = (*kb);
    const int x = (*ia);
    const int y = (*ib);
    const bool swap = ((a > b) | ((a == b) & (x > y))) == ascending;
    (*ka) = swap ? b : a;
    (*kb) = swap ? a : b;
    (*ia) = swap ? y : x;
    (*ib) = swap ? x : y;
}




#line 26 "portakern/examples/argsort_rows.pk"
__kernel __attribute__((reqd_work_group_size(512, 1, 1))) void argsort_rows(__global int* idx, __global const float* restrict x, const long n, const long pk_n0)
{
#line 28 "portakern/examples/argsort_rows.pk"
__local float k[2 * 512];
#line 29 "portakern/examples/argsort_rows.pk"
__local int v[2 * 512];

    
    
    
#line 30 "portakern/examples/argsort_rows.pk"
const long row = (((long)get_group_id(0))) * n;
    const long l = (((long)get_local_id(0)));
    k[l] = l < n ? x[row + l] : INFINITY;
    v[l] = (int)l;
    k[l + 512] = l + 512 < n ? x[row + l + 512] : INFINITY;
    v[l + 512] = (int)(l + 512);
    for (long size = 2; size <= 2 * 512; size <<= 1) {
        for (long stride = size / 2; stride > 0; stride >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            const int pos = (int)(2 * l - (l & (stride - 1)));
            order_pk_llll(&(k[pos]), &(v[pos]), &(k[pos + stride]), &(v[pos + stride]), (l & (size / 2)) == 0);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (l < n) {
        idx[row + l] = v[l];
    }
    if (l + 512 < n) {
        idx[row + l + 512] = v[l + 512];
    }

}
