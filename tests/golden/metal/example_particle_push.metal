#include <metal_stdlib>
using namespace metal;
typedef float T;
// Particle push: NSTEPS time steps of particles in a damped harmonic trap.
//
// pos and vel hold (3, N) planes: x, y, z of every particle, then the next
// coordinate. Each work-item moves one particle; it keeps the particle in
// registers (@private) for all NSTEPS steps, so memory is touched twice per
// particle however many steps run. NSTEPS is a Jinja constant, fixed when the
// kernel is specialised, so the compiler sees a constant trip count; the three
// coordinates are unrolled at render time. `#pragma unroll` (OpenCL C, CUDA and
// Metal alike) unrolls the step loop too: a CPU OpenCL driver (PoCL) vectorises
// across work-items only when a work-item's body has no loop left, 6x faster there.


#line 11 "portakern/examples/particles.pk"
[[kernel]] void particle_push(    device float* pos [[buffer(0)]],
    device float* vel [[buffer(1)]],
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
    
#line 12 "portakern/examples/particles.pk"
const long p = (((long)thread_position_in_grid.x));
    const long n = (pk_n0);
     T x[3];
     T v[3];

    x[0] = pos[0 * n + p];
    v[0] = vel[0 * n + p];

    
#line 17 "portakern/examples/particles.pk"
x[1] = pos[1 * n + p];
    v[1] = vel[1 * n + p];

    
#line 17 "portakern/examples/particles.pk"
x[2] = pos[2 * n + p];
    v[2] = vel[2 * n + p];

    #pragma unroll
    for (int step = 0; step < 100; ++step) {
        // Semi-implicit Euler: the new velocity moves the particle.

        v[0] += dt * (-stiffness * x[0] - damping * v[0]);
        x[0] += dt * v[0];

        
#line 24 "portakern/examples/particles.pk"
v[1] += dt * (-stiffness * x[1] - damping * v[1]);
        x[1] += dt * v[1];

        
#line 24 "portakern/examples/particles.pk"
v[2] += dt * (-stiffness * x[2] - damping * v[2]);
        x[2] += dt * v[2];

    }

    pos[0 * n + p] = x[0];
    vel[0 * n + p] = v[0];

    
#line 29 "portakern/examples/particles.pk"
pos[1 * n + p] = x[1];
    vel[1 * n + p] = v[1];

    
#line 29 "portakern/examples/particles.pk"
pos[2 * n + p] = x[2];
    vel[2 * n + p] = v[2];

}
}
