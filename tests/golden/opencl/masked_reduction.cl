/* portakern prelude: OpenCL C */
#line 1 "tests/masked_reduction.pk"
#define WG 128
// Declarations before a barrier are hoisted above their masked segment.


#line 3 "tests/masked_reduction.pk"
__kernel void block_sum(__global float* partial, __global const float* restrict x, const long pk_n0)
{
#line 4 "tests/masked_reduction.pk"
__local float buf[WG];
const bool pk_active = ((long)get_global_id(0)) < pk_n0;

    
     
#line 5 "tests/masked_reduction.pk"
const long n = pk_n0;
     long  i ;
     long  li ;
    float  v ;float  unused;if (pk_active) {
#line 6 "tests/masked_reduction.pk"
i =  (((long)get_global_id(0)));
#line 7 "tests/masked_reduction.pk"
li =  (((long)get_local_id(0)));
#line 8 "tests/masked_reduction.pk"
v =  x[i];
    buf[li] = v;}
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long s = WG / 2; s > 0; s >>= 1) {if (pk_active) {
        if (li < s && i + s < n) buf[li] += buf[li + s];}
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }if (pk_active) {
    if (li == 0) partial[(((long)get_group_id(0)))] = buf[0];
}
}
