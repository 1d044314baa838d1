#include <metal_stdlib>
using namespace metal;
template <typename V, typename E> inline const device V* pk_as_vector(const device E* p) { return (const device V*)p; }
template <typename V, typename E> inline const constant V* pk_as_vector(const constant E* p) { return (const constant V*)p; }
inline float pk_chypot(float a, float b) { a = fabs(a); b = fabs(b); const float m = a > b ? a : b, n = a > b ? b : a; if (m == 0.0f || m != m || n != n || m - m != 0.0f) return m + n; const float r = n / m; return m * sqrt(1.0f + r * r); }
struct cfloat {
    float re;
    float im;
};
inline cfloat pk_cfloat_make(float re, float im) { cfloat z; z.re = re; z.im = im; return z; }
template <typename P> inline cfloat pk_cfloat_ld(P p) { return pk_cfloat_make(p->re, p->im); }
inline cfloat operator+(cfloat a, cfloat b) { return pk_cfloat_make(a.re + b.re, a.im + b.im); }
inline cfloat operator-(cfloat a, cfloat b) { return pk_cfloat_make(a.re - b.re, a.im - b.im); }
inline cfloat operator*(cfloat a, cfloat b) { return pk_cfloat_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
inline cfloat operator/(cfloat a, cfloat b) {
    if (fabs(b.re) >= fabs(b.im)) { const float r = b.im / b.re, d = b.re + b.im * r; return pk_cfloat_make((a.re + a.im * r) / d, (a.im - a.re * r) / d); }
    const float r = b.re / b.im, d = b.im + b.re * r; return pk_cfloat_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
inline cfloat operator-(cfloat a) { return pk_cfloat_make(-a.re, -a.im); }
inline cfloat operator+(cfloat a) { return a; }
inline bool operator==(cfloat a, cfloat b) { return a.re == b.re && a.im == b.im; }
inline bool operator!=(cfloat a, cfloat b) { return !(a == b); }
template <typename R> inline cfloat operator+(cfloat a, R b) { return a + pk_cfloat_make((float)b, (float)0); }
template <typename R> inline cfloat operator+(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) + b; }
template <typename R> inline cfloat operator-(cfloat a, R b) { return a - pk_cfloat_make((float)b, (float)0); }
template <typename R> inline cfloat operator-(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) - b; }
template <typename R> inline cfloat operator*(cfloat a, R b) { return a * pk_cfloat_make((float)b, (float)0); }
template <typename R> inline cfloat operator*(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) * b; }
template <typename R> inline cfloat operator/(cfloat a, R b) { return a / pk_cfloat_make((float)b, (float)0); }
template <typename R> inline cfloat operator/(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) / b; }
template <typename R> inline bool operator==(cfloat a, R b) { return a == pk_cfloat_make((float)b, (float)0); }
template <typename R> inline bool operator==(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) == b; }
template <typename R> inline bool operator!=(cfloat a, R b) { return a != pk_cfloat_make((float)b, (float)0); }
template <typename R> inline bool operator!=(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) != b; }
template <typename R> inline thread cfloat& operator+=(thread cfloat& a, R b) { a = a + b; return a; }
template <typename R> inline thread cfloat& operator-=(thread cfloat& a, R b) { a = a - b; return a; }
template <typename R> inline thread cfloat& operator*=(thread cfloat& a, R b) { a = a * b; return a; }
template <typename R> inline thread cfloat& operator/=(thread cfloat& a, R b) { a = a / b; return a; }
template <typename R> inline device cfloat& operator+=(device cfloat& a, R b) { a = a + b; return a; }
template <typename R> inline device cfloat& operator-=(device cfloat& a, R b) { a = a - b; return a; }
template <typename R> inline device cfloat& operator*=(device cfloat& a, R b) { a = a * b; return a; }
template <typename R> inline device cfloat& operator/=(device cfloat& a, R b) { a = a / b; return a; }
template <typename R> inline threadgroup cfloat& operator+=(threadgroup cfloat& a, R b) { a = a + b; return a; }
template <typename R> inline threadgroup cfloat& operator-=(threadgroup cfloat& a, R b) { a = a - b; return a; }
template <typename R> inline threadgroup cfloat& operator*=(threadgroup cfloat& a, R b) { a = a * b; return a; }
template <typename R> inline threadgroup cfloat& operator/=(threadgroup cfloat& a, R b) { a = a / b; return a; }
inline float real(cfloat z) { return z.re; }
inline float imag(cfloat z) { return z.im; }
inline cfloat conj(cfloat z) { return pk_cfloat_make(z.re, -z.im); }
inline float abs(cfloat z) { return pk_chypot(z.re, z.im); }
inline float arg(cfloat z) { return atan2(z.im, z.re); }
inline cfloat exp(cfloat z) { const float m = exp(z.re); return pk_cfloat_make(m * cos(z.im), m * sin(z.im)); }
inline cfloat log(cfloat z) { return pk_cfloat_make(log(abs(z)), arg(z)); }
inline cfloat sqrt(cfloat z) {
    if (z.re == 0 && z.im == 0) return pk_cfloat_make(0, z.im);
    const float t = sqrt((fabs(z.re) + abs(z)) / 2);
    if (z.re >= 0) return pk_cfloat_make(t, z.im / (2 * t));
    return pk_cfloat_make(fabs(z.im) / (2 * t), copysign(t, z.im));
}
inline cfloat pow(cfloat a, cfloat b) {
    if (a.re == 0 && a.im == 0) return (b.re == 0 && b.im == 0) ? pk_cfloat_make(1, 0) : pk_cfloat_make(0, 0);
    return exp(b * log(a));
}
template <typename R> inline cfloat pow(cfloat a, R b) { return pow(a, pk_cfloat_make((float)b, (float)0)); }
template <typename R> inline cfloat pow(R a, cfloat b) { return pow(pk_cfloat_make((float)a, (float)0), b); }
inline cfloat polar(float r, float t) { return pk_cfloat_make(r * cos(t), r * sin(t)); }
// Complex FIR filter: y[i] = sum over k of h[k] * x[i + k], in complex64.
//
// cfloat is NumPy's complex64 ({re, im} float pairs): x, h and y are complex64 arrays, and
// the * and += below are complex multiply and add on every target (on OpenCL C, which has
// no operator overloading, portakern rewrites them into calls). x holds n + taps - 1
// samples, y n outputs.


#line 7 "portakern/examples/fir_complex.pk"
[[kernel]] void fir_complex(    device cfloat* y [[buffer(0)]],
    const device cfloat* x [[buffer(1)]],
    const device cfloat* h [[buffer(2)]],
    constant int& taps [[buffer(3)]],
    constant long& pk_n0 [[buffer(4)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 8 "portakern/examples/fir_complex.pk"
const long i = (((long)thread_position_in_grid.x));
    cfloat acc = pk_cfloat_make((float)(0.0f), (float)(0.0f));
    for (int k = 0; k < taps; ++k)
        acc += pk_cfloat_ld(&(h[k])) * pk_cfloat_ld(&(x[i + k]));
    y[i] = pk_cfloat_ld(&(acc));
}
}
