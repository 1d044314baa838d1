/* portakern prelude: OpenCL C */
typedef float T;
// A fused elementwise expression: y = a*x*x + b*x + c.
//
// NumPy evaluates this as five passes over memory with four temporaries; the
// kernel reads x once and writes y once, which is where a fused kernel wins.


#line 5 "portakern/examples/polynomial.pk"
__kernel void polynomial(__global float* y, __global const float* restrict x, const float a, const float b, const float c, const long pk_n0)
{

const bool pk_active = ((long)get_global_id(0)) < pk_n0;
if (pk_active) {
    
#line 6 "portakern/examples/polynomial.pk"
const long i = (((long)get_global_id(0)));
    const T v = x[i];
    y[i] = a * v * v + b * v + c;
}
}
