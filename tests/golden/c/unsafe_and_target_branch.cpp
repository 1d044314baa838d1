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


#line 1 "tests/unsafe_and_target_branch.pk"
static inline PK_ALWAYS_INLINE void pk_item_branch(float* y, const long long pk_n0, const long long pk_n1, const long long pk_l0, const long long pk_g0, const long long pk_ls0, const long long pk_ng0, const long long pk_l1, const long long pk_g1, const long long pk_ls1, const long long pk_ng1)
{


    
#line 2 "tests/unsafe_and_target_branch.pk"
long long i = (pk_g1 * pk_ls1 + pk_l1), j = (pk_g0 * pk_ls0 + pk_l0);

    
#line 8 "tests/unsafe_and_target_branch.pk"
y[i * pk_n1 + j] = 3.0f;


    y[0] += 0 * 0.5;

    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 1 * 0.5;

    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 2 * 0.5;



}

struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"branch", 0, 0, 2, 2, 0, {0, 0, 0}, {0, 0, 0}}; }
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
            pk_item_branch(pk_a0, pk_n0, pk_n1, pk_l0, pk_g0, pk_ls0, pk_ng0, pk_l1, pk_g1, pk_ls1, pk_ng1);
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
            pk_item_branch(pk_a0, pk_n0, pk_n1, pk_l0, pk_g0, pk_ls0, pk_ng0, pk_l1, pk_g1, pk_ls1, pk_ng1);
    }

    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
