/* portakern prelude: OpenCL C */
typedef float T;
// Transpose a 2D array given as any view: a transpose, a stepped or reversed slice.
//
// 'T out[:, :]' and 'const T in[:, :]' are N-d array parameters: each brings its
// extents and strides, so in[i, j] is element (i, j) of whatever view was passed
// (NumPy, CuPy or PyOpenCL: no copy is made), and out[j, i] writes through to the
// array that out is a view of. One work-item per element of in; the ndrange is
// in's shape, which the kernel checks against @size so a mismatched out is skipped.


#line 8 "portakern/examples/transpose_views.pk"
__kernel void transpose_views(__global float* out, __global const float* restrict in, const long pk_out_n0, const long pk_out_n1, const long pk_out_s0, const long pk_out_s1, const long pk_out_o, const long pk_in_n0, const long pk_in_n1, const long pk_in_s0, const long pk_in_s1, const long pk_in_o, const long pk_n0, const long pk_n1)
{

const bool pk_active = ((long)get_global_id(1)) < pk_n0 && ((long)get_global_id(0)) < pk_n1;
if (pk_active) {
    
#line 9 "portakern/examples/transpose_views.pk"
long i = ((long)get_global_id(1)), j = ((long)get_global_id(0));
    if (j < pk_out_n0 && i < pk_out_n1) {
        out[pk_out_o + (j) * pk_out_s0 + ( i) * pk_out_s1] = in[pk_in_o + (i) * pk_in_s0 + ( j) * pk_in_s1];
    }
}
}
