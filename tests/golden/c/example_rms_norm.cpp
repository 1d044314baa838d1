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
// Row-wise normalisations with one workgroup per row (ggml's and the MLX docs' shape):
// every work-item of the group strides over the row by the group size, a @groupreduce
// combines the items' partial results, and a second pass over the row writes it.
//
// rms_norm:   y = x / sqrt(mean(x^2) + eps)
// softmax:    y = exp(x - max(x)) / sum(exp(x - max(x)))  (two reductions, then the pass)
// group_norm: ggml's group_norm: x is (groups, n) and each group of n elements is
//             normalised to zero mean and unit variance, y = (x - mean) / sqrt(var + eps);
//             the mean first, then the variance of the centred values (two passes, as ggml).
//
// `n` is the row length (any value; the group size need not divide it) and the ndrange
// is rows * GROUP, so @index(Group, Linear) is the row. The reductions are collectives:
// every work-item reaches them, which is why the kernels take unsafe_indices and no
// work-item returns early.






#line 15 "portakern/examples/rowwise.pk"

#if defined(_OPENMP)
#include <omp.h>
#endif
struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"rms_norm", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    float* y = (float*)pk_argv[0];
    const float* __restrict__ x = (const float*)pk_argv[1];
    const long long n = *(const long long*)pk_argv[2];
    const float eps = *(const float*)pk_argv[3];
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
#line 24 "portakern/examples/rowwise.pk"


    
#line 19 "portakern/examples/rowwise.pk"
float  pk_priv_acc[pk_items] ;
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  auto& acc = pk_priv_acc[pk_lid];
    
#line 17 "portakern/examples/rowwise.pk"
const long long row = (pk_g0) * n;
    const long long l = (pk_l0);
#line 19 "portakern/examples/rowwise.pk"
acc =  0.0f;}for (long long pk_b = 0; pk_b < (long long)(n); pk_b += (long long)(256)) { 
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < ((long long)(n) - pk_b < ((long long)(n) < pk_ls0 ? (long long)(n) : pk_ls0) ? (long long)(n) - pk_b : ((long long)(n) < pk_ls0 ? (long long)(n) : pk_ls0)); ++pk_l0) { const long long pk_lid = pk_l0;  
#line 17 "portakern/examples/rowwise.pk"
const long long row = (pk_g0) * n; 
#line 18 "portakern/examples/rowwise.pk"
const long long l = (pk_l0); auto& acc = pk_priv_acc[pk_lid]; 
#line 20 "portakern/examples/rowwise.pk"
long long j = pk_b + (l);{
        const float v = x[row + j];
        acc += v * v;
    }} }
    float total; { float pk_r = PK_GR_ID_add(float);{ const long long pk_e0 = pk_ls0; 
#pragma omp simd reduction(+:pk_r)
for (int pk_l0 = 0; pk_l0 < pk_e0; ++pk_l0) { const long long pk_lid = pk_l0;  
#line 17 "portakern/examples/rowwise.pk"
const long long row = (pk_g0) * n; 
#line 18 "portakern/examples/rowwise.pk"
const long long l = (pk_l0); auto& acc = pk_priv_acc[pk_lid]; pk_r = PK_GR_OP_add(pk_r, (
#line 24 "portakern/examples/rowwise.pk"
float)( acc));} } total = pk_r; }
     float  pk_priv_scale[pk_items] ;
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < pk_ls0; ++pk_l0) { const long long pk_lid = pk_l0;  
#line 17 "portakern/examples/rowwise.pk"
const long long row = (pk_g0) * n; 
#line 18 "portakern/examples/rowwise.pk"
const long long l = (pk_l0); auto& acc = pk_priv_acc[pk_lid]; auto& scale = pk_priv_scale[pk_lid];
#line 25 "portakern/examples/rowwise.pk"
scale =  1.0f / sqrt(total / (float)n + eps);}for (long long pk_b = 0; pk_b < (long long)(n); pk_b += (long long)(256)) { 
#pragma omp simd simdlen(16)
for (long long pk_l0 = 0; pk_l0 < ((long long)(n) - pk_b < ((long long)(n) < pk_ls0 ? (long long)(n) : pk_ls0) ? (long long)(n) - pk_b : ((long long)(n) < pk_ls0 ? (long long)(n) : pk_ls0)); ++pk_l0) { const long long pk_lid = pk_l0;  
#line 17 "portakern/examples/rowwise.pk"
const long long row = (pk_g0) * n; 
#line 18 "portakern/examples/rowwise.pk"
const long long l = (pk_l0); auto& acc = pk_priv_acc[pk_lid]; auto& scale = pk_priv_scale[pk_lid]; 
#line 26 "portakern/examples/rowwise.pk"
long long j = pk_b + (l);{
        y[row + j] = x[row + j] * scale;
    }
} }

    }

    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
