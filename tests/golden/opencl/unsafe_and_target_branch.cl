/* portakern prelude: OpenCL C */


#line 1 "tests/unsafe_and_target_branch.pk"
__kernel void branch(__global float* y, const long pk_n0, const long pk_n1)
{


    
#line 2 "tests/unsafe_and_target_branch.pk"
long i = ((long)get_global_id(1)), j = ((long)get_global_id(0));

    
#line 8 "tests/unsafe_and_target_branch.pk"
y[i * pk_n1 + j] = 3.0f;


    y[0] += 0 * 0.5;

    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 1 * 0.5;

    
#line 11 "tests/unsafe_and_target_branch.pk"
y[0] += 2 * 0.5;


}
