/* portakern prelude: CUDA C++ */
template <typename T, typename L, typename H> __device__ inline T clamp(T x, L lo, H hi) { return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x); }
template <typename A, typename B> __device__ inline decltype(true ? A() : B()) min(A a, B b) { typedef decltype(true ? A() : B()) C; return (C)b < (C)a ? (C)b : (C)a; }
template <typename A, typename B> __device__ inline decltype(true ? A() : B()) max(A a, B b) { typedef decltype(true ? A() : B()) C; return (C)a < (C)b ? (C)b : (C)a; }
typedef float T;
// Workgroup reductions over a 1D ndrange: one partial result per workgroup.
//
// reduce_sum and reduce_max write partial[g], the sum / maximum of the
// elements that workgroup g covers; argmax_groups writes the largest value of
// each group and its index (the first one, on ties, as numpy.argmax does).
// Running a kernel again on its own partial results reduces further, until one
// value is left (the catalog's run(), in portakern/examples/__init__.py, does that).
//
// Launch with workgroupsize GROUP (or a smaller power of two): the tree below
// halves the active range at each step. The bounds mask stays on: work-items
// past the end of the ndrange skip their loads, so the tree only combines the
// slots that were written. How many that is, `count`, is the same for every
// work-item of a group, hence @uniform (computed outside the bounds mask).








#line 37 "portakern/examples/reduce.pk"
extern "C" __global__ void argmax_groups(float* best, long long* best_index, const float* __restrict__ x, const long long pk_n0)
{
#line 38 "portakern/examples/reduce.pk"
__shared__ T val[256];
#line 39 "portakern/examples/reduce.pk"
__shared__ long long idx[256];
const bool pk_active = ((long long)blockIdx.x * blockDim.x + threadIdx.x) < pk_n0;

    
    
     
#line 40 "portakern/examples/reduce.pk"
const long long n = (pk_n0);
     const long long group = (((long long)blockIdx.x));
     const long long count = min((long long)(((long long)blockDim.x)), n - group * (long long)(((long long)blockDim.x)));
     long long  lid ;
     long long  i ;if (pk_active) {
#line 43 "portakern/examples/reduce.pk"
lid =  (((long long)threadIdx.x));
#line 44 "portakern/examples/reduce.pk"
i =  (((long long)blockIdx.x * blockDim.x + threadIdx.x));
    val[lid] = x[i];
    idx[lid] = i;}
    __syncthreads();
    for (long long s = (((long long)blockDim.x)) / 2; s > 0; s /= 2) {if (pk_active) {
        if (lid < s && lid + s < count) {
            const T other = val[lid + s];
            const long long other_index = idx[lid + s];
            // Ties go to the smaller index, so the result is numpy.argmax's.
            if (other > val[lid] || (other == val[lid] && other_index < idx[lid])) {
                val[lid] = other;
                idx[lid] = other_index;
            }
        }}
        __syncthreads();
    }if (pk_active) {
    if (lid == 0) {
        best[group] = val[0];
        best_index[group] = idx[0];
    }
}
}
