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
// A warp-shuffle reduction, in the style of cuda-samples' reduce5/reduce6 and the
// warpReduceSum of llm.c's softmax: one partial sum per workgroup.
//
// Each work-item holds one element; the subgroup (a CUDA warp, a Metal SIMD-group,
// an OpenCL sub-group, 32 work-items on the CPU) adds its values with a tree of
// @shuffle_down, with no workgroup memory and no barrier; lane 0 of each subgroup
// leaves its sum in workgroup memory, and after one barrier the subgroups' sums are
// added with @subgroupreduce. Running the kernel again on its own partial results
// reduces further, until one value is left (the catalog's run() does that).
//
// Shuffles are collectives: every work-item of the group reaches them, in
// group-uniform control flow (the loop over o depends on @subgroupsize() only).
// Work-items past the end of the ndrange hold zero in every shuffle, so a partial
// last group needs no special case; GROUP is a multiple of every subgroup size.


#line 15 "portakern/examples/warp_reduce.pk"

#if defined(_OPENMP)
#include <omp.h>
#endif
struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"warp_sum", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
#line 16 "portakern/examples/warp_reduce.pk"
T sums[256];
#line 19 "portakern/examples/warp_reduce.pk"


    
    
#line 17 "portakern/examples/warp_reduce.pk"
T  pk_priv_v[pk_items] ;
#pragma omp simd
for (long long pk_l0 = 0; pk_l0 < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0); ++pk_l0) { const long long pk_lid = pk_l0;  auto& v = pk_priv_v[pk_lid];
#line 17 "portakern/examples/warp_reduce.pk"
v =  x[((pk_g0 * pk_ls0 + pk_l0))];}
    for (int o = (int)32LL / 2; o > 0; o /= 2) {
        T pk_priv_other[pk_items]; { T pk_sv[pk_items];for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0; auto& v = pk_priv_v[pk_lid]; pk_sv[pk_lid] = pk_active ? (T)(v) : (T)0;}for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0; auto& v = pk_priv_v[pk_lid]; auto& other = pk_priv_other[pk_lid]; { const long long pk_lane = pk_lid % 32, pk_base = pk_lid - pk_lane; const long long pk_w = pk_items - pk_base < 32 ? pk_items - pk_base : 32; const int pk_a = pk_active ? (int)( o) : 0; const long long pk_src = (pk_a < 0 ? -1 : pk_lane + pk_a); other = (unsigned long long)pk_src < (unsigned long long)pk_w ? pk_sv[pk_base + pk_src] : pk_sv[pk_lid]; }} }
#pragma omp simd
for (long long pk_l0 = 0; pk_l0 < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0); ++pk_l0) { const long long pk_lid = pk_l0;  auto& v = pk_priv_v[pk_lid]; auto& other = pk_priv_other[pk_lid];
        
#line 20 "portakern/examples/warp_reduce.pk"
v += other;
    }}
#pragma omp simd
for (long long pk_l0 = 0; pk_l0 < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0); ++pk_l0) { const long long pk_lid = pk_l0;  auto& v = pk_priv_v[pk_lid];
    
#line 22 "portakern/examples/warp_reduce.pk"
if ((((pk_l0)) % 32LL) == 0) {
        sums[(((pk_l0)) / 32LL)] = v;
    }}
    /* @synchronize: the work-item loop above has ended */;
    // The subgroups that hold elements of the ndrange wrote their slot.
     const long long items = min((long long)256,
                                    (long long)(pk_n0) - (pk_g0) * 256);
     const long long count = (items + 32LL - 1) / 32LL;
    T  pk_priv_mine[pk_items] ;
#pragma omp simd
for (long long pk_l0 = 0; pk_l0 < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0); ++pk_l0) { const long long pk_lid = pk_l0;  auto& v = pk_priv_v[pk_lid]; auto& mine = pk_priv_mine[pk_lid];
#line 30 "portakern/examples/warp_reduce.pk"
mine =  0;
    for (long long k = (((pk_l0)) % 32LL); k < count; k += 32LL) {
        mine += sums[k];
    }}
    T pk_priv_total[pk_items]; { T pk_sv[pk_items];for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0; auto& v = pk_priv_v[pk_lid]; auto& mine = pk_priv_mine[pk_lid]; pk_sv[pk_lid] = pk_active ? (T)( mine) : PK_GR_ID_add(T);} for (long long pk_b = 0; pk_b < pk_items; pk_b += 32) { T pk_r = pk_sv[pk_b]; const long long pk_e = pk_items - pk_b < 32 ? pk_items : pk_b + 32; for (long long pk_k = pk_b + 1; pk_k < pk_e; ++pk_k) pk_r = PK_GR_OP_add(pk_r, pk_sv[pk_k]); pk_sv[pk_b] = pk_r; }for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0; auto& v = pk_priv_v[pk_lid]; auto& mine = pk_priv_mine[pk_lid]; auto& total = pk_priv_total[pk_lid]; { const long long pk_lane = pk_lid % 32, pk_base = pk_lid - pk_lane; const long long pk_w = pk_items - pk_base < 32 ? pk_items - pk_base : 32; total = pk_sv[pk_base]; }} }
#pragma omp simd
for (long long pk_l0 = 0; pk_l0 < (1 < (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0) ? 1 : (pk_n0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_n0 - pk_g0 * pk_ls0 : pk_ls0)); ++pk_l0) { const long long pk_lid = pk_l0;  auto& v = pk_priv_v[pk_lid]; auto& mine = pk_priv_mine[pk_lid]; auto& total = pk_priv_total[pk_lid];
    
#line 35 "portakern/examples/warp_reduce.pk"
if ((pk_l0) == 0) {
        partial[(pk_g0)] = total;
    }
}

    }

    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
