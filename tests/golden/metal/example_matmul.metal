#include <metal_stdlib>
using namespace metal;
typedef float T;
// Naive matrix multiply: c[M, N] = a[M, K] @ b[K, N], one work-item per output.
//
// The ndrange is (M, N); K is passed by value. Each work-item walks a row of a
// and a column of b straight from global memory (see matmul_tiled.pk for the
// version that shares tiles through workgroup memory).


#line 6 "portakern/examples/matmul.pk"
[[kernel]] void matmul(    device float* c [[buffer(0)]],
    const device float* a [[buffer(1)]],
    const device float* b [[buffer(2)]],
    constant long& K [[buffer(3)]],
    constant long& pk_n0 [[buffer(4)]],
    constant long& pk_n1 [[buffer(5)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.y) < pk_n0 && ((long)thread_position_in_grid.x) < pk_n1;
if (pk_active) {
    
#line 7 "portakern/examples/matmul.pk"
long i = ((long)thread_position_in_grid.y), j = ((long)thread_position_in_grid.x);
    const long N = pk_n1;
    T acc = 0;
    for (long k = 0; k < K; ++k) {
        acc += a[i * K + k] * b[k * N + j];
    }
    c[i * N + j] = acc;
}
}
