/* portakern prelude: OpenCL C */
typedef float T;
// Naive matrix multiply: c[M, N] = a[M, K] @ b[K, N], one work-item per output.
//
// The ndrange is (M, N); K is passed by value. Each work-item walks a row of a
// and a column of b straight from global memory (see matmul_tiled.pk for the
// version that shares tiles through workgroup memory).


#line 6 "portakern/examples/matmul.pk"
__kernel void matmul(__global float* c, __global const float* restrict a, __global const float* restrict b, const long K, const long pk_n0, const long pk_n1)
{

const bool pk_active = ((long)get_global_id(1)) < pk_n0 && ((long)get_global_id(0)) < pk_n1;
if (pk_active) {
    
#line 7 "portakern/examples/matmul.pk"
long i = ((long)get_global_id(1)), j = ((long)get_global_id(0));
    const long N = pk_n1;
    T acc = 0;
    for (long k = 0; k < K; ++k) {
        acc += a[i * K + k] * b[k * N + j];
    }
    c[i * N + j] = acc;
}
}
