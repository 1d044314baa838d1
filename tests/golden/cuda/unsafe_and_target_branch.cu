/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }


#line 1 "tests/unsafe_and_target_branch.pk"
extern "C" __global__ void branch(float* y, const long long pk_n0, const long long pk_n1)
{


    
#line 2 "tests/unsafe_and_target_branch.pk"
long long i = ((long long)blockIdx.y * blockDim.y + threadIdx.y), j = ((long long)blockIdx.x * blockDim.x + threadIdx.x);

    y[i * pk_n1 + j] = 1.0f;


    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 0 * 0.5;

    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 1 * 0.5;

    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 2 * 0.5;


}
