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
// Transpose a 2D array given as any view: a transpose, a stepped or reversed slice.
//
// 'T out[:, :]' and 'const T in[:, :]' are N-d array parameters: each brings its
// extents and strides, so in[i, j] is element (i, j) of whatever view was passed
// (NumPy, CuPy or PyOpenCL: no copy is made), and out[j, i] writes through to the
// array that out is a view of. One work-item per element of in; the ndrange is
// in's shape, which the kernel checks against @size so a mismatched out is skipped.


#line 8 "portakern/examples/transpose_views.pk"
static inline PK_ALWAYS_INLINE void pk_item_transpose_views(float* out, const float* __restrict__ in, const long long pk_out_n0, const long long pk_out_n1, const long long pk_out_s0, const long long pk_out_s1, const long long pk_out_o, const long long pk_in_n0, const long long pk_in_n1, const long long pk_in_s0, const long long pk_in_s1, const long long pk_in_o, const long long pk_n0, const long long pk_n1, const long long pk_l0, const long long pk_g0, const long long pk_ls0, const long long pk_ng0, const long long pk_l1, const long long pk_g1, const long long pk_ls1, const long long pk_ng1)
{

const bool pk_active = (pk_g1 * pk_ls1 + pk_l1) < pk_n0 && (pk_g0 * pk_ls0 + pk_l0) < pk_n1;
if (pk_active) {
    
#line 9 "portakern/examples/transpose_views.pk"
long long i = (pk_g1 * pk_ls1 + pk_l1), j = (pk_g0 * pk_ls0 + pk_l0);
    if (j < pk_out_n0 && i < pk_out_n1) {
        out[pk_out_o + (j) * pk_out_s0 + ( i) * pk_out_s1] = in[pk_in_o + (i) * pk_in_s0 + ( j) * pk_in_s1];
    }
}

}

struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"transpose_views", 0, 0, 2, 2, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    float* const pk_a0 = (float*)pk_argv[0];
    const float* const pk_a1 = (const float*)pk_argv[1];
    const long long pk_a2 = *(const long long*)pk_argv[2];
    const long long pk_a3 = *(const long long*)pk_argv[3];
    const long long pk_a4 = *(const long long*)pk_argv[4];
    const long long pk_a5 = *(const long long*)pk_argv[5];
    const long long pk_a6 = *(const long long*)pk_argv[6];
    const long long pk_a7 = *(const long long*)pk_argv[7];
    const long long pk_a8 = *(const long long*)pk_argv[8];
    const long long pk_a9 = *(const long long*)pk_argv[9];
    const long long pk_a10 = *(const long long*)pk_argv[10];
    const long long pk_a11 = *(const long long*)pk_argv[11];
    const long long pk_n0 = pk_geom[0];
    const long long pk_n1 = pk_geom[1];
    const long long pk_ls0 = pk_geom[2];
    const long long pk_ng0 = pk_geom[4];
    const long long pk_ext0 = pk_geom[6];
    const long long pk_ls1 = pk_geom[3];
    const long long pk_ng1 = pk_geom[5];
    const long long pk_ext1 = pk_geom[7];
    __atomic_add_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    pk_crash_record.n[0] = pk_n0;
    pk_crash_record.n[1] = pk_n1;
    pk_crash_record.ls[0] = pk_ls0;
    pk_crash_record.ls[1] = pk_ls1;
    const long long pk_groups = pk_ng0 * pk_ng1;
    if (pk_a10 == 0) {
    if (pk_groups == 1) {
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp % pk_ng0;
        const long long pk_end0 = pk_ext0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_ext0 - pk_g0 * pk_ls0 : pk_ls0;
        const long long pk_g1 = pk_grp / pk_ng0;
        const long long pk_end1 = pk_ext1 - pk_g1 * pk_ls1 < pk_ls1 ? pk_ext1 - pk_g1 * pk_ls1 : pk_ls1;
        for (long long pk_l1 = 0; pk_l1 < pk_end1; ++pk_l1)
#pragma omp simd
        for (long long pk_l0 = 0; pk_l0 < pk_end0; ++pk_l0)
            pk_item_transpose_views(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_a5, pk_a6, pk_a7, pk_a8, pk_a9, 0LL, pk_a11, pk_n0, pk_n1, pk_l0, pk_g0, pk_ls0, pk_ng0, pk_l1, pk_g1, pk_ls1, pk_ng1);
    }

    } else {
#pragma omp parallel for schedule(static)
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp % pk_ng0;
        const long long pk_end0 = pk_ext0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_ext0 - pk_g0 * pk_ls0 : pk_ls0;
        const long long pk_g1 = pk_grp / pk_ng0;
        const long long pk_end1 = pk_ext1 - pk_g1 * pk_ls1 < pk_ls1 ? pk_ext1 - pk_g1 * pk_ls1 : pk_ls1;
        for (long long pk_l1 = 0; pk_l1 < pk_end1; ++pk_l1)
#pragma omp simd
        for (long long pk_l0 = 0; pk_l0 < pk_end0; ++pk_l0)
            pk_item_transpose_views(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_a5, pk_a6, pk_a7, pk_a8, pk_a9, 0LL, pk_a11, pk_n0, pk_n1, pk_l0, pk_g0, pk_ls0, pk_ng0, pk_l1, pk_g1, pk_ls1, pk_ng1);
    }

    }
    } else {
    if (pk_groups == 1) {
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp % pk_ng0;
        const long long pk_end0 = pk_ext0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_ext0 - pk_g0 * pk_ls0 : pk_ls0;
        const long long pk_g1 = pk_grp / pk_ng0;
        const long long pk_end1 = pk_ext1 - pk_g1 * pk_ls1 < pk_ls1 ? pk_ext1 - pk_g1 * pk_ls1 : pk_ls1;
        for (long long pk_l1 = 0; pk_l1 < pk_end1; ++pk_l1)
#pragma omp simd
        for (long long pk_l0 = 0; pk_l0 < pk_end0; ++pk_l0)
            pk_item_transpose_views(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_a5, pk_a6, pk_a7, pk_a8, pk_a9, pk_a10, pk_a11, pk_n0, pk_n1, pk_l0, pk_g0, pk_ls0, pk_ng0, pk_l1, pk_g1, pk_ls1, pk_ng1);
    }

    } else {
#pragma omp parallel for schedule(static)
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp % pk_ng0;
        const long long pk_end0 = pk_ext0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_ext0 - pk_g0 * pk_ls0 : pk_ls0;
        const long long pk_g1 = pk_grp / pk_ng0;
        const long long pk_end1 = pk_ext1 - pk_g1 * pk_ls1 < pk_ls1 ? pk_ext1 - pk_g1 * pk_ls1 : pk_ls1;
        for (long long pk_l1 = 0; pk_l1 < pk_end1; ++pk_l1)
#pragma omp simd
        for (long long pk_l0 = 0; pk_l0 < pk_end0; ++pk_l0)
            pk_item_transpose_views(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_a5, pk_a6, pk_a7, pk_a8, pk_a9, pk_a10, pk_a11, pk_n0, pk_n1, pk_l0, pk_g0, pk_ls0, pk_ng0, pk_l1, pk_g1, pk_ls1, pk_ng1);
    }

    }
    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
