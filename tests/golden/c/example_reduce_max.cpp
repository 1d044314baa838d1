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
#define PK_GR_FLOATING(T) ((T)0.5 != (T)0)
#define PK_GR_SIGNED(T) ((T)-1 < (T)0)
#define PK_GR_TOP(T) ((T)(((unsigned long long)1 << (sizeof(T) * 8 - 1)) - 1))
#define PK_GR_ID_add(T) ((T)0)
#define PK_GR_ID_min(T) (PK_GR_FLOATING(T) ? (T)(INFINITY) : PK_GR_SIGNED(T) ? PK_GR_TOP(T) : (T)-1)
#define PK_GR_ID_max(T) (PK_GR_FLOATING(T) ? (T)(-INFINITY) : PK_GR_SIGNED(T) ? (T)(-PK_GR_TOP(T) - 1) : (T)0)
#define PK_GR_OP_add(a, b) ((a) + (b))
#define PK_GR_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define PK_GR_OP_max(a, b) ((a) < (b) ? (b) : (a))
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
// @groupreduce(op, value) combines one value per work-item over the whole
// workgroup and gives every work-item the result. It is a collective, like
// @synchronize(): every work-item of the group reaches it, and those past the
// end of the ndrange (in a partial last group) contribute the identity of op
// without evaluating the value. Each target lowers it its own way (a SIMD loop
// on the CPU, warp shuffles on CUDA, SIMD-group functions on Metal, work-group
// functions or a local-memory tree on OpenCL): see docs/language.md. Any
// workgroup size works.






// Two reductions: the group's largest value, then the smallest local index holding
// it (items that do not hold it offer the group size, past every local index). The
// index is an int: a group has far fewer than 2^31 items, and an int reduction keeps
// twice as many lanes per SIMD register as a long one (the CPU's lockstep loop) and
// moves half the bytes through shuffles. Work-item 0 turns it into an index of x (a
// group where no value equals the maximum, only NaNs, gives n, past every index).


#line 18 "portakern/examples/reduce.pk"

#if defined(_OPENMP)
#include <omp.h>
#endif
struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"reduce_max", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    float* partial = (float*)pk_argv[0];
    const float* __restrict__ x = (const float*)pk_argv[1];
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
#pragma omp parallel for schedule(dynamic, pk_chunk) if (pk_groups > 1)
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp;
#line 19 "portakern/examples/reduce.pk"


    
#line 19 "portakern/examples/reduce.pk"
T total; { T pk_r = PK_GR_ID_max(T);{ const long long pk_e0 = pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0; 
#pragma omp simd reduction(max:pk_r)
for (int pk_l0 = 0; pk_l0 < pk_e0; ++pk_l0) { const long long pk_lid = pk_l0;  pk_r = PK_GR_OP_max(pk_r, (
#line 19 "portakern/examples/reduce.pk"
T)( x[((pk_g0 * pk_ls0 + pk_l0))]));} } total = pk_r; }
#pragma omp simd
for (long long pk_l0 = 0; pk_l0 < (1 < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0) ? 1 : (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0)); ++pk_l0) { const long long pk_lid = pk_l0; 
    
#line 20 "portakern/examples/reduce.pk"
if ((pk_l0) == 0) {
        partial[(pk_g0)] = total;
    }
}

    }

    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
