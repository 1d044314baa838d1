#pragma OPENCL FP_CONTRACT OFF
#define PK_FP_CONTRACT_OFF 1
/* portakern prelude: OpenCL C */


#line 1 "tests/declared_size_groups_print.pk"
__kernel __attribute__((reqd_work_group_size(4, 8, 1))) void blocks(__global float* y, __global const float* restrict a, const long pk_n0, const long pk_n1)
{
#line 2 "tests/declared_size_groups_print.pk"
__local float tile[8][4];
#line 3 "tests/declared_size_groups_print.pk"
__local float total;
const bool pk_active = ((long)get_global_id(1)) < pk_n0 && ((long)get_global_id(0)) < pk_n1;

    
    
    
#line 4 "tests/declared_size_groups_print.pk"
long i = ((long)get_global_id(1)),  j = ((long)get_global_id(0));
    long li = ((long)get_local_id(1)),  lj = ((long)get_local_id(0));if (pk_active) {
    if (li == 0 && lj == 0) total = 0;
    tile[li][lj] = a[i * pk_n1 + j];}
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);if (pk_active) {
    y[i * pk_n1 + j] = tile[li][lj] * a[0] + (float)(((long)get_num_groups(1)) * (((long)get_num_groups(1)) * ((long)get_num_groups(0))));
    if (i == 0 && j == 0) printf("groups: %ld\n", (long)(((long)get_num_groups(1)) * ((long)get_num_groups(0))));
}
}
