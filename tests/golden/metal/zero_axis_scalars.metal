#include <metal_stdlib>
using namespace metal;


#line 1 "tests/zero_axis_scalars.pk"
[[kernel]] void scalars(    device uint8_t* out [[buffer(0)]],
    constant bool& flag [[buffer(1)]],
    constant int8_t& a [[buffer(2)]],
    constant uint16_t& b [[buffer(3)]],
    constant int64_t& c [[buffer(4)]],
    constant ulong& d [[buffer(5)]],
    constant half& h [[buffer(6)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]]
)
{

const bool pk_active = true;
if (pk_active) {
    
#line 2 "tests/zero_axis_scalars.pk"
out[0] = flag ? (uint8_t)(a + b + c + d) : (uint8_t)(float)h;
}
}
