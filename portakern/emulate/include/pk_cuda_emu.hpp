// portakern's stand-in for the CUDA device API, for running a CUDA rendering on the CPU
// (g++ -std=c++17 -include pk_cuda_emu.hpp). Only what CUDA itself offers is declared,
// with CUDA's overload sets, so a call CUDA would reject fails to compile here too.
#ifndef PK_CUDA_EMU_HPP
#define PK_CUDA_EMU_HPP

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <math.h>
#include <type_traits>
#include <utility>

extern "C" void pk_emu_barrier(int line, const char* file);
extern "C" void pk_emu_fault(const char* fmt, ...);

#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __grid_constant__
// Shared memory: one object per block, since blocks run one at a time; the runtime
// poisons the section before each block.
#define __shared__ __attribute__((section("pk_shared"))) static
#define __constant__ static
// Dynamic shared memory: portakern.emulate.cupy turns `extern __shared__ T a[];` into a
// pointer to this buffer, which each launch sizes by its shared_mem.
extern "C" unsigned char* pk_emu_dynamic_shared;

struct uint3 { unsigned int x, y, z; };
// CUDA's vector types (vector_types.h): aggregates with CUDA's alignment and no operators
// (the CUDA prelude adds those portakern's vector types use), with their make_ functions.
#define PK_VEC2(T, E, A) struct alignas(A) T { E x, y; }; \
    static inline T make_##T(E x, E y) { T r = {x, y}; return r; }
#define PK_VEC3(T, E) struct T { E x, y, z; }; \
    static inline T make_##T(E x, E y, E z) { T r = {x, y, z}; return r; }
#define PK_VEC4(T, E, A) struct alignas(A) T { E x, y, z, w; }; \
    static inline T make_##T(E x, E y, E z, E w) { T r = {x, y, z, w}; return r; }
PK_VEC2(float2, float, 8) PK_VEC3(float3, float) PK_VEC4(float4, float, 16)
PK_VEC2(double2, double, 16) PK_VEC3(double3, double)
PK_VEC2(int2, int, 8) PK_VEC3(int3, int) PK_VEC4(int4, int, 16)
PK_VEC2(uint2, unsigned int, 8) PK_VEC4(uint4, unsigned int, 16)
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { uint3 r = {x, y, z}; return r; }
PK_VEC2(uchar2, unsigned char, 2) PK_VEC3(uchar3, unsigned char) PK_VEC4(uchar4, unsigned char, 4)
#undef PK_VEC2
#undef PK_VEC3
#undef PK_VEC4
struct dim3 { unsigned int x, y, z; };
static thread_local uint3 threadIdx, blockIdx;
static thread_local dim3 blockDim, gridDim;
static const int warpSize = 32;

static inline void __syncthreads(int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    pk_emu_barrier(line, file);
}
// -- warp shuffles: one exchange among the warp's threads (pk_emu_warp_gather) ------------
extern "C" unsigned pk_emu_warp_gather(const void* mine, void* all, unsigned size,
                                       unsigned* lane, int line, const char* file);
template <typename T>
static inline T pk_emu_shfl(T v, int mode, int arg, int width, int line, const char* file) {
    T all[32];
    unsigned lane;
    const unsigned count = pk_emu_warp_gather(&v, all, sizeof(T), &lane, line, file);
    const int w = width, base = (int)lane / w * w, in = (int)lane - base;
    int src;
    if (mode == 0) src = base + ((arg % w) + w) % w;                  // __shfl_sync
    else if (mode == 1) src = in + arg < w ? (int)lane + arg : (int)lane;  // __shfl_down_sync
    else if (mode == 2) src = in - arg >= 0 ? (int)lane - arg : (int)lane; // __shfl_up_sync
    else src = base + ((in ^ arg) & (w - 1));                      // __shfl_xor_sync
    // A lane that does not exist (a partial last warp) gives an undefined value on a
    // GPU; here, the caller's own.
    return (unsigned)src < count ? all[src] : v;
}
#define PK_SHFL(T)                                                                               \
    static inline T __shfl_sync(unsigned, T v, int src, int w = 32, int l = __builtin_LINE(),     \
                                const char* f = __builtin_FILE()) { return pk_emu_shfl(v, 0, src, w, l, f); } \
    static inline T __shfl_down_sync(unsigned, T v, unsigned d, int w = 32, int l = __builtin_LINE(), \
                                     const char* f = __builtin_FILE()) { return pk_emu_shfl(v, 1, (int)d, w, l, f); } \
    static inline T __shfl_up_sync(unsigned, T v, unsigned d, int w = 32, int l = __builtin_LINE(), \
                                   const char* f = __builtin_FILE()) { return pk_emu_shfl(v, 2, (int)d, w, l, f); } \
    static inline T __shfl_xor_sync(unsigned, T v, int m, int w = 32, int l = __builtin_LINE(),   \
                                    const char* f = __builtin_FILE()) { return pk_emu_shfl(v, 3, m, w, l, f); }
