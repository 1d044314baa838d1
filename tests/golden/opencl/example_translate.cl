/* portakern prelude: OpenCL C */
typedef float T;
// 2D translate: out[i + dy, j + dx] = img[i, j]; writes that land outside the
// image are dropped, and pixels nothing lands on keep out's previous value.
//
// The ndrange is the image shape (H, W): axis 0 is rows, axis 1 (the fastest)
// is columns, as in NumPy.


#line 6 "portakern/examples/translate.pk"
__kernel void translate(__global float* out, __global const float* restrict img, const long dy, const long dx, const long pk_n0, const long pk_n1)
{

const bool pk_active = ((long)get_global_id(1)) < pk_n0 && ((long)get_global_id(0)) < pk_n1;
if (pk_active) {
    
#line 7 "portakern/examples/translate.pk"
long i = ((long)get_global_id(1)), j = ((long)get_global_id(0));
    const long h = pk_n0;
    const long w = pk_n1;
    const long ti = i + dy;
    const long tj = j + dx;
    if (ti >= 0 && ti < h && tj >= 0 && tj < w) {
        out[ti * w + tj] = img[i * w + j];
    }
}
}
