/* portakern prelude: OpenCL C */
#define PK_OVL __attribute__((overloadable))
PK_OVL int pk_atomic_add(volatile __global int* p, int v) { return atomic_add(p, v); }
PK_OVL int pk_atomic_sub(volatile __global int* p, int v) { return atomic_sub(p, v); }
PK_OVL int pk_atomic_xchg(volatile __global int* p, int v) { return atomic_xchg(p, v); }
PK_OVL int pk_atomic_min(volatile __global int* p, int v) { return atomic_min(p, v); }
PK_OVL int pk_atomic_max(volatile __global int* p, int v) { return atomic_max(p, v); }
PK_OVL int pk_atomic_and(volatile __global int* p, int v) { return atomic_and(p, v); }
PK_OVL int pk_atomic_or(volatile __global int* p, int v) { return atomic_or(p, v); }
PK_OVL int pk_atomic_xor(volatile __global int* p, int v) { return atomic_xor(p, v); }
PK_OVL int pk_atomic_cas(volatile __global int* p, int cmp, int v) { return atomic_cmpxchg(p, cmp, v); }
PK_OVL uint pk_atomic_add(volatile __global uint* p, uint v) { return atomic_add(p, v); }
PK_OVL uint pk_atomic_sub(volatile __global uint* p, uint v) { return atomic_sub(p, v); }
PK_OVL uint pk_atomic_xchg(volatile __global uint* p, uint v) { return atomic_xchg(p, v); }
PK_OVL uint pk_atomic_min(volatile __global uint* p, uint v) { return atomic_min(p, v); }
PK_OVL uint pk_atomic_max(volatile __global uint* p, uint v) { return atomic_max(p, v); }
PK_OVL uint pk_atomic_and(volatile __global uint* p, uint v) { return atomic_and(p, v); }
PK_OVL uint pk_atomic_or(volatile __global uint* p, uint v) { return atomic_or(p, v); }
PK_OVL uint pk_atomic_xor(volatile __global uint* p, uint v) { return atomic_xor(p, v); }
PK_OVL uint pk_atomic_cas(volatile __global uint* p, uint cmp, uint v) { return atomic_cmpxchg(p, cmp, v); }
PK_OVL float pk_atomic_xchg(volatile __global float* p, float v) { return atomic_xchg(p, v); }
PK_OVL float pk_atomic_cas(volatile __global float* p, float cmp, float v) { return as_float(atomic_cmpxchg((volatile __global uint*)p, as_uint(cmp), as_uint(v))); }
PK_OVL float pk_atomic_add(volatile __global float* p, float v) {
    uint old = as_uint(*p), seen;
    do { seen = old; float a = as_float(seen); old = atomic_cmpxchg((volatile __global uint*)p, seen, as_uint(a + v)); } while (old != seen);
    return as_float(old);
}
PK_OVL float pk_atomic_sub(volatile __global float* p, float v) {
    uint old = as_uint(*p), seen;
    do { seen = old; float a = as_float(seen); old = atomic_cmpxchg((volatile __global uint*)p, seen, as_uint(a - v)); } while (old != seen);
    return as_float(old);
}
PK_OVL float pk_atomic_min(volatile __global float* p, float v) {
    uint old = as_uint(*p), seen;
    do { seen = old; float a = as_float(seen); old = atomic_cmpxchg((volatile __global uint*)p, seen, as_uint(fmin(a, v))); } while (old != seen);
    return as_float(old);
}
PK_OVL float pk_atomic_max(volatile __global float* p, float v) {
    uint old = as_uint(*p), seen;
    do { seen = old; float a = as_float(seen); old = atomic_cmpxchg((volatile __global uint*)p, seen, as_uint(fmax(a, v))); } while (old != seen);
    return as_float(old);
}
#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
PK_OVL long pk_atomic_add(volatile __global long* p, long v) { return atom_add(p, v); }
PK_OVL long pk_atomic_sub(volatile __global long* p, long v) { return atom_sub(p, v); }
PK_OVL long pk_atomic_xchg(volatile __global long* p, long v) { return atom_xchg(p, v); }
PK_OVL long pk_atomic_cas(volatile __global long* p, long cmp, long v) { return atom_cmpxchg(p, cmp, v); }
PK_OVL ulong pk_atomic_add(volatile __global ulong* p, ulong v) { return atom_add(p, v); }
PK_OVL ulong pk_atomic_sub(volatile __global ulong* p, ulong v) { return atom_sub(p, v); }
PK_OVL ulong pk_atomic_xchg(volatile __global ulong* p, ulong v) { return atom_xchg(p, v); }
PK_OVL ulong pk_atomic_cas(volatile __global ulong* p, ulong cmp, ulong v) { return atom_cmpxchg(p, cmp, v); }
#ifdef cl_khr_fp64
PK_OVL double pk_atomic_xchg(volatile __global double* p, double v) { return as_double(atom_xchg((volatile __global ulong*)p, as_ulong(v))); }
PK_OVL double pk_atomic_cas(volatile __global double* p, double cmp, double v) { return as_double(atom_cmpxchg((volatile __global ulong*)p, as_ulong(cmp), as_ulong(v))); }
PK_OVL double pk_atomic_add(volatile __global double* p, double v) {
    ulong old = as_ulong(*p), seen;
    do { seen = old; double a = as_double(seen); old = atom_cmpxchg((volatile __global ulong*)p, seen, as_ulong(a + v)); } while (old != seen);
    return as_double(old);
}
PK_OVL double pk_atomic_sub(volatile __global double* p, double v) {
    ulong old = as_ulong(*p), seen;
    do { seen = old; double a = as_double(seen); old = atom_cmpxchg((volatile __global ulong*)p, seen, as_ulong(a - v)); } while (old != seen);
    return as_double(old);
}
PK_OVL double pk_atomic_min(volatile __global double* p, double v) {
    ulong old = as_ulong(*p), seen;
    do { seen = old; double a = as_double(seen); old = atom_cmpxchg((volatile __global ulong*)p, seen, as_ulong(fmin(a, v))); } while (old != seen);
    return as_double(old);
}
PK_OVL double pk_atomic_max(volatile __global double* p, double v) {
    ulong old = as_ulong(*p), seen;
    do { seen = old; double a = as_double(seen); old = atom_cmpxchg((volatile __global ulong*)p, seen, as_ulong(fmax(a, v))); } while (old != seen);
    return as_double(old);
}
#endif
#endif
#ifdef cl_khr_int64_extended_atomics
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
PK_OVL long pk_atomic_min(volatile __global long* p, long v) { return atom_min(p, v); }
PK_OVL long pk_atomic_max(volatile __global long* p, long v) { return atom_max(p, v); }
PK_OVL long pk_atomic_and(volatile __global long* p, long v) { return atom_and(p, v); }
PK_OVL long pk_atomic_or(volatile __global long* p, long v) { return atom_or(p, v); }
PK_OVL long pk_atomic_xor(volatile __global long* p, long v) { return atom_xor(p, v); }
PK_OVL ulong pk_atomic_min(volatile __global ulong* p, ulong v) { return atom_min(p, v); }
PK_OVL ulong pk_atomic_max(volatile __global ulong* p, ulong v) { return atom_max(p, v); }
PK_OVL ulong pk_atomic_and(volatile __global ulong* p, ulong v) { return atom_and(p, v); }
PK_OVL ulong pk_atomic_or(volatile __global ulong* p, ulong v) { return atom_or(p, v); }
PK_OVL ulong pk_atomic_xor(volatile __global ulong* p, ulong v) { return atom_xor(p, v); }
#endif
PK_OVL int pk_atomic_add(volatile __local int* p, int v) { return atomic_add(p, v); }
PK_OVL int pk_atomic_sub(volatile __local int* p, int v) { return atomic_sub(p, v); }
PK_OVL int pk_atomic_xchg(volatile __local int* p, int v) { return atomic_xchg(p, v); }
PK_OVL int pk_atomic_min(volatile __local int* p, int v) { return atomic_min(p, v); }
PK_OVL int pk_atomic_max(volatile __local int* p, int v) { return atomic_max(p, v); }
PK_OVL int pk_atomic_and(volatile __local int* p, int v) { return atomic_and(p, v); }
PK_OVL int pk_atomic_or(volatile __local int* p, int v) { return atomic_or(p, v); }
PK_OVL int pk_atomic_xor(volatile __local int* p, int v) { return atomic_xor(p, v); }
PK_OVL int pk_atomic_cas(volatile __local int* p, int cmp, int v) { return atomic_cmpxchg(p, cmp, v); }
PK_OVL uint pk_atomic_add(volatile __local uint* p, uint v) { return atomic_add(p, v); }
PK_OVL uint pk_atomic_sub(volatile __local uint* p, uint v) { return atomic_sub(p, v); }
PK_OVL uint pk_atomic_xchg(volatile __local uint* p, uint v) { return atomic_xchg(p, v); }
PK_OVL uint pk_atomic_min(volatile __local uint* p, uint v) { return atomic_min(p, v); }
PK_OVL uint pk_atomic_max(volatile __local uint* p, uint v) { return atomic_max(p, v); }
PK_OVL uint pk_atomic_and(volatile __local uint* p, uint v) { return atomic_and(p, v); }
PK_OVL uint pk_atomic_or(volatile __local uint* p, uint v) { return atomic_or(p, v); }
PK_OVL uint pk_atomic_xor(volatile __local uint* p, uint v) { return atomic_xor(p, v); }
PK_OVL uint pk_atomic_cas(volatile __local uint* p, uint cmp, uint v) { return atomic_cmpxchg(p, cmp, v); }
PK_OVL float pk_atomic_xchg(volatile __local float* p, float v) { return atomic_xchg(p, v); }
PK_OVL float pk_atomic_cas(volatile __local float* p, float cmp, float v) { return as_float(atomic_cmpxchg((volatile __local uint*)p, as_uint(cmp), as_uint(v))); }
PK_OVL float pk_atomic_add(volatile __local float* p, float v) {
    uint old = as_uint(*p), seen;
    do { seen = old; float a = as_float(seen); old = atomic_cmpxchg((volatile __local uint*)p, seen, as_uint(a + v)); } while (old != seen);
    return as_float(old);
}
PK_OVL float pk_atomic_sub(volatile __local float* p, float v) {
    uint old = as_uint(*p), seen;
    do { seen = old; float a = as_float(seen); old = atomic_cmpxchg((volatile __local uint*)p, seen, as_uint(a - v)); } while (old != seen);
    return as_float(old);
}
PK_OVL float pk_atomic_min(volatile __local float* p, float v) {
    uint old = as_uint(*p), seen;
    do { seen = old; float a = as_float(seen); old = atomic_cmpxchg((volatile __local uint*)p, seen, as_uint(fmin(a, v))); } while (old != seen);
    return as_float(old);
}
PK_OVL float pk_atomic_max(volatile __local float* p, float v) {
    uint old = as_uint(*p), seen;
    do { seen = old; float a = as_float(seen); old = atomic_cmpxchg((volatile __local uint*)p, seen, as_uint(fmax(a, v))); } while (old != seen);
    return as_float(old);
}
#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
PK_OVL long pk_atomic_add(volatile __local long* p, long v) { return atom_add(p, v); }
PK_OVL long pk_atomic_sub(volatile __local long* p, long v) { return atom_sub(p, v); }
PK_OVL long pk_atomic_xchg(volatile __local long* p, long v) { return atom_xchg(p, v); }
PK_OVL long pk_atomic_cas(volatile __local long* p, long cmp, long v) { return atom_cmpxchg(p, cmp, v); }
PK_OVL ulong pk_atomic_add(volatile __local ulong* p, ulong v) { return atom_add(p, v); }
PK_OVL ulong pk_atomic_sub(volatile __local ulong* p, ulong v) { return atom_sub(p, v); }
PK_OVL ulong pk_atomic_xchg(volatile __local ulong* p, ulong v) { return atom_xchg(p, v); }
PK_OVL ulong pk_atomic_cas(volatile __local ulong* p, ulong cmp, ulong v) { return atom_cmpxchg(p, cmp, v); }
#ifdef cl_khr_fp64
PK_OVL double pk_atomic_xchg(volatile __local double* p, double v) { return as_double(atom_xchg((volatile __local ulong*)p, as_ulong(v))); }
PK_OVL double pk_atomic_cas(volatile __local double* p, double cmp, double v) { return as_double(atom_cmpxchg((volatile __local ulong*)p, as_ulong(cmp), as_ulong(v))); }
PK_OVL double pk_atomic_add(volatile __local double* p, double v) {
    ulong old = as_ulong(*p), seen;
    do { seen = old; double a = as_double(seen); old = atom_cmpxchg((volatile __local ulong*)p, seen, as_ulong(a + v)); } while (old != seen);
    return as_double(old);
}
PK_OVL double pk_atomic_sub(volatile __local double* p, double v) {
    ulong old = as_ulong(*p), seen;
    do { seen = old; double a = as_double(seen); old = atom_cmpxchg((volatile __local ulong*)p, seen, as_ulong(a - v)); } while (old != seen);
    return as_double(old);
}
PK_OVL double pk_atomic_min(volatile __local double* p, double v) {
    ulong old = as_ulong(*p), seen;
    do { seen = old; double a = as_double(seen); old = atom_cmpxchg((volatile __local ulong*)p, seen, as_ulong(fmin(a, v))); } while (old != seen);
    return as_double(old);
}
PK_OVL double pk_atomic_max(volatile __local double* p, double v) {
    ulong old = as_ulong(*p), seen;
    do { seen = old; double a = as_double(seen); old = atom_cmpxchg((volatile __local ulong*)p, seen, as_ulong(fmax(a, v))); } while (old != seen);
    return as_double(old);
}
#endif
#endif
#ifdef cl_khr_int64_extended_atomics
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
PK_OVL long pk_atomic_min(volatile __local long* p, long v) { return atom_min(p, v); }
PK_OVL long pk_atomic_max(volatile __local long* p, long v) { return atom_max(p, v); }
PK_OVL long pk_atomic_and(volatile __local long* p, long v) { return atom_and(p, v); }
PK_OVL long pk_atomic_or(volatile __local long* p, long v) { return atom_or(p, v); }
PK_OVL long pk_atomic_xor(volatile __local long* p, long v) { return atom_xor(p, v); }
PK_OVL ulong pk_atomic_min(volatile __local ulong* p, ulong v) { return atom_min(p, v); }
PK_OVL ulong pk_atomic_max(volatile __local ulong* p, ulong v) { return atom_max(p, v); }
PK_OVL ulong pk_atomic_and(volatile __local ulong* p, ulong v) { return atom_and(p, v); }
PK_OVL ulong pk_atomic_or(volatile __local ulong* p, ulong v) { return atom_or(p, v); }
PK_OVL ulong pk_atomic_xor(volatile __local ulong* p, ulong v) { return atom_xor(p, v); }
#endif
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
// Histogram of uint8 data into BINS bins (256 by default), with atomics.
//
// Each workgroup first counts into its own histogram in workgroup memory
// (atomics on local memory are cheap and contend only within the group), then
// adds its non-zero bins to the global counts with one atomic per bin.
// counts must be zeroed by the caller; launches accumulate.
//
// The ndrange is 1D (flatten an image first). The bounds mask stays on, so
// the bin-clearing and bin-flushing loops stride by `count`, the number of
// work-items of this group inside the ndrange: a partial last group still
// covers every bin.


#line 12 "portakern/examples/histogram.pk"
__kernel void histogram(__global uint* counts, __global const uchar* restrict data, const long pk_n0)
{
#line 13 "portakern/examples/histogram.pk"
__local uint local_counts[256];
const bool pk_active = ((long)get_global_id(0)) < pk_n0;

    
     
#line 14 "portakern/examples/histogram.pk"
const long n = (pk_n0);
     const long group = (((long)get_group_id(0)));
     const long count = min((long)(((long)get_local_size(0))), n - group * (long)(((long)get_local_size(0))));
     long  lid ;if (pk_active) {lid =  (((long)get_local_id(0)));
    for (long b = lid; b < 256; b += count) {
        local_counts[b] = 0;
    }}
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
     long  bin ;if (pk_active) {bin =  ((long)data[(((long)get_global_id(0)))] * 256) / 256;
    pk_atomic_add(&local_counts[bin], 1u);}
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);if (pk_active) {
    for (long b = lid; b < 256; b += count) {
        if (local_counts[b] != 0) {
            pk_atomic_add(&counts[b], local_counts[b]);
        }
    }
}
}
