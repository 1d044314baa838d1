/* portakern prelude: C++ for the host CPU */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>
#if defined(_WIN32)
#define PK_EXPORT __declspec(dllexport)
#else
#define PK_EXPORT __attribute__((visibility("default")))
#endif
#define PK_ALWAYS_INLINE __attribute__((always_inline))
#if defined(PK_SIMD_MATH)
extern "C" {
}
#endif
template <typename A, typename B> static inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }
template <typename A, typename B> static inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }
template <typename T, typename L, typename H> static inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : ((T)hi < x ? (T)hi : x); }
static inline float pk_fmin(float a, float b) { return __builtin_isnan(b) || a < b ? a : b; }
static inline float pk_fmax(float a, float b) { return __builtin_isnan(b) || a > b ? a : b; }
static inline double pk_fmin(double a, double b) { return __builtin_isnan(b) || a < b ? a : b; }
static inline double pk_fmax(double a, double b) { return __builtin_isnan(b) || a > b ? a : b; }
#define fmin pk_fmin
#define fmax pk_fmax
template <typename T> static inline T rsqrt(T x) { return (T)1 / sqrt(x); }
template <typename T> static inline T mad(T a, T b, T c) { return a * b + c; }
template <typename T, typename V> static inline T pk_local_atomic_add(T* p, V v) { const T old = *p; *p = (T)(old + (T)v); return old; }
template <typename T, typename V> static inline T pk_local_atomic_sub(T* p, V v) { const T old = *p; *p = (T)(old - (T)v); return old; }
template <typename T, typename V> static inline T pk_local_atomic_xchg(T* p, V v) { const T old = *p; *p = (T)v; return old; }
template <typename T, typename C, typename V> static inline T pk_local_atomic_cas(T* p, C cmp, V v) { const T old = *p, c = (T)cmp; if (memcmp(&old, &c, sizeof old) == 0) *p = (T)v; return old; }
template <typename T, typename V> static inline T pk_local_atomic_min(T* p, V v) { const T old = *p; if constexpr (std::is_integral<T>::value) { if ((T)v < old) *p = (T)v; } else { *p = (T)fmin(old, (T)v); } return old; }
template <typename T, typename V> static inline T pk_local_atomic_max(T* p, V v) { const T old = *p; if constexpr (std::is_integral<T>::value) { if (old < (T)v) *p = (T)v; } else { *p = (T)fmax(old, (T)v); } return old; }
template <typename T, typename V> static inline T pk_local_atomic_and(T* p, V v) { const T old = *p; *p = (T)(old & (T)v); return old; }
template <typename T, typename V> static inline T pk_local_atomic_or(T* p, V v) { const T old = *p; *p = (T)(old | (T)v); return old; }
template <typename T, typename V> static inline T pk_local_atomic_xor(T* p, V v) { const T old = *p; *p = (T)(old ^ (T)v); return old; }
template <typename T> struct pk_bits { typedef T type; };
template <> struct pk_bits<float> { typedef uint32_t type; };
template <> struct pk_bits<double> { typedef uint64_t type; };
template <typename T, typename F> static inline T pk_atomic_update(T* p, F f) {
    typedef typename pk_bits<T>::type B;
    B* q = (B*)p;
    B old = __atomic_load_n(q, __ATOMIC_RELAXED), want;
    T a;
    do {
        memcpy(&a, &old, sizeof a);
        const T next = f(a);
        memcpy(&want, &next, sizeof want);
    } while (!__atomic_compare_exchange_n(q, &old, want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return a;
}
template <typename T, typename V> static inline T pk_atomic_add(T* p, V v) {
    if constexpr (std::is_integral<T>::value) return __atomic_fetch_add(p, (T)v, __ATOMIC_RELAXED);
    else return pk_atomic_update(p, [&](T a) { return (T)(a + (T)v); });
}
template <typename T, typename V> static inline T pk_atomic_sub(T* p, V v) {
    if constexpr (std::is_integral<T>::value) return __atomic_fetch_sub(p, (T)v, __ATOMIC_RELAXED);
    else return pk_atomic_update(p, [&](T a) { return (T)(a - (T)v); });
}
template <typename T, typename V> static inline T pk_atomic_min(T* p, V v) {
    if constexpr (std::is_integral<T>::value) return pk_atomic_update(p, [&](T a) { return (T)v < a ? (T)v : a; });
    else return pk_atomic_update(p, [&](T a) { return (T)fmin(a, (T)v); });
}
template <typename T, typename V> static inline T pk_atomic_max(T* p, V v) {
    if constexpr (std::is_integral<T>::value) return pk_atomic_update(p, [&](T a) { return a < (T)v ? (T)v : a; });
    else return pk_atomic_update(p, [&](T a) { return (T)fmax(a, (T)v); });
}
template <typename T, typename V> static inline T pk_atomic_xchg(T* p, V v) {
    return pk_atomic_update(p, [&](T) { return (T)v; });
}
template <typename T, typename C, typename V> static inline T pk_atomic_cas(T* p, C cmp, V v) {
    typedef typename pk_bits<T>::type B;
    const T c = (T)cmp, n = (T)v;
    B expected, want;
    memcpy(&expected, &c, sizeof expected);
    memcpy(&want, &n, sizeof want);
    __atomic_compare_exchange_n((B*)p, &expected, want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    T old;
    memcpy(&old, &expected, sizeof old);
    return old;
}
template <typename T, typename V> static inline T pk_atomic_and(T* p, V v) { return __atomic_fetch_and(p, (T)v, __ATOMIC_RELAXED); }
template <typename T, typename V> static inline T pk_atomic_or(T* p, V v) { return __atomic_fetch_or(p, (T)v, __ATOMIC_RELAXED); }
template <typename T, typename V> static inline T pk_atomic_xor(T* p, V v) { return __atomic_fetch_xor(p, (T)v, __ATOMIC_RELAXED); }
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

#if defined(_OPENMP)
#include <omp.h>
#endif
struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"histogram", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
__attribute__((destructor)) static void pk_crash_forget(void) {
    void** const slot = __atomic_load_n(&pk_crash_record.slot, __ATOMIC_ACQUIRE);
    if (slot) __atomic_store_n(slot, (void*)0, __ATOMIC_RELEASE);
}
template <typename T, long long U, bool On> struct pk_private_sums {
    T* const base;
    explicit pk_private_sums(T* b) : base(b) {}
    template <typename V> inline void add(T* p, V v) { pk_atomic_add(p, v); }
    template <typename V> inline void sub(T* p, V v) { pk_atomic_sub(p, v); }
    inline void merge() {}
};
template <typename T, long long U> struct pk_private_sums<T, U, true> {
    typedef typename std::make_unsigned<T>::type W;
    T* const base;
    W sum[U];
    explicit pk_private_sums(T* b) : base(b) { memset(sum, 0, sizeof sum); }
    inline unsigned long long slot(const T* p) const { return ((uintptr_t)p - (uintptr_t)base) / sizeof(T); }
    template <typename V> inline void add(T* p, V v) {
        const unsigned long long k = slot(p);
        if (k < (unsigned long long)U) sum[k] = (W)(sum[k] + (W)(T)v); else pk_atomic_add(p, v);
    }
    template <typename V> inline void sub(T* p, V v) {
        const unsigned long long k = slot(p);
        if (k < (unsigned long long)U) sum[k] = (W)(sum[k] - (W)(T)v); else pk_atomic_sub(p, v);
    }
    inline void merge() {
        for (long long k = 0; k < U; ++k)
            if (sum[k]) pk_atomic_add(base + k, (T)sum[k]);
    }
};
static int* pk_ctl = 0;
extern "C" PK_EXPORT void pk_attach(int* ctl) { pk_ctl = ctl; }
extern "C" PK_EXPORT int pk_launch(void* const* pk_argv, const long long* pk_geom)
{
    int* const pk_c = pk_ctl;
    const int pk_gen = pk_c ? __atomic_load_n(pk_c, __ATOMIC_RELAXED) : 0;
    int pk_stopped = 0;
    if (pk_c) __atomic_add_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    unsigned int* counts = (unsigned int*)pk_argv[0];
    const unsigned char* __restrict__ data = (const unsigned char*)pk_argv[1];
    const long long pk_n0 = pk_geom[0];
    const long long pk_ls0 = pk_geom[1];
    const long long pk_ng0 = pk_geom[2];
    const long long pk_ext0 = pk_geom[3];
    __atomic_add_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    pk_crash_record.n[0] = pk_n0;
    pk_crash_record.ls[0] = pk_ls0;
    const long long pk_groups = pk_ng0;
    const long long pk_items = pk_ls0;
#if defined(_OPENMP)
    const long long pk_chunk_n = 16LL * omp_get_max_threads();
#else
    const long long pk_chunk_n = 16;
#endif
    const long long pk_chunk = pk_groups / pk_chunk_n > 1 ? pk_groups / pk_chunk_n : 1;
#pragma omp parallel if (pk_groups > 1)
    {
        pk_private_sums<unsigned int, 256, true> pk_pv_counts(counts);
#pragma omp for schedule(dynamic, pk_chunk) nowait
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp;
#line 13 "portakern/examples/histogram.pk"
unsigned int local_counts[256];

    
     
#line 14 "portakern/examples/histogram.pk"
const long long n = (pk_n0);
     const long long group = (pk_g0);
     const long long count = min((long long)(pk_ls0), n - group * (long long)(pk_ls0));
#pragma omp simd
for (long long pk_l0 = 0; pk_l0 < ((long long)(256) < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0) ? (long long)(256) : (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0)); ++pk_l0) { const long long pk_lid = pk_l0; 
    
#line 17 "portakern/examples/histogram.pk"
const long long lid = (pk_l0);
    for (long long b = lid; b < 256; b += count) {
        local_counts[b] = 0;
    }}
    /* @synchronize: the work-item loop above has ended */;for (long long pk_l0 = 0; pk_l0 < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0); ++pk_l0) { const long long pk_lid = pk_l0;  
#line 17 "portakern/examples/histogram.pk"
const long long lid = (pk_l0);
    
#line 22 "portakern/examples/histogram.pk"
const long long bin = ((long long)data[((pk_g0 * pk_ls0 + pk_l0))] * 256) / 256;
    pk_local_atomic_add(&local_counts[bin], 1u);}
    /* @synchronize: the work-item loop above has ended */;for (long long pk_l0 = 0; pk_l0 < ((long long)(256) < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0) ? (long long)(256) : (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0)); ++pk_l0) { const long long pk_lid = pk_l0;  
#line 17 "portakern/examples/histogram.pk"
const long long lid = (pk_l0);
    
#line 25 "portakern/examples/histogram.pk"
for (long long b = lid; b < 256; b += count) {
        if (local_counts[b] != 0) {
            pk_pv_counts.add(&counts[b], local_counts[b]);
        }
    }
}

    }

        pk_pv_counts.merge();
    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
