#include <metal_stdlib>
using namespace metal;
#define pk_make_float2(...) float2(__VA_ARGS__)
template <typename S> inline float2 convert_float2(S v) { return float2((float)v.x, (float)v.y); }
inline float2 pk_vector(float a0, float a1) { return float2(a0, a1); }
#define pk_make_float3(...) float3(__VA_ARGS__)
template <typename S> inline float3 convert_float3(S v) { return float3((float)v.x, (float)v.y, (float)v.z); }
inline float3 pk_vector(float a0, float a1, float a2) { return float3(a0, a1, a2); }
#define pk_make_float4(...) float4(__VA_ARGS__)
template <typename S> inline float4 convert_float4(S v) { return float4((float)v.x, (float)v.y, (float)v.z, (float)v.w); }
inline float4 pk_vector(float a0, float a1, float a2, float a3) { return float4(a0, a1, a2, a3); }
#define pk_make_int2(...) int2(__VA_ARGS__)
template <typename S> inline int2 convert_int2(S v) { return int2((int)v.x, (int)v.y); }
inline int2 pk_vector(int a0, int a1) { return int2(a0, a1); }
#define pk_make_int3(...) int3(__VA_ARGS__)
template <typename S> inline int3 convert_int3(S v) { return int3((int)v.x, (int)v.y, (int)v.z); }
inline int3 pk_vector(int a0, int a1, int a2) { return int3(a0, a1, a2); }
#define pk_make_int4(...) int4(__VA_ARGS__)
template <typename S> inline int4 convert_int4(S v) { return int4((int)v.x, (int)v.y, (int)v.z, (int)v.w); }
inline int4 pk_vector(int a0, int a1, int a2, int a3) { return int4(a0, a1, a2, a3); }
#define pk_make_uint2(...) uint2(__VA_ARGS__)
template <typename S> inline uint2 convert_uint2(S v) { return uint2((uint)v.x, (uint)v.y); }
inline uint2 pk_vector(uint a0, uint a1) { return uint2(a0, a1); }
#define pk_make_uint3(...) uint3(__VA_ARGS__)
template <typename S> inline uint3 convert_uint3(S v) { return uint3((uint)v.x, (uint)v.y, (uint)v.z); }
inline uint3 pk_vector(uint a0, uint a1, uint a2) { return uint3(a0, a1, a2); }
#define pk_make_uint4(...) uint4(__VA_ARGS__)
template <typename S> inline uint4 convert_uint4(S v) { return uint4((uint)v.x, (uint)v.y, (uint)v.z, (uint)v.w); }
inline uint4 pk_vector(uint a0, uint a1, uint a2, uint a3) { return uint4(a0, a1, a2, a3); }
#define pk_make_uchar2(...) uchar2(__VA_ARGS__)
template <typename S> inline uchar2 convert_uchar2(S v) { return uchar2((uchar)v.x, (uchar)v.y); }
inline uchar2 pk_vector(uchar a0, uchar a1) { return uchar2(a0, a1); }
#define pk_make_uchar3(...) uchar3(__VA_ARGS__)
template <typename S> inline uchar3 convert_uchar3(S v) { return uchar3((uchar)v.x, (uchar)v.y, (uchar)v.z); }
inline uchar3 pk_vector(uchar a0, uchar a1, uchar a2) { return uchar3(a0, a1, a2); }
#define pk_make_uchar4(...) uchar4(__VA_ARGS__)
template <typename S> inline uchar4 convert_uchar4(S v) { return uchar4((uchar)v.x, (uchar)v.y, (uchar)v.z, (uchar)v.w); }
inline uchar4 pk_vector(uchar a0, uchar a1, uchar a2, uchar a3) { return uchar4(a0, a1, a2, a3); }
template <typename P> inline auto pk_vload2(long i, P p) -> decltype(pk_vector(p[0], p[0])) { return pk_vector(p[2 * i + 0], p[2 * i + 1]); }
template <typename V, typename P> inline void pk_vstore2(V v, long i, P p) { p[2 * i + 0] = v.x; p[2 * i + 1] = v.y; }
template <typename P> inline auto pk_vload3(long i, P p) -> decltype(pk_vector(p[0], p[0], p[0])) { return pk_vector(p[3 * i + 0], p[3 * i + 1], p[3 * i + 2]); }
template <typename V, typename P> inline void pk_vstore3(V v, long i, P p) { p[3 * i + 0] = v.x; p[3 * i + 1] = v.y; p[3 * i + 2] = v.z; }
template <typename P> inline auto pk_vload4(long i, P p) -> decltype(pk_vector(p[0], p[0], p[0], p[0])) { return pk_vector(p[4 * i + 0], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]); }
template <typename V, typename P> inline void pk_vstore4(V v, long i, P p) { p[4 * i + 0] = v.x; p[4 * i + 1] = v.y; p[4 * i + 2] = v.z; p[4 * i + 3] = v.w; }
template <typename V, typename E> inline const device V* pk_as_vector(const device E* p) { return (const device V*)p; }
template <typename V, typename E> inline const constant V* pk_as_vector(const constant E* p) { return (const constant V*)p; }
// Particle push with float4: NSTEPS time steps of particles in a damped harmonic trap,
// one particle per work-item, each particle one float4 (docs/language.md, "Vector types").
//
// pos and vel are NumPy arrays of shape (n, 4), which a float4* parameter takes as one
// float4 per row: x, y, z, and in w the particle's mass (pos) or 0 (vel). The update is
// whole-vector arithmetic; `move` is 0 in w, so the mass rides along unchanged. On the
// C++ path float4 is a 16-byte struct whose operators GCC turns into SSE/AVX; OpenCL and
// Metal have float4 natively; CUDA's float4 gets its operators from portakern's prelude.


#line 9 "portakern/examples/particles4.pk"
[[kernel]] void particles4(    device float4* pos [[buffer(0)]],
    device float4* vel [[buffer(1)]],
    constant float& dt [[buffer(2)]],
    constant float& stiffness [[buffer(3)]],
    constant float& damping [[buffer(4)]],
    constant long& pk_n0 [[buffer(5)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 10 "portakern/examples/particles4.pk"
const long p = (((long)thread_position_in_grid.x));
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
