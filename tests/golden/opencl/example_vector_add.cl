/* portakern prelude: OpenCL C */
typedef float T;
// Vector add: c = a + b, elementwise, for any dtype and any ndrange rank.
//
// The linear global index is row-major over the ndrange, so the same kernel
// adds 1D vectors, 2D images or 3D volumes; work-items past the end of the
// ndrange (the rounded-up part of the last workgroup) are masked implicitly.


#line 6 "portakern/examples/vector_add.pk"
__kernel void vector_add(__global float* c, __global const float* restrict a, __global const float* restrict b, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 7 "portakern/examples/vector_add.pk"
const long i = (((long)get_global_id(0)));
    c[i] = a[i] + b[i];
}
}