PK_SHFL(int)
PK_SHFL(unsigned int)
PK_SHFL(long)
PK_SHFL(unsigned long)
PK_SHFL(long long)
PK_SHFL(unsigned long long)
PK_SHFL(float)
PK_SHFL(double)
#undef PK_SHFL

static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// -- atomics: CUDA's overload set over the __atomic builtins ------------------------------
#define PK_ATOMIC_RMW(NAME, BUILTIN, T) \
    static inline T NAME(T* p, T v) { return BUILTIN(p, v, __ATOMIC_SEQ_CST); }
#define PK_ATOMIC_INT(T)                               \
    PK_ATOMIC_RMW(atomicAdd, __atomic_fetch_add, T)    \
    PK_ATOMIC_RMW(atomicAnd, __atomic_fetch_and, T)    \
    PK_ATOMIC_RMW(atomicOr, __atomic_fetch_or, T)      \
    PK_ATOMIC_RMW(atomicXor, __atomic_fetch_xor, T)    \
    PK_ATOMIC_RMW(atomicExch, __atomic_exchange_n, T)
PK_ATOMIC_INT(int)
PK_ATOMIC_INT(unsigned int)
PK_ATOMIC_INT(unsigned long long)
PK_ATOMIC_RMW(atomicSub, __atomic_fetch_sub, int)
PK_ATOMIC_RMW(atomicSub, __atomic_fetch_sub, unsigned int)
#undef PK_ATOMIC_INT
#undef PK_ATOMIC_RMW

template <typename T>
static inline T pk_cas(T* p, T compare, T value) {
    __atomic_compare_exchange_n(p, &compare, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;  // the old value, whether or not it was swapped
}
static inline int atomicCAS(int* p, int c, int v) { return pk_cas(p, c, v); }
static inline unsigned int atomicCAS(unsigned int* p, unsigned int c, unsigned int v) { return pk_cas(p, c, v); }
static inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long c, unsigned long long v) { return pk_cas(p, c, v); }
static inline unsigned short atomicCAS(unsigned short* p, unsigned short c, unsigned short v) { return pk_cas(p, c, v); }

