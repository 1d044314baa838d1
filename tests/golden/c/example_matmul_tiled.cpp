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
// Tiled matrix multiply: c[M, N] = a[M, K] @ b[K, N] through workgroup memory.
//
// Launch with ndrange (M, N); the kernel declares workgroupsize (TILE, TILE), the
// shape of its tiles. Each workgroup computes one TILE x TILE block of c: it walks
// K one tile at a time, every work-item loads one element of a and one of b into
// the shared tiles, and after a barrier all of them read the whole tile row/column
// from fast local memory. (Declared, the size is a compile-time constant everywhere:
// on the CPU, each row of work-items becomes whole SIMD vectors.)
//
// Why unsafe_indices: with the implicit bounds mask, the work-items of a
// partial last group (row >= M or col >= N) would skip the tile loads, leaving
// stale values in the tiles that their in-range neighbours then read. Here
// every work-item of the group loads its tile element (a zero when it falls
// outside a or b) and reaches both barriers; only the final store is guarded.


#line 15 "portakern/examples/matmul_tiled.pk"

#if defined(_OPENMP)
#include <omp.h>
#endif
struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"matmul_tiled", 0, 0, 2, 2, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    float* c = (float*)pk_argv[0];
    const float* __restrict__ a = (const float*)pk_argv[1];
    const float* __restrict__ b = (const float*)pk_argv[2];
    const long long K = *(const long long*)pk_argv[3];
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
#line 20 "portakern/examples/matmul_tiled.pk"
T ta[16][16];
#line 21 "portakern/examples/matmul_tiled.pk"
T tb[16][16];

    
    
    
#line 22 "portakern/examples/matmul_tiled.pk"
T  pk_priv_acc[pk_items] ;
#pragma GCC unroll 16
for (long long pk_l1 = 0; pk_l1 < pk_ls1; ++pk_l1) 
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l1 * pk_ls0 + pk_l0;  auto& acc = pk_priv_acc[pk_lid];
    
#line 16 "portakern/examples/matmul_tiled.pk"
long long row = (pk_g1 * pk_ls1 + pk_l1), col = (pk_g0 * pk_ls0 + pk_l0);
    long long li = pk_l1, lj = pk_l0;
    const long long M = pk_n0;
    const long long N = pk_n1;
#line 22 "portakern/examples/matmul_tiled.pk"
acc =  0;}
    for (long long k0 = 0; k0 < K; k0 += 16) {for (long long pk_l1 = 0; pk_l1 < pk_ls1; ++pk_l1) 
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l1 * pk_ls0 + pk_l0;  
#line 16 "portakern/examples/matmul_tiled.pk"
long long row = (pk_g1 * pk_ls1 + pk_l1), col = (pk_g0 * pk_ls0 + pk_l0); 
#line 17 "portakern/examples/matmul_tiled.pk"
long long li = pk_l1, lj = pk_l0; 
#line 18 "portakern/examples/matmul_tiled.pk"
const long long M = pk_n0; 
#line 19 "portakern/examples/matmul_tiled.pk"
const long long N = pk_n1; auto& acc = pk_priv_acc[pk_lid];
        
#line 24 "portakern/examples/matmul_tiled.pk"
ta[li][lj] = (row < M && k0 + lj < K) ? a[row * K + k0 + lj] : (T)0;
        tb[li][lj] = (k0 + li < K && col < N) ? b[(k0 + li) * N + col] : (T)0;}
        /* @synchronize: the work-item loop above has ended */;
#pragma GCC unroll 16
for (long long pk_l1 = 0; pk_l1 < pk_ls1; ++pk_l1) 
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l1 * pk_ls0 + pk_l0;  
#line 16 "portakern/examples/matmul_tiled.pk"
long long row = (pk_g1 * pk_ls1 + pk_l1), col = (pk_g0 * pk_ls0 + pk_l0); 
#line 17 "portakern/examples/matmul_tiled.pk"
long long li = pk_l1, lj = pk_l0; 
#line 18 "portakern/examples/matmul_tiled.pk"
const long long M = pk_n0; 
#line 19 "portakern/examples/matmul_tiled.pk"
const long long N = pk_n1; auto& acc = pk_priv_acc[pk_lid];
        // Unrolled at render time: TILE is a compile-time constant.

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][0] * tb[0][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][1] * tb[1][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][2] * tb[2][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][3] * tb[3][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][4] * tb[4][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][5] * tb[5][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][6] * tb[6][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][7] * tb[7][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][8] * tb[8][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][9] * tb[9][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][10] * tb[10][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][11] * tb[11][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][12] * tb[12][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][13] * tb[13][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][14] * tb[14][lj];

        
#line 29 "portakern/examples/matmul_tiled.pk"
acc += ta[li][15] * tb[15][lj];}

        /* @synchronize: the work-item loop above has ended */;
    }for (long long pk_l1 = 0; pk_l1 < pk_ls1; ++pk_l1) 
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l1 * pk_ls0 + pk_l0;  
#line 16 "portakern/examples/matmul_tiled.pk"
long long row = (pk_g1 * pk_ls1 + pk_l1), col = (pk_g0 * pk_ls0 + pk_l0); 
#line 17 "portakern/examples/matmul_tiled.pk"
long long li = pk_l1, lj = pk_l0; 
#line 18 "portakern/examples/matmul_tiled.pk"
const long long M = pk_n0; 
#line 19 "portakern/examples/matmul_tiled.pk"
const long long N = pk_n1; auto& acc = pk_priv_acc[pk_lid];
    
#line 33 "portakern/examples/matmul_tiled.pk"
if (row < M && col < N) {
        c[row * N + col] = acc;
    }
}

    }

    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
