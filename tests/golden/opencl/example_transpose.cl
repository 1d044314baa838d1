/* portakern prelude: OpenCL C */
typedef float T;
// Transpose a 2D array through workgroup memory, with a declared workgroup size.
//
// @kernel(workgroupsize=...) fixes each group at TILE x TILE work-items: a launch
// needs no workgroupsize= (another size is an NDRangeError), and @groupsize(d) is
// a compile-time constant, so it sizes the tile. One padding column keeps the
// transposed reads on different memory banks of a GPU.
//
// A work-item reads in[i][j] but writes another element of out, so the kernel
// opts out of the implicit bounds mask and checks both coordinates itself: every
// work-item of a partial group still loads its slot and reaches the barrier.


#line 11 "portakern/examples/transpose.pk"
__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void transpose(__global float* out, __global const float* restrict in, const long pk_n0, const long pk_n1)
{
#line 12 "portakern/examples/transpose.pk"
__local T tile[16][16 + 1];

    
    
#line 13 "portakern/examples/transpose.pk"
long li = ((long)get_local_id(1)), lj = ((long)get_local_id(0));
    long gi = ((long)get_group_id(1)), gj = ((long)get_group_id(0));
    const long h = pk_n0;
    const long w = pk_n1;
    const long i = gi * 16 + li;
    const long j = gj * 16 + lj;
    if (i < h && j < w) {
        tile[li][lj] = in[i * w + j];
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    // The group writes its tile to the mirrored block of out: out[oi][oj] = in[oj][oi].
    const long oi = gj * 16 + li;
    const long oj = gi * 16 + lj;
    if (oi < w && oj < h) {
        out[oi * h + oj] = tile[lj][li];
    }

}
