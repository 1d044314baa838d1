#include <metal_stdlib>
using namespace metal;
typedef float T;
// 2D translate: out[i + dy, j + dx] = img[i, j]; writes that land outside the
// image are dropped, and pixels nothing lands on keep out's previous value.
//
// The ndrange is the image shape (H, W): axis 0 is rows, axis 1 (the fastest)
// is columns, as in NumPy.


#line 6 "portakern/examples/translate.pk"
[[kernel]] void translate(    device float* out [[buffer(0)]],
    const device float* img [[buffer(1)]],
    constant long& dy [[buffer(2)]],
    constant long& dx [[buffer(3)]],
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
    
#line 7 "portakern/examples/translate.pk"
long i = ((long)thread_position_in_grid.y), j = ((long)thread_position_in_grid.x);
    const long h = pk_n0;
    const long w = pk_n1;
    const long ti = i + dy;
    const long tj = j + dx;
    if (ti >= 0 && ti < h && tj >= 0 && tj < w) {
        out[ti * w + tj] = img[i * w + j];
    }
}
}
