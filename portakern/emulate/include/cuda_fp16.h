// portakern's stand-in for CUDA's cuda_fp16.h when a CUDA rendering runs on the CPU:
// __half as IEEE binary16 (_Float16), with the conversions and operators CUDA defines.
#ifndef PK_CUDA_FP16_H
#define PK_CUDA_FP16_H

struct __half {
    _Float16 v;
    __half() = default;
    __half(float f) : v((_Float16)f) {}
    __half(double f) : v((_Float16)f) {}
    __half(int i) : v((_Float16)i) {}
    __half(unsigned int i) : v((_Float16)i) {}
    __half(long long i) : v((_Float16)i) {}
    __half(unsigned long long i) : v((_Float16)i) {}
    operator float() const { return (float)v; }
    __half& operator+=(const __half& o) { v = (_Float16)((float)v + (float)o.v); return *this; }
    __half& operator-=(const __half& o) { v = (_Float16)((float)v - (float)o.v); return *this; }
    __half& operator*=(const __half& o) { v = (_Float16)((float)v * (float)o.v); return *this; }
    __half& operator/=(const __half& o) { v = (_Float16)((float)v / (float)o.v); return *this; }
};
static inline __half operator+(__half a, __half b) { return __half((float)a + (float)b); }
static inline __half operator-(__half a, __half b) { return __half((float)a - (float)b); }
static inline __half operator*(__half a, __half b) { return __half((float)a * (float)b); }
static inline __half operator/(__half a, __half b) { return __half((float)a / (float)b); }
static inline __half operator-(__half a) { return __half(-(float)a); }
static inline bool operator==(__half a, __half b) { return (float)a == (float)b; }
static inline bool operator!=(__half a, __half b) { return (float)a != (float)b; }
static inline bool operator<(__half a, __half b) { return (float)a < (float)b; }
static inline bool operator>(__half a, __half b) { return (float)a > (float)b; }
static inline bool operator<=(__half a, __half b) { return (float)a <= (float)b; }
static inline bool operator>=(__half a, __half b) { return (float)a >= (float)b; }
static inline __half __float2half(float f) { return __half(f); }
static inline float __half2float(__half h) { return (float)h; }
static inline __half __hadd(__half a, __half b) { return a + b; }
static inline __half __hmul(__half a, __half b) { return a * b; }
typedef __half half;
#endif
