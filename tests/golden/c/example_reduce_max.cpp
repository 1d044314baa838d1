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
typedef float T;
// Workgroup reductions over a 1D ndrange: one partial result per workgroup.
//
// reduce_sum and reduce_max write partial[g], the sum / maximum of the
// elements that workgroup g covers; argmax_groups writes the largest value of
// each group and its index (the first one, on ties, as numpy.argmax does).
// Running a kernel again on its own partial results reduces further, until one
// value is left (the catalog's run(), in portakern/examples/__init__.py, does that).
//
// Launch with workgroupsize GROUP (or a smaller power of two): the tree below
// halves the active range at each step. The bounds mask stays on: work-items
// past the end of the ndrange skip their loads, so the tree only combines the
// slots that were written. How many that is, `count`, is the same for every
// work-item of a group, hence @uniform (computed outside the bounds mask).








#line 15 "portakern/examples/reduce.pk"

static int* pk_ctl = 0;
extern "C" PK_EXPORT void pk_attach(int* ctl) { pk_ctl = ctl; }
extern "C" PK_EXPORT int pk_launch(void* const* pk_argv, const long long* pk_geom)
{
    int* const pk_c = pk_ctl;
    const int pk_gen = pk_c ? __atomic_load_n(pk_c, __ATOMIC_RELAXED) : 0;
    int pk_stopped = 0;
    if (pk_c) __atomic_add_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    float* partial = (float*)pk_argv[0];
    const float* __restrict__ x = (const float*)pk_argv[1];
    const long long pk_n0 = pk_geom[0];
    const long long pk_ls0 = pk_geom[1];
    const long long pk_ng0 = pk_geom[2];
    const long long pk_ext0 = pk_geom[3];
    const long long pk_groups = pk_ng0;
    const long long pk_items = pk_ls0;
#pragma omp parallel for schedule(static) if (pk_groups > 1)
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp;
#line 16 "portakern/examples/reduce.pk"
T buf[256];

    
     
#line 17 "portakern/examples/reduce.pk"
const long long n = (pk_n0);
     const long long group = (pk_g0);
     const long long count = min((long long)(pk_ls0), n - group * (long long)(pk_ls0));
     long long  pk_priv_lid[pk_items] ;for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0; const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0; auto& lid = pk_priv_lid[pk_lid];if (pk_active) {lid =  (pk_l0);
    buf[lid] = x[((pk_g0 * pk_ls0 + pk_l0))];}}
    /* @synchronize: the work-item loop above has ended */;
    for (long long s = (pk_ls0) / 2; s > 0; s /= 2) {for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0; const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0; auto& lid = pk_priv_lid[pk_lid];if (pk_active) {
        if (lid < s && lid + s < count) {
            const T a = buf[lid];
            const T b = buf[lid + s];
            buf[lid] = a > b ? a : b;
        }}}
        /* @synchronize: the work-item loop above has ended */;
    }for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0; const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0; auto& lid = pk_priv_lid[pk_lid];if (pk_active) {
    if (lid == 0) {
        partial[group] = buf[0];
    }
}}

    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
