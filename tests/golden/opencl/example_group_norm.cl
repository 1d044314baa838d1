/* portakern prelude: OpenCL C */
#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__))
#define PK_MATH __attribute__((overloadable, always_inline))
PK_MATH float pk_sqrt(float a) { return __builtin_sqrtf(a); }
#undef sqrt
#define sqrt pk_sqrt
#endif
#define PK_GR_FLOATING(T) ((T)0.5 != (T)0)
#define PK_GR_SIGNED(T) ((T)-1 < (T)0)
#define PK_GR_TOP(T) ((T)(((ulong)1 << (sizeof(T) * 8 - 1)) - 1))
#define PK_GR_ID_add(T) ((T)0)
#define PK_GR_ID_min(T) (PK_GR_FLOATING(T) ? (T)(INFINITY) : PK_GR_SIGNED(T) ? PK_GR_TOP(T) : (T)-1)
#define PK_GR_ID_max(T) (PK_GR_FLOATING(T) ? (T)(-INFINITY) : PK_GR_SIGNED(T) ? (T)(-PK_GR_TOP(T) - 1) : (T)0)
#define PK_GR_OP_add(a, b) ((a) + (b))
#define PK_GR_OP_min(a, b) ((b) < (a) ? (b) : (a))
#define PK_GR_OP_max(a, b) ((a) < (b) ? (b) : (a))
// Row-wise normalisations with one workgroup per row (ggml's and the MLX docs' shape):
// every work-item of the group strides over the row by the group size, a @groupreduce
// combines the items' partial results, and a second pass over the row writes it.
//
// rms_norm:   y = x / sqrt(mean(x^2) + eps)
// softmax:    y = exp(x - max(x)) / sum(exp(x - max(x)))  (two reductions, then the pass)
// group_norm: ggml's group_norm: x is (groups, n) and each group of n elements is
//             normalised to zero mean and unit variance, y = (x - mean) / sqrt(var + eps);
//             the mean first, then the variance of the centred values (two passes, as ggml).
//
// `n` is the row length (any value; the group size need not divide it) and the ndrange
// is rows * GROUP, so @index(Group, Linear) is the row. The reductions are collectives:
// every work-item reaches them, which is why the kernels take unsafe_indices and no
// work-item returns early.






#line 50 "portakern/examples/rowwise.pk"
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void group_norm(__global float* y, __global const float* restrict x, const long n, const float eps, const long pk_n0)
{
#line 58 "portakern/examples/rowwise.pk"
__local float pk_gr0[256];
#line 65 "portakern/examples/rowwise.pk"
__local float pk_gr1[256];

    
#line 52 "portakern/examples/rowwise.pk"
const long row = (((long)get_group_id(0))) * n;
    const long l = (((long)get_local_id(0)));
    float acc = 0.0f;
    for (long j = l; j < n; j += 256) {
        acc += x[row + j];
    }
    float sum; {
    const float pk_v = (float)( acc);
#if defined(__opencl_c_work_group_collective_functions) || (defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ == 200)
    sum = work_group_reduce_add(pk_v);
#else
    const uint pk_n = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
    const uint pk_t = (uint)((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0));
    if (pk_t < 256u) pk_gr0[pk_t] = pk_v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint pk_b = 256u; pk_b < pk_n; pk_b += 256u) {
        if (pk_t >= pk_b && pk_t - pk_b < 256u) pk_gr0[pk_t - pk_b] = PK_GR_OP_add(pk_gr0[pk_t - pk_b], pk_v);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint pk_w = pk_n < 256u ? pk_n : 256u; pk_w > 1u; ) {
        const uint pk_h = (pk_w + 1u) >> 1;
        if (pk_t + pk_h < pk_w) pk_gr0[pk_t] = PK_GR_OP_add(pk_gr0[pk_t], pk_gr0[pk_t + pk_h]);
        barrier(CLK_LOCAL_MEM_FENCE);
        pk_w = pk_h;
    }
    sum = pk_gr0[0];
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
}
#line 58 "portakern/examples/rowwise.pk"
;
    const float mean = sum / (float)n;
    float acc2 = 0.0f;
    for (long j = l; j < n; j += 256) {
        const float d = x[row + j] - mean;
        acc2 += d * d;
    }
    float var; {
    const float pk_v = (float)( acc2);
#if defined(__opencl_c_work_group_collective_functions) || (defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ == 200)
    var = work_group_reduce_add(pk_v);
#else
    const uint pk_n = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
    const uint pk_t = (uint)((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0));
    if (pk_t < 256u) pk_gr1[pk_t] = pk_v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint pk_b = 256u; pk_b < pk_n; pk_b += 256u) {
        if (pk_t >= pk_b && pk_t - pk_b < 256u) pk_gr1[pk_t - pk_b] = PK_GR_OP_add(pk_gr1[pk_t - pk_b], pk_v);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint pk_w = pk_n < 256u ? pk_n : 256u; pk_w > 1u; ) {
        const uint pk_h = (pk_w + 1u) >> 1;
        if (pk_t + pk_h < pk_w) pk_gr1[pk_t] = PK_GR_OP_add(pk_gr1[pk_t], pk_gr1[pk_t + pk_h]);
        barrier(CLK_LOCAL_MEM_FENCE);
        pk_w = pk_h;
    }
    var = pk_gr1[0];
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
}
#line 65 "portakern/examples/rowwise.pk"
;
    const float scale = 1.0f / sqrt(var / (float)n + eps);
    for (long j = l; j < n; j += 256) {
        y[row + j] = (x[row + j] - mean) * scale;
    }

}
