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
static inline float pk_chypot(float a, float b) { a = fabs(a); b = fabs(b); const float m = a > b ? a : b, n = a > b ? b : a; if (m == 0.0f || m != m || n != n || m - m != 0.0f) return m + n; const float r = n / m; return m * sqrt(1.0f + r * r); }
static inline double pk_chypot(double a, double b) { a = fabs(a); b = fabs(b); const double m = a > b ? a : b, n = a > b ? b : a; if (m == 0.0 || m != m || n != n || m - m != 0.0) return m + n; const double r = n / m; return m * sqrt(1.0 + r * r); }
struct cdouble;
struct cfloat {
    float re;
    float im;
    cfloat() = default;
    cfloat(float r, float i = 0) : re(r), im(i) {}
    cfloat(const cdouble& z);
};
static inline cfloat pk_cfloat_make(float re, float im) { cfloat z; z.re = re; z.im = im; return z; }
static inline cfloat operator+(cfloat a, cfloat b) { return pk_cfloat_make(a.re + b.re, a.im + b.im); }
static inline cfloat operator-(cfloat a, cfloat b) { return pk_cfloat_make(a.re - b.re, a.im - b.im); }
static inline cfloat operator*(cfloat a, cfloat b) { return pk_cfloat_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static inline cfloat operator/(cfloat a, cfloat b) {
    if (fabs(b.re) >= fabs(b.im)) { const float r = b.im / b.re, d = b.re + b.im * r; return pk_cfloat_make((a.re + a.im * r) / d, (a.im - a.re * r) / d); }
    const float r = b.re / b.im, d = b.im + b.re * r; return pk_cfloat_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
static inline cfloat operator-(cfloat a) { return pk_cfloat_make(-a.re, -a.im); }
static inline cfloat operator+(cfloat a) { return a; }
static inline bool operator==(cfloat a, cfloat b) { return a.re == b.re && a.im == b.im; }
static inline bool operator!=(cfloat a, cfloat b) { return !(a == b); }
template <typename R> static inline cfloat operator+(cfloat a, R b) { return a + pk_cfloat_make((float)b, (float)0); }
template <typename R> static inline cfloat operator+(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) + b; }
template <typename R> static inline cfloat operator-(cfloat a, R b) { return a - pk_cfloat_make((float)b, (float)0); }
template <typename R> static inline cfloat operator-(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) - b; }
template <typename R> static inline cfloat operator*(cfloat a, R b) { return a * pk_cfloat_make((float)b, (float)0); }
template <typename R> static inline cfloat operator*(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) * b; }
template <typename R> static inline cfloat operator/(cfloat a, R b) { return a / pk_cfloat_make((float)b, (float)0); }
template <typename R> static inline cfloat operator/(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) / b; }
template <typename R> static inline bool operator==(cfloat a, R b) { return a == pk_cfloat_make((float)b, (float)0); }
template <typename R> static inline bool operator==(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) == b; }
template <typename R> static inline bool operator!=(cfloat a, R b) { return a != pk_cfloat_make((float)b, (float)0); }
template <typename R> static inline bool operator!=(R a, cfloat b) { return pk_cfloat_make((float)a, (float)0) != b; }
template <typename R> static inline cfloat& operator+=(cfloat& a, R b) { a = a + b; return a; }
template <typename R> static inline cfloat& operator-=(cfloat& a, R b) { a = a - b; return a; }
template <typename R> static inline cfloat& operator*=(cfloat& a, R b) { a = a * b; return a; }
template <typename R> static inline cfloat& operator/=(cfloat& a, R b) { a = a / b; return a; }
static inline float real(cfloat z) { return z.re; }
static inline float imag(cfloat z) { return z.im; }
static inline cfloat conj(cfloat z) { return pk_cfloat_make(z.re, -z.im); }
static inline float abs(cfloat z) { return pk_chypot(z.re, z.im); }
static inline float arg(cfloat z) { return atan2(z.im, z.re); }
static inline cfloat exp(cfloat z) { const float m = exp(z.re); return pk_cfloat_make(m * cos(z.im), m * sin(z.im)); }
static inline cfloat log(cfloat z) { return pk_cfloat_make(log(abs(z)), arg(z)); }
static inline cfloat sqrt(cfloat z) {
    if (z.re == 0 && z.im == 0) return pk_cfloat_make(0, z.im);
    const float t = sqrt((fabs(z.re) + abs(z)) / 2);
    if (z.re >= 0) return pk_cfloat_make(t, z.im / (2 * t));
    return pk_cfloat_make(fabs(z.im) / (2 * t), copysign(t, z.im));
}
static inline cfloat pow(cfloat a, cfloat b) {
    if (a.re == 0 && a.im == 0) return (b.re == 0 && b.im == 0) ? pk_cfloat_make(1, 0) : pk_cfloat_make(0, 0);
    return exp(b * log(a));
}
template <typename R> static inline cfloat pow(cfloat a, R b) { return pow(a, pk_cfloat_make((float)b, (float)0)); }
template <typename R> static inline cfloat pow(R a, cfloat b) { return pow(pk_cfloat_make((float)a, (float)0), b); }
static inline cfloat polar(float r, float t) { return pk_cfloat_make(r * cos(t), r * sin(t)); }
struct cdouble {
    double re;
    double im;
    cdouble() = default;
    cdouble(double r, double i = 0) : re(r), im(i) {}
    cdouble(cfloat z) : re(z.re), im(z.im) {}
};
inline cfloat::cfloat(const cdouble& z) : re((float)z.re), im((float)z.im) {}
static inline cdouble pk_cdouble_make(double re, double im) { cdouble z; z.re = re; z.im = im; return z; }
static inline cdouble pk_cdouble_of(cfloat z) { return pk_cdouble_make(z.re, z.im); }
static inline cdouble operator+(cdouble a, cdouble b) { return pk_cdouble_make(a.re + b.re, a.im + b.im); }
static inline cdouble operator-(cdouble a, cdouble b) { return pk_cdouble_make(a.re - b.re, a.im - b.im); }
static inline cdouble operator*(cdouble a, cdouble b) { return pk_cdouble_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static inline cdouble operator/(cdouble a, cdouble b) {
    if (fabs(b.re) >= fabs(b.im)) { const double r = b.im / b.re, d = b.re + b.im * r; return pk_cdouble_make((a.re + a.im * r) / d, (a.im - a.re * r) / d); }
    const double r = b.re / b.im, d = b.im + b.re * r; return pk_cdouble_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
static inline cdouble operator-(cdouble a) { return pk_cdouble_make(-a.re, -a.im); }
static inline cdouble operator+(cdouble a) { return a; }
static inline bool operator==(cdouble a, cdouble b) { return a.re == b.re && a.im == b.im; }
static inline bool operator!=(cdouble a, cdouble b) { return !(a == b); }
template <typename R> static inline cdouble operator+(cdouble a, R b) { return a + pk_cdouble_make((double)b, (double)0); }
template <typename R> static inline cdouble operator+(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) + b; }
template <typename R> static inline cdouble operator-(cdouble a, R b) { return a - pk_cdouble_make((double)b, (double)0); }
template <typename R> static inline cdouble operator-(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) - b; }
template <typename R> static inline cdouble operator*(cdouble a, R b) { return a * pk_cdouble_make((double)b, (double)0); }
template <typename R> static inline cdouble operator*(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) * b; }
template <typename R> static inline cdouble operator/(cdouble a, R b) { return a / pk_cdouble_make((double)b, (double)0); }
template <typename R> static inline cdouble operator/(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) / b; }
template <typename R> static inline bool operator==(cdouble a, R b) { return a == pk_cdouble_make((double)b, (double)0); }
template <typename R> static inline bool operator==(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) == b; }
template <typename R> static inline bool operator!=(cdouble a, R b) { return a != pk_cdouble_make((double)b, (double)0); }
template <typename R> static inline bool operator!=(R a, cdouble b) { return pk_cdouble_make((double)a, (double)0) != b; }
template <typename R> static inline cdouble& operator+=(cdouble& a, R b) { a = a + b; return a; }
template <typename R> static inline cdouble& operator-=(cdouble& a, R b) { a = a - b; return a; }
template <typename R> static inline cdouble& operator*=(cdouble& a, R b) { a = a * b; return a; }
template <typename R> static inline cdouble& operator/=(cdouble& a, R b) { a = a / b; return a; }
static inline double real(cdouble z) { return z.re; }
static inline double imag(cdouble z) { return z.im; }
static inline cdouble conj(cdouble z) { return pk_cdouble_make(z.re, -z.im); }
static inline double abs(cdouble z) { return pk_chypot(z.re, z.im); }
static inline double arg(cdouble z) { return atan2(z.im, z.re); }
static inline cdouble exp(cdouble z) { const double m = exp(z.re); return pk_cdouble_make(m * cos(z.im), m * sin(z.im)); }
static inline cdouble log(cdouble z) { return pk_cdouble_make(log(abs(z)), arg(z)); }
static inline cdouble sqrt(cdouble z) {
    if (z.re == 0 && z.im == 0) return pk_cdouble_make(0, z.im);
    const double t = sqrt((fabs(z.re) + abs(z)) / 2);
    if (z.re >= 0) return pk_cdouble_make(t, z.im / (2 * t));
    return pk_cdouble_make(fabs(z.im) / (2 * t), copysign(t, z.im));
}
static inline cdouble pow(cdouble a, cdouble b) {
    if (a.re == 0 && a.im == 0) return (b.re == 0 && b.im == 0) ? pk_cdouble_make(1, 0) : pk_cdouble_make(0, 0);
    return exp(b * log(a));
}
template <typename R> static inline cdouble pow(cdouble a, R b) { return pow(a, pk_cdouble_make((double)b, (double)0)); }
template <typename R> static inline cdouble pow(R a, cdouble b) { return pow(pk_cdouble_make((double)a, (double)0), b); }
static inline cdouble polar(double r, double t) { return pk_cdouble_make(r * cos(t), r * sin(t)); }
static inline cdouble operator+(cfloat a, cdouble b) { return pk_cdouble_of(a) + b; }
static inline cdouble operator+(cdouble a, cfloat b) { return a + pk_cdouble_of(b); }
static inline cdouble operator-(cfloat a, cdouble b) { return pk_cdouble_of(a) - b; }
static inline cdouble operator-(cdouble a, cfloat b) { return a - pk_cdouble_of(b); }
static inline cdouble operator*(cfloat a, cdouble b) { return pk_cdouble_of(a) * b; }
static inline cdouble operator*(cdouble a, cfloat b) { return a * pk_cdouble_of(b); }
static inline cdouble operator/(cfloat a, cdouble b) { return pk_cdouble_of(a) / b; }
static inline cdouble operator/(cdouble a, cfloat b) { return a / pk_cdouble_of(b); }
static inline bool operator==(cfloat a, cdouble b) { return pk_cdouble_of(a) == b; }
static inline bool operator==(cdouble a, cfloat b) { return a == pk_cdouble_of(b); }
static inline bool operator!=(cfloat a, cdouble b) { return pk_cdouble_of(a) != b; }
static inline bool operator!=(cdouble a, cfloat b) { return a != pk_cdouble_of(b); }
static inline cdouble pow(cfloat a, cdouble b) { return pow(pk_cdouble_of(a), b); }
static inline cdouble pow(cdouble a, cfloat b) { return pow(a, pk_cdouble_of(b)); }
template <typename T> static inline T rsqrt(T x) { return (T)1 / sqrt(x); }
template <typename T> static inline T mad(T a, T b, T c) { return a * b + c; }
// Complex FIR filter: y[i] = sum over k of h[k] * x[i + k], in complex64.
//
// cfloat is NumPy's complex64 ({re, im} float pairs): x, h and y are complex64 arrays, and
// the * and += below are complex multiply and add on every target (on OpenCL C, which has
// no operator overloading, portakern rewrites them into calls). x holds n + taps - 1
// samples, y n outputs.


#line 7 "portakern/examples/fir_complex.pk"
static inline PK_ALWAYS_INLINE void pk_item_fir_complex(cfloat* y, const cfloat* __restrict__ x, const cfloat* __restrict__ h, const int taps, const long long pk_n0, const long long pk_l0, const long long pk_g0, const long long pk_ls0, const long long pk_ng0)
{

const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0;
if (pk_active) {
    
#line 8 "portakern/examples/fir_complex.pk"
const long long i = ((pk_g0 * pk_ls0 + pk_l0));
    cfloat acc = cfloat(0.0f, 0.0f);
    for (int k = 0; k < taps; ++k)
        acc += h[k] * x[i + k];
    y[i] = acc;
}

}

struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"fir_complex", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    cfloat* const pk_a0 = (cfloat*)pk_argv[0];
    const cfloat* const pk_a1 = (const cfloat*)pk_argv[1];
    const cfloat* const pk_a2 = (const cfloat*)pk_argv[2];
    const int pk_a3 = *(const int*)pk_argv[3];
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
            pk_item_fir_complex(pk_a0, pk_a1, pk_a2, pk_a3, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
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
            pk_item_fir_complex(pk_a0, pk_a1, pk_a2, pk_a3, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
    }

    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
