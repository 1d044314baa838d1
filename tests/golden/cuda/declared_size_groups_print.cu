#define PK_FP_CONTRACT_OFF 1
/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }


#line 1 "tests/declared_size_groups_print.pk"
extern "C" __global__ void __launch_bounds__(32) blocks(float* y, const float* __restrict__ a, const long long pk_n0, const long long pk_n1)
{
#line 2 "tests/declared_size_groups_print.pk"
__shared__ float tile[8][4];
#line 3 "tests/declared_size_groups_print.pk"
__shared__ float total;
const bool pk_active = ((long long)blockIdx.y * blockDim.y + threadIdx.y) < pk_n0 && ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n1;

    
    
    
#line 4 "tests/declared_size_groups_print.pk"
long long i = ((long long)blockIdx.y * blockDim.y + threadIdx.y),  j = ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    long long li = ((long long)threadIdx.y),  lj = ((long long)threadIdx.x);if (pk_active) {
    if (li == 0 && lj == 0) total = 0;
    tile[li][lj] = a[i * pk_n1 + j];}
    __syncthreads();if (pk_active) {
    y[i * pk_n1 + j] = tile[li][lj] * a[0] + (float)(((long long)gridDim.y) * (((long long)gridDim.y) * ((long long)gridDim.x)));
    if (i == 0 && j == 0) printf("groups: %ld\n", (long long)(((long long)gridDim.y) * ((long long)gridDim.x)));
}
}
