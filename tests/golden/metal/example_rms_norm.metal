#include <metal_stdlib>
using namespace metal;
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






#line 15 "portakern/examples/rowwise.pk"
[[kernel, max_total_threads_per_threadgroup(256)]] void rms_norm(    device float* y [[buffer(0)]],
    const device float* x [[buffer(1)]],
    constant long& n [[buffer(2)]],
    constant float& eps [[buffer(3)]],
    constant long& pk_n0 [[buffer(4)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 24 "portakern/examples/rowwise.pk"
threadgroup float pk_gr0[33];

    
#line 17 "portakern/examples/rowwise.pk"
const long row = (((long)threadgroup_position_in_grid.x)) * n;
    const long l = (((long)thread_position_in_threadgroup.x));
    float acc = 0.0f;
    for (long j = l; j < n; j += 256) {
        const float v = x[row + j];
        acc += v * v;
    }
    float total; {
    const uint pk_n = threads_per_threadgroup.x * threads_per_threadgroup.y * threads_per_threadgroup.z;
    const uint pk_t = (thread_position_in_threadgroup.z * threads_per_threadgroup.y + thread_position_in_threadgroup.y) * threads_per_threadgroup.x + thread_position_in_threadgroup.x;
    const uint pk_lane = pk_t & 31u, pk_sg = pk_t >> 5;
    float pk_v = (float)( acc);
    pk_v = simd_sum(pk_v);
    if (pk_lane == 0) pk_gr0[pk_sg] = pk_v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (pk_sg == 0) {
        pk_v = simd_sum(pk_lane < (pk_n + 31u) >> 5 ? pk_gr0[pk_lane] : PK_GR_ID_add(float));
        if (pk_lane == 0) pk_gr0[32] = pk_v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    total = pk_gr0[32];
}
#line 24 "portakern/examples/rowwise.pk"
;
    const float scale = 1.0f / sqrt(total / (float)n + eps);
    for (long j = l; j < n; j += 256) {
        y[row + j] = x[row + j] * scale;
    }

}
