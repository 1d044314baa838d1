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
static inline _Float16 pk_fmin(_Float16 a, _Float16 b) { return __builtin_isnan(b) || a < b ? a : b; }
static inline _Float16 pk_fmax(_Float16 a, _Float16 b) { return __builtin_isnan(b) || a > b ? a : b; }
#define fmin pk_fmin
#define fmax pk_fmax
template <typename T> static inline T rsqrt(T x) { return (T)1 / sqrt(x); }
template <typename T> static inline T mad(T a, T b, T c) { return a * b + c; }
template <typename T, typename F> static inline T pk_bitcast(F f) {
    static_assert(sizeof(T) == sizeof(F), "a bit cast needs T and v of one size");
    union { F f; T t; } u; u.f = f; return u.t;
}
// Encode float32 to half and decode it again: a scale-and-store in half precision.
//
// h[i] is x[i] * scale rounded to the nearest half (ties to even, as NumPy's
// astype(np.float16)); back[i] is that half read back as a float, exactly. Every device
// stores half: where it has no half arithmetic (PoCL), portakern computes in float and
// converts with vload_half/vstore_half. bits[i] is the half's 16 bits, a bit cast.


#line 7 "portakern/examples/f16_roundtrip.pk"
static inline PK_ALWAYS_INLINE void pk_item_f16_roundtrip(_Float16* h, float* back, unsigned short* bits, const float* __restrict__ x, const float scale, const long long pk_n0, const long long pk_l0, const long long pk_g0, const long long pk_ls0, const long long pk_ng0)
{

const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0;
if (pk_active) {
    
#line 8 "portakern/examples/f16_roundtrip.pk"
const long long i = ((pk_g0 * pk_ls0 + pk_l0));
    h[i] = (_Float16)(x[i] * scale);
    back[i] = (float)h[i];
    bits[i] = pk_bitcast<unsigned short>( h[i]);
}

}

struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"f16_roundtrip", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
__attribute__((destructor)) static void pk_crash_forget(void) {
    void** const slot = __atomic_load_n(&pk_crash_record.slot, __ATOMIC_ACQUIRE);
    if (slot) __atomic_store_n(slot, (void*)0, __ATOMIC_RELEASE);
}
static int* pk_ctl = 0;
extern "C" PK_EXPORT void pk_attach(int* ctl) { pk_ctl = ctl; }
extern "C" PK_EXPORT int pk_launch(void* const* pk_argv, const long long* pk_geom)
{
    int* const pk_c = pk_ctl;
    const int pk_gen = pk_c ? __atomic_load_n(pk_c, __ATOMIC_RELAXED) : 0;
    int pk_stopped = 0;
    if (pk_c) __atomic_add_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    _Float16* const pk_a0 = (_Float16*)pk_argv[0];
    float* const pk_a1 = (float*)pk_argv[1];
    unsigned short* const pk_a2 = (unsigned short*)pk_argv[2];
    const float* const pk_a3 = (const float*)pk_argv[3];
    const float pk_a4 = *(const float*)pk_argv[4];
    const long long pk_n0 = pk_geom[0];
    const long long pk_ls0 = pk_geom[1];
    const long long pk_ng0 = pk_geom[2];
    const long long pk_ext0 = pk_geom[3];
    __atomic_add_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    pk_crash_record.n[0] = pk_n0;
    pk_crash_record.ls[0] = pk_ls0;
    const long long pk_groups = pk_ng0;
    if (pk_groups == 1) {
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp;
        const long long pk_end0 = pk_ext0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_ext0 - pk_g0 * pk_ls0 : pk_ls0;
#pragma omp simd
        for (long long pk_l0 = 0; pk_l0 < pk_end0; ++pk_l0)
            pk_item_f16_roundtrip(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
    }

    } else {
#pragma omp parallel for schedule(static)
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp;
        const long long pk_end0 = pk_ext0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_ext0 - pk_g0 * pk_ls0 : pk_ls0;
#pragma omp simd
        for (long long pk_l0 = 0; pk_l0 < pk_end0; ++pk_l0)
            pk_item_f16_roundtrip(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
    }

    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
