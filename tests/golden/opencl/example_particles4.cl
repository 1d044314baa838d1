/* portakern prelude: OpenCL C */
#define pk_make_float2(...) ((float2)(__VA_ARGS__))
#define pk_make_float3(...) ((float3)(__VA_ARGS__))
#define pk_make_float4(...) ((float4)(__VA_ARGS__))
#define pk_make_double2(...) ((double2)(__VA_ARGS__))
#define pk_make_double3(...) ((double3)(__VA_ARGS__))
#define pk_make_int2(...) ((int2)(__VA_ARGS__))
#define pk_make_int3(...) ((int3)(__VA_ARGS__))
#define pk_make_int4(...) ((int4)(__VA_ARGS__))
#define pk_make_uint2(...) ((uint2)(__VA_ARGS__))
#define pk_make_uint3(...) ((uint3)(__VA_ARGS__))
#define pk_make_uint4(...) ((uint4)(__VA_ARGS__))
#define pk_make_uchar2(...) ((uchar2)(__VA_ARGS__))
#define pk_make_uchar3(...) ((uchar3)(__VA_ARGS__))
#define pk_make_uchar4(...) ((uchar4)(__VA_ARGS__))
#define pk_vload2 vload2
#define pk_vstore2 vstore2
#define pk_vload3 vload3
#define pk_vstore3 vstore3
#define pk_vload4 vload4
#define pk_vstore4 vstore4
// Particle push with float4: NSTEPS time steps of particles in a damped harmonic trap,
// one particle per work-item, each particle one float4 (docs/language.md, "Vector types").
//
// pos and vel are NumPy arrays of shape (n, 4), which a float4* parameter takes as one
// float4 per row: x, y, z, and in w the particle's mass (pos) or 0 (vel). The update is
// whole-vector arithmetic; `move` is 0 in w, so the mass rides along unchanged. On the
// C++ path float4 is a 16-byte struct whose operators GCC turns into SSE/AVX; OpenCL and
// Metal have float4 natively; CUDA's float4 gets its operators from portakern's prelude.


#line 9 "portakern/examples/particles4.pk"
__kernel void particles4(__global float4* pos, __global float4* vel, const float dt, const float stiffness, const float damping, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 10 "portakern/examples/particles4.pk"
const long p = (((long)get_global_id(0)));
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
