#include <metal_stdlib>
using namespace metal;
template <typename A, typename B> inline decltype(true ? A() : B()) min(A a, B b) { typedef decltype(true ? A() : B()) C; return metal::min((C)a, (C)b); }
template <typename A, typename B> inline decltype(true ? A() : B()) max(A a, B b) { typedef decltype(true ? A() : B()) C; return metal::max((C)a, (C)b); }
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
[[kernel]] void argmax_groups(    device float* best [[buffer(0)]],
    device long* best_index [[buffer(1)]],
    const device float* x [[buffer(2)]],
    constant long& pk_n0 [[buffer(3)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{
#line 38 "portakern/examples/reduce.pk"
threadgroup T val[256];
#line 39 "portakern/examples/reduce.pk"
threadgroup long idx[256];
const bool pk_active = ((long)thread_position_in_grid.x) < pk_n0;

    
    
     
#line 40 "portakern/examples/reduce.pk"
const long n = (pk_n0);
     const long group = (((long)threadgroup_position_in_grid.x));
     const long count = min((long)(((long)threads_per_threadgroup.x)), n - group * (long)(((long)threads_per_threadgroup.x)));
     long  lid ;
     long  i ;if (pk_active) {
#line 43 "portakern/examples/reduce.pk"
lid =  (((long)thread_position_in_threadgroup.x));
#line 44 "portakern/examples/reduce.pk"
i =  (((long)thread_position_in_grid.x));
    val[lid] = x[i];
    idx[lid] = i;}
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    for (long s = (((long)threads_per_threadgroup.x)) / 2; s > 0; s /= 2) {if (pk_active) {
        if (lid < s && lid + s < count) {
            const T other = val[lid + s];
            const long other_index = idx[lid + s];
            // Ties go to the smaller index, so the result is numpy.argmax's.
            if (other > val[lid] || (other == val[lid] && other_index < idx[lid])) {
                val[lid] = other;
                idx[lid] = other_index;
            }
        }}
        threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    }if (pk_active) {
    if (lid == 0) {
        best[group] = val[0];
        best_index[group] = idx[0];
    }
}
}
