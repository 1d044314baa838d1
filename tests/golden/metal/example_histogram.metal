#include <metal_stdlib>
using namespace metal;
template <typename A, typename B> inline decltype(true ? A() : B()) min(A a, B b) { typedef decltype(true ? A() : B()) C; return metal::min((C)a, (C)b); }
template <typename A, typename B> inline decltype(true ? A() : B()) max(A a, B b) { typedef decltype(true ? A() : B()) C; return metal::max((C)a, (C)b); }
inline int pk_atomic_add(device int* p, int v) { return atomic_fetch_add_explicit((device atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_sub(device int* p, int v) { return atomic_fetch_sub_explicit((device atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_min(device int* p, int v) { return atomic_fetch_min_explicit((device atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_max(device int* p, int v) { return atomic_fetch_max_explicit((device atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_and(device int* p, int v) { return atomic_fetch_and_explicit((device atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_or(device int* p, int v) { return atomic_fetch_or_explicit((device atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_xor(device int* p, int v) { return atomic_fetch_xor_explicit((device atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_xchg(device int* p, int v) { return atomic_exchange_explicit((device atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_cas(device int* p, int cmp, int v) {
    int expected = cmp;
    while (!atomic_compare_exchange_weak_explicit((device atomic_int*)p, &expected, v, memory_order_relaxed, memory_order_relaxed) && expected == cmp) {}
    return expected;
}
inline uint pk_atomic_add(device uint* p, uint v) { return atomic_fetch_add_explicit((device atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_sub(device uint* p, uint v) { return atomic_fetch_sub_explicit((device atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_min(device uint* p, uint v) { return atomic_fetch_min_explicit((device atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_max(device uint* p, uint v) { return atomic_fetch_max_explicit((device atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_and(device uint* p, uint v) { return atomic_fetch_and_explicit((device atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_or(device uint* p, uint v) { return atomic_fetch_or_explicit((device atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_xor(device uint* p, uint v) { return atomic_fetch_xor_explicit((device atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_xchg(device uint* p, uint v) { return atomic_exchange_explicit((device atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_cas(device uint* p, uint cmp, uint v) {
    uint expected = cmp;
    while (!atomic_compare_exchange_weak_explicit((device atomic_uint*)p, &expected, v, memory_order_relaxed, memory_order_relaxed) && expected == cmp) {}
    return expected;
}
inline float pk_atomic_add(device float* p, float v) { return atomic_fetch_add_explicit((device atomic_float*)p, v, memory_order_relaxed); }
inline float pk_atomic_sub(device float* p, float v) { return atomic_fetch_sub_explicit((device atomic_float*)p, v, memory_order_relaxed); }
inline float pk_atomic_xchg(device float* p, float v) { return atomic_exchange_explicit((device atomic_float*)p, v, memory_order_relaxed); }
inline float pk_atomic_cas(device float* p, float cmp, float v) { return as_type<float>(pk_atomic_cas((device uint*)p, as_type<uint>(cmp), as_type<uint>(v))); }
inline float pk_atomic_min(device float* p, float v) {
    uint seen = as_type<uint>(*p);
    while (!atomic_compare_exchange_weak_explicit((device atomic_uint*)p, &seen, as_type<uint>(fmin(as_type<float>(seen), v)), memory_order_relaxed, memory_order_relaxed)) {}
    return as_type<float>(seen);
}
inline float pk_atomic_max(device float* p, float v) {
    uint seen = as_type<uint>(*p);
    while (!atomic_compare_exchange_weak_explicit((device atomic_uint*)p, &seen, as_type<uint>(fmax(as_type<float>(seen), v)), memory_order_relaxed, memory_order_relaxed)) {}
    return as_type<float>(seen);
}
inline int pk_atomic_add(threadgroup int* p, int v) { return atomic_fetch_add_explicit((threadgroup atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_sub(threadgroup int* p, int v) { return atomic_fetch_sub_explicit((threadgroup atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_min(threadgroup int* p, int v) { return atomic_fetch_min_explicit((threadgroup atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_max(threadgroup int* p, int v) { return atomic_fetch_max_explicit((threadgroup atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_and(threadgroup int* p, int v) { return atomic_fetch_and_explicit((threadgroup atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_or(threadgroup int* p, int v) { return atomic_fetch_or_explicit((threadgroup atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_xor(threadgroup int* p, int v) { return atomic_fetch_xor_explicit((threadgroup atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_xchg(threadgroup int* p, int v) { return atomic_exchange_explicit((threadgroup atomic_int*)p, v, memory_order_relaxed); }
inline int pk_atomic_cas(threadgroup int* p, int cmp, int v) {
    int expected = cmp;
    while (!atomic_compare_exchange_weak_explicit((threadgroup atomic_int*)p, &expected, v, memory_order_relaxed, memory_order_relaxed) && expected == cmp) {}
    return expected;
}
inline uint pk_atomic_add(threadgroup uint* p, uint v) { return atomic_fetch_add_explicit((threadgroup atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_sub(threadgroup uint* p, uint v) { return atomic_fetch_sub_explicit((threadgroup atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_min(threadgroup uint* p, uint v) { return atomic_fetch_min_explicit((threadgroup atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_max(threadgroup uint* p, uint v) { return atomic_fetch_max_explicit((threadgroup atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_and(threadgroup uint* p, uint v) { return atomic_fetch_and_explicit((threadgroup atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_or(threadgroup uint* p, uint v) { return atomic_fetch_or_explicit((threadgroup atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_xor(threadgroup uint* p, uint v) { return atomic_fetch_xor_explicit((threadgroup atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_xchg(threadgroup uint* p, uint v) { return atomic_exchange_explicit((threadgroup atomic_uint*)p, v, memory_order_relaxed); }
inline uint pk_atomic_cas(threadgroup uint* p, uint cmp, uint v) {
    uint expected = cmp;
    while (!atomic_compare_exchange_weak_explicit((threadgroup atomic_uint*)p, &expected, v, memory_order_relaxed, memory_order_relaxed) && expected == cmp) {}
    return expected;
}
inline float pk_atomic_xchg(threadgroup float* p, float v) { return as_type<float>(atomic_exchange_explicit((threadgroup atomic_uint*)p, as_type<uint>(v), memory_order_relaxed)); }
inline float pk_atomic_cas(threadgroup float* p, float cmp, float v) { return as_type<float>(pk_atomic_cas((threadgroup uint*)p, as_type<uint>(cmp), as_type<uint>(v))); }
inline float pk_atomic_add(threadgroup float* p, float v) {
    uint seen = as_type<uint>(*p);
    while (!atomic_compare_exchange_weak_explicit((threadgroup atomic_uint*)p, &seen, as_type<uint>(as_type<float>(seen) + v), memory_order_relaxed, memory_order_relaxed)) {}
    return as_type<float>(seen);
}
inline float pk_atomic_sub(threadgroup float* p, float v) {
    uint seen = as_type<uint>(*p);
    while (!atomic_compare_exchange_weak_explicit((threadgroup atomic_uint*)p, &seen, as_type<uint>(as_type<float>(seen) - v), memory_order_relaxed, memory_order_relaxed)) {}
    return as_type<float>(seen);
}
inline float pk_atomic_min(threadgroup float* p, float v) {
    uint seen = as_type<uint>(*p);
    while (!atomic_compare_exchange_weak_explicit((threadgroup atomic_uint*)p, &seen, as_type<uint>(fmin(as_type<float>(seen), v)), memory_order_relaxed, memory_order_relaxed)) {}
    return as_type<float>(seen);
}
inline float pk_atomic_max(threadgroup float* p, float v) {
    uint seen = as_type<uint>(*p);
    while (!atomic_compare_exchange_weak_explicit((threadgroup atomic_uint*)p, &seen, as_type<uint>(fmax(as_type<float>(seen), v)), memory_order_relaxed, memory_order_relaxed)) {}
    return as_type<float>(seen);
}
// Histogram of uint8 data into BINS bins (256 by default), with atomics.
//
// Each workgroup first counts into its own histogram in workgroup memory
// (atomics on local memory are cheap and contend only within the group), then
// adds its non-zero bins to the global counts with one atomic per bin.
// counts must be zeroed by the caller; launches accumulate.
//
// The ndrange is 1D (flatten an image first). The bounds mask stays on, so
// the bin-clearing and bin-flushing loops stride by `count`, the number of
// work-items of this group inside the ndrange: a partial last group still
// covers every bin.


#line 12 "portakern/examples/histogram.pk"
[[kernel]] void histogram(    device uint* counts [[buffer(0)]],
    const device uint8_t* data [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 13 "portakern/examples/histogram.pk"
threadgroup uint local_counts[256];
const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;

    
     
#line 14 "portakern/examples/histogram.pk"
const long n = (pk_n0);
     const long group = (((long)threadgroup_position_in_grid.x));
     const long count = min((long)(((long)threads_per_threadgroup.x)), n - group * (long)(((long)threads_per_threadgroup.x)));
     long  lid ;if (pk_active) {lid =  (((long)thread_position_in_threadgroup.x));
    for (long b = lid; b < 256; b += count) {
        local_counts[b] = 0;
    }}
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
     long  bin ;if (pk_active) {bin =  ((long)data[(((long)thread_position_in_grid.x))] * 256) / 256;
    pk_atomic_add(&local_counts[bin], 1u);}
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);if (pk_active) {
    for (long b = lid; b < 256; b += count) {
        if (local_counts[b] != 0) {
            pk_atomic_add(&counts[b], local_counts[b]);
        }
    }
}
}
