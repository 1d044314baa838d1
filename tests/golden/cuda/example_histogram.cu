/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
template <typename A, typename B> __device__ inline decltype(true ? A() : B()) min(A a, B b) { typedef decltype(true ? A() : B()) C; return (C)b < (C)a ? (C)b : (C)a; }
template <typename A, typename B> __device__ inline decltype(true ? A() : B()) max(A a, B b) { typedef decltype(true ? A() : B()) C; return (C)a < (C)b ? (C)b : (C)a; }
__device__ inline int pk_atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ inline int pk_atomic_sub(int* p, int v) { return atomicSub(p, v); }
__device__ inline int pk_atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ inline int pk_atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ inline int pk_atomic_xchg(int* p, int v) { return atomicExch(p, v); }
__device__ inline int pk_atomic_cas(int* p, int cmp, int v) { return atomicCAS(p, cmp, v); }
__device__ inline int pk_atomic_and(int* p, int v) { return atomicAnd(p, v); }
__device__ inline int pk_atomic_or(int* p, int v) { return atomicOr(p, v); }
__device__ inline int pk_atomic_xor(int* p, int v) { return atomicXor(p, v); }
__device__ inline unsigned int pk_atomic_add(unsigned int* p, unsigned int v) { return atomicAdd(p, v); }
__device__ inline unsigned int pk_atomic_sub(unsigned int* p, unsigned int v) { return atomicSub(p, v); }
__device__ inline unsigned int pk_atomic_min(unsigned int* p, unsigned int v) { return atomicMin(p, v); }
__device__ inline unsigned int pk_atomic_max(unsigned int* p, unsigned int v) { return atomicMax(p, v); }
__device__ inline unsigned int pk_atomic_xchg(unsigned int* p, unsigned int v) { return atomicExch(p, v); }
__device__ inline unsigned int pk_atomic_cas(unsigned int* p, unsigned int cmp, unsigned int v) { return atomicCAS(p, cmp, v); }
__device__ inline unsigned int pk_atomic_and(unsigned int* p, unsigned int v) { return atomicAnd(p, v); }
__device__ inline unsigned int pk_atomic_or(unsigned int* p, unsigned int v) { return atomicOr(p, v); }
__device__ inline unsigned int pk_atomic_xor(unsigned int* p, unsigned int v) { return atomicXor(p, v); }
__device__ inline unsigned long long pk_atomic_add(unsigned long long* p, unsigned long long v) { return atomicAdd(p, v); }
__device__ inline unsigned long long pk_atomic_sub(unsigned long long* p, unsigned long long v) { return atomicAdd(p, 0ull - v); }
__device__ inline unsigned long long pk_atomic_min(unsigned long long* p, unsigned long long v) { return atomicMin(p, v); }
__device__ inline unsigned long long pk_atomic_max(unsigned long long* p, unsigned long long v) { return atomicMax(p, v); }
__device__ inline unsigned long long pk_atomic_xchg(unsigned long long* p, unsigned long long v) { return atomicExch(p, v); }
__device__ inline unsigned long long pk_atomic_cas(unsigned long long* p, unsigned long long cmp, unsigned long long v) { return atomicCAS(p, cmp, v); }
__device__ inline unsigned long long pk_atomic_and(unsigned long long* p, unsigned long long v) { return atomicAnd(p, v); }
__device__ inline unsigned long long pk_atomic_or(unsigned long long* p, unsigned long long v) { return atomicOr(p, v); }
__device__ inline unsigned long long pk_atomic_xor(unsigned long long* p, unsigned long long v) { return atomicXor(p, v); }
__device__ inline long long pk_atomic_add(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v); }
__device__ inline long long pk_atomic_sub(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, 0ull - (unsigned long long)v); }
__device__ inline long long pk_atomic_min(long long* p, long long v) { return atomicMin(p, v); }
__device__ inline long long pk_atomic_max(long long* p, long long v) { return atomicMax(p, v); }
__device__ inline long long pk_atomic_xchg(long long* p, long long v) { return (long long)atomicExch((unsigned long long*)p, (unsigned long long)v); }
__device__ inline long long pk_atomic_cas(long long* p, long long cmp, long long v) { return (long long)atomicCAS((unsigned long long*)p, (unsigned long long)cmp, (unsigned long long)v); }
__device__ inline long long pk_atomic_and(long long* p, long long v) { return (long long)atomicAnd((unsigned long long*)p, (unsigned long long)v); }
__device__ inline long long pk_atomic_or(long long* p, long long v) { return (long long)atomicOr((unsigned long long*)p, (unsigned long long)v); }
__device__ inline long long pk_atomic_xor(long long* p, long long v) { return (long long)atomicXor((unsigned long long*)p, (unsigned long long)v); }
__device__ inline float pk_atomic_add(float* p, float v) {
    return atomicAdd(p, v);
}
__device__ inline float pk_atomic_min(float* p, float v) {
    int old = *(volatile int*)p, seen;
    do {
        seen = old;
        const float a = __int_as_float(seen);
        old = atomicCAS((int*)p, seen, (int)__float_as_int(fmin(a, v)));
    } while (old != seen);
    return __int_as_float(old);
}
__device__ inline float pk_atomic_max(float* p, float v) {
    int old = *(volatile int*)p, seen;
    do {
        seen = old;
        const float a = __int_as_float(seen);
        old = atomicCAS((int*)p, seen, (int)__float_as_int(fmax(a, v)));
    } while (old != seen);
    return __int_as_float(old);
}
__device__ inline float pk_atomic_sub(float* p, float v) { return pk_atomic_add(p, -v); }
__device__ inline float pk_atomic_cas(float* p, float cmp, float v) { return __int_as_float(atomicCAS((int*)p, (int)__float_as_int(cmp), (int)__float_as_int(v))); }
__device__ inline float pk_atomic_xchg(float* p, float v) { return __int_as_float(atomicExch((int*)p, (int)__float_as_int(v))); }
__device__ inline double pk_atomic_add(double* p, double v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600
    return atomicAdd(p, v);
#else
    unsigned long long old = *(volatile unsigned long long*)p, seen;
    do {
        seen = old;
        const double a = __longlong_as_double(seen);
        old = atomicCAS((unsigned long long*)p, seen, (unsigned long long)__double_as_longlong(a + v));
    } while (old != seen);
    return __longlong_as_double(old);
#endif
}
__device__ inline double pk_atomic_min(double* p, double v) {
    unsigned long long old = *(volatile unsigned long long*)p, seen;
    do {
        seen = old;
        const double a = __longlong_as_double(seen);
        old = atomicCAS((unsigned long long*)p, seen, (unsigned long long)__double_as_longlong(fmin(a, v)));
    } while (old != seen);
    return __longlong_as_double(old);
}
__device__ inline double pk_atomic_max(double* p, double v) {
    unsigned long long old = *(volatile unsigned long long*)p, seen;
    do {
        seen = old;
        const double a = __longlong_as_double(seen);
        old = atomicCAS((unsigned long long*)p, seen, (unsigned long long)__double_as_longlong(fmax(a, v)));
    } while (old != seen);
    return __longlong_as_double(old);
}
__device__ inline double pk_atomic_sub(double* p, double v) { return pk_atomic_add(p, -v); }
__device__ inline double pk_atomic_cas(double* p, double cmp, double v) { return __longlong_as_double(atomicCAS((unsigned long long*)p, (unsigned long long)__double_as_longlong(cmp), (unsigned long long)__double_as_longlong(v))); }
__device__ inline double pk_atomic_xchg(double* p, double v) { return __longlong_as_double(atomicExch((unsigned long long*)p, (unsigned long long)__double_as_longlong(v))); }
// Histogram of uint8 data into BINS bins (256 by default), with atomics.
//
// Each workgroup first counts into its own histogram in workgroup memory
// (atomics on local memory are cheap and contend only within the group), then
// adds its non-zero bins to the global counts with one atomic per bin.
// counts must be zeroed by the caller; launches accumulate.
//
// The ndrange is 1D (flatten an image first). The bounds mask stays on, so
// the bin-clearing and bin-flushing loops stride by `count`, the number of
// work-items of this group inside the ndrange: a partial last group still
// covers every bin.


#line 12 "portakern/examples/histogram.pk"
extern "C" __global__ void histogram(unsigned int* counts, const unsigned char* __restrict__ data, const long long pk_n0)
{
#line 13 "portakern/examples/histogram.pk"
__shared__ unsigned int local_counts[256];
const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;

    
     
#line 14 "portakern/examples/histogram.pk"
const long long n = (pk_n0);
     const long long group = (((long long)blockIdx.x));
     const long long count = min((long long)(((long long)blockDim.x)), n - group * (long long)(((long long)blockDim.x)));
     long long  lid ;if (pk_active) {lid =  (((long long)threadIdx.x));
    for (long long b = lid; b < 256; b += count) {
        local_counts[b] = 0;
    }}
    __syncthreads();
     long long  bin ;if (pk_active) {bin =  ((long long)data[(((long long)blockIdx.x * blockDim.x + threadIdx.x))] * 256) / 256;
    pk_atomic_add(&local_counts[bin], 1u);}
    __syncthreads();if (pk_active) {
    for (long long b = lid; b < 256; b += count) {
        if (local_counts[b] != 0) {
            pk_atomic_add(&counts[b], local_counts[b]);
        }
    }
}
}
