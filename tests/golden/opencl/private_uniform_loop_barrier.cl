/* portakern prelude: OpenCL C */
#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__))
#define PK_MATH __attribute__((overloadable, always_inline))
PK_MATH float pk_fabs(float a) { return __builtin_fabsf(a); }
#undef fabs
#define fabs pk_fabs
PK_MATH float pk_sqrt(float a) { return __builtin_sqrtf(a); }
#undef sqrt
#define sqrt pk_sqrt
PK_MATH float pk_fmin(float a, float b) { return __builtin_isnan(b) || a < b ? a : b; }
#undef fmin
#define fmin pk_fmin
PK_MATH float pk_fmax(float a, float b) { return __builtin_isnan(b) || a > b ? a : b; }
#undef fmax
#define fmax pk_fmax
#endif
#line 1 "tests/private_uniform_loop_barrier.pk"
#define TILE 8
float clampf(float v) { return fmin(fmax(v, 0.0f), 1.0f); }


#line 3 "tests/private_uniform_loop_barrier.pk"
__kernel void smooth(__global float* y, __global const float* restrict x, const int steps, const long pk_n0)
{
#line 4 "tests/private_uniform_loop_barrier.pk"
__local float tile[TILE + 2];
const bool pk_active = ((long)get_global_id(0)) < pk_n0;

    
     
#line 5 "tests/private_uniform_loop_barrier.pk"
float  acc[2];
     long  li ;
     long  i ;if (pk_active) {
#line 6 "tests/private_uniform_loop_barrier.pk"
li =  (((long)get_local_id(0)));
#line 7 "tests/private_uniform_loop_barrier.pk"
i =  (((long)get_global_id(0)));
    tile[li + 1] = x[i];
    acc[0] = 0;}
    for (int s = 0; s < steps; ++s) {
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        float  left ;float  right ;if (pk_active) {left =  tile[li];right =  tile[li + 2];
        acc[0] += clampf(0.5f * (left + right));}
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }if (pk_active) {
    y[i] = acc[0] + sqrt(fabs(tanh(x[i])));
}
}
