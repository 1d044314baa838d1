#include <metal_stdlib>
using namespace metal;
typedef float T;
// Vector add: c = a + b, elementwise, for any dtype and any ndrange rank.
//
// The linear global index is row-major over the ndrange, so the same kernel
// adds 1D vectors, 2D images or 3D volumes; work-items past the end of the
// ndrange (the rounded-up part of the last workgroup) are masked implicitly.


#line 6 "portakern/examples/vector_add.pk"
[[kernel]] void vector_add(    device float* c [[buffer(0)]],
    const device float* a [[buffer(1)]],
    const device float* b [[buffer(2)]],
    constant long& pk_n0 [[buffer(3)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;
if (pk_active) {
    
#line 7 "portakern/examples/vector_add.pk"
const long i = (((long)thread_position_in_grid.x));
    c[i] = a[i] + b[i];
}
}
