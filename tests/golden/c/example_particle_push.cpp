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
template <typename T> static inline T rsqrt(T x) { return (T)1 / sqrt(x); }
template <typename T> static inline T mad(T a, T b, T c) { return a * b + c; }
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
static inline PK_ALWAYS_INLINE void pk_item_particle_push(float* pos, float* vel, const float dt, const float stiffness, const float damping, const long long pk_n0, const long long pk_l0, const long long pk_g0, const long long pk_ls0, const long long pk_ng0)
{

const bool pk_active = (pk_g0 * pk_ls0 + pk_l0) < pk_n0;
if (pk_active) {
    
#line 12 "portakern/examples/particles.pk"
const long long p = ((pk_g0 * pk_ls0 + pk_l0));
    const long long n = (pk_n0);
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

struct pk_crash_rec { const char* name; void** slot; int running; int ndim; int axes; int spare; long long n[3]; long long ls[3]; };
extern "C" { PK_EXPORT pk_crash_rec pk_crash_record = {"particle_push", 0, 0, 1, 1, 0, {0, 0, 0}, {0, 0, 0}}; }
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
    float* const pk_a0 = (float*)pk_argv[0];
    float* const pk_a1 = (float*)pk_argv[1];
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
            pk_item_particle_push(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
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
            pk_item_particle_push(pk_a0, pk_a1, pk_a2, pk_a3, pk_a4, pk_n0, pk_l0, pk_g0, pk_ls0, pk_ng0);
    }

    }
    if (pk_c) __atomic_sub_fetch(pk_c + 1, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&pk_crash_record.running, 1, __ATOMIC_RELAXED);
    return pk_stopped;
}
