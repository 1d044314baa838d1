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
static inline // Row-wise argsort of float32 rows of up to 2 * GROUP elements: one workgroup per row,
// a bitonic sort of (key, index) pairs in @localmem (see bitonic.pk for the network).
//
// idx[r, :] = np.argsort(x[r, :], kind="stable"): pairs compare by key, then by index,
// so equal keys keep their order. A row shorter than 2 * GROUP is padded with +inf keys
// whose indices come after every real one, so the padding sorts last and is not written.
// The ndrange is rows * GROUP items (each work-item loads and stores two elements).
//
// `order` is branchless: it always stores both pairs, so g++ vectorises the compare-
// exchange loop across work-items with gathers and scatters where the CPU has them
// (AVX-512); a swap inside an `if` it leaves scalar. The positions are `int`, which fits
// any index of workgroup memory and puts twice as many indices in a vector as `long`.
// Figures and the cost without scatters (AVX2): docs/performance.md, "Compare-exchange".
#line 14 "portakern/examples/argsort_rows.pk"
void order(float& ka, int& ia, float& kb, int& ib, bool ascending) {
    const float a = ka;
    const float b = kb;
    const int x = ia;
    const int y = ib;
    const bool swap = ((a > b) | ((a == b) & (x > y))) == ascending;
    ka = swap ? b : a;
    kb = swap ? a : b;
    ia = swap ? y : x;
    ib = swap ? x : y;
}



#line 26 "portakern/examples/argsort_rows.pk"

#if defined(_OPENMP)
#include <omp.h>
#endif
struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"argsort_rows", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    int* idx = (int*)pk_argv[0];
    const float* __restrict__ x = (const float*)pk_argv[1];
    const long long n = *(const long long*)pk_argv[2];
    const long long pk_n0 = pk_geom[0];
    const long long pk_ls0 = 512;
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
#line 28 "portakern/examples/argsort_rows.pk"
float k[2 * 512];
#line 29 "portakern/examples/argsort_rows.pk"
int v[2 * 512];

#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0; 
    
    
    
#line 30 "portakern/examples/argsort_rows.pk"
const long long row = (pk_g0) * n;
    const long long l = (pk_l0);
    k[l] = l < n ? x[row + l] : INFINITY;
    v[l] = (int)l;
    k[l + 512] = l + 512 < n ? x[row + l + 512] : INFINITY;
    v[l + 512] = (int)(l + 512);}
    for (long long size = 2; size <= 2 * 512; size <<= 1) {
        for (long long stride = size / 2; stride > 0; stride >>= 1) {
            /* @synchronize: the work-item loop above has ended */;
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  
#line 30 "portakern/examples/argsort_rows.pk"
const long long row = (pk_g0) * n; 
#line 31 "portakern/examples/argsort_rows.pk"
const long long l = (pk_l0);
            
#line 39 "portakern/examples/argsort_rows.pk"
const int pos = (int)(2 * l - (l & (stride - 1)));
            order(k[pos], v[pos], k[pos + stride], v[pos + stride], (l & (size / 2)) == 0);
        }}
    }
    /* @synchronize: the work-item loop above has ended */;
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  
#line 30 "portakern/examples/argsort_rows.pk"
const long long row = (pk_g0) * n; 
#line 31 "portakern/examples/argsort_rows.pk"
const long long l = (pk_l0);
    
#line 44 "portakern/examples/argsort_rows.pk"
if (l < n) {
        idx[row + l] = v[l];
    }
    if (l + 512 < n) {
        idx[row + l + 512] = v[l + 512];
    }
}

    }

    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
