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
struct pk_bool2 { bool x, y; };
static inline bool any(pk_bool2 m) { return m.x || m.y; }
static inline bool all(pk_bool2 m) { return m.x && m.y; }
struct pk_bool3 { bool x, y, z; };
static inline bool any(pk_bool3 m) { return m.x || m.y || m.z; }
static inline bool all(pk_bool3 m) { return m.x && m.y && m.z; }
struct pk_bool4 { bool x, y, z, w; };
static inline bool any(pk_bool4 m) { return m.x || m.y || m.z || m.w; }
static inline bool all(pk_bool4 m) { return m.x && m.y && m.z && m.w; }
template <typename E, int N> struct pk_vec_of {};
struct alignas(8) float2 { float x, y; };
template <> struct pk_vec_of<float, 2> { typedef float2 type; };
static inline float2 pk_make_float2(float a) { float2 r = {a, a}; return r; }
static inline float2 pk_make_float2(float x, float y) { float2 r = {x, y}; return r; }
static inline float2 operator+(float2 a, float2 b) { float2 r = {(float)(a.x + b.x), (float)(a.y + b.y)}; return r; }
static inline float2 operator+(float2 a, float s) { float2 r = {(float)(a.x + s), (float)(a.y + s)}; return r; }
static inline float2 operator+(float s, float2 b) { float2 r = {(float)(s + b.x), (float)(s + b.y)}; return r; }
static inline float2& operator+=(float2& a, float2 b) { a = a + b; return a; }
static inline float2& operator+=(float2& a, float s) { a = a + s; return a; }
static inline float2 operator-(float2 a, float2 b) { float2 r = {(float)(a.x - b.x), (float)(a.y - b.y)}; return r; }
static inline float2 operator-(float2 a, float s) { float2 r = {(float)(a.x - s), (float)(a.y - s)}; return r; }
static inline float2 operator-(float s, float2 b) { float2 r = {(float)(s - b.x), (float)(s - b.y)}; return r; }
static inline float2& operator-=(float2& a, float2 b) { a = a - b; return a; }
static inline float2& operator-=(float2& a, float s) { a = a - s; return a; }
static inline float2 operator*(float2 a, float2 b) { float2 r = {(float)(a.x * b.x), (float)(a.y * b.y)}; return r; }
static inline float2 operator*(float2 a, float s) { float2 r = {(float)(a.x * s), (float)(a.y * s)}; return r; }
static inline float2 operator*(float s, float2 b) { float2 r = {(float)(s * b.x), (float)(s * b.y)}; return r; }
static inline float2& operator*=(float2& a, float2 b) { a = a * b; return a; }
static inline float2& operator*=(float2& a, float s) { a = a * s; return a; }
static inline float2 operator/(float2 a, float2 b) { float2 r = {(float)(a.x / b.x), (float)(a.y / b.y)}; return r; }
static inline float2 operator/(float2 a, float s) { float2 r = {(float)(a.x / s), (float)(a.y / s)}; return r; }
static inline float2 operator/(float s, float2 b) { float2 r = {(float)(s / b.x), (float)(s / b.y)}; return r; }
static inline float2& operator/=(float2& a, float2 b) { a = a / b; return a; }
static inline float2& operator/=(float2& a, float s) { a = a / s; return a; }
static inline float2 operator-(float2 a) { float2 r = {(float)(-a.x), (float)(-a.y)}; return r; }
static inline pk_bool2 operator==(float2 a, float2 b) { pk_bool2 r = {a.x == b.x, a.y == b.y}; return r; }
static inline pk_bool2 operator!=(float2 a, float2 b) { pk_bool2 r = {a.x != b.x, a.y != b.y}; return r; }
static inline pk_bool2 operator<(float2 a, float2 b) { pk_bool2 r = {a.x < b.x, a.y < b.y}; return r; }
static inline pk_bool2 operator>(float2 a, float2 b) { pk_bool2 r = {a.x > b.x, a.y > b.y}; return r; }
static inline pk_bool2 operator<=(float2 a, float2 b) { pk_bool2 r = {a.x <= b.x, a.y <= b.y}; return r; }
static inline pk_bool2 operator>=(float2 a, float2 b) { pk_bool2 r = {a.x >= b.x, a.y >= b.y}; return r; }
template <typename S> static inline float2 convert_float2(S v) { float2 r = {(float)v.x, (float)v.y}; return r; }
static inline float dot(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }
static inline float length(float2 a) { return sqrt(dot(a, a)); }
struct float3 { float x, y, z; };
template <> struct pk_vec_of<float, 3> { typedef float3 type; };
static inline float3 pk_make_float3(float a) { float3 r = {a, a, a}; return r; }
static inline float3 pk_make_float3(float x, float y, float z) { float3 r = {x, y, z}; return r; }
static inline float3 operator+(float3 a, float3 b) { float3 r = {(float)(a.x + b.x), (float)(a.y + b.y), (float)(a.z + b.z)}; return r; }
static inline float3 operator+(float3 a, float s) { float3 r = {(float)(a.x + s), (float)(a.y + s), (float)(a.z + s)}; return r; }
static inline float3 operator+(float s, float3 b) { float3 r = {(float)(s + b.x), (float)(s + b.y), (float)(s + b.z)}; return r; }
static inline float3& operator+=(float3& a, float3 b) { a = a + b; return a; }
static inline float3& operator+=(float3& a, float s) { a = a + s; return a; }
static inline float3 operator-(float3 a, float3 b) { float3 r = {(float)(a.x - b.x), (float)(a.y - b.y), (float)(a.z - b.z)}; return r; }
static inline float3 operator-(float3 a, float s) { float3 r = {(float)(a.x - s), (float)(a.y - s), (float)(a.z - s)}; return r; }
static inline float3 operator-(float s, float3 b) { float3 r = {(float)(s - b.x), (float)(s - b.y), (float)(s - b.z)}; return r; }
static inline float3& operator-=(float3& a, float3 b) { a = a - b; return a; }
static inline float3& operator-=(float3& a, float s) { a = a - s; return a; }
static inline float3 operator*(float3 a, float3 b) { float3 r = {(float)(a.x * b.x), (float)(a.y * b.y), (float)(a.z * b.z)}; return r; }
static inline float3 operator*(float3 a, float s) { float3 r = {(float)(a.x * s), (float)(a.y * s), (float)(a.z * s)}; return r; }
static inline float3 operator*(float s, float3 b) { float3 r = {(float)(s * b.x), (float)(s * b.y), (float)(s * b.z)}; return r; }
static inline float3& operator*=(float3& a, float3 b) { a = a * b; return a; }
static inline float3& operator*=(float3& a, float s) { a = a * s; return a; }
static inline float3 operator/(float3 a, float3 b) { float3 r = {(float)(a.x / b.x), (float)(a.y / b.y), (float)(a.z / b.z)}; return r; }
static inline float3 operator/(float3 a, float s) { float3 r = {(float)(a.x / s), (float)(a.y / s), (float)(a.z / s)}; return r; }
static inline float3 operator/(float s, float3 b) { float3 r = {(float)(s / b.x), (float)(s / b.y), (float)(s / b.z)}; return r; }
static inline float3& operator/=(float3& a, float3 b) { a = a / b; return a; }
static inline float3& operator/=(float3& a, float s) { a = a / s; return a; }
static inline float3 operator-(float3 a) { float3 r = {(float)(-a.x), (float)(-a.y), (float)(-a.z)}; return r; }
static inline pk_bool3 operator==(float3 a, float3 b) { pk_bool3 r = {a.x == b.x, a.y == b.y, a.z == b.z}; return r; }
static inline pk_bool3 operator!=(float3 a, float3 b) { pk_bool3 r = {a.x != b.x, a.y != b.y, a.z != b.z}; return r; }
static inline pk_bool3 operator<(float3 a, float3 b) { pk_bool3 r = {a.x < b.x, a.y < b.y, a.z < b.z}; return r; }
static inline pk_bool3 operator>(float3 a, float3 b) { pk_bool3 r = {a.x > b.x, a.y > b.y, a.z > b.z}; return r; }
static inline pk_bool3 operator<=(float3 a, float3 b) { pk_bool3 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z}; return r; }
static inline pk_bool3 operator>=(float3 a, float3 b) { pk_bool3 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z}; return r; }
template <typename S> static inline float3 convert_float3(S v) { float3 r = {(float)v.x, (float)v.y, (float)v.z}; return r; }
static inline float dot(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline float length(float3 a) { return sqrt(dot(a, a)); }
struct alignas(16) float4 { float x, y, z, w; };
template <> struct pk_vec_of<float, 4> { typedef float4 type; };
static inline float4 pk_make_float4(float a) { float4 r = {a, a, a, a}; return r; }
static inline float4 pk_make_float4(float x, float y, float z, float w) { float4 r = {x, y, z, w}; return r; }
static inline float4 operator+(float4 a, float4 b) { float4 r = {(float)(a.x + b.x), (float)(a.y + b.y), (float)(a.z + b.z), (float)(a.w + b.w)}; return r; }
static inline float4 operator+(float4 a, float s) { float4 r = {(float)(a.x + s), (float)(a.y + s), (float)(a.z + s), (float)(a.w + s)}; return r; }
static inline float4 operator+(float s, float4 b) { float4 r = {(float)(s + b.x), (float)(s + b.y), (float)(s + b.z), (float)(s + b.w)}; return r; }
static inline float4& operator+=(float4& a, float4 b) { a = a + b; return a; }
static inline float4& operator+=(float4& a, float s) { a = a + s; return a; }
static inline float4 operator-(float4 a, float4 b) { float4 r = {(float)(a.x - b.x), (float)(a.y - b.y), (float)(a.z - b.z), (float)(a.w - b.w)}; return r; }
static inline float4 operator-(float4 a, float s) { float4 r = {(float)(a.x - s), (float)(a.y - s), (float)(a.z - s), (float)(a.w - s)}; return r; }
static inline float4 operator-(float s, float4 b) { float4 r = {(float)(s - b.x), (float)(s - b.y), (float)(s - b.z), (float)(s - b.w)}; return r; }
static inline float4& operator-=(float4& a, float4 b) { a = a - b; return a; }
static inline float4& operator-=(float4& a, float s) { a = a - s; return a; }
static inline float4 operator*(float4 a, float4 b) { float4 r = {(float)(a.x * b.x), (float)(a.y * b.y), (float)(a.z * b.z), (float)(a.w * b.w)}; return r; }
static inline float4 operator*(float4 a, float s) { float4 r = {(float)(a.x * s), (float)(a.y * s), (float)(a.z * s), (float)(a.w * s)}; return r; }
static inline float4 operator*(float s, float4 b) { float4 r = {(float)(s * b.x), (float)(s * b.y), (float)(s * b.z), (float)(s * b.w)}; return r; }
static inline float4& operator*=(float4& a, float4 b) { a = a * b; return a; }
static inline float4& operator*=(float4& a, float s) { a = a * s; return a; }
static inline float4 operator/(float4 a, float4 b) { float4 r = {(float)(a.x / b.x), (float)(a.y / b.y), (float)(a.z / b.z), (float)(a.w / b.w)}; return r; }
static inline float4 operator/(float4 a, float s) { float4 r = {(float)(a.x / s), (float)(a.y / s), (float)(a.z / s), (float)(a.w / s)}; return r; }
static inline float4 operator/(float s, float4 b) { float4 r = {(float)(s / b.x), (float)(s / b.y), (float)(s / b.z), (float)(s / b.w)}; return r; }
static inline float4& operator/=(float4& a, float4 b) { a = a / b; return a; }
static inline float4& operator/=(float4& a, float s) { a = a / s; return a; }
static inline float4 operator-(float4 a) { float4 r = {(float)(-a.x), (float)(-a.y), (float)(-a.z), (float)(-a.w)}; return r; }
static inline pk_bool4 operator==(float4 a, float4 b) { pk_bool4 r = {a.x == b.x, a.y == b.y, a.z == b.z, a.w == b.w}; return r; }
static inline pk_bool4 operator!=(float4 a, float4 b) { pk_bool4 r = {a.x != b.x, a.y != b.y, a.z != b.z, a.w != b.w}; return r; }
static inline pk_bool4 operator<(float4 a, float4 b) { pk_bool4 r = {a.x < b.x, a.y < b.y, a.z < b.z, a.w < b.w}; return r; }
static inline pk_bool4 operator>(float4 a, float4 b) { pk_bool4 r = {a.x > b.x, a.y > b.y, a.z > b.z, a.w > b.w}; return r; }
static inline pk_bool4 operator<=(float4 a, float4 b) { pk_bool4 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z, a.w <= b.w}; return r; }
static inline pk_bool4 operator>=(float4 a, float4 b) { pk_bool4 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z, a.w >= b.w}; return r; }
template <typename S> static inline float4 convert_float4(S v) { float4 r = {(float)v.x, (float)v.y, (float)v.z, (float)v.w}; return r; }
static inline float dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
static inline float length(float4 a) { return sqrt(dot(a, a)); }
struct alignas(16) double2 { double x, y; };
template <> struct pk_vec_of<double, 2> { typedef double2 type; };
static inline double2 pk_make_double2(double a) { double2 r = {a, a}; return r; }
static inline double2 pk_make_double2(double x, double y) { double2 r = {x, y}; return r; }
static inline double2 operator+(double2 a, double2 b) { double2 r = {(double)(a.x + b.x), (double)(a.y + b.y)}; return r; }
static inline double2 operator+(double2 a, double s) { double2 r = {(double)(a.x + s), (double)(a.y + s)}; return r; }
static inline double2 operator+(double s, double2 b) { double2 r = {(double)(s + b.x), (double)(s + b.y)}; return r; }
static inline double2& operator+=(double2& a, double2 b) { a = a + b; return a; }
static inline double2& operator+=(double2& a, double s) { a = a + s; return a; }
static inline double2 operator-(double2 a, double2 b) { double2 r = {(double)(a.x - b.x), (double)(a.y - b.y)}; return r; }
static inline double2 operator-(double2 a, double s) { double2 r = {(double)(a.x - s), (double)(a.y - s)}; return r; }
static inline double2 operator-(double s, double2 b) { double2 r = {(double)(s - b.x), (double)(s - b.y)}; return r; }
static inline double2& operator-=(double2& a, double2 b) { a = a - b; return a; }
static inline double2& operator-=(double2& a, double s) { a = a - s; return a; }
static inline double2 operator*(double2 a, double2 b) { double2 r = {(double)(a.x * b.x), (double)(a.y * b.y)}; return r; }
static inline double2 operator*(double2 a, double s) { double2 r = {(double)(a.x * s), (double)(a.y * s)}; return r; }
static inline double2 operator*(double s, double2 b) { double2 r = {(double)(s * b.x), (double)(s * b.y)}; return r; }
static inline double2& operator*=(double2& a, double2 b) { a = a * b; return a; }
static inline double2& operator*=(double2& a, double s) { a = a * s; return a; }
static inline double2 operator/(double2 a, double2 b) { double2 r = {(double)(a.x / b.x), (double)(a.y / b.y)}; return r; }
static inline double2 operator/(double2 a, double s) { double2 r = {(double)(a.x / s), (double)(a.y / s)}; return r; }
static inline double2 operator/(double s, double2 b) { double2 r = {(double)(s / b.x), (double)(s / b.y)}; return r; }
static inline double2& operator/=(double2& a, double2 b) { a = a / b; return a; }
static inline double2& operator/=(double2& a, double s) { a = a / s; return a; }
static inline double2 operator-(double2 a) { double2 r = {(double)(-a.x), (double)(-a.y)}; return r; }
static inline pk_bool2 operator==(double2 a, double2 b) { pk_bool2 r = {a.x == b.x, a.y == b.y}; return r; }
static inline pk_bool2 operator!=(double2 a, double2 b) { pk_bool2 r = {a.x != b.x, a.y != b.y}; return r; }
static inline pk_bool2 operator<(double2 a, double2 b) { pk_bool2 r = {a.x < b.x, a.y < b.y}; return r; }
static inline pk_bool2 operator>(double2 a, double2 b) { pk_bool2 r = {a.x > b.x, a.y > b.y}; return r; }
static inline pk_bool2 operator<=(double2 a, double2 b) { pk_bool2 r = {a.x <= b.x, a.y <= b.y}; return r; }
static inline pk_bool2 operator>=(double2 a, double2 b) { pk_bool2 r = {a.x >= b.x, a.y >= b.y}; return r; }
template <typename S> static inline double2 convert_double2(S v) { double2 r = {(double)v.x, (double)v.y}; return r; }
static inline double dot(double2 a, double2 b) { return a.x * b.x + a.y * b.y; }
static inline double length(double2 a) { return sqrt(dot(a, a)); }
struct double3 { double x, y, z; };
template <> struct pk_vec_of<double, 3> { typedef double3 type; };
static inline double3 pk_make_double3(double a) { double3 r = {a, a, a}; return r; }
static inline double3 pk_make_double3(double x, double y, double z) { double3 r = {x, y, z}; return r; }
static inline double3 operator+(double3 a, double3 b) { double3 r = {(double)(a.x + b.x), (double)(a.y + b.y), (double)(a.z + b.z)}; return r; }
static inline double3 operator+(double3 a, double s) { double3 r = {(double)(a.x + s), (double)(a.y + s), (double)(a.z + s)}; return r; }
static inline double3 operator+(double s, double3 b) { double3 r = {(double)(s + b.x), (double)(s + b.y), (double)(s + b.z)}; return r; }
static inline double3& operator+=(double3& a, double3 b) { a = a + b; return a; }
static inline double3& operator+=(double3& a, double s) { a = a + s; return a; }
static inline double3 operator-(double3 a, double3 b) { double3 r = {(double)(a.x - b.x), (double)(a.y - b.y), (double)(a.z - b.z)}; return r; }
static inline double3 operator-(double3 a, double s) { double3 r = {(double)(a.x - s), (double)(a.y - s), (double)(a.z - s)}; return r; }
static inline double3 operator-(double s, double3 b) { double3 r = {(double)(s - b.x), (double)(s - b.y), (double)(s - b.z)}; return r; }
static inline double3& operator-=(double3& a, double3 b) { a = a - b; return a; }
static inline double3& operator-=(double3& a, double s) { a = a - s; return a; }
static inline double3 operator*(double3 a, double3 b) { double3 r = {(double)(a.x * b.x), (double)(a.y * b.y), (double)(a.z * b.z)}; return r; }
static inline double3 operator*(double3 a, double s) { double3 r = {(double)(a.x * s), (double)(a.y * s), (double)(a.z * s)}; return r; }
static inline double3 operator*(double s, double3 b) { double3 r = {(double)(s * b.x), (double)(s * b.y), (double)(s * b.z)}; return r; }
static inline double3& operator*=(double3& a, double3 b) { a = a * b; return a; }
static inline double3& operator*=(double3& a, double s) { a = a * s; return a; }
static inline double3 operator/(double3 a, double3 b) { double3 r = {(double)(a.x / b.x), (double)(a.y / b.y), (double)(a.z / b.z)}; return r; }
static inline double3 operator/(double3 a, double s) { double3 r = {(double)(a.x / s), (double)(a.y / s), (double)(a.z / s)}; return r; }
static inline double3 operator/(double s, double3 b) { double3 r = {(double)(s / b.x), (double)(s / b.y), (double)(s / b.z)}; return r; }
static inline double3& operator/=(double3& a, double3 b) { a = a / b; return a; }
static inline double3& operator/=(double3& a, double s) { a = a / s; return a; }
static inline double3 operator-(double3 a) { double3 r = {(double)(-a.x), (double)(-a.y), (double)(-a.z)}; return r; }
static inline pk_bool3 operator==(double3 a, double3 b) { pk_bool3 r = {a.x == b.x, a.y == b.y, a.z == b.z}; return r; }
static inline pk_bool3 operator!=(double3 a, double3 b) { pk_bool3 r = {a.x != b.x, a.y != b.y, a.z != b.z}; return r; }
static inline pk_bool3 operator<(double3 a, double3 b) { pk_bool3 r = {a.x < b.x, a.y < b.y, a.z < b.z}; return r; }
static inline pk_bool3 operator>(double3 a, double3 b) { pk_bool3 r = {a.x > b.x, a.y > b.y, a.z > b.z}; return r; }
static inline pk_bool3 operator<=(double3 a, double3 b) { pk_bool3 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z}; return r; }
static inline pk_bool3 operator>=(double3 a, double3 b) { pk_bool3 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z}; return r; }
template <typename S> static inline double3 convert_double3(S v) { double3 r = {(double)v.x, (double)v.y, (double)v.z}; return r; }
static inline double dot(double3 a, double3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline double length(double3 a) { return sqrt(dot(a, a)); }
struct alignas(8) int2 { int x, y; };
template <> struct pk_vec_of<int, 2> { typedef int2 type; };
static inline int2 pk_make_int2(int a) { int2 r = {a, a}; return r; }
static inline int2 pk_make_int2(int x, int y) { int2 r = {x, y}; return r; }
static inline int2 operator+(int2 a, int2 b) { int2 r = {(int)(a.x + b.x), (int)(a.y + b.y)}; return r; }
static inline int2 operator+(int2 a, int s) { int2 r = {(int)(a.x + s), (int)(a.y + s)}; return r; }
static inline int2 operator+(int s, int2 b) { int2 r = {(int)(s + b.x), (int)(s + b.y)}; return r; }
static inline int2& operator+=(int2& a, int2 b) { a = a + b; return a; }
static inline int2& operator+=(int2& a, int s) { a = a + s; return a; }
static inline int2 operator-(int2 a, int2 b) { int2 r = {(int)(a.x - b.x), (int)(a.y - b.y)}; return r; }
static inline int2 operator-(int2 a, int s) { int2 r = {(int)(a.x - s), (int)(a.y - s)}; return r; }
static inline int2 operator-(int s, int2 b) { int2 r = {(int)(s - b.x), (int)(s - b.y)}; return r; }
static inline int2& operator-=(int2& a, int2 b) { a = a - b; return a; }
static inline int2& operator-=(int2& a, int s) { a = a - s; return a; }
static inline int2 operator*(int2 a, int2 b) { int2 r = {(int)(a.x * b.x), (int)(a.y * b.y)}; return r; }
static inline int2 operator*(int2 a, int s) { int2 r = {(int)(a.x * s), (int)(a.y * s)}; return r; }
static inline int2 operator*(int s, int2 b) { int2 r = {(int)(s * b.x), (int)(s * b.y)}; return r; }
static inline int2& operator*=(int2& a, int2 b) { a = a * b; return a; }
static inline int2& operator*=(int2& a, int s) { a = a * s; return a; }
static inline int2 operator/(int2 a, int2 b) { int2 r = {(int)(a.x / b.x), (int)(a.y / b.y)}; return r; }
static inline int2 operator/(int2 a, int s) { int2 r = {(int)(a.x / s), (int)(a.y / s)}; return r; }
static inline int2 operator/(int s, int2 b) { int2 r = {(int)(s / b.x), (int)(s / b.y)}; return r; }
static inline int2& operator/=(int2& a, int2 b) { a = a / b; return a; }
static inline int2& operator/=(int2& a, int s) { a = a / s; return a; }
static inline int2 operator%(int2 a, int2 b) { int2 r = {(int)(a.x % b.x), (int)(a.y % b.y)}; return r; }
static inline int2 operator%(int2 a, int s) { int2 r = {(int)(a.x % s), (int)(a.y % s)}; return r; }
static inline int2 operator%(int s, int2 b) { int2 r = {(int)(s % b.x), (int)(s % b.y)}; return r; }
static inline int2& operator%=(int2& a, int2 b) { a = a % b; return a; }
static inline int2& operator%=(int2& a, int s) { a = a % s; return a; }
static inline int2 operator&(int2 a, int2 b) { int2 r = {(int)(a.x & b.x), (int)(a.y & b.y)}; return r; }
static inline int2 operator&(int2 a, int s) { int2 r = {(int)(a.x & s), (int)(a.y & s)}; return r; }
static inline int2 operator&(int s, int2 b) { int2 r = {(int)(s & b.x), (int)(s & b.y)}; return r; }
static inline int2& operator&=(int2& a, int2 b) { a = a & b; return a; }
static inline int2& operator&=(int2& a, int s) { a = a & s; return a; }
static inline int2 operator|(int2 a, int2 b) { int2 r = {(int)(a.x | b.x), (int)(a.y | b.y)}; return r; }
static inline int2 operator|(int2 a, int s) { int2 r = {(int)(a.x | s), (int)(a.y | s)}; return r; }
static inline int2 operator|(int s, int2 b) { int2 r = {(int)(s | b.x), (int)(s | b.y)}; return r; }
static inline int2& operator|=(int2& a, int2 b) { a = a | b; return a; }
static inline int2& operator|=(int2& a, int s) { a = a | s; return a; }
static inline int2 operator^(int2 a, int2 b) { int2 r = {(int)(a.x ^ b.x), (int)(a.y ^ b.y)}; return r; }
static inline int2 operator^(int2 a, int s) { int2 r = {(int)(a.x ^ s), (int)(a.y ^ s)}; return r; }
static inline int2 operator^(int s, int2 b) { int2 r = {(int)(s ^ b.x), (int)(s ^ b.y)}; return r; }
static inline int2& operator^=(int2& a, int2 b) { a = a ^ b; return a; }
static inline int2& operator^=(int2& a, int s) { a = a ^ s; return a; }
static inline int2 operator<<(int2 a, int2 b) { int2 r = {(int)(a.x << b.x), (int)(a.y << b.y)}; return r; }
static inline int2 operator<<(int2 a, int s) { int2 r = {(int)(a.x << s), (int)(a.y << s)}; return r; }
static inline int2 operator<<(int s, int2 b) { int2 r = {(int)(s << b.x), (int)(s << b.y)}; return r; }
static inline int2& operator<<=(int2& a, int2 b) { a = a << b; return a; }
static inline int2& operator<<=(int2& a, int s) { a = a << s; return a; }
static inline int2 operator>>(int2 a, int2 b) { int2 r = {(int)(a.x >> b.x), (int)(a.y >> b.y)}; return r; }
static inline int2 operator>>(int2 a, int s) { int2 r = {(int)(a.x >> s), (int)(a.y >> s)}; return r; }
static inline int2 operator>>(int s, int2 b) { int2 r = {(int)(s >> b.x), (int)(s >> b.y)}; return r; }
static inline int2& operator>>=(int2& a, int2 b) { a = a >> b; return a; }
static inline int2& operator>>=(int2& a, int s) { a = a >> s; return a; }
static inline int2 operator-(int2 a) { int2 r = {(int)(-a.x), (int)(-a.y)}; return r; }
static inline pk_bool2 operator==(int2 a, int2 b) { pk_bool2 r = {a.x == b.x, a.y == b.y}; return r; }
static inline pk_bool2 operator!=(int2 a, int2 b) { pk_bool2 r = {a.x != b.x, a.y != b.y}; return r; }
static inline pk_bool2 operator<(int2 a, int2 b) { pk_bool2 r = {a.x < b.x, a.y < b.y}; return r; }
static inline pk_bool2 operator>(int2 a, int2 b) { pk_bool2 r = {a.x > b.x, a.y > b.y}; return r; }
static inline pk_bool2 operator<=(int2 a, int2 b) { pk_bool2 r = {a.x <= b.x, a.y <= b.y}; return r; }
static inline pk_bool2 operator>=(int2 a, int2 b) { pk_bool2 r = {a.x >= b.x, a.y >= b.y}; return r; }
template <typename S> static inline int2 convert_int2(S v) { int2 r = {(int)v.x, (int)v.y}; return r; }
struct int3 { int x, y, z; };
template <> struct pk_vec_of<int, 3> { typedef int3 type; };
static inline int3 pk_make_int3(int a) { int3 r = {a, a, a}; return r; }
static inline int3 pk_make_int3(int x, int y, int z) { int3 r = {x, y, z}; return r; }
static inline int3 operator+(int3 a, int3 b) { int3 r = {(int)(a.x + b.x), (int)(a.y + b.y), (int)(a.z + b.z)}; return r; }
static inline int3 operator+(int3 a, int s) { int3 r = {(int)(a.x + s), (int)(a.y + s), (int)(a.z + s)}; return r; }
static inline int3 operator+(int s, int3 b) { int3 r = {(int)(s + b.x), (int)(s + b.y), (int)(s + b.z)}; return r; }
static inline int3& operator+=(int3& a, int3 b) { a = a + b; return a; }
static inline int3& operator+=(int3& a, int s) { a = a + s; return a; }
static inline int3 operator-(int3 a, int3 b) { int3 r = {(int)(a.x - b.x), (int)(a.y - b.y), (int)(a.z - b.z)}; return r; }
static inline int3 operator-(int3 a, int s) { int3 r = {(int)(a.x - s), (int)(a.y - s), (int)(a.z - s)}; return r; }
static inline int3 operator-(int s, int3 b) { int3 r = {(int)(s - b.x), (int)(s - b.y), (int)(s - b.z)}; return r; }
static inline int3& operator-=(int3& a, int3 b) { a = a - b; return a; }
static inline int3& operator-=(int3& a, int s) { a = a - s; return a; }
static inline int3 operator*(int3 a, int3 b) { int3 r = {(int)(a.x * b.x), (int)(a.y * b.y), (int)(a.z * b.z)}; return r; }
static inline int3 operator*(int3 a, int s) { int3 r = {(int)(a.x * s), (int)(a.y * s), (int)(a.z * s)}; return r; }
static inline int3 operator*(int s, int3 b) { int3 r = {(int)(s * b.x), (int)(s * b.y), (int)(s * b.z)}; return r; }
static inline int3& operator*=(int3& a, int3 b) { a = a * b; return a; }
static inline int3& operator*=(int3& a, int s) { a = a * s; return a; }
static inline int3 operator/(int3 a, int3 b) { int3 r = {(int)(a.x / b.x), (int)(a.y / b.y), (int)(a.z / b.z)}; return r; }
static inline int3 operator/(int3 a, int s) { int3 r = {(int)(a.x / s), (int)(a.y / s), (int)(a.z / s)}; return r; }
static inline int3 operator/(int s, int3 b) { int3 r = {(int)(s / b.x), (int)(s / b.y), (int)(s / b.z)}; return r; }
static inline int3& operator/=(int3& a, int3 b) { a = a / b; return a; }
static inline int3& operator/=(int3& a, int s) { a = a / s; return a; }
static inline int3 operator%(int3 a, int3 b) { int3 r = {(int)(a.x % b.x), (int)(a.y % b.y), (int)(a.z % b.z)}; return r; }
static inline int3 operator%(int3 a, int s) { int3 r = {(int)(a.x % s), (int)(a.y % s), (int)(a.z % s)}; return r; }
static inline int3 operator%(int s, int3 b) { int3 r = {(int)(s % b.x), (int)(s % b.y), (int)(s % b.z)}; return r; }
static inline int3& operator%=(int3& a, int3 b) { a = a % b; return a; }
static inline int3& operator%=(int3& a, int s) { a = a % s; return a; }
static inline int3 operator&(int3 a, int3 b) { int3 r = {(int)(a.x & b.x), (int)(a.y & b.y), (int)(a.z & b.z)}; return r; }
static inline int3 operator&(int3 a, int s) { int3 r = {(int)(a.x & s), (int)(a.y & s), (int)(a.z & s)}; return r; }
static inline int3 operator&(int s, int3 b) { int3 r = {(int)(s & b.x), (int)(s & b.y), (int)(s & b.z)}; return r; }
static inline int3& operator&=(int3& a, int3 b) { a = a & b; return a; }
static inline int3& operator&=(int3& a, int s) { a = a & s; return a; }
static inline int3 operator|(int3 a, int3 b) { int3 r = {(int)(a.x | b.x), (int)(a.y | b.y), (int)(a.z | b.z)}; return r; }
static inline int3 operator|(int3 a, int s) { int3 r = {(int)(a.x | s), (int)(a.y | s), (int)(a.z | s)}; return r; }
static inline int3 operator|(int s, int3 b) { int3 r = {(int)(s | b.x), (int)(s | b.y), (int)(s | b.z)}; return r; }
static inline int3& operator|=(int3& a, int3 b) { a = a | b; return a; }
static inline int3& operator|=(int3& a, int s) { a = a | s; return a; }
static inline int3 operator^(int3 a, int3 b) { int3 r = {(int)(a.x ^ b.x), (int)(a.y ^ b.y), (int)(a.z ^ b.z)}; return r; }
static inline int3 operator^(int3 a, int s) { int3 r = {(int)(a.x ^ s), (int)(a.y ^ s), (int)(a.z ^ s)}; return r; }
static inline int3 operator^(int s, int3 b) { int3 r = {(int)(s ^ b.x), (int)(s ^ b.y), (int)(s ^ b.z)}; return r; }
static inline int3& operator^=(int3& a, int3 b) { a = a ^ b; return a; }
static inline int3& operator^=(int3& a, int s) { a = a ^ s; return a; }
static inline int3 operator<<(int3 a, int3 b) { int3 r = {(int)(a.x << b.x), (int)(a.y << b.y), (int)(a.z << b.z)}; return r; }
static inline int3 operator<<(int3 a, int s) { int3 r = {(int)(a.x << s), (int)(a.y << s), (int)(a.z << s)}; return r; }
static inline int3 operator<<(int s, int3 b) { int3 r = {(int)(s << b.x), (int)(s << b.y), (int)(s << b.z)}; return r; }
static inline int3& operator<<=(int3& a, int3 b) { a = a << b; return a; }
static inline int3& operator<<=(int3& a, int s) { a = a << s; return a; }
static inline int3 operator>>(int3 a, int3 b) { int3 r = {(int)(a.x >> b.x), (int)(a.y >> b.y), (int)(a.z >> b.z)}; return r; }
static inline int3 operator>>(int3 a, int s) { int3 r = {(int)(a.x >> s), (int)(a.y >> s), (int)(a.z >> s)}; return r; }
static inline int3 operator>>(int s, int3 b) { int3 r = {(int)(s >> b.x), (int)(s >> b.y), (int)(s >> b.z)}; return r; }
static inline int3& operator>>=(int3& a, int3 b) { a = a >> b; return a; }
static inline int3& operator>>=(int3& a, int s) { a = a >> s; return a; }
static inline int3 operator-(int3 a) { int3 r = {(int)(-a.x), (int)(-a.y), (int)(-a.z)}; return r; }
static inline pk_bool3 operator==(int3 a, int3 b) { pk_bool3 r = {a.x == b.x, a.y == b.y, a.z == b.z}; return r; }
static inline pk_bool3 operator!=(int3 a, int3 b) { pk_bool3 r = {a.x != b.x, a.y != b.y, a.z != b.z}; return r; }
static inline pk_bool3 operator<(int3 a, int3 b) { pk_bool3 r = {a.x < b.x, a.y < b.y, a.z < b.z}; return r; }
static inline pk_bool3 operator>(int3 a, int3 b) { pk_bool3 r = {a.x > b.x, a.y > b.y, a.z > b.z}; return r; }
static inline pk_bool3 operator<=(int3 a, int3 b) { pk_bool3 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z}; return r; }
static inline pk_bool3 operator>=(int3 a, int3 b) { pk_bool3 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z}; return r; }
template <typename S> static inline int3 convert_int3(S v) { int3 r = {(int)v.x, (int)v.y, (int)v.z}; return r; }
struct alignas(16) int4 { int x, y, z, w; };
template <> struct pk_vec_of<int, 4> { typedef int4 type; };
static inline int4 pk_make_int4(int a) { int4 r = {a, a, a, a}; return r; }
static inline int4 pk_make_int4(int x, int y, int z, int w) { int4 r = {x, y, z, w}; return r; }
static inline int4 operator+(int4 a, int4 b) { int4 r = {(int)(a.x + b.x), (int)(a.y + b.y), (int)(a.z + b.z), (int)(a.w + b.w)}; return r; }
static inline int4 operator+(int4 a, int s) { int4 r = {(int)(a.x + s), (int)(a.y + s), (int)(a.z + s), (int)(a.w + s)}; return r; }
static inline int4 operator+(int s, int4 b) { int4 r = {(int)(s + b.x), (int)(s + b.y), (int)(s + b.z), (int)(s + b.w)}; return r; }
static inline int4& operator+=(int4& a, int4 b) { a = a + b; return a; }
static inline int4& operator+=(int4& a, int s) { a = a + s; return a; }
static inline int4 operator-(int4 a, int4 b) { int4 r = {(int)(a.x - b.x), (int)(a.y - b.y), (int)(a.z - b.z), (int)(a.w - b.w)}; return r; }
static inline int4 operator-(int4 a, int s) { int4 r = {(int)(a.x - s), (int)(a.y - s), (int)(a.z - s), (int)(a.w - s)}; return r; }
static inline int4 operator-(int s, int4 b) { int4 r = {(int)(s - b.x), (int)(s - b.y), (int)(s - b.z), (int)(s - b.w)}; return r; }
static inline int4& operator-=(int4& a, int4 b) { a = a - b; return a; }
static inline int4& operator-=(int4& a, int s) { a = a - s; return a; }
static inline int4 operator*(int4 a, int4 b) { int4 r = {(int)(a.x * b.x), (int)(a.y * b.y), (int)(a.z * b.z), (int)(a.w * b.w)}; return r; }
static inline int4 operator*(int4 a, int s) { int4 r = {(int)(a.x * s), (int)(a.y * s), (int)(a.z * s), (int)(a.w * s)}; return r; }
static inline int4 operator*(int s, int4 b) { int4 r = {(int)(s * b.x), (int)(s * b.y), (int)(s * b.z), (int)(s * b.w)}; return r; }
static inline int4& operator*=(int4& a, int4 b) { a = a * b; return a; }
static inline int4& operator*=(int4& a, int s) { a = a * s; return a; }
static inline int4 operator/(int4 a, int4 b) { int4 r = {(int)(a.x / b.x), (int)(a.y / b.y), (int)(a.z / b.z), (int)(a.w / b.w)}; return r; }
static inline int4 operator/(int4 a, int s) { int4 r = {(int)(a.x / s), (int)(a.y / s), (int)(a.z / s), (int)(a.w / s)}; return r; }
static inline int4 operator/(int s, int4 b) { int4 r = {(int)(s / b.x), (int)(s / b.y), (int)(s / b.z), (int)(s / b.w)}; return r; }
static inline int4& operator/=(int4& a, int4 b) { a = a / b; return a; }
static inline int4& operator/=(int4& a, int s) { a = a / s; return a; }
static inline int4 operator%(int4 a, int4 b) { int4 r = {(int)(a.x % b.x), (int)(a.y % b.y), (int)(a.z % b.z), (int)(a.w % b.w)}; return r; }
static inline int4 operator%(int4 a, int s) { int4 r = {(int)(a.x % s), (int)(a.y % s), (int)(a.z % s), (int)(a.w % s)}; return r; }
static inline int4 operator%(int s, int4 b) { int4 r = {(int)(s % b.x), (int)(s % b.y), (int)(s % b.z), (int)(s % b.w)}; return r; }
static inline int4& operator%=(int4& a, int4 b) { a = a % b; return a; }
static inline int4& operator%=(int4& a, int s) { a = a % s; return a; }
static inline int4 operator&(int4 a, int4 b) { int4 r = {(int)(a.x & b.x), (int)(a.y & b.y), (int)(a.z & b.z), (int)(a.w & b.w)}; return r; }
static inline int4 operator&(int4 a, int s) { int4 r = {(int)(a.x & s), (int)(a.y & s), (int)(a.z & s), (int)(a.w & s)}; return r; }
static inline int4 operator&(int s, int4 b) { int4 r = {(int)(s & b.x), (int)(s & b.y), (int)(s & b.z), (int)(s & b.w)}; return r; }
static inline int4& operator&=(int4& a, int4 b) { a = a & b; return a; }
static inline int4& operator&=(int4& a, int s) { a = a & s; return a; }
static inline int4 operator|(int4 a, int4 b) { int4 r = {(int)(a.x | b.x), (int)(a.y | b.y), (int)(a.z | b.z), (int)(a.w | b.w)}; return r; }
static inline int4 operator|(int4 a, int s) { int4 r = {(int)(a.x | s), (int)(a.y | s), (int)(a.z | s), (int)(a.w | s)}; return r; }
static inline int4 operator|(int s, int4 b) { int4 r = {(int)(s | b.x), (int)(s | b.y), (int)(s | b.z), (int)(s | b.w)}; return r; }
static inline int4& operator|=(int4& a, int4 b) { a = a | b; return a; }
static inline int4& operator|=(int4& a, int s) { a = a | s; return a; }
static inline int4 operator^(int4 a, int4 b) { int4 r = {(int)(a.x ^ b.x), (int)(a.y ^ b.y), (int)(a.z ^ b.z), (int)(a.w ^ b.w)}; return r; }
static inline int4 operator^(int4 a, int s) { int4 r = {(int)(a.x ^ s), (int)(a.y ^ s), (int)(a.z ^ s), (int)(a.w ^ s)}; return r; }
static inline int4 operator^(int s, int4 b) { int4 r = {(int)(s ^ b.x), (int)(s ^ b.y), (int)(s ^ b.z), (int)(s ^ b.w)}; return r; }
static inline int4& operator^=(int4& a, int4 b) { a = a ^ b; return a; }
static inline int4& operator^=(int4& a, int s) { a = a ^ s; return a; }
static inline int4 operator<<(int4 a, int4 b) { int4 r = {(int)(a.x << b.x), (int)(a.y << b.y), (int)(a.z << b.z), (int)(a.w << b.w)}; return r; }
static inline int4 operator<<(int4 a, int s) { int4 r = {(int)(a.x << s), (int)(a.y << s), (int)(a.z << s), (int)(a.w << s)}; return r; }
static inline int4 operator<<(int s, int4 b) { int4 r = {(int)(s << b.x), (int)(s << b.y), (int)(s << b.z), (int)(s << b.w)}; return r; }
static inline int4& operator<<=(int4& a, int4 b) { a = a << b; return a; }
static inline int4& operator<<=(int4& a, int s) { a = a << s; return a; }
static inline int4 operator>>(int4 a, int4 b) { int4 r = {(int)(a.x >> b.x), (int)(a.y >> b.y), (int)(a.z >> b.z), (int)(a.w >> b.w)}; return r; }
static inline int4 operator>>(int4 a, int s) { int4 r = {(int)(a.x >> s), (int)(a.y >> s), (int)(a.z >> s), (int)(a.w >> s)}; return r; }
static inline int4 operator>>(int s, int4 b) { int4 r = {(int)(s >> b.x), (int)(s >> b.y), (int)(s >> b.z), (int)(s >> b.w)}; return r; }
static inline int4& operator>>=(int4& a, int4 b) { a = a >> b; return a; }
static inline int4& operator>>=(int4& a, int s) { a = a >> s; return a; }
static inline int4 operator-(int4 a) { int4 r = {(int)(-a.x), (int)(-a.y), (int)(-a.z), (int)(-a.w)}; return r; }
static inline pk_bool4 operator==(int4 a, int4 b) { pk_bool4 r = {a.x == b.x, a.y == b.y, a.z == b.z, a.w == b.w}; return r; }
static inline pk_bool4 operator!=(int4 a, int4 b) { pk_bool4 r = {a.x != b.x, a.y != b.y, a.z != b.z, a.w != b.w}; return r; }
static inline pk_bool4 operator<(int4 a, int4 b) { pk_bool4 r = {a.x < b.x, a.y < b.y, a.z < b.z, a.w < b.w}; return r; }
static inline pk_bool4 operator>(int4 a, int4 b) { pk_bool4 r = {a.x > b.x, a.y > b.y, a.z > b.z, a.w > b.w}; return r; }
static inline pk_bool4 operator<=(int4 a, int4 b) { pk_bool4 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z, a.w <= b.w}; return r; }
static inline pk_bool4 operator>=(int4 a, int4 b) { pk_bool4 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z, a.w >= b.w}; return r; }
template <typename S> static inline int4 convert_int4(S v) { int4 r = {(int)v.x, (int)v.y, (int)v.z, (int)v.w}; return r; }
struct alignas(8) uint2 { unsigned int x, y; };
template <> struct pk_vec_of<unsigned int, 2> { typedef uint2 type; };
static inline uint2 pk_make_uint2(unsigned int a) { uint2 r = {a, a}; return r; }
static inline uint2 pk_make_uint2(unsigned int x, unsigned int y) { uint2 r = {x, y}; return r; }
static inline uint2 operator+(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x + b.x), (unsigned int)(a.y + b.y)}; return r; }
static inline uint2 operator+(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x + s), (unsigned int)(a.y + s)}; return r; }
static inline uint2 operator+(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s + b.x), (unsigned int)(s + b.y)}; return r; }
static inline uint2& operator+=(uint2& a, uint2 b) { a = a + b; return a; }
static inline uint2& operator+=(uint2& a, unsigned int s) { a = a + s; return a; }
static inline uint2 operator-(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x - b.x), (unsigned int)(a.y - b.y)}; return r; }
static inline uint2 operator-(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x - s), (unsigned int)(a.y - s)}; return r; }
static inline uint2 operator-(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s - b.x), (unsigned int)(s - b.y)}; return r; }
static inline uint2& operator-=(uint2& a, uint2 b) { a = a - b; return a; }
static inline uint2& operator-=(uint2& a, unsigned int s) { a = a - s; return a; }
static inline uint2 operator*(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x * b.x), (unsigned int)(a.y * b.y)}; return r; }
static inline uint2 operator*(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x * s), (unsigned int)(a.y * s)}; return r; }
static inline uint2 operator*(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s * b.x), (unsigned int)(s * b.y)}; return r; }
static inline uint2& operator*=(uint2& a, uint2 b) { a = a * b; return a; }
static inline uint2& operator*=(uint2& a, unsigned int s) { a = a * s; return a; }
static inline uint2 operator/(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x / b.x), (unsigned int)(a.y / b.y)}; return r; }
static inline uint2 operator/(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x / s), (unsigned int)(a.y / s)}; return r; }
static inline uint2 operator/(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s / b.x), (unsigned int)(s / b.y)}; return r; }
static inline uint2& operator/=(uint2& a, uint2 b) { a = a / b; return a; }
static inline uint2& operator/=(uint2& a, unsigned int s) { a = a / s; return a; }
static inline uint2 operator%(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x % b.x), (unsigned int)(a.y % b.y)}; return r; }
static inline uint2 operator%(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x % s), (unsigned int)(a.y % s)}; return r; }
static inline uint2 operator%(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s % b.x), (unsigned int)(s % b.y)}; return r; }
static inline uint2& operator%=(uint2& a, uint2 b) { a = a % b; return a; }
static inline uint2& operator%=(uint2& a, unsigned int s) { a = a % s; return a; }
static inline uint2 operator&(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x & b.x), (unsigned int)(a.y & b.y)}; return r; }
static inline uint2 operator&(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x & s), (unsigned int)(a.y & s)}; return r; }
static inline uint2 operator&(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s & b.x), (unsigned int)(s & b.y)}; return r; }
static inline uint2& operator&=(uint2& a, uint2 b) { a = a & b; return a; }
static inline uint2& operator&=(uint2& a, unsigned int s) { a = a & s; return a; }
static inline uint2 operator|(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x | b.x), (unsigned int)(a.y | b.y)}; return r; }
static inline uint2 operator|(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x | s), (unsigned int)(a.y | s)}; return r; }
static inline uint2 operator|(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s | b.x), (unsigned int)(s | b.y)}; return r; }
static inline uint2& operator|=(uint2& a, uint2 b) { a = a | b; return a; }
static inline uint2& operator|=(uint2& a, unsigned int s) { a = a | s; return a; }
static inline uint2 operator^(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x ^ b.x), (unsigned int)(a.y ^ b.y)}; return r; }
static inline uint2 operator^(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x ^ s), (unsigned int)(a.y ^ s)}; return r; }
static inline uint2 operator^(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s ^ b.x), (unsigned int)(s ^ b.y)}; return r; }
static inline uint2& operator^=(uint2& a, uint2 b) { a = a ^ b; return a; }
static inline uint2& operator^=(uint2& a, unsigned int s) { a = a ^ s; return a; }
static inline uint2 operator<<(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x << b.x), (unsigned int)(a.y << b.y)}; return r; }
static inline uint2 operator<<(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x << s), (unsigned int)(a.y << s)}; return r; }
static inline uint2 operator<<(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s << b.x), (unsigned int)(s << b.y)}; return r; }
static inline uint2& operator<<=(uint2& a, uint2 b) { a = a << b; return a; }
static inline uint2& operator<<=(uint2& a, unsigned int s) { a = a << s; return a; }
static inline uint2 operator>>(uint2 a, uint2 b) { uint2 r = {(unsigned int)(a.x >> b.x), (unsigned int)(a.y >> b.y)}; return r; }
static inline uint2 operator>>(uint2 a, unsigned int s) { uint2 r = {(unsigned int)(a.x >> s), (unsigned int)(a.y >> s)}; return r; }
static inline uint2 operator>>(unsigned int s, uint2 b) { uint2 r = {(unsigned int)(s >> b.x), (unsigned int)(s >> b.y)}; return r; }
static inline uint2& operator>>=(uint2& a, uint2 b) { a = a >> b; return a; }
static inline uint2& operator>>=(uint2& a, unsigned int s) { a = a >> s; return a; }
static inline uint2 operator-(uint2 a) { uint2 r = {(unsigned int)(-a.x), (unsigned int)(-a.y)}; return r; }
static inline pk_bool2 operator==(uint2 a, uint2 b) { pk_bool2 r = {a.x == b.x, a.y == b.y}; return r; }
static inline pk_bool2 operator!=(uint2 a, uint2 b) { pk_bool2 r = {a.x != b.x, a.y != b.y}; return r; }
static inline pk_bool2 operator<(uint2 a, uint2 b) { pk_bool2 r = {a.x < b.x, a.y < b.y}; return r; }
static inline pk_bool2 operator>(uint2 a, uint2 b) { pk_bool2 r = {a.x > b.x, a.y > b.y}; return r; }
static inline pk_bool2 operator<=(uint2 a, uint2 b) { pk_bool2 r = {a.x <= b.x, a.y <= b.y}; return r; }
static inline pk_bool2 operator>=(uint2 a, uint2 b) { pk_bool2 r = {a.x >= b.x, a.y >= b.y}; return r; }
template <typename S> static inline uint2 convert_uint2(S v) { uint2 r = {(unsigned int)v.x, (unsigned int)v.y}; return r; }
struct uint3 { unsigned int x, y, z; };
template <> struct pk_vec_of<unsigned int, 3> { typedef uint3 type; };
static inline uint3 pk_make_uint3(unsigned int a) { uint3 r = {a, a, a}; return r; }
static inline uint3 pk_make_uint3(unsigned int x, unsigned int y, unsigned int z) { uint3 r = {x, y, z}; return r; }
static inline uint3 operator+(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x + b.x), (unsigned int)(a.y + b.y), (unsigned int)(a.z + b.z)}; return r; }
static inline uint3 operator+(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x + s), (unsigned int)(a.y + s), (unsigned int)(a.z + s)}; return r; }
static inline uint3 operator+(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s + b.x), (unsigned int)(s + b.y), (unsigned int)(s + b.z)}; return r; }
static inline uint3& operator+=(uint3& a, uint3 b) { a = a + b; return a; }
static inline uint3& operator+=(uint3& a, unsigned int s) { a = a + s; return a; }
static inline uint3 operator-(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x - b.x), (unsigned int)(a.y - b.y), (unsigned int)(a.z - b.z)}; return r; }
static inline uint3 operator-(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x - s), (unsigned int)(a.y - s), (unsigned int)(a.z - s)}; return r; }
static inline uint3 operator-(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s - b.x), (unsigned int)(s - b.y), (unsigned int)(s - b.z)}; return r; }
static inline uint3& operator-=(uint3& a, uint3 b) { a = a - b; return a; }
static inline uint3& operator-=(uint3& a, unsigned int s) { a = a - s; return a; }
static inline uint3 operator*(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x * b.x), (unsigned int)(a.y * b.y), (unsigned int)(a.z * b.z)}; return r; }
static inline uint3 operator*(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x * s), (unsigned int)(a.y * s), (unsigned int)(a.z * s)}; return r; }
static inline uint3 operator*(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s * b.x), (unsigned int)(s * b.y), (unsigned int)(s * b.z)}; return r; }
static inline uint3& operator*=(uint3& a, uint3 b) { a = a * b; return a; }
static inline uint3& operator*=(uint3& a, unsigned int s) { a = a * s; return a; }
static inline uint3 operator/(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x / b.x), (unsigned int)(a.y / b.y), (unsigned int)(a.z / b.z)}; return r; }
static inline uint3 operator/(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x / s), (unsigned int)(a.y / s), (unsigned int)(a.z / s)}; return r; }
static inline uint3 operator/(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s / b.x), (unsigned int)(s / b.y), (unsigned int)(s / b.z)}; return r; }
static inline uint3& operator/=(uint3& a, uint3 b) { a = a / b; return a; }
static inline uint3& operator/=(uint3& a, unsigned int s) { a = a / s; return a; }
static inline uint3 operator%(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x % b.x), (unsigned int)(a.y % b.y), (unsigned int)(a.z % b.z)}; return r; }
static inline uint3 operator%(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x % s), (unsigned int)(a.y % s), (unsigned int)(a.z % s)}; return r; }
static inline uint3 operator%(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s % b.x), (unsigned int)(s % b.y), (unsigned int)(s % b.z)}; return r; }
static inline uint3& operator%=(uint3& a, uint3 b) { a = a % b; return a; }
static inline uint3& operator%=(uint3& a, unsigned int s) { a = a % s; return a; }
static inline uint3 operator&(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x & b.x), (unsigned int)(a.y & b.y), (unsigned int)(a.z & b.z)}; return r; }
static inline uint3 operator&(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x & s), (unsigned int)(a.y & s), (unsigned int)(a.z & s)}; return r; }
static inline uint3 operator&(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s & b.x), (unsigned int)(s & b.y), (unsigned int)(s & b.z)}; return r; }
static inline uint3& operator&=(uint3& a, uint3 b) { a = a & b; return a; }
static inline uint3& operator&=(uint3& a, unsigned int s) { a = a & s; return a; }
static inline uint3 operator|(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x | b.x), (unsigned int)(a.y | b.y), (unsigned int)(a.z | b.z)}; return r; }
static inline uint3 operator|(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x | s), (unsigned int)(a.y | s), (unsigned int)(a.z | s)}; return r; }
static inline uint3 operator|(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s | b.x), (unsigned int)(s | b.y), (unsigned int)(s | b.z)}; return r; }
static inline uint3& operator|=(uint3& a, uint3 b) { a = a | b; return a; }
static inline uint3& operator|=(uint3& a, unsigned int s) { a = a | s; return a; }
static inline uint3 operator^(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x ^ b.x), (unsigned int)(a.y ^ b.y), (unsigned int)(a.z ^ b.z)}; return r; }
static inline uint3 operator^(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x ^ s), (unsigned int)(a.y ^ s), (unsigned int)(a.z ^ s)}; return r; }
static inline uint3 operator^(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s ^ b.x), (unsigned int)(s ^ b.y), (unsigned int)(s ^ b.z)}; return r; }
static inline uint3& operator^=(uint3& a, uint3 b) { a = a ^ b; return a; }
static inline uint3& operator^=(uint3& a, unsigned int s) { a = a ^ s; return a; }
static inline uint3 operator<<(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x << b.x), (unsigned int)(a.y << b.y), (unsigned int)(a.z << b.z)}; return r; }
static inline uint3 operator<<(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x << s), (unsigned int)(a.y << s), (unsigned int)(a.z << s)}; return r; }
static inline uint3 operator<<(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s << b.x), (unsigned int)(s << b.y), (unsigned int)(s << b.z)}; return r; }
static inline uint3& operator<<=(uint3& a, uint3 b) { a = a << b; return a; }
static inline uint3& operator<<=(uint3& a, unsigned int s) { a = a << s; return a; }
static inline uint3 operator>>(uint3 a, uint3 b) { uint3 r = {(unsigned int)(a.x >> b.x), (unsigned int)(a.y >> b.y), (unsigned int)(a.z >> b.z)}; return r; }
static inline uint3 operator>>(uint3 a, unsigned int s) { uint3 r = {(unsigned int)(a.x >> s), (unsigned int)(a.y >> s), (unsigned int)(a.z >> s)}; return r; }
static inline uint3 operator>>(unsigned int s, uint3 b) { uint3 r = {(unsigned int)(s >> b.x), (unsigned int)(s >> b.y), (unsigned int)(s >> b.z)}; return r; }
static inline uint3& operator>>=(uint3& a, uint3 b) { a = a >> b; return a; }
static inline uint3& operator>>=(uint3& a, unsigned int s) { a = a >> s; return a; }
static inline uint3 operator-(uint3 a) { uint3 r = {(unsigned int)(-a.x), (unsigned int)(-a.y), (unsigned int)(-a.z)}; return r; }
static inline pk_bool3 operator==(uint3 a, uint3 b) { pk_bool3 r = {a.x == b.x, a.y == b.y, a.z == b.z}; return r; }
static inline pk_bool3 operator!=(uint3 a, uint3 b) { pk_bool3 r = {a.x != b.x, a.y != b.y, a.z != b.z}; return r; }
static inline pk_bool3 operator<(uint3 a, uint3 b) { pk_bool3 r = {a.x < b.x, a.y < b.y, a.z < b.z}; return r; }
static inline pk_bool3 operator>(uint3 a, uint3 b) { pk_bool3 r = {a.x > b.x, a.y > b.y, a.z > b.z}; return r; }
static inline pk_bool3 operator<=(uint3 a, uint3 b) { pk_bool3 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z}; return r; }
static inline pk_bool3 operator>=(uint3 a, uint3 b) { pk_bool3 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z}; return r; }
template <typename S> static inline uint3 convert_uint3(S v) { uint3 r = {(unsigned int)v.x, (unsigned int)v.y, (unsigned int)v.z}; return r; }
struct alignas(16) uint4 { unsigned int x, y, z, w; };
template <> struct pk_vec_of<unsigned int, 4> { typedef uint4 type; };
static inline uint4 pk_make_uint4(unsigned int a) { uint4 r = {a, a, a, a}; return r; }
static inline uint4 pk_make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { uint4 r = {x, y, z, w}; return r; }
static inline uint4 operator+(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x + b.x), (unsigned int)(a.y + b.y), (unsigned int)(a.z + b.z), (unsigned int)(a.w + b.w)}; return r; }
static inline uint4 operator+(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x + s), (unsigned int)(a.y + s), (unsigned int)(a.z + s), (unsigned int)(a.w + s)}; return r; }
static inline uint4 operator+(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s + b.x), (unsigned int)(s + b.y), (unsigned int)(s + b.z), (unsigned int)(s + b.w)}; return r; }
static inline uint4& operator+=(uint4& a, uint4 b) { a = a + b; return a; }
static inline uint4& operator+=(uint4& a, unsigned int s) { a = a + s; return a; }
static inline uint4 operator-(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x - b.x), (unsigned int)(a.y - b.y), (unsigned int)(a.z - b.z), (unsigned int)(a.w - b.w)}; return r; }
static inline uint4 operator-(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x - s), (unsigned int)(a.y - s), (unsigned int)(a.z - s), (unsigned int)(a.w - s)}; return r; }
static inline uint4 operator-(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s - b.x), (unsigned int)(s - b.y), (unsigned int)(s - b.z), (unsigned int)(s - b.w)}; return r; }
static inline uint4& operator-=(uint4& a, uint4 b) { a = a - b; return a; }
static inline uint4& operator-=(uint4& a, unsigned int s) { a = a - s; return a; }
static inline uint4 operator*(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x * b.x), (unsigned int)(a.y * b.y), (unsigned int)(a.z * b.z), (unsigned int)(a.w * b.w)}; return r; }
static inline uint4 operator*(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x * s), (unsigned int)(a.y * s), (unsigned int)(a.z * s), (unsigned int)(a.w * s)}; return r; }
static inline uint4 operator*(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s * b.x), (unsigned int)(s * b.y), (unsigned int)(s * b.z), (unsigned int)(s * b.w)}; return r; }
static inline uint4& operator*=(uint4& a, uint4 b) { a = a * b; return a; }
static inline uint4& operator*=(uint4& a, unsigned int s) { a = a * s; return a; }
static inline uint4 operator/(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x / b.x), (unsigned int)(a.y / b.y), (unsigned int)(a.z / b.z), (unsigned int)(a.w / b.w)}; return r; }
static inline uint4 operator/(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x / s), (unsigned int)(a.y / s), (unsigned int)(a.z / s), (unsigned int)(a.w / s)}; return r; }
static inline uint4 operator/(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s / b.x), (unsigned int)(s / b.y), (unsigned int)(s / b.z), (unsigned int)(s / b.w)}; return r; }
static inline uint4& operator/=(uint4& a, uint4 b) { a = a / b; return a; }
static inline uint4& operator/=(uint4& a, unsigned int s) { a = a / s; return a; }
static inline uint4 operator%(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x % b.x), (unsigned int)(a.y % b.y), (unsigned int)(a.z % b.z), (unsigned int)(a.w % b.w)}; return r; }
static inline uint4 operator%(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x % s), (unsigned int)(a.y % s), (unsigned int)(a.z % s), (unsigned int)(a.w % s)}; return r; }
static inline uint4 operator%(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s % b.x), (unsigned int)(s % b.y), (unsigned int)(s % b.z), (unsigned int)(s % b.w)}; return r; }
static inline uint4& operator%=(uint4& a, uint4 b) { a = a % b; return a; }
static inline uint4& operator%=(uint4& a, unsigned int s) { a = a % s; return a; }
static inline uint4 operator&(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x & b.x), (unsigned int)(a.y & b.y), (unsigned int)(a.z & b.z), (unsigned int)(a.w & b.w)}; return r; }
static inline uint4 operator&(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x & s), (unsigned int)(a.y & s), (unsigned int)(a.z & s), (unsigned int)(a.w & s)}; return r; }
static inline uint4 operator&(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s & b.x), (unsigned int)(s & b.y), (unsigned int)(s & b.z), (unsigned int)(s & b.w)}; return r; }
static inline uint4& operator&=(uint4& a, uint4 b) { a = a & b; return a; }
static inline uint4& operator&=(uint4& a, unsigned int s) { a = a & s; return a; }
static inline uint4 operator|(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x | b.x), (unsigned int)(a.y | b.y), (unsigned int)(a.z | b.z), (unsigned int)(a.w | b.w)}; return r; }
static inline uint4 operator|(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x | s), (unsigned int)(a.y | s), (unsigned int)(a.z | s), (unsigned int)(a.w | s)}; return r; }
static inline uint4 operator|(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s | b.x), (unsigned int)(s | b.y), (unsigned int)(s | b.z), (unsigned int)(s | b.w)}; return r; }
static inline uint4& operator|=(uint4& a, uint4 b) { a = a | b; return a; }
static inline uint4& operator|=(uint4& a, unsigned int s) { a = a | s; return a; }
static inline uint4 operator^(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x ^ b.x), (unsigned int)(a.y ^ b.y), (unsigned int)(a.z ^ b.z), (unsigned int)(a.w ^ b.w)}; return r; }
static inline uint4 operator^(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x ^ s), (unsigned int)(a.y ^ s), (unsigned int)(a.z ^ s), (unsigned int)(a.w ^ s)}; return r; }
static inline uint4 operator^(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s ^ b.x), (unsigned int)(s ^ b.y), (unsigned int)(s ^ b.z), (unsigned int)(s ^ b.w)}; return r; }
static inline uint4& operator^=(uint4& a, uint4 b) { a = a ^ b; return a; }
static inline uint4& operator^=(uint4& a, unsigned int s) { a = a ^ s; return a; }
static inline uint4 operator<<(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x << b.x), (unsigned int)(a.y << b.y), (unsigned int)(a.z << b.z), (unsigned int)(a.w << b.w)}; return r; }
static inline uint4 operator<<(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x << s), (unsigned int)(a.y << s), (unsigned int)(a.z << s), (unsigned int)(a.w << s)}; return r; }
static inline uint4 operator<<(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s << b.x), (unsigned int)(s << b.y), (unsigned int)(s << b.z), (unsigned int)(s << b.w)}; return r; }
static inline uint4& operator<<=(uint4& a, uint4 b) { a = a << b; return a; }
static inline uint4& operator<<=(uint4& a, unsigned int s) { a = a << s; return a; }
static inline uint4 operator>>(uint4 a, uint4 b) { uint4 r = {(unsigned int)(a.x >> b.x), (unsigned int)(a.y >> b.y), (unsigned int)(a.z >> b.z), (unsigned int)(a.w >> b.w)}; return r; }
static inline uint4 operator>>(uint4 a, unsigned int s) { uint4 r = {(unsigned int)(a.x >> s), (unsigned int)(a.y >> s), (unsigned int)(a.z >> s), (unsigned int)(a.w >> s)}; return r; }
static inline uint4 operator>>(unsigned int s, uint4 b) { uint4 r = {(unsigned int)(s >> b.x), (unsigned int)(s >> b.y), (unsigned int)(s >> b.z), (unsigned int)(s >> b.w)}; return r; }
static inline uint4& operator>>=(uint4& a, uint4 b) { a = a >> b; return a; }
static inline uint4& operator>>=(uint4& a, unsigned int s) { a = a >> s; return a; }
static inline uint4 operator-(uint4 a) { uint4 r = {(unsigned int)(-a.x), (unsigned int)(-a.y), (unsigned int)(-a.z), (unsigned int)(-a.w)}; return r; }
static inline pk_bool4 operator==(uint4 a, uint4 b) { pk_bool4 r = {a.x == b.x, a.y == b.y, a.z == b.z, a.w == b.w}; return r; }
static inline pk_bool4 operator!=(uint4 a, uint4 b) { pk_bool4 r = {a.x != b.x, a.y != b.y, a.z != b.z, a.w != b.w}; return r; }
static inline pk_bool4 operator<(uint4 a, uint4 b) { pk_bool4 r = {a.x < b.x, a.y < b.y, a.z < b.z, a.w < b.w}; return r; }
static inline pk_bool4 operator>(uint4 a, uint4 b) { pk_bool4 r = {a.x > b.x, a.y > b.y, a.z > b.z, a.w > b.w}; return r; }
static inline pk_bool4 operator<=(uint4 a, uint4 b) { pk_bool4 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z, a.w <= b.w}; return r; }
static inline pk_bool4 operator>=(uint4 a, uint4 b) { pk_bool4 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z, a.w >= b.w}; return r; }
template <typename S> static inline uint4 convert_uint4(S v) { uint4 r = {(unsigned int)v.x, (unsigned int)v.y, (unsigned int)v.z, (unsigned int)v.w}; return r; }
struct alignas(2) uchar2 { unsigned char x, y; };
template <> struct pk_vec_of<unsigned char, 2> { typedef uchar2 type; };
static inline uchar2 pk_make_uchar2(unsigned char a) { uchar2 r = {a, a}; return r; }
static inline uchar2 pk_make_uchar2(unsigned char x, unsigned char y) { uchar2 r = {x, y}; return r; }
static inline uchar2 operator+(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x + b.x), (unsigned char)(a.y + b.y)}; return r; }
static inline uchar2 operator+(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x + s), (unsigned char)(a.y + s)}; return r; }
static inline uchar2 operator+(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s + b.x), (unsigned char)(s + b.y)}; return r; }
static inline uchar2& operator+=(uchar2& a, uchar2 b) { a = a + b; return a; }
static inline uchar2& operator+=(uchar2& a, unsigned char s) { a = a + s; return a; }
static inline uchar2 operator-(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x - b.x), (unsigned char)(a.y - b.y)}; return r; }
static inline uchar2 operator-(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x - s), (unsigned char)(a.y - s)}; return r; }
static inline uchar2 operator-(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s - b.x), (unsigned char)(s - b.y)}; return r; }
static inline uchar2& operator-=(uchar2& a, uchar2 b) { a = a - b; return a; }
static inline uchar2& operator-=(uchar2& a, unsigned char s) { a = a - s; return a; }
static inline uchar2 operator*(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x * b.x), (unsigned char)(a.y * b.y)}; return r; }
static inline uchar2 operator*(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x * s), (unsigned char)(a.y * s)}; return r; }
static inline uchar2 operator*(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s * b.x), (unsigned char)(s * b.y)}; return r; }
static inline uchar2& operator*=(uchar2& a, uchar2 b) { a = a * b; return a; }
static inline uchar2& operator*=(uchar2& a, unsigned char s) { a = a * s; return a; }
static inline uchar2 operator/(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x / b.x), (unsigned char)(a.y / b.y)}; return r; }
static inline uchar2 operator/(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x / s), (unsigned char)(a.y / s)}; return r; }
static inline uchar2 operator/(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s / b.x), (unsigned char)(s / b.y)}; return r; }
static inline uchar2& operator/=(uchar2& a, uchar2 b) { a = a / b; return a; }
static inline uchar2& operator/=(uchar2& a, unsigned char s) { a = a / s; return a; }
static inline uchar2 operator%(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x % b.x), (unsigned char)(a.y % b.y)}; return r; }
static inline uchar2 operator%(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x % s), (unsigned char)(a.y % s)}; return r; }
static inline uchar2 operator%(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s % b.x), (unsigned char)(s % b.y)}; return r; }
static inline uchar2& operator%=(uchar2& a, uchar2 b) { a = a % b; return a; }
static inline uchar2& operator%=(uchar2& a, unsigned char s) { a = a % s; return a; }
static inline uchar2 operator&(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x & b.x), (unsigned char)(a.y & b.y)}; return r; }
static inline uchar2 operator&(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x & s), (unsigned char)(a.y & s)}; return r; }
static inline uchar2 operator&(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s & b.x), (unsigned char)(s & b.y)}; return r; }
static inline uchar2& operator&=(uchar2& a, uchar2 b) { a = a & b; return a; }
static inline uchar2& operator&=(uchar2& a, unsigned char s) { a = a & s; return a; }
static inline uchar2 operator|(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x | b.x), (unsigned char)(a.y | b.y)}; return r; }
static inline uchar2 operator|(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x | s), (unsigned char)(a.y | s)}; return r; }
static inline uchar2 operator|(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s | b.x), (unsigned char)(s | b.y)}; return r; }
static inline uchar2& operator|=(uchar2& a, uchar2 b) { a = a | b; return a; }
static inline uchar2& operator|=(uchar2& a, unsigned char s) { a = a | s; return a; }
static inline uchar2 operator^(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x ^ b.x), (unsigned char)(a.y ^ b.y)}; return r; }
static inline uchar2 operator^(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x ^ s), (unsigned char)(a.y ^ s)}; return r; }
static inline uchar2 operator^(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s ^ b.x), (unsigned char)(s ^ b.y)}; return r; }
static inline uchar2& operator^=(uchar2& a, uchar2 b) { a = a ^ b; return a; }
static inline uchar2& operator^=(uchar2& a, unsigned char s) { a = a ^ s; return a; }
static inline uchar2 operator<<(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x << b.x), (unsigned char)(a.y << b.y)}; return r; }
static inline uchar2 operator<<(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x << s), (unsigned char)(a.y << s)}; return r; }
static inline uchar2 operator<<(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s << b.x), (unsigned char)(s << b.y)}; return r; }
static inline uchar2& operator<<=(uchar2& a, uchar2 b) { a = a << b; return a; }
static inline uchar2& operator<<=(uchar2& a, unsigned char s) { a = a << s; return a; }
static inline uchar2 operator>>(uchar2 a, uchar2 b) { uchar2 r = {(unsigned char)(a.x >> b.x), (unsigned char)(a.y >> b.y)}; return r; }
static inline uchar2 operator>>(uchar2 a, unsigned char s) { uchar2 r = {(unsigned char)(a.x >> s), (unsigned char)(a.y >> s)}; return r; }
static inline uchar2 operator>>(unsigned char s, uchar2 b) { uchar2 r = {(unsigned char)(s >> b.x), (unsigned char)(s >> b.y)}; return r; }
static inline uchar2& operator>>=(uchar2& a, uchar2 b) { a = a >> b; return a; }
static inline uchar2& operator>>=(uchar2& a, unsigned char s) { a = a >> s; return a; }
static inline uchar2 operator-(uchar2 a) { uchar2 r = {(unsigned char)(-a.x), (unsigned char)(-a.y)}; return r; }
static inline pk_bool2 operator==(uchar2 a, uchar2 b) { pk_bool2 r = {a.x == b.x, a.y == b.y}; return r; }
static inline pk_bool2 operator!=(uchar2 a, uchar2 b) { pk_bool2 r = {a.x != b.x, a.y != b.y}; return r; }
static inline pk_bool2 operator<(uchar2 a, uchar2 b) { pk_bool2 r = {a.x < b.x, a.y < b.y}; return r; }
static inline pk_bool2 operator>(uchar2 a, uchar2 b) { pk_bool2 r = {a.x > b.x, a.y > b.y}; return r; }
static inline pk_bool2 operator<=(uchar2 a, uchar2 b) { pk_bool2 r = {a.x <= b.x, a.y <= b.y}; return r; }
static inline pk_bool2 operator>=(uchar2 a, uchar2 b) { pk_bool2 r = {a.x >= b.x, a.y >= b.y}; return r; }
template <typename S> static inline uchar2 convert_uchar2(S v) { uchar2 r = {(unsigned char)v.x, (unsigned char)v.y}; return r; }
struct uchar3 { unsigned char x, y, z; };
template <> struct pk_vec_of<unsigned char, 3> { typedef uchar3 type; };
static inline uchar3 pk_make_uchar3(unsigned char a) { uchar3 r = {a, a, a}; return r; }
static inline uchar3 pk_make_uchar3(unsigned char x, unsigned char y, unsigned char z) { uchar3 r = {x, y, z}; return r; }
static inline uchar3 operator+(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x + b.x), (unsigned char)(a.y + b.y), (unsigned char)(a.z + b.z)}; return r; }
static inline uchar3 operator+(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x + s), (unsigned char)(a.y + s), (unsigned char)(a.z + s)}; return r; }
static inline uchar3 operator+(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s + b.x), (unsigned char)(s + b.y), (unsigned char)(s + b.z)}; return r; }
static inline uchar3& operator+=(uchar3& a, uchar3 b) { a = a + b; return a; }
static inline uchar3& operator+=(uchar3& a, unsigned char s) { a = a + s; return a; }
static inline uchar3 operator-(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x - b.x), (unsigned char)(a.y - b.y), (unsigned char)(a.z - b.z)}; return r; }
static inline uchar3 operator-(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x - s), (unsigned char)(a.y - s), (unsigned char)(a.z - s)}; return r; }
static inline uchar3 operator-(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s - b.x), (unsigned char)(s - b.y), (unsigned char)(s - b.z)}; return r; }
static inline uchar3& operator-=(uchar3& a, uchar3 b) { a = a - b; return a; }
static inline uchar3& operator-=(uchar3& a, unsigned char s) { a = a - s; return a; }
static inline uchar3 operator*(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x * b.x), (unsigned char)(a.y * b.y), (unsigned char)(a.z * b.z)}; return r; }
static inline uchar3 operator*(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x * s), (unsigned char)(a.y * s), (unsigned char)(a.z * s)}; return r; }
static inline uchar3 operator*(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s * b.x), (unsigned char)(s * b.y), (unsigned char)(s * b.z)}; return r; }
static inline uchar3& operator*=(uchar3& a, uchar3 b) { a = a * b; return a; }
static inline uchar3& operator*=(uchar3& a, unsigned char s) { a = a * s; return a; }
static inline uchar3 operator/(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x / b.x), (unsigned char)(a.y / b.y), (unsigned char)(a.z / b.z)}; return r; }
static inline uchar3 operator/(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x / s), (unsigned char)(a.y / s), (unsigned char)(a.z / s)}; return r; }
static inline uchar3 operator/(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s / b.x), (unsigned char)(s / b.y), (unsigned char)(s / b.z)}; return r; }
static inline uchar3& operator/=(uchar3& a, uchar3 b) { a = a / b; return a; }
static inline uchar3& operator/=(uchar3& a, unsigned char s) { a = a / s; return a; }
static inline uchar3 operator%(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x % b.x), (unsigned char)(a.y % b.y), (unsigned char)(a.z % b.z)}; return r; }
static inline uchar3 operator%(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x % s), (unsigned char)(a.y % s), (unsigned char)(a.z % s)}; return r; }
static inline uchar3 operator%(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s % b.x), (unsigned char)(s % b.y), (unsigned char)(s % b.z)}; return r; }
static inline uchar3& operator%=(uchar3& a, uchar3 b) { a = a % b; return a; }
static inline uchar3& operator%=(uchar3& a, unsigned char s) { a = a % s; return a; }
static inline uchar3 operator&(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x & b.x), (unsigned char)(a.y & b.y), (unsigned char)(a.z & b.z)}; return r; }
static inline uchar3 operator&(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x & s), (unsigned char)(a.y & s), (unsigned char)(a.z & s)}; return r; }
static inline uchar3 operator&(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s & b.x), (unsigned char)(s & b.y), (unsigned char)(s & b.z)}; return r; }
static inline uchar3& operator&=(uchar3& a, uchar3 b) { a = a & b; return a; }
static inline uchar3& operator&=(uchar3& a, unsigned char s) { a = a & s; return a; }
static inline uchar3 operator|(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x | b.x), (unsigned char)(a.y | b.y), (unsigned char)(a.z | b.z)}; return r; }
static inline uchar3 operator|(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x | s), (unsigned char)(a.y | s), (unsigned char)(a.z | s)}; return r; }
static inline uchar3 operator|(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s | b.x), (unsigned char)(s | b.y), (unsigned char)(s | b.z)}; return r; }
static inline uchar3& operator|=(uchar3& a, uchar3 b) { a = a | b; return a; }
static inline uchar3& operator|=(uchar3& a, unsigned char s) { a = a | s; return a; }
static inline uchar3 operator^(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x ^ b.x), (unsigned char)(a.y ^ b.y), (unsigned char)(a.z ^ b.z)}; return r; }
static inline uchar3 operator^(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x ^ s), (unsigned char)(a.y ^ s), (unsigned char)(a.z ^ s)}; return r; }
static inline uchar3 operator^(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s ^ b.x), (unsigned char)(s ^ b.y), (unsigned char)(s ^ b.z)}; return r; }
static inline uchar3& operator^=(uchar3& a, uchar3 b) { a = a ^ b; return a; }
static inline uchar3& operator^=(uchar3& a, unsigned char s) { a = a ^ s; return a; }
static inline uchar3 operator<<(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x << b.x), (unsigned char)(a.y << b.y), (unsigned char)(a.z << b.z)}; return r; }
static inline uchar3 operator<<(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x << s), (unsigned char)(a.y << s), (unsigned char)(a.z << s)}; return r; }
static inline uchar3 operator<<(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s << b.x), (unsigned char)(s << b.y), (unsigned char)(s << b.z)}; return r; }
static inline uchar3& operator<<=(uchar3& a, uchar3 b) { a = a << b; return a; }
static inline uchar3& operator<<=(uchar3& a, unsigned char s) { a = a << s; return a; }
static inline uchar3 operator>>(uchar3 a, uchar3 b) { uchar3 r = {(unsigned char)(a.x >> b.x), (unsigned char)(a.y >> b.y), (unsigned char)(a.z >> b.z)}; return r; }
static inline uchar3 operator>>(uchar3 a, unsigned char s) { uchar3 r = {(unsigned char)(a.x >> s), (unsigned char)(a.y >> s), (unsigned char)(a.z >> s)}; return r; }
static inline uchar3 operator>>(unsigned char s, uchar3 b) { uchar3 r = {(unsigned char)(s >> b.x), (unsigned char)(s >> b.y), (unsigned char)(s >> b.z)}; return r; }
static inline uchar3& operator>>=(uchar3& a, uchar3 b) { a = a >> b; return a; }
static inline uchar3& operator>>=(uchar3& a, unsigned char s) { a = a >> s; return a; }
static inline uchar3 operator-(uchar3 a) { uchar3 r = {(unsigned char)(-a.x), (unsigned char)(-a.y), (unsigned char)(-a.z)}; return r; }
static inline pk_bool3 operator==(uchar3 a, uchar3 b) { pk_bool3 r = {a.x == b.x, a.y == b.y, a.z == b.z}; return r; }
static inline pk_bool3 operator!=(uchar3 a, uchar3 b) { pk_bool3 r = {a.x != b.x, a.y != b.y, a.z != b.z}; return r; }
static inline pk_bool3 operator<(uchar3 a, uchar3 b) { pk_bool3 r = {a.x < b.x, a.y < b.y, a.z < b.z}; return r; }
static inline pk_bool3 operator>(uchar3 a, uchar3 b) { pk_bool3 r = {a.x > b.x, a.y > b.y, a.z > b.z}; return r; }
static inline pk_bool3 operator<=(uchar3 a, uchar3 b) { pk_bool3 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z}; return r; }
static inline pk_bool3 operator>=(uchar3 a, uchar3 b) { pk_bool3 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z}; return r; }
template <typename S> static inline uchar3 convert_uchar3(S v) { uchar3 r = {(unsigned char)v.x, (unsigned char)v.y, (unsigned char)v.z}; return r; }
struct alignas(4) uchar4 { unsigned char x, y, z, w; };
template <> struct pk_vec_of<unsigned char, 4> { typedef uchar4 type; };
static inline uchar4 pk_make_uchar4(unsigned char a) { uchar4 r = {a, a, a, a}; return r; }
static inline uchar4 pk_make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) { uchar4 r = {x, y, z, w}; return r; }
static inline uchar4 operator+(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x + b.x), (unsigned char)(a.y + b.y), (unsigned char)(a.z + b.z), (unsigned char)(a.w + b.w)}; return r; }
static inline uchar4 operator+(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x + s), (unsigned char)(a.y + s), (unsigned char)(a.z + s), (unsigned char)(a.w + s)}; return r; }
static inline uchar4 operator+(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s + b.x), (unsigned char)(s + b.y), (unsigned char)(s + b.z), (unsigned char)(s + b.w)}; return r; }
static inline uchar4& operator+=(uchar4& a, uchar4 b) { a = a + b; return a; }
static inline uchar4& operator+=(uchar4& a, unsigned char s) { a = a + s; return a; }
static inline uchar4 operator-(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x - b.x), (unsigned char)(a.y - b.y), (unsigned char)(a.z - b.z), (unsigned char)(a.w - b.w)}; return r; }
static inline uchar4 operator-(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x - s), (unsigned char)(a.y - s), (unsigned char)(a.z - s), (unsigned char)(a.w - s)}; return r; }
static inline uchar4 operator-(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s - b.x), (unsigned char)(s - b.y), (unsigned char)(s - b.z), (unsigned char)(s - b.w)}; return r; }
static inline uchar4& operator-=(uchar4& a, uchar4 b) { a = a - b; return a; }
static inline uchar4& operator-=(uchar4& a, unsigned char s) { a = a - s; return a; }
static inline uchar4 operator*(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x * b.x), (unsigned char)(a.y * b.y), (unsigned char)(a.z * b.z), (unsigned char)(a.w * b.w)}; return r; }
static inline uchar4 operator*(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x * s), (unsigned char)(a.y * s), (unsigned char)(a.z * s), (unsigned char)(a.w * s)}; return r; }
static inline uchar4 operator*(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s * b.x), (unsigned char)(s * b.y), (unsigned char)(s * b.z), (unsigned char)(s * b.w)}; return r; }
static inline uchar4& operator*=(uchar4& a, uchar4 b) { a = a * b; return a; }
static inline uchar4& operator*=(uchar4& a, unsigned char s) { a = a * s; return a; }
static inline uchar4 operator/(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x / b.x), (unsigned char)(a.y / b.y), (unsigned char)(a.z / b.z), (unsigned char)(a.w / b.w)}; return r; }
static inline uchar4 operator/(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x / s), (unsigned char)(a.y / s), (unsigned char)(a.z / s), (unsigned char)(a.w / s)}; return r; }
static inline uchar4 operator/(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s / b.x), (unsigned char)(s / b.y), (unsigned char)(s / b.z), (unsigned char)(s / b.w)}; return r; }
static inline uchar4& operator/=(uchar4& a, uchar4 b) { a = a / b; return a; }
static inline uchar4& operator/=(uchar4& a, unsigned char s) { a = a / s; return a; }
static inline uchar4 operator%(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x % b.x), (unsigned char)(a.y % b.y), (unsigned char)(a.z % b.z), (unsigned char)(a.w % b.w)}; return r; }
static inline uchar4 operator%(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x % s), (unsigned char)(a.y % s), (unsigned char)(a.z % s), (unsigned char)(a.w % s)}; return r; }
static inline uchar4 operator%(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s % b.x), (unsigned char)(s % b.y), (unsigned char)(s % b.z), (unsigned char)(s % b.w)}; return r; }
static inline uchar4& operator%=(uchar4& a, uchar4 b) { a = a % b; return a; }
static inline uchar4& operator%=(uchar4& a, unsigned char s) { a = a % s; return a; }
static inline uchar4 operator&(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x & b.x), (unsigned char)(a.y & b.y), (unsigned char)(a.z & b.z), (unsigned char)(a.w & b.w)}; return r; }
static inline uchar4 operator&(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x & s), (unsigned char)(a.y & s), (unsigned char)(a.z & s), (unsigned char)(a.w & s)}; return r; }
static inline uchar4 operator&(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s & b.x), (unsigned char)(s & b.y), (unsigned char)(s & b.z), (unsigned char)(s & b.w)}; return r; }
static inline uchar4& operator&=(uchar4& a, uchar4 b) { a = a & b; return a; }
static inline uchar4& operator&=(uchar4& a, unsigned char s) { a = a & s; return a; }
static inline uchar4 operator|(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x | b.x), (unsigned char)(a.y | b.y), (unsigned char)(a.z | b.z), (unsigned char)(a.w | b.w)}; return r; }
static inline uchar4 operator|(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x | s), (unsigned char)(a.y | s), (unsigned char)(a.z | s), (unsigned char)(a.w | s)}; return r; }
static inline uchar4 operator|(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s | b.x), (unsigned char)(s | b.y), (unsigned char)(s | b.z), (unsigned char)(s | b.w)}; return r; }
static inline uchar4& operator|=(uchar4& a, uchar4 b) { a = a | b; return a; }
static inline uchar4& operator|=(uchar4& a, unsigned char s) { a = a | s; return a; }
static inline uchar4 operator^(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x ^ b.x), (unsigned char)(a.y ^ b.y), (unsigned char)(a.z ^ b.z), (unsigned char)(a.w ^ b.w)}; return r; }
static inline uchar4 operator^(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x ^ s), (unsigned char)(a.y ^ s), (unsigned char)(a.z ^ s), (unsigned char)(a.w ^ s)}; return r; }
static inline uchar4 operator^(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s ^ b.x), (unsigned char)(s ^ b.y), (unsigned char)(s ^ b.z), (unsigned char)(s ^ b.w)}; return r; }
static inline uchar4& operator^=(uchar4& a, uchar4 b) { a = a ^ b; return a; }
static inline uchar4& operator^=(uchar4& a, unsigned char s) { a = a ^ s; return a; }
static inline uchar4 operator<<(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x << b.x), (unsigned char)(a.y << b.y), (unsigned char)(a.z << b.z), (unsigned char)(a.w << b.w)}; return r; }
static inline uchar4 operator<<(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x << s), (unsigned char)(a.y << s), (unsigned char)(a.z << s), (unsigned char)(a.w << s)}; return r; }
static inline uchar4 operator<<(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s << b.x), (unsigned char)(s << b.y), (unsigned char)(s << b.z), (unsigned char)(s << b.w)}; return r; }
static inline uchar4& operator<<=(uchar4& a, uchar4 b) { a = a << b; return a; }
static inline uchar4& operator<<=(uchar4& a, unsigned char s) { a = a << s; return a; }
static inline uchar4 operator>>(uchar4 a, uchar4 b) { uchar4 r = {(unsigned char)(a.x >> b.x), (unsigned char)(a.y >> b.y), (unsigned char)(a.z >> b.z), (unsigned char)(a.w >> b.w)}; return r; }
static inline uchar4 operator>>(uchar4 a, unsigned char s) { uchar4 r = {(unsigned char)(a.x >> s), (unsigned char)(a.y >> s), (unsigned char)(a.z >> s), (unsigned char)(a.w >> s)}; return r; }
static inline uchar4 operator>>(unsigned char s, uchar4 b) { uchar4 r = {(unsigned char)(s >> b.x), (unsigned char)(s >> b.y), (unsigned char)(s >> b.z), (unsigned char)(s >> b.w)}; return r; }
static inline uchar4& operator>>=(uchar4& a, uchar4 b) { a = a >> b; return a; }
static inline uchar4& operator>>=(uchar4& a, unsigned char s) { a = a >> s; return a; }
static inline uchar4 operator-(uchar4 a) { uchar4 r = {(unsigned char)(-a.x), (unsigned char)(-a.y), (unsigned char)(-a.z), (unsigned char)(-a.w)}; return r; }
static inline pk_bool4 operator==(uchar4 a, uchar4 b) { pk_bool4 r = {a.x == b.x, a.y == b.y, a.z == b.z, a.w == b.w}; return r; }
static inline pk_bool4 operator!=(uchar4 a, uchar4 b) { pk_bool4 r = {a.x != b.x, a.y != b.y, a.z != b.z, a.w != b.w}; return r; }
static inline pk_bool4 operator<(uchar4 a, uchar4 b) { pk_bool4 r = {a.x < b.x, a.y < b.y, a.z < b.z, a.w < b.w}; return r; }
static inline pk_bool4 operator>(uchar4 a, uchar4 b) { pk_bool4 r = {a.x > b.x, a.y > b.y, a.z > b.z, a.w > b.w}; return r; }
static inline pk_bool4 operator<=(uchar4 a, uchar4 b) { pk_bool4 r = {a.x <= b.x, a.y <= b.y, a.z <= b.z, a.w <= b.w}; return r; }
static inline pk_bool4 operator>=(uchar4 a, uchar4 b) { pk_bool4 r = {a.x >= b.x, a.y >= b.y, a.z >= b.z, a.w >= b.w}; return r; }
template <typename S> static inline uchar4 convert_uchar4(S v) { uchar4 r = {(unsigned char)v.x, (unsigned char)v.y, (unsigned char)v.z, (unsigned char)v.w}; return r; }
template <typename E> static inline typename pk_vec_of<E, 2>::type pk_vload2(long long i, const E* p) { typename pk_vec_of<E, 2>::type r = {p[2 * i + 0], p[2 * i + 1]}; return r; }
template <typename V, typename E> static inline void pk_vstore2(V v, long long i, E* p) { p[2 * i + 0] = v.x; p[2 * i + 1] = v.y; }
template <typename E> static inline typename pk_vec_of<E, 3>::type pk_vload3(long long i, const E* p) { typename pk_vec_of<E, 3>::type r = {p[3 * i + 0], p[3 * i + 1], p[3 * i + 2]}; return r; }
template <typename V, typename E> static inline void pk_vstore3(V v, long long i, E* p) { p[3 * i + 0] = v.x; p[3 * i + 1] = v.y; p[3 * i + 2] = v.z; }
template <typename E> static inline typename pk_vec_of<E, 4>::type pk_vload4(long long i, const E* p) { typename pk_vec_of<E, 4>::type r = {p[4 * i + 0], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]}; return r; }
template <typename V, typename E> static inline void pk_vstore4(V v, long long i, E* p) { p[4 * i + 0] = v.x; p[4 * i + 1] = v.y; p[4 * i + 2] = v.z; p[4 * i + 3] = v.w; }
template <typename T> static inline T rsqrt(T x) { return (T)1 / sqrt(x); }
template <typename T> static inline T mad(T a, T b, T c) { return a * b + c; }
// Particle push with float4: NSTEPS time steps of particles in a damped harmonic trap,
// one particle per work-item, each particle one float4 (docs/language.md, "Vector types").
//
// pos and vel are NumPy arrays of shape (n, 4), which a float4* parameter takes as one
// float4 per row: x, y, z, and in w the particle's mass (pos) or 0 (vel). The update is
// whole-vector arithmetic; `move` is 0 in w, so the mass rides along unchanged. On the
// C++ path float4 is a 16-byte struct whose operators GCC turns into SSE/AVX; OpenCL and
// Metal have float4 natively; CUDA's float4 gets its operators from portakern's prelude.


