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
// Transpose a 2D array through workgroup memory, with a declared workgroup size.
//
// @kernel(workgroupsize=...) fixes each group at TILE x TILE work-items: a launch
// needs no workgroupsize= (another size is an NDRangeError), and @groupsize(d) is
// a compile-time constant, so it sizes the tile. One padding column keeps the
// transposed reads on different memory banks of a GPU.
//
// A work-item reads in[i][j] but writes another element of out, so the kernel
// opts out of the implicit bounds mask and checks both coordinates itself: every
// work-item of a partial group still loads its slot and reaches the barrier.


#line 11 "portakern/examples/transpose.pk"

#if defined(_OPENMP)
#include <omp.h>
#endif
struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"transpose", 0, 0, 2, 2, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    float* out = (float*)pk_argv[0];
    const float* __restrict__ in = (const float*)pk_argv[1];
    const long long pk_n0 = pk_geom[0];
    const long long pk_n1 = pk_geom[1];
    const long long pk_ls0 = 16;
    const long long pk_ng0 = pk_geom[4];
    const long long pk_ext0 = pk_geom[6];
    const long long pk_ls1 = 16;
    const long long pk_ng1 = pk_geom[5];
    const long long pk_ext1 = pk_geom[7];
    __atomic_add_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    pk_crash_record.n[0] = pk_n0;
    pk_crash_record.n[1] = pk_n1;
    pk_crash_record.ls[0] = pk_ls0;
    pk_crash_record.ls[1] = pk_ls1;
    const long long pk_groups = pk_ng0 * pk_ng1;
    const long long pk_items = pk_ls0 * pk_ls1;
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
const long long pk_band = pk_grp / (8 * pk_ng0), pk_in = pk_grp % (8 * pk_ng0);
        const long long pk_rows = pk_ng1 - pk_band * 8 < 8 ? pk_ng1 - pk_band * 8 : 8;
        const long long pk_g0 = pk_in / pk_rows;
        const long long pk_g1 = pk_band * 8 + pk_in % pk_rows;
#line 12 "portakern/examples/transpose.pk"
T tile[16][16 + 1];
for (long long pk_l1 = 0; pk_l1 < pk_ls1; ++pk_l1) 
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l1 * pk_ls0 + pk_l0; 
    
    
#line 13 "portakern/examples/transpose.pk"
long long li = pk_l1, lj = pk_l0;
    long long gi = pk_g1, gj = pk_g0;
    const long long h = pk_n0;
    const long long w = pk_n1;
    const long long i = gi * 16 + li;
    const long long j = gj * 16 + lj;
    if (i < h && j < w) {
        tile[li][lj] = in[i * w + j];
    }}
    /* @synchronize: the work-item loop above has ended */;for (long long pk_l1 = 0; pk_l1 < pk_ls1; ++pk_l1) 
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l1 * pk_ls0 + pk_l0;  
#line 13 "portakern/examples/transpose.pk"
long long li = pk_l1, lj = pk_l0; 
#line 14 "portakern/examples/transpose.pk"
long long gi = pk_g1, gj = pk_g0; 
#line 15 "portakern/examples/transpose.pk"
const long long h = pk_n0; 
#line 16 "portakern/examples/transpose.pk"
const long long w = pk_n1;
    // The group writes its tile to the mirrored block of out: out[oi][oj] = in[oj][oi].
    
#line 24 "portakern/examples/transpose.pk"
const long long oi = gj * 16 + li;
    const long long oj = gi * 16 + lj;
    if (oi < w && oj < h) {
        out[oi * h + oj] = tile[lj][li];
    }
}

    }

    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
