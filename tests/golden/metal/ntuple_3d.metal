#include <metal_stdlib>
using namespace metal;
typedef float T;


#line 1 "tests/ntuple_3d.pk"
[[kernel]] void stencil(    device float* out [[buffer(0)]],
    const device float* in [[buffer(1)]],
    constant long& pk_n0 [[buffer(2)]],
    constant long& pk_n1 [[buffer(3)]],
    constant long& pk_n2 [[buffer(4)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.z) < pk_n0 && ((long)thread_position_in_grid.y) < pk_n1 && ((long)thread_position_in_grid.x) < pk_n2;
if (pk_active) {
    
#line 2 "tests/ntuple_3d.pk"
long i = ((long)thread_position_in_grid.z), j = ((long)thread_position_in_grid.y), k = ((long)thread_position_in_grid.x);
    long gi = ((long)threadgroup_position_in_grid.z), gj = ((long)threadgroup_position_in_grid.y), gk = ((long)threadgroup_position_in_grid.x);
    const long nj = pk_n1, nk = pk_n2;
    const long o = (i * nj + j) * nk + k;
    out[o] = in[o] * (T)(gi + gj + gk + ((long)threads_per_threadgroup.z) + (((long)threads_per_threadgroup.z) * ((long)threads_per_threadgroup.y) * ((long)threads_per_threadgroup.x)));
}
}
