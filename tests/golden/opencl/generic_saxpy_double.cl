/* portakern prelude: OpenCL C */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double T;


#line 1 "tests/generic_saxpy_double.pk"
__kernel void saxpy(__global double* y, __global const double* restrict x, const double a, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 2 "tests/generic_saxpy_double.pk"
const long i = (((long)get_global_id(0)));
    y[i] = a * x[i] + y[i];
}
}
