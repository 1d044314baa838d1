/* portakern prelude: OpenCL C */
typedef struct { float re; float im; } cfloat;
static inline cfloat pk_cfloat_make(float re, float im) { cfloat z; z.re = re; z.im = im; return z; }
static inline float pk_cfloat_hypot(float a, float b) { a = fabs(a); b = fabs(b); const float m = a > b ? a : b, n = a > b ? b : a; if (m == 0 || isnan(m) || isnan(n) || isinf(m)) return m + n; const float r = n / m; return m * sqrt(1 + r * r); }
static inline cfloat pk_cfloat_add(cfloat a, cfloat b) { return pk_cfloat_make(a.re + b.re, a.im + b.im); }
static inline cfloat pk_cfloat_sub(cfloat a, cfloat b) { return pk_cfloat_make(a.re - b.re, a.im - b.im); }
static inline cfloat pk_cfloat_mul(cfloat a, cfloat b) { return pk_cfloat_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static inline cfloat pk_cfloat_div(cfloat a, cfloat b) {
    if (fabs(b.re) >= fabs(b.im)) { const float r = b.im / b.re, d = b.re + b.im * r; return pk_cfloat_make((a.re + a.im * r) / d, (a.im - a.re * r) / d); }
    const float r = b.re / b.im, d = b.im + b.re * r; return pk_cfloat_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
static inline cfloat pk_cfloat_neg(cfloat a) { return pk_cfloat_make(-a.re, -a.im); }
static inline bool pk_cfloat_eq(cfloat a, cfloat b) { return a.re == b.re && a.im == b.im; }
static inline bool pk_cfloat_ne(cfloat a, cfloat b) { return !pk_cfloat_eq(a, b); }
static inline float pk_cfloat_real(cfloat z) { return z.re; }
static inline float pk_cfloat_imag(cfloat z) { return z.im; }
static inline cfloat pk_cfloat_conj(cfloat z) { return pk_cfloat_make(z.re, -z.im); }
static inline float pk_cfloat_abs(cfloat z) { return pk_cfloat_hypot(z.re, z.im); }
static inline float pk_cfloat_arg(cfloat z) { return atan2(z.im, z.re); }
static inline cfloat pk_cfloat_exp(cfloat z) { const float m = exp(z.re); return pk_cfloat_make(m * cos(z.im), m * sin(z.im)); }
static inline cfloat pk_cfloat_log(cfloat z) { return pk_cfloat_make(log(pk_cfloat_abs(z)), pk_cfloat_arg(z)); }
static inline cfloat pk_cfloat_sqrt(cfloat z) {
    if (z.re == 0 && z.im == 0) return pk_cfloat_make(0, z.im);
    const float t = sqrt((fabs(z.re) + pk_cfloat_abs(z)) / 2);
    if (z.re >= 0) return pk_cfloat_make(t, z.im / (2 * t));
    return pk_cfloat_make(fabs(z.im) / (2 * t), copysign(t, z.im));
}
static inline cfloat pk_cfloat_pow(cfloat a, cfloat b) {
    if (a.re == 0 && a.im == 0) return (b.re == 0 && b.im == 0) ? pk_cfloat_make(1, 0) : pk_cfloat_make(0, 0);
    return pk_cfloat_exp(pk_cfloat_mul(b, pk_cfloat_log(a)));
}
static inline cfloat pk_cfloat_polar(float r, float t) { return pk_cfloat_make(r * cos(t), r * sin(t)); }
// Complex FIR filter: y[i] = sum over k of h[k] * x[i + k], in complex64.
//
// cfloat is NumPy's complex64 ({re, im} float pairs): x, h and y are complex64 arrays, and
// the * and += below are complex multiply and add on every target (on OpenCL C, which has
// no operator overloading, portakern rewrites them into calls). x holds n + taps - 1
// samples, y n outputs.


#line 7 "portakern/examples/fir_complex.pk"
__kernel void fir_complex(__global cfloat* y, __global const cfloat* restrict x, __global const cfloat* restrict h, const int taps, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 8 "portakern/examples/fir_complex.pk"
const long i = (((long)get_global_id(0)));
    cfloat acc = pk_cfloat_make((float)(0.0f), (float)(0.0f));
    for (int k = 0; k < taps; ++k)
        acc = pk_cfloat_add(acc, pk_cfloat_mul(h[k], x[i + k]));
    y[i] = acc;
}
}
