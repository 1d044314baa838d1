/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
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


#line 1 "tests/atomics_all_types.pk"
extern "C" __global__ void atomics(int* a, unsigned int* b, float* c, long long* d, double* e, const int* __restrict__ v, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 2 "tests/atomics_all_types.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    pk_atomic_add(&a[0], v[i]);
    pk_atomic_sub(&b[0], (unsigned int)v[i]);
    pk_atomic_max(&c[0], (float)v[i]);
    pk_atomic_min(&d[0], (long long)v[i]);
    pk_atomic_xchg(&e[0], (double)v[i]);
    pk_atomic_cas(&a[1], 0, v[i]);
    pk_atomic_and(&a[2], v[i]);
    pk_atomic_or(&b[1], (unsigned int)v[i]);
    pk_atomic_xor(&d[1], (long long)v[i]);
}
}
