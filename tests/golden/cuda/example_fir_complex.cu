/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
__device__ inline float pk_chypot(float a, float b) { a = fabs(a); b = fabs(b); const float m = a > b ? a : b, n = a > b ? b : a; if (m == 0.0f || m != m || n != n || m - m != 0.0f) return m + n; const float r = n / m; return m * sqrt(1.0f + r * r); }
__device__ inline double pk_chypot(double a, double b) { a = fabs(a); b = fabs(b); const double m = a > b ? a : b, n = a > b ? b : a; if (m == 0.0 || m != m || n != n || m - m != 0.0) return m + n; const double r = n / m; return m * sqrt(1.0 + r * r); }
struct cdouble;
struct cfloat {
    float re;
    float im;
    cfloat() = default;
    __host__ __device__ cfloat(float r, float i = 0) : re(r), im(i) {}
    __host__ __device__ cfloat(const cdouble& z);
};
__device__ inline cfloat pk_cfloat_make(float re, float im) { cfloat z; z.re = re; z.im = im; return z; }
__device__ inline cfloat operator+(cfloat a, cfloat b) { return pk_cfloat_make(a.re + b.re, a.im + b.im); }
__device__ inline cfloat operator-(cfloat a, cfloat b) { return pk_cfloat_make(a.re - b.re, a.im - b.im); }
__device__ inline cfloat operator*(cfloat a, cfloat b) { return pk_cfloat_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
__device__ inline cfloat operator/(cfloat a, cfloat b) {
    if (fabs(b.re) >= fabs(b.im)) { const float r = b.im / b.re, d = b.re + b.im * r; return pk_cfloat_make((a.re + a.im * r) / d, (a.im - a.re * r) / d); }
    const float r = b.re / b.im, d = b.im + b.re * r; return pk_cfloat_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
__device__ inline cfloat operator-(cfloat a) { return pk_cfloat_make(-a.re, -a.im); }
__device__ inline cfloat operator+(cfloat a) { return a; }
__device__ inline bool operator==(cfloat a, cfloat b) { return a.re == b.re && a.im == b.im; }
__device__ inline bool operator!=(cfloat a, cfloat b) { return !(a == b); }
template <typename R> __device__ inline cfloat operator+(cfloat a, R b) { return a + pk_cfloat_make((float)b, (float)0); }
template <typename R> __device__ inline cfloat operator+(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) + b; }
template <typename R> __device__ inline cfloat operator-(cfloat a, R b) { return a - pk_cfloat_make((float)b, (float)0); }
template <typename R> __device__ inline cfloat operator-(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) - b; }
template <typename R> __device__ inline cfloat operator*(cfloat a, R b) { return a * pk_cfloat_make((float)b, (float)0); }
template <typename R> __device__ inline cfloat operator*(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) * b; }
template <typename R> __device__ inline cfloat operator/(cfloat a, R b) { return a / pk_cfloat_make((float)b, (float)0); }
template <typename R> __device__ inline cfloat operator/(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) / b; }
template <typename R> __device__ inline bool operator==(cfloat a, R b) { return a == pk_cfloat_make((float)b, (float)0); }
template <typename R> __device__ inline bool operator==(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) == b; }
template <typename R> __device__ inline bool operator!=(cfloat a, R b) { return a != pk_cfloat_make((float)b, (float)0); }
template <typename R> __device__ inline bool operator!=(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) != b; }
template <typename R> __device__ inline cfloat& operator+=(cfloat& a, R b) { a = a + b; return a; }
template <typename R> __device__ inline cfloat& operator-=(cfloat& a, R b) { a = a - b; return a; }
template <typename R> __device__ inline cfloat& operator*=(cfloat& a, R b) { a = a * b; return a; }
template <typename R> __device__ inline cfloat& operator/=(cfloat& a, R b) { a = a / b; return a; }
__device__ inline float real(cfloat z) { return z.re; }
__device__ inline float imag(cfloat z) { return z.im; }
__device__ inline cfloat conj(cfloat z) { return pk_cfloat_make(z.re, -z.im); }
__device__ inline float abs(cfloat z) { return pk_chypot(z.re, z.im); }
__device__ inline float arg(cfloat z) { return atan2(z.im, z.re); }
__device__ inline cfloat exp(cfloat z) { const float m = exp(z.re); return pk_cfloat_make(m * cos(z.im), m * sin(z.im)); }
__device__ inline cfloat log(cfloat z) { return pk_cfloat_make(log(abs(z)), arg(z)); }
__device__ inline cfloat sqrt(cfloat z) {
    if (z.re == 0 && z.im == 0) return pk_cfloat_make(0, z.im);
    const float t = sqrt((fabs(z.re) + abs(z)) / 2);
    if (z.re >= 0) return pk_cfloat_make(t, z.im / (2 * t));
    return pk_cfloat_make(fabs(z.im) / (2 * t), copysign(t, z.im));
}
__device__ inline cfloat pow(cfloat a, cfloat b) {
    if (a.re == 0 && a.im == 0) return (b.re == 0 && b.im == 0) ? pk_cfloat_make(1, 0) : pk_cfloat_make(0, 0);
    return exp(b * log(a));
}
template <typename R> __device__ inline cfloat pow(cfloat a, R b) { return pow(a, pk_cfloat_make((float)b, (float)0)); }
template <typename R> __device__ inline cfloat pow(R a, cfloat b) { return pow(pk_cfloat_make((float)a, (float)0), b); }
__device__ inline cfloat polar(float r, float t) { return pk_cfloat_make(r * cos(t), r * sin(t)); }
struct cdouble {
    double re;
    double im;
    cdouble() = default;
    __host__ __device__ cdouble(double r, double i = 0) : re(r), im(i) {}
    __host__ __device__ cdouble(cfloat z) : re(z.re), im(z.im) {}
};
__host__ __device__ inline cfloat::cfloat(const cdouble& z) : re((float)z.re), im((float)z.im) {}
__device__ inline cdouble pk_cdouble_make(double re, double im) { cdouble z; z.re = re; z.im = im; return z; }
__device__ inline cdouble pk_cdouble_of(cfloat z) { return pk_cdouble_make(z.re, z.im); }
__device__ inline cdouble operator+(cdouble a, cdouble b) { return pk_cdouble_make(a.re + b.re, a.im + b.im); }
__device__ inline cdouble operator-(cdouble a, cdouble b) { return pk_cdouble_make(a.re - b.re, a.im - b.im); }
__device__ inline cdouble operator*(cdouble a, cdouble b) { return pk_cdouble_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
__device__ inline cdouble operator/(cdouble a, cdouble b) {
    if (fabs(b.re) >= fabs(b.im)) { const double r = b.im / b.re, d = b.re + b.im * r; return pk_cdouble_make((a.re + a.im * r) / d, (a.im - a.re * r) / d); }
    const double r = b.re / b.im, d = b.im + b.re * r; return pk_cdouble_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
__device__ inline cdouble operator-(cdouble a) { return pk_cdouble_make(-a.re, -a.im); }
__device__ inline cdouble operator+(cdouble a) { return a; }
__device__ inline bool operator==(cdouble a, cdouble b) { return a.re == b.re && a.im == b.im; }
__device__ inline bool operator!=(cdouble a, cdouble b) { return !(a == b); }
template <typename R> __device__ inline cdouble operator+(cdouble a, R b) { return a + pk_cdouble_make((double)b, (double)0); }
template <typename R> __device__ inline cdouble operator+(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) + b; }
template <typename R> __device__ inline cdouble operator-(cdouble a, R b) { return a - pk_cdouble_make((double)b, (double)0); }
template <typename R> __device__ inline cdouble operator-(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) - b; }
template <typename R> __device__ inline cdouble operator*(cdouble a, R b) { return a * pk_cdouble_make((double)b, (double)0); }
template <typename R> __device__ inline cdouble operator*(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) * b; }
template <typename R> __device__ inline cdouble operator/(cdouble a, R b) { return a / pk_cdouble_make((double)b, (double)0); }
template <typename R> __device__ inline cdouble operator/(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) / b; }
template <typename R> __device__ inline bool operator==(cdouble a, R b) { return a == pk_cdouble_make((double)b, (double)0); }
template <typename R> __device__ inline bool operator==(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) == b; }
template <typename R> __device__ inline bool operator!=(cdouble a, R b) { return a != pk_cdouble_make((double)b, (double)0); }
template <typename R> __device__ inline bool operator!=(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) != b; }
template <typename R> __device__ inline cdouble& operator+=(cdouble& a, R b) { a = a + b; return a; }
template <typename R> __device__ inline cdouble& operator-=(cdouble& a, R b) { a = a - b; return a; }
template <typename R> __device__ inline cdouble& operator*=(cdouble& a, R b) { a = a * b; return a; }
template <typename R> __device__ inline cdouble& operator/=(cdouble& a, R b) { a = a / b; return a; }
__device__ inline double real(cdouble z) { return z.re; }
__device__ inline double imag(cdouble z) { return z.im; }
__device__ inline cdouble conj(cdouble z) { return pk_cdouble_make(z.re, -z.im); }
__device__ inline double abs(cdouble z) { return pk_chypot(z.re, z.im); }
__device__ inline double arg(cdouble z) { return atan2(z.im, z.re); }
__device__ inline cdouble exp(cdouble z) { const double m = exp(z.re); return pk_cdouble_make(m * cos(z.im), m * sin(z.im)); }
__device__ inline cdouble log(cdouble z) { return pk_cdouble_make(log(abs(z)), arg(z)); }
__device__ inline cdouble sqrt(cdouble z) {
    if (z.re == 0 && z.im == 0) return pk_cdouble_make(0, z.im);
    const double t = sqrt((fabs(z.re) + abs(z)) / 2);
    if (z.re >= 0) return pk_cdouble_make(t, z.im / (2 * t));
    return pk_cdouble_make(fabs(z.im) / (2 * t), copysign(t, z.im));
}
__device__ inline cdouble pow(cdouble a, cdouble b) {
    if (a.re == 0 && a.im == 0) return (b.re == 0 && b.im == 0) ? pk_cdouble_make(1, 0) : pk_cdouble_make(0, 0);
    return exp(b * log(a));
}
template <typename R> __device__ inline cdouble pow(cdouble a, R b) { return pow(a, pk_cdouble_make((double)b, (double)0)); }
template <typename R> __device__ inline cdouble pow(R a, cdouble b) { return pow(pk_cdouble_make((double)a, (double)0), b); }
__device__ inline cdouble polar(double r, double t) { return pk_cdouble_make(r * cos(t), r * sin(t)); }
__device__ inline cdouble operator+(cfloat a, cdouble b) { return pk_cdouble_of(a) + b; }
__device__ inline cdouble operator+(cdouble a, cfloat b) { return a + pk_cdouble_of(b); }
__device__ inline cdouble operator-(cfloat a, cdouble b) { return pk_cdouble_of(a) - b; }
__device__ inline cdouble operator-(cdouble a, cfloat b) { return a - pk_cdouble_of(b); }
__device__ inline cdouble operator*(cfloat a, cdouble b) { return pk_cdouble_of(a) * b; }
__device__ inline cdouble operator*(cdouble a, cfloat b) { return a * pk_cdouble_of(b); }
__device__ inline cdouble operator/(cfloat a, cdouble b) { return pk_cdouble_of(a) / b; }
__device__ inline cdouble operator/(cdouble a, cfloat b) { return a / pk_cdouble_of(b); }
__device__ inline bool operator==(cfloat a, cdouble b) { return pk_cdouble_of(a) == b; }
__device__ inline bool operator==(cdouble a, cfloat b) { return a == pk_cdouble_of(b); }
__device__ inline bool operator!=(cfloat a, cdouble b) { return pk_cdouble_of(a) != b; }
__device__ inline bool operator!=(cdouble a, cfloat b) { return a != pk_cdouble_of(b); }
__device__ inline cdouble pow(cfloat a, cdouble b) { return pow(pk_cdouble_of(a), b); }
__device__ inline cdouble pow(cdouble a, cfloat b) { return pow(a, pk_cdouble_of(b)); }
// Complex FIR filter: y[i] = sum over k of h[k] * x[i + k], in complex64.
//
// cfloat is NumPy's complex64 ({re, im} float pairs): x, h and y are complex64 arrays, and
// the * and += below are complex multiply and add on every target (on OpenCL C, which has
// no operator overloading, portakern rewrites them into calls). x holds n + taps - 1
// samples, y n outputs.


#line 7 "portakern/examples/fir_complex.pk"
extern "C" __global__ void fir_complex(cfloat* y, const cfloat* __restrict__ x, const cfloat* __restrict__ h, const int taps, const long long pk_n0)
{

const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;
if (pk_active) {
    
#line 8 "portakern/examples/fir_complex.pk"
const long long i = (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    cfloat acc = cfloat(0.0f, 0.0f);
    for (int k = 0; k < taps; ++k)
        acc += h[k] * x[i + k];
    y[i] = acc;
}
}
