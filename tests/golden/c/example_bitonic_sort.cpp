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
static inline // Bitonic sort of uint32 keys in workgroup memory: each group sorts one segment of
// 2 * GROUP keys (the shared-memory stage of a GPU bitonic sort).
//
// `comparator` takes its two keys by reference and orders them in place. The kernel
// calls it on elements of the @localmem array, so portakern renders the helper for
// local memory: OpenCL C, which has no references, gets a copy taking `__local uint*`
// pointers (called with `&s[...]`), Metal `threadgroup uint&`, CUDA and C++ the
// reference as written.
//
// Every work-item of a group loads two keys (a segment past the end is padded with
// the largest key), so the kernel opts out of the implicit bounds mask and checks
// the end of the array itself. The barrier loops run the same counts on every
// work-item: they are group-uniform.
#line 14 "portakern/examples/bitonic.pk"
void comparator(unsigned int& a, unsigned int& b, bool ascending) {
    if ((a > b) == ascending) {
        const unsigned int t = a;
        a = b;
        b = t;
    }
}



#line 22 "portakern/examples/bitonic.pk"

#if defined(_OPENMP)
#include <omp.h>
#endif
struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"bitonic_sort", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    unsigned int* keys = (unsigned int*)pk_argv[0];
    const long long n = *(const long long*)pk_argv[1];
    const long long pk_n0 = pk_geom[0];
    const long long pk_ls0 = 256;
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
#line 23 "portakern/examples/bitonic.pk"
unsigned int s[2 * 256];

#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0; 
    
    
#line 24 "portakern/examples/bitonic.pk"
const long long l = (pk_l0);
    const long long base = (pk_g0) * 2 * 256;
    s[l] = base + l < n ? keys[base + l] : 0xffffffffu;
    s[l + 256] = base + l + 256 < n ? keys[base + l + 256] : 0xffffffffu;}
    for (long long size = 2; size <= 2 * 256; size <<= 1) {
        // Pairs of sequences sorted in opposite directions form bitonic sequences;
        // the last merge (size 2 * GROUP) sorts the whole segment ascending.
        for (long long stride = size / 2; stride > 0; stride >>= 1) {
            /* @synchronize: the work-item loop above has ended */;
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  
#line 24 "portakern/examples/bitonic.pk"
const long long l = (pk_l0); 
#line 25 "portakern/examples/bitonic.pk"
const long long base = (pk_g0) * 2 * 256;
            
#line 33 "portakern/examples/bitonic.pk"
const long long pos = 2 * l - (l & (stride - 1));
            comparator(s[pos], s[pos + stride], (l & (size / 2)) == 0);
        }}
    }
    /* @synchronize: the work-item loop above has ended */;
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  
#line 24 "portakern/examples/bitonic.pk"
const long long l = (pk_l0); 
#line 25 "portakern/examples/bitonic.pk"
const long long base = (pk_g0) * 2 * 256;
    
#line 38 "portakern/examples/bitonic.pk"
if (base + l < n) {
        keys[base + l] = s[l];
    }
    if (base + l + 256 < n) {
        keys[base + l + 256] = s[l + 256];
    }
}

    }

    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
