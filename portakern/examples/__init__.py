"""Example kernels shipped with portakern, and a catalog that knows how to run them.

Each ``.pk`` file in this folder is a kernel source in the portakern language.
:data:`EXAMPLES` describes every example kernel: which file and ``@kernel`` it
is, its default Jinja constants, how to build NumPy inputs for a problem size,
the ndrange and workgroup size to launch with, and a NumPy reference that says
what the kernel must write. The demo (``portakern demo``), the tests, the
benchmark and the golden renderings all read this one table.

Typical use::

    import numpy as np
    from portakern import examples

    ex = examples.get("saxpy")
    args = ex.make_args(10**6, np.random.default_rng(0), dtype=np.float32)
    expected = ex.reference(args)          # before the launch: kernels write in place
    ex.launch(None, args)                  # backend resolved from the arrays (CPU here)
    for name, got in ex.outputs(args).items():
        np.testing.assert_allclose(got, expected[name], rtol=ex.rtol, atol=ex.atol)

Conventions, stable for the other users of this catalog:

* ``args`` is a tuple in the kernel's parameter order: arrays (C-contiguous
  NumPy arrays, output arrays already allocated and initialised) and NumPy
  scalars of the parameter's dtype.
* ``reference(args)`` computes, from ``args`` as they are *before* the launch,
  the expected final value of every array the kernel writes, keyed by
  parameter name. It never modifies ``args``.
* ``size`` is an int or a shape; what it means is in each example's
  ``size_doc`` (an int is always a sensible "problem size"). ``default_size``
  suits the demo, ``bench_size`` a benchmark.
* Kernels whose answer needs several launches (the reductions) also have
  :meth:`Example.run` / :meth:`Example.run_reference`, which return the final
  answer as a dict of NumPy values.

The record is :class:`~portakern.examples.catalog.Example`; the argument makers and
NumPy models live per family in :mod:`.elementwise`, :mod:`.reductions` and
:mod:`.particles`, on the shared input helpers of :mod:`.inputs`.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from .catalog import EXAMPLES_DIR, F32, F64, NUMERIC, U8, Example, copy_args
from .complex_fir import fir_args, fir_ref
from .elementwise import (
    darken_args,
    darken_ref,
    gray_args,
    gray_ref,
    image_args,
    input_shape,
    matmul_args,
    matmul_ndrange,
    matmul_ref,
    negative_ref,
    polynomial_args,
    polynomial_ref,
    saxpy_args,
    saxpy_ref,
    translate_args,
    translate_ref,
    transpose_args,
    transpose_ref,
    transpose_views_args,
    vector_add_args,
    vector_add_ref,
)
from .f16 import f16_args, f16_ref
from .inputs import (
    constant,
    first_shape,
    input_size,
    shape_2d,
    shape_any,
    shape_flat,
    shape_matmul,
    tile,
)
from .particles import (
    ndrange_particles,
    ndrange_particles4,
    particles4_args,
    particles4_ref,
    particles4_shape,
    particles_args,
    particles_ref,
    particles_shape,
)
from .reductions import (
    argmax_args,
    argmax_ref,
    argmax_run,
    argmax_total,
    bitonic_args,
    bitonic_ndrange,
    bitonic_ref,
    histogram_args,
    histogram_ref,
    reduce_args,
    reduce_max_ref,
    reduce_max_total,
    reduce_run,
    reduce_sum_ref,
    reduce_sum_total,
)
from .rowwise import (
    argsort_args,
    argsort_ref,
    group_norm_ref,
    rms_norm_ref,
    row_args,
    row_eps_args,
    row_ndrange,
    shape_rows,
    softmax_ref,
)
from .structs import q4_0_args, q4_0_ref, q4_0_shape

__all__ = ["EXAMPLES", "EXAMPLES_DIR", "Example", "copy_args", "get", "names"]

_ELEMENTWISE = "an int n (n elements) or a shape of 1-3 axes"
_IMAGE = "an int n (an n x n image) or (H, W)"
_ROWS = "an int n (n float32 elements in rows of at most 1024) or (rows, n)"
_FLAT = "an int n (n elements) or any shape (reduced over all its elements)"

_CATALOG = [
    Example(
        "vector_add", "c = a + b elementwise; dtype-generic, any ndrange rank (Linear index)",
        "vector_add.pk", "vector_add", _ELEMENTWISE, shape_any, vector_add_args,
        first_shape, vector_add_ref, dtypes=NUMERIC, ndims=(1, 2, 3)),
    Example(
        "saxpy", "y = a * x + y; the type variable T is bound from the arrays' dtype",
        "saxpy.pk", "saxpy", _ELEMENTWISE, shape_any, saxpy_args, first_shape, saxpy_ref,
        dtypes=NUMERIC, ndims=(1, 2, 3)),
    Example(
        "polynomial", "y = a*x*x + b*x + c fused in one pass (NumPy needs five)",
        "polynomial.pk", "polynomial", _ELEMENTWISE, shape_any, polynomial_args,
        first_shape, polynomial_ref, dtypes=NUMERIC, ndims=(1, 2, 3)),
    Example(
        "translate", "shift a 2D image by (dy, dx) with NTuple indices; "
        "writes off the edge are dropped",
        "translate.pk", "translate", _IMAGE, shape_2d, translate_args, first_shape,
        translate_ref, dtypes=(*NUMERIC, U8), ndims=(2,), default_size=1024,
        bench_size=4096),
    Example(
        "matmul", "naive matrix multiply, one work-item per output element",
        "matmul.pk", "matmul", "an int n (n x n matrices) or (M, K, N)", shape_matmul,
        matmul_args, matmul_ndrange, matmul_ref, dtypes=NUMERIC, ndims=(2,),
        default_size=256, bench_size=1024, rtol=1e-4, atol=1e-4),
    Example(
        "matmul_tiled", "tiled matrix multiply: @localmem tiles, @synchronize, "
        "unsafe_indices with explicit bounds, {% for %} unrolling",
        "matmul_tiled.pk", "matmul_tiled", "an int n (n x n matrices) or (M, K, N)",
        shape_matmul, matmul_args, matmul_ndrange, matmul_ref,
        constants=MappingProxyType({"TILE": 16}), workgroupsize_fn=tile, dtypes=NUMERIC,
        ndims=(2,), default_size=256, bench_size=2048, rtol=1e-4, atol=1e-4),
    Example(
        "transpose", "tiled transpose with a declared workgroup size: "
        "@kernel(workgroupsize=...) and a @localmem tile sized by @groupsize",
        "transpose.pk", "transpose", _IMAGE, shape_2d, transpose_args, input_shape,
        transpose_ref, constants=MappingProxyType({"TILE": 16}), dtypes=(*NUMERIC, U8),
        ndims=(2,), default_size=(1000, 600), bench_size=4096),
    Example(
        "transpose_views", "2D transpose of any view (a transpose, a stepped or reversed "
        "slice) with N-d array parameters T x[:, :]: x[i, j], @size, strides, no copy",
        "transpose_views.pk", "transpose_views", _IMAGE, shape_2d, transpose_views_args,
        input_shape, transpose_ref, dtypes=(*NUMERIC, U8), ndims=(2,),
        default_size=(1000, 600), bench_size=4096),
    Example(
        "reduce_sum", "workgroup sum with @groupreduce(add, ...); "
        "run() reduces to one value",
        "reduce.pk", "reduce_sum", _FLAT, shape_flat, reduce_args, input_size(1),
        reduce_sum_ref, constants=MappingProxyType({"GROUP": 256}),
        workgroupsize_fn=constant("GROUP"), dtypes=NUMERIC, rtol=1e-4, atol=1e-4,
        run_fn=reduce_run, run_reference_fn=reduce_sum_total),
    Example(
        "reduce_max", "workgroup maximum with @groupreduce(max, ...); run() reduces to one value",
        "reduce.pk", "reduce_max", _FLAT, shape_flat, reduce_args, input_size(1),
        reduce_max_ref, constants=MappingProxyType({"GROUP": 256}),
        workgroupsize_fn=constant("GROUP"), dtypes=NUMERIC,
        run_fn=reduce_run, run_reference_fn=reduce_max_total),
    Example(
        "warp_reduce", "workgroup sum with warp shuffles (@shuffle_down, @subgroupreduce), "
        "reduce5/llm.c style; run() reduces to one value",
        "warp_reduce.pk", "warp_sum", _FLAT, shape_flat, reduce_args, input_size(1),
        reduce_sum_ref, constants=MappingProxyType({"GROUP": 256}),
        workgroupsize_fn=constant("GROUP"), dtypes=NUMERIC, rtol=1e-4, atol=1e-4,
        run_fn=reduce_run, run_reference_fn=reduce_sum_total),
    Example(
        "brightest_pixel", "argmax of an image: per-group max and first index with two "
        "@groupreduce, then further passes; run() gives (row, col)",
        "reduce.pk", "argmax_groups", _IMAGE + " (any shape works)", shape_flat,
        argmax_args, input_size(2), argmax_ref, constants=MappingProxyType({"GROUP": 256}),
        workgroupsize_fn=constant("GROUP"), dtypes=NUMERIC, default_size=(1024, 1024),
        bench_size=(4096, 4096), run_fn=argmax_run, run_reference_fn=argmax_total),
    Example(
        "histogram", "256-bin histogram of uint8 data: @atomic_add on @localmem, "
        "then on global memory",
        "histogram.pk", "histogram", _FLAT, shape_flat, histogram_args, input_size(1),
        histogram_ref, constants=MappingProxyType({"BINS": 256}), dtypes=(U8,),
        default_size=1 << 22, bench_size=1 << 26),
    Example(
        "rgb_to_gray", "RGB planes (3, H, W) uint8 to gray (H, W), fixed-point weights",
        "image.pk", "rgb_to_gray", _IMAGE, shape_2d, gray_args, first_shape, gray_ref,
        dtypes=(U8,), ndims=(2,), default_size=1024, bench_size=4096),
    Example(
        "negative", "image negative, 255 - x, on uint8 pixels of any shape",
        "image.pk", "negative", _ELEMENTWISE, shape_any, image_args, first_shape,
        negative_ref, dtypes=(U8,), ndims=(1, 2, 3), default_size=(1024, 1024),
        bench_size=(4096, 4096)),
    Example(
        "darken", "scale uint8 pixels by a float factor, truncating and saturating",
        "image.pk", "darken", _ELEMENTWISE, shape_any, darken_args, first_shape,
        darken_ref, dtypes=(U8,), ndims=(1, 2, 3), default_size=(1024, 1024),
        bench_size=(4096, 4096)),
    Example(
        "bitonic_sort", "bitonic sort of uint32 keys in segments of 2 * GROUP, in @localmem; "
        "a helper that takes its keys by reference (comparator(uint& a, uint& b))",
        "bitonic.pk", "bitonic_sort", "an int n (n keys, sorted in segments of 2 * GROUP)",
        shape_flat, bitonic_args, bitonic_ndrange, bitonic_ref,
        constants=MappingProxyType({"GROUP": 256}), dtypes=(np.dtype(np.uint32),),
        default_size=1 << 20, bench_size=1 << 24),
    Example(
        "particle_push", "NSTEPS steps of a damped oscillator per particle: "
        "compile-time NSTEPS, @private registers, unrolled axes",
        "particles.pk", "particle_push", "an int n (n particles)", particles_shape,
        particles_args, ndrange_particles, particles_ref,
        constants=MappingProxyType({"NSTEPS": 100}), dtypes=(F32, F64),
        default_size=1 << 16, bench_size=1 << 20, rtol=1e-4, atol=1e-5),
    Example(
        "particles4", "the particle push with one float4 per particle: vector types, "
        "float4 arrays as (n, 4) NumPy arrays, whole-vector arithmetic",
        "particles4.pk", "particles4", "an int n (n particles; a shape counts its "
        "elements)", particles4_shape,
        particles4_args, ndrange_particles4, particles4_ref,
        constants=MappingProxyType({"NSTEPS": 100}), dtypes=(F32,),
        default_size=1 << 16, bench_size=1 << 20, rtol=1e-4, atol=1e-5),
    Example(
        "rms_norm", "x / sqrt(mean(x^2) + eps) per row: one workgroup per row strides over "
        "it, @groupreduce(add, ...), then a second pass",
        "rowwise.pk", "rms_norm", _ROWS, shape_rows, row_eps_args, row_ndrange(256), rms_norm_ref,
        constants=MappingProxyType({"GROUP": 256}), workgroupsize_fn=constant("GROUP"),
        dtypes=(F32,), ndims=(1,), default_size=(1024, 1024), bench_size=(4096, 4096), rtol=1e-4,
        atol=1e-5),
    Example(
        "softmax", "row softmax: @groupreduce(max, ...) and (add, ...) over one workgroup per "
        "row, then the pass that writes exp(x - max) / sum",
        "rowwise.pk", "softmax", _ROWS, shape_rows, row_args, row_ndrange(256), softmax_ref,
        constants=MappingProxyType({"GROUP": 256}), workgroupsize_fn=constant("GROUP"),
        dtypes=(F32,), ndims=(1,), default_size=(1024, 1024), bench_size=(4096, 4096), rtol=1e-4,
        atol=1e-7),
    Example(
        "group_norm", "ggml's group_norm: each row (a group of channels) to zero mean and unit "
        "variance, mean then centred variance with @groupreduce, one workgroup per group",
        "rowwise.pk", "group_norm", _ROWS, shape_rows, row_eps_args, row_ndrange(256),
        group_norm_ref, constants=MappingProxyType({"GROUP": 256}),
        workgroupsize_fn=constant("GROUP"), dtypes=(F32,), ndims=(1,), default_size=(32, 32768),
        bench_size=(32, 524288), rtol=1e-4, atol=1e-5),
    Example(
        "argsort_rows", "np.argsort(x, axis=-1) of rows of up to 2 * GROUP floats: a bitonic "
        "sort of (key, index) pairs in @localmem, one workgroup per row",
        "argsort_rows.pk", "argsort_rows", _ROWS + "; n at most 2 * GROUP", shape_rows,
        argsort_args, row_ndrange(512), argsort_ref, constants=MappingProxyType({"GROUP": 512}),
        workgroupsize_fn=constant("GROUP"), dtypes=(F32,), ndims=(1,),
        default_size=(1024, 1024), bench_size=(4096, 1024)),
    Example(
        "q4_0", "q4_0 dequantize: an array of structs (ggml's half scale and 16 packed "
        "bytes per block, a NumPy structured dtype) to 32 floats per block",
        "q4_0.pk", "q4_0", "an int n (about n values, in blocks of 32)", q4_0_shape,
        q4_0_args, first_shape, q4_0_ref, dtypes=(F32,), default_size=1 << 20,
        bench_size=1 << 24),
    Example(
        "f16_roundtrip", "float32 to half and back: a half scale-and-store on every device "
        "(computed in float where half arithmetic is missing), @bitcast to its 16 bits",
        "f16_roundtrip.pk", "f16_roundtrip", _ELEMENTWISE, shape_any, f16_args, first_shape,
        f16_ref, dtypes=(F32,), ndims=(1, 2, 3), default_size=1 << 20, bench_size=1 << 24,
        rtol=0.0, atol=0.0),
    Example(
        "fir_complex", "complex FIR filter y[i] = sum_k h[k] * x[i + k] on complex64 arrays: "
        "cfloat arithmetic on every target (calls on OpenCL C)",
        "fir_complex.pk", "fir_complex", "an int n (n complex64 outputs, 16 taps)",
        lambda size: (int(np.prod(size)),), fir_args, first_shape, fir_ref,
        dtypes=(np.dtype(np.complex64),), ndims=(1,), default_size=1 << 18,
        bench_size=1 << 22, rtol=1e-4, atol=1e-4),
]

#: Every example, by name, in a stable order (simple kernels first). Treat it as read-only.
EXAMPLES: dict[str, Example] = {ex.name: ex for ex in _CATALOG}


def get(name: str) -> Example:
    """The example called ``name``; a :class:`KeyError` lists the known names."""
    try:
        return EXAMPLES[name]
    except KeyError:
        raise KeyError(f"no example named {name!r}; known: {', '.join(EXAMPLES)}") from None


def names() -> list[str]:
    """The example names, in catalog order."""
    return list(EXAMPLES)
