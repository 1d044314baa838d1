/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
typedef float T;
// Transpose a 2D array given as any view: a transpose, a stepped or reversed slice.
//
// 'T out[:, :]' and 'const T in[:, :]' are N-d array parameters: each brings its
// extents and strides, so in[i, j] is element (i, j) of whatever view was passed
// (NumPy, CuPy or PyOpenCL: no copy is made), and out[j, i] writes through to the
// array that out is a view of. One work-item per element of in; the ndrange is
// in's shape, which the kernel checks against @size so a mismatched out is skipped.


#line 8 "portakern/examples/transpose_views.pk"
extern "C" __global__ void transpose_views(float* out, const float* __restrict__ in, const long long pk_out_n0, const long long pk_out_n1, const long long pk_out_s0, const long long pk_out_s1, const long long pk_out_o, const long long pk_in_n0, const long long pk_in_n1, const long long pk_in_s0, const long long pk_in_s1, const long long pk_in_o, const long long pk_n0, const long long pk_n1)
{

const bool pk_active = ((long long)blockIdx.y * blockDim.y + threadIdx.y) < pk_n0 && ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n1;
if (pk_active) {
    
#line 9 "portakern/examples/transpose_views.pk"
long long i = ((long long)blockIdx.y * blockDim.y + threadIdx.y), j = ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (j < pk_out_n0 && i < pk_out_n1) {
        out[pk_out_o + (j) * pk_out_s0 + ( i) * pk_out_s1] = in[pk_in_o + (i) * pk_in_s0 + ( j) * pk_in_s1];
    }
}
}
