#include <metal_stdlib>
using namespace metal;
// Bitonic sort of uint32 keys in workgroup memory: each group sorts one segment of
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
void comparator(threadgroup uint& a, threadgroup uint& b, bool ascending) {
    if ((a > b) == ascending) {
        const uint t = a;
        a = b;
        b = t;
    }
}




#line 22 "portakern/examples/bitonic.pk"
[[kernel, max_total_threads_per_threadgroup(256)]] void bitonic_sort(    device uint* keys [[buffer(0)]],
    constant long& n [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 23 "portakern/examples/bitonic.pk"
threadgroup uint s[2 * 256];

    
    
#line 24 "portakern/examples/bitonic.pk"
const long l = (((long)thread_position_in_threadgroup.x));
    const long base = (((long)threadgroup_position_in_grid.x)) * 2 * 256;
    s[l] = base + l < n ? keys[base + l] : 0xffffffffu;
    s[l + 256] = base + l + 256 < n ? keys[base + l + 256] : 0xffffffffu;
    for (long size = 2; size <= 2 * 256; size <<= 1) {
        // Pairs of sequences sorted in opposite directions form bitonic sequences;
        // the last merge (size 2 * GROUP) sorts the whole segment ascending.
        for (long stride = size / 2; stride > 0; stride >>= 1) {
            threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
            const long pos = 2 * l - (l & (stride - 1));
            comparator(s[pos], s[pos + stride], (l & (size / 2)) == 0);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    if (base + l < n) {
        keys[base + l] = s[l];
    }
    if (base + l + 256 < n) {
        keys[base + l + 256] = s[l + 256];
    }

}
