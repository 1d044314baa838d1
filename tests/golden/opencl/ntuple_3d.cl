/* portakern prelude: OpenCL C */
typedef float T;


#line 1 "tests/ntuple_3d.pk"
__kernel void stencil(__global float* out, __global const float* restrict in, const long pk_n0, const long pk_n1, const long pk_n2)
{

const bool pk_active = ((long)get_global_id(2)) < pk_n0 && ((long)get_global_id(1)) < pk_n1 && ((long)get_global_id(0)) < pk_n2;
if (pk_active) {
    
#line 2 "tests/ntuple_3d.pk"
long i = ((long)get_global_id(2)), j = ((long)get_global_id(1)), k = ((long)get_global_id(0));
    long gi = ((long)get_group_id(2)), gj = ((long)get_group_id(1)), gk = ((long)get_group_id(0));
    const long nj = pk_n1, nk = pk_n2;
    const long o = (i * nj + j) * nk + k;
    out[o] = in[o] * (T)(gi + gj + gk + ((long)get_local_size(2)) + (((long)get_local_size(2)) * ((long)get_local_size(1)) * ((long)get_local_size(0))));
}
}
