/* portakern prelude: OpenCL C */
#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__))
#define PK_MATH __attribute__((overloadable, always_inline))
PK_MATH float pk_min(float a, float b) { return a < b ? a : b; }
PK_MATH char pk_min(char a, char b) { return b < a ? b : a; }
PK_MATH uchar pk_min(uchar a, uchar b) { return b < a ? b : a; }
PK_MATH short pk_min(short a, short b) { return b < a ? b : a; }
PK_MATH ushort pk_min(ushort a, ushort b) { return b < a ? b : a; }
PK_MATH int pk_min(int a, int b) { return b < a ? b : a; }
PK_MATH uint pk_min(uint a, uint b) { return b < a ? b : a; }
PK_MATH long pk_min(long a, long b) { return b < a ? b : a; }
PK_MATH ulong pk_min(ulong a, ulong b) { return b < a ? b : a; }
#undef min
#define min pk_min
#endif
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








#line 15 "portakern/examples/reduce.pk"
__kernel void reduce_sum(__global float* partial, __global const float* restrict x, const long pk_n0)
{
#line 16 "portakern/examples/reduce.pk"
__local T buf[256];
const bool pk_active = ((long)get_global_id(0)) < pk_n0;

    
     
#line 17 "portakern/examples/reduce.pk"
const long n = (pk_n0);
     const long group = (((long)get_group_id(0)));
     const long count = min((long)(((long)get_local_size(0))), n - group * (long)(((long)get_local_size(0))));
     long  lid ;if (pk_active) {lid =  (((long)get_local_id(0)));
    buf[lid] = x[(((long)get_global_id(0)))];}
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long s = (((long)get_local_size(0))) / 2; s > 0; s /= 2) {if (pk_active) {
        if (lid < s && lid + s < count) {
            const T a = buf[lid];
            const T b = buf[lid + s];
            buf[lid] = a + b;
        }}
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }if (pk_active) {
    if (lid == 0) {
        partial[group] = buf[0];
    }
}
}