template <typename T>
static inline T pk_fetch_minmax(T* p, T v, bool is_min) {
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while ((is_min ? v < old : v > old) &&
           !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
#define PK_ATOMIC_MINMAX(T)                                                      \
    static inline T atomicMin(T* p, T v) { return pk_fetch_minmax(p, v, true); } \
    static inline T atomicMax(T* p, T v) { return pk_fetch_minmax(p, v, false); }
PK_ATOMIC_MINMAX(int)
PK_ATOMIC_MINMAX(unsigned int)
PK_ATOMIC_MINMAX(long long)
PK_ATOMIC_MINMAX(unsigned long long)
#undef PK_ATOMIC_MINMAX

template <typename F, typename B>
static inline F pk_float_add(F* p, F v) {
    B* bits = reinterpret_cast<B*>(p);
    B old = __atomic_load_n(bits, __ATOMIC_SEQ_CST), next;
    F f;
    do {
        std::memcpy(&f, &old, sizeof f);
        F sum = f + v;
        std::memcpy(&next, &sum, sizeof next);
    } while (!__atomic_compare_exchange_n(bits, &old, next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return f;
}
static inline float atomicAdd(float* p, float v) { return pk_float_add<float, unsigned int>(p, v); }
static inline double atomicAdd(double* p, double v) { return pk_float_add<double, unsigned long long>(p, v); }
static inline float atomicExch(float* p, float v) { float old; __atomic_exchange(p, &v, &old, __ATOMIC_SEQ_CST); return old; }

// -- bit casts and intrinsics ------------------------------------------------------------
template <typename To, typename From>
static inline To pk_bits(From v) { To t; std::memcpy(&t, &v, sizeof t); return t; }
static inline int __float_as_int(float v) { return pk_bits<int>(v); }
static inline unsigned int __float_as_uint(float v) { return pk_bits<unsigned int>(v); }
static inline float __int_as_float(int v) { return pk_bits<float>(v); }
static inline float __uint_as_float(unsigned int v) { return pk_bits<float>(v); }
static inline long long __double_as_longlong(double v) { return pk_bits<long long>(v); }
static inline double __longlong_as_double(long long v) { return pk_bits<double>(v); }
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
static inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
// CUDA's sinpi and cospi (float and double), which glibc lacks: x reduced exactly to
// [-1, 1], then by symmetry to [-1/2, 1/2].
template <typename T> static inline T pk_emu_sinpi(T x) {
  T r = std::remainder(x, (T)2); const T s = r < 0 ? (T)-1 : (T)1; r = std::fabs(r);
  if (r > (T)0.5) r = (T)1 - r;
  return s * std::sin((T)3.14159265358979323846 * r);
}
template <typename T> static inline T pk_emu_cospi(T x) {
  const T r = std::fabs(std::remainder(x, (T)2));
  return std::sin((T)3.14159265358979323846 * ((T)0.5 - r));
}
static inline float sinpif(float x) { return pk_emu_sinpi(x); }
static inline double sinpi(double x) { return pk_emu_sinpi(x); }
static inline float sinpi(float x) { return pk_emu_sinpi(x); }
static inline float cospif(float x) { return pk_emu_cospi(x); }
static inline double cospi(double x) { return pk_emu_cospi(x); }
static inline float cospi(float x) { return pk_emu_cospi(x); }
// __expf, __logf, __sinf and __cosf come from glibc under the same names.
static inline float __fdividef(float a, float b) { return a / b; }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

// -- min and max: CUDA's overloads (math_functions.hpp), no templates ----------------------
#define PK_MINMAX(R, A, B)                                                       \
    static inline R min(const A a, const B b) { return (R)a < (R)b ? (R)a : (R)b; } \
    static inline R max(const A a, const B b) { return (R)a > (R)b ? (R)a : (R)b; }
PK_MINMAX(int, int, int)
PK_MINMAX(unsigned int, unsigned int, unsigned int)
PK_MINMAX(unsigned int, int, unsigned int)
PK_MINMAX(unsigned int, unsigned int, int)
PK_MINMAX(long, long, long)
PK_MINMAX(unsigned long, unsigned long, unsigned long)
PK_MINMAX(unsigned long, long, unsigned long)
PK_MINMAX(unsigned long, unsigned long, long)
PK_MINMAX(long long, long long, long long)
PK_MINMAX(unsigned long long, unsigned long long, unsigned long long)
PK_MINMAX(unsigned long long, long long, unsigned long long)
PK_MINMAX(unsigned long long, unsigned long long, long long)
#undef PK_MINMAX
static inline float min(const float a, const float b) { return std::fmin(a, b); }
static inline float max(const float a, const float b) { return std::fmax(a, b); }
static inline double min(const double a, const double b) { return std::fmin(a, b); }
static inline double max(const double a, const double b) { return std::fmax(a, b); }
static inline double min(const float a, const double b) { return std::fmin((double)a, b); }
static inline double max(const float a, const double b) { return std::fmax((double)a, b); }
static inline double min(const double a, const float b) { return std::fmin(a, (double)b); }
static inline double max(const double a, const float b) { return std::fmax(a, (double)b); }

// The float overloads of <cmath> (sqrt(float), exp(float), ...) are CUDA's too.
using std::abs;

// -- the kernel thunk ---------------------------------------------------------------------
namespace pk_emu_cuda {
template <typename T>
using bare = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename... A, std::size_t... I>
inline void invoke(void (*f)(A...), void** args, std::index_sequence<I...>) {
    f(*static_cast<bare<A>*>(args[I])...);
}
template <typename... A>
inline void invoke(void (*f)(A...), void** args) {
    invoke(f, args, std::index_sequence_for<A...>{});
}
template <typename... A>
inline int describe(void (*)(A...), int* sizes, int* pointers, int most) {
    int i = 0;
    ((i < most ? (sizes[i] = (int)sizeof(bare<A>),
                  pointers[i] = std::is_pointer<bare<A>>::value, 0) : 0, ++i), ...);
    return (int)sizeof...(A);
}
inline void set_ids(const unsigned* ids) {
    threadIdx = {ids[0], ids[1], ids[2]};
    blockIdx = {ids[3], ids[4], ids[5]};
    blockDim = {ids[6], ids[7], ids[8]};
    gridDim = {ids[9], ids[10], ids[11]};
}
}  // namespace pk_emu_cuda

// Appended after the kernel source by portakern.emulate.cupy, naming the kernel.
#define PK_EMU_CUDA_ENTRY(NAME)                                                   \
    extern "C" void pk_emu_body(void** pk_emu_args, const unsigned* pk_emu_ids) {\
        pk_emu_cuda::set_ids(pk_emu_ids);                                        \
        pk_emu_cuda::invoke(&NAME, pk_emu_args);                                 \
    }                                                                            \
    extern "C" int pk_emu_params(int* pk_sizes, int* pk_pointers, int pk_most) {\
        return pk_emu_cuda::describe(&NAME, pk_sizes, pk_pointers, pk_most);     \
    }

#endif
