#include <metal_stdlib>
using namespace metal;
typedef float T;
// Transpose a 2D array given as any view: a transpose, a stepped or reversed slice.
//
// 'T out[:, :]' and 'const T in[:, :]' are N-d array parameters: each brings its
// extents and strides, so in[i, j] is element (i, j) of whatever view was passed
// (NumPy, CuPy or PyOpenCL: no copy is made), and out[j, i] writes through to the
// array that out is a view of. One work-item per element of in; the ndrange is
// in's shape, which the kernel checks against @size so a mismatched out is skipped.


#line 8 "portakern/examples/transpose_views.pk"
[[kernel]] void transpose_views(    device float* out [[buffer(0)]],
    const device float* in [[buffer(1)]],
    constant long& pk_out_n0 [[buffer(2)]],
    constant long& pk_out_n1 [[buffer(3)]],
    constant long& pk_out_s0 [[buffer(4)]],
    constant long& pk_out_s1 [[buffer(5)]],
    constant long& pk_out_o [[buffer(6)]],
    constant long& pk_in_n0 [[buffer(7)]],
    constant long& pk_in_n1 [[buffer(8)]],
    constant long& pk_in_s0 [[buffer(9)]],
    constant long& pk_in_s1 [[buffer(10)]],
    constant long& pk_in_o [[buffer(11)]],
    constant long& pk_n0 [[buffer(12)]],
    constant long& pk_n1 [[buffer(13)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.y) < pk_n0 && ((long)thread_position_in_grid.x) < pk_n1;
if (pk_active) {
    
#line 9 "portakern/examples/transpose_views.pk"
long i = ((long)thread_position_in_grid.y), j = ((long)thread_position_in_grid.x);
    if (j < pk_out_n0 && i < pk_out_n1) {
        out[pk_out_o + (j) * pk_out_s0 + ( i) * pk_out_s1] = in[pk_in_o + (i) * pk_in_s0 + ( j) * pk_in_s1];
    }
}
}
