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
static inline _Float16 pk_fmin(_Float16 a, _Float16 b) { return __builtin_isnan(b) || a < b ? a : b; }
static inline _Float16 pk_fmax(_Float16 a, _Float16 b) { return __builtin_isnan(b) || a > b ? a : b; }
#define fmin pk_fmin
#define fmax pk_fmax
template <typename T> static inline T rsqrt(T x) { return (T)1 / sqrt(x); }
template <typename T> static inline T mad(T a, T b, T c) { return a * b + c; }
// q4_0 dequantize: each block is a scale and 16 bytes packing 32 4-bit values.
//
// block_q4_0 is ggml's struct type: the blocks array is a NumPy structured array
// of dtype [('d', float16), ('qs', uint8, (16,))], checked against the layout the
// target gives the struct (18 bytes). Value j of a block is its low nibble
// (j < 16) or the high nibble of byte j - 16, minus 8, times the scale, in float.
// The half scale is stored on every device: on one without half arithmetic
// (PoCL) the field is its 16 bits, read through float.
#line 9 "portakern/examples/q4_0.pk"
#define QK4_0 32

typedef struct {
    _Float16 d;
    unsigned char qs[16];
} block_q4_0;

static inline float dequantize(const block_q4_0* b, int j) {
    const int q = j < QK4_0 / 2 ? (b->qs[j] & 15) : (b->qs[j - QK4_0 / 2] >> 4);
    return (float)b->d * (float)(q - 8);
}



#line 21 "portakern/examples/q4_0.pk"
static inline PK_ALWAYS_INLINE void pk_item_q4_0(float* y, const block_q4_0* __restrict__ blocks, const long long pk_n0, const long long pk_l0, const long long pk_g0, const long long pk_ls0, const long long pk_ng0)
{

const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0;
if (pk_active) {
    
#line 22 "portakern/examples/q4_0.pk"
const long long i = ((pk_g0 * pk_ls0 + pk_l0));
    y[i] = dequantize(&blocks[i / QK4_0], (int)(i % QK4_0));
}

}

struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"q4_0", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    const block_q4_0* const pk_a1 = (const block_q4_0*)pk_argv[1];
    const long long pk_n0 = pk_geom[0];
    const long long pk_ls0 = pk_geom[1];
    const long long pk_ng0 = pk_geom[2];
    const long long pk_ext0 = pk_geom[3];
    __atomic_add_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    pk_crash_record.n[0] = pk_n0;
    pk_crash_record.ls[0] = pk_ls0;
    const long long pk_groups = pk_ng0;
    if (pk_groups == 1) {
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp;
        const long long pk_end0 = pk_ext0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_ext0 - pk_g0 * pk_ls0 : pk_ls0;
#pragma omp simd
        for (long long pk_l0 = 0; pk_l0 < pk_end0; ++pk_l0)
            pk_item_q4_0(pk_a0, pk_a1, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
    }

    } else {
#pragma omp parallel for schedule(static)
    for (long long pk_grp = 0; pk_grp < pk_groups; ++pk_grp) {
        if (pk_c && __atomic_load_n(pk_c, __ATOMIC_RELAXED) != pk_gen) {  /* Ctrl-C */
            __atomic_store_n(&pk_stopped, 1, __ATOMIC_RELAXED);
            continue;
        }
        const long long pk_g0 = pk_grp;
        const long long pk_end0 = pk_ext0 - pk_g0 * pk_ls0 < pk_ls0 ? pk_ext0 - pk_g0 * pk_ls0 : pk_ls0;
#pragma omp simd
        for (long long pk_l0 = 0; pk_l0 < pk_end0; ++pk_l0)
            pk_item_q4_0(pk_a0, pk_a1, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
    }

    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
