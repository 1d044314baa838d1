#include <metal_stdlib>
using namespace metal;
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


#line 1 "tests/atomics_all_types.pk"
[[kernel]] void atomics(    device int* a [[buffer(0)]],
    device uint* b [[buffer(1)]],
    device float* c [[buffer(2)]],
    device long* d [[buffer(3)]],
    device double* e [[buffer(4)]],
    const device int* v [[buffer(5)]],
    constant long& pk_n0 [[buffer(6)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 2 "tests/atomics_all_types.pk"
const long i = (((long)thread_position_in_grid.x));
    pk_atomic_add(&a[0], v[i]);
    pk_atomic_sub(&b[0], (uint)v[i]);
    pk_atomic_max(&c[0], (float)v[i]);
    pk_atomic_min(&d[0], (long)v[i]);
    pk_atomic_xchg(&e[0], (double)v[i]);
    pk_atomic_cas(&a[1], 0, v[i]);
    pk_atomic_and(&a[2], v[i]);
    pk_atomic_or(&b[1], (uint)v[i]);
    pk_atomic_xor(&d[1], (long)v[i]);
}
}