#line 9 "portakern/examples/particles4.pk"
static inline PK_ALWAYS_INLINE void pk_item_particles4(float4* pos, float4* vel, const float dt, const float stiffness, const float damping, const long long pk_n0, const long long pk_l0, const long long pk_g0, const long long pk_ls0, const long long pk_ng0)
{

const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0;
if (pk_active) {
    
#line 10 "portakern/examples/particles4.pk"
const long long p = ((pk_g0 * pk_ls0 + pk_l0));
    float4 x = pos[p];
    float4 v = vel[p];
    const float k = stiffness / x.w;
    const float4 move = pk_make_float4(1.0f, 1.0f, 1.0f, 0.0f);
    #pragma unroll
    for (int step = 0; step < 100; ++step) {
        // Semi-implicit Euler: the new velocity moves the particle.
        v += dt * move * (-k * x - damping * v);
        x += dt * move * v;
    }
    pos[p] = x;
    vel[p] = v;
}

}

struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"particles4", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    float4* const pk_a0 = (float4*)pk_argv[0];
    float4* const pk_a1 = (float4*)pk_argv[1];
    const float pk_a2 = *(const float*)pk_argv[2];
    const float pk_a3 = *(const float*)pk_argv[3];
    const float pk_a4 = *(const float*)pk_argv[4];
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
            pk_item_particles4(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
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
            pk_item_particles4(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
    }

    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
