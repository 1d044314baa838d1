#include <metal_stdlib>
using namespace metal;
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
void order(threadgroup float& ka, threadgroup int& ia, threadgroup float& kb, threadgroup int& ib, bool ascending) {
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
[[kernel, max_total_threads_per_threadgroup(512)]] void argsort_rows(    device int* idx [[buffer(0)]],
    const device float* x [[buffer(1)]],
    constant long& n [[buffer(2)]],
    constant long& pk_n0 [[buffer(3)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 28 "portakern/examples/argsort_rows.pk"
threadgroup float k[2 * 512];
#line 29 "portakern/examples/argsort_rows.pk"
threadgroup int v[2 * 512];

    
    
    
#line 30 "portakern/examples/argsort_rows.pk"
const long row = (((long)threadgroup_position_in_grid.x)) * n;
    const long l = (((long)thread_position_in_threadgroup.x));
    k[l] = l < n ? x[row + l] : INFINITY;
    v[l] = (int)l;
    k[l + 512] = l + 512 < n ? x[row + l + 512] : INFINITY;
    v[l + 512] = (int)(l + 512);
    for (long size = 2; size <= 2 * 512; size <<= 1) {
        for (long stride = size / 2; stride > 0; stride >>= 1) {
            threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
            const int pos = (int)(2 * l - (l & (stride - 1)));
            order(k[pos], v[pos], k[pos + stride], v[pos + stride], (l & (size / 2)) == 0);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    if (l < n) {
        idx[row + l] = v[l];
    }
    if (l + 512 < n) {
        idx[row + l + 512] = v[l + 512];
    }

}
