/* portakern prelude: OpenCL C */
typedef float T;
// saxpy: y = a * x + y, dtype-generic.
//
// T is a type variable: it is bound from the dtype of y and x at launch
// (float32, float64, int32, ...), and each binding compiles its own variant.


#line 5 "portakern/examples/saxpy.pk"
__kernel void saxpy(__global float* y, __global const float* restrict x, const float a, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 6 "portakern/examples/saxpy.pk"
const long i = (((long)get_global_id(0)));
    y[i] = a * x[i] + y[i];
}
}
