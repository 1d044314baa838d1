"""MLX marshalling, shared by the Metal launcher and MLX's CUDA launcher.

MLX runs custom kernels through ``mx.fast.metal_kernel`` (Apple GPUs) and
``mx.fast.cuda_kernel`` (NVIDIA GPUs, MLX >= 0.29), which work alike and unlike
the other backends in three ways this module bridges:

1. MLX writes the kernel's signature itself, from the input and output names
   and the arrays passed, and takes only a ``header`` and the body. The kernel
   is rendered through ``templates/metal/mlx.j2`` (or ``mlx_cuda.j2``), whose
   two blocks are those pieces; scalars and the ndrange sizes become MLX inputs
   (0-d arrays, and one int64 array ``pk_dims``).
2. MLX arrays are immutable and kernel outputs start uninitialised, yet a
   kernel's writes must reach the caller. Each written parameter gets an MLX
   output holding its new value, which is then rebound into the caller's own
   array object with ``a[...] = new``: MLX implements that by pointing ``a``
   at ``new``'s data, without a copy. How the output starts from the current
   value is the write-back mode, chosen per parameter by
   :func:`writeback_modes`:

   ``"fused"``
       The body begins by copying, in each work-item, the elements of the
       parameter it owns (its linear index ``g``, then ``g + N``, ``g + 2N``
       ... for an ndrange of ``N`` work-items) from an input holding the
       current value. Correct when every access of the parameter in the kernel
       is at an index the work-item owns, which is proven from the source:
       ``y[i]`` or ``y[K * n + i]`` with ``i = @index(Global, Linear)`` and
       ``n = @ndrange()``, never modified. One copy, inside the kernel.
   ``"staged"``
       Everything else (atomics, scatters, one work-item writing for its
       group). A copy kernel first copies the current value into a private
       array; the kernel writes that array in place; a second copy kernel,
       which MLX orders after the kernel because it also consumes one of the
       kernel's outputs, copies it into the output that is rebound. Two copies,
       correct for any race-free kernel.
3. Apple GPUs have no float64: with ``float64="cast"`` float64 arrays and
   scalars are converted to float32 for the kernel and back afterwards.

Every copy is counted on the backend (``copies``, ``copied_bytes``).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import (
    CompilationError,
    KernelArgumentError,
    KernelTypeError,
    LaunchError,
    NDRangeError,
    PortakernError,
)
from . import mlx_optional
from .mlx_optional import array_inputs, back_to, null_view, prologue, scalar_input
from .mlx_structs import param_dtypes, struct_params
from .mlx_writeback import copy_kernel, writeback_modes

__all__ = [
    "InputSpec",
    "Program",
    "build_program",
    "writeback_modes",
    "metal_translation_unit",
    "cuda_translation_unit",
    "translation_unit",
    "numpy_dtype",
    "mlx_dtype",
    "launch",
    "METAL_TYPE_NAMES",
    "CUDA_TYPE_NAMES",
    "METAL_UTILS_STANDIN",
    "CUDA_DEFAULT_HEADER",
    "CUDA_HEADER_STANDIN",
]

#: MLX's name of each dtype in generated Metal signatures (``get_type_string``).
METAL_TYPE_NAMES = {
    "bool": "bool", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "float16": "float16_t", "bfloat16": "bfloat16_t", "float32": "float",
    "float64": "double", "complex64": "complex64_t",
}

#: MLX's name of each dtype in generated CUDA signatures (``dtype_to_cuda_type``).
CUDA_TYPE_NAMES = {
    **METAL_TYPE_NAMES, "float16": "__half", "bfloat16": "__nv_bfloat16",
    "complex64": "cuComplex",
}

#: Thread attributes MLX declares when the body names them, in MLX's order.
_METAL_ATTRIBUTES = (
    ("dispatch_quadgroups_per_threadgroup", "uint"),
    ("dispatch_simdgroups_per_threadgroup", "uint"),
    ("dispatch_threads_per_threadgroup", "uint3"),
    ("grid_origin", "uint3"),
    ("grid_size", "uint3"),
    ("quadgroup_index_in_threadgroup", "uint"),
    ("quadgroups_per_threadgroup", "uint"),
    ("simdgroup_index_in_threadgroup", "uint"),
    ("simdgroups_per_threadgroup", "uint"),
    ("thread_execution_width", "uint"),
    ("thread_index_in_quadgroup", "uint"),
    ("thread_index_in_simdgroup", "uint"),
    ("thread_index_in_threadgroup", "uint"),
    ("thread_position_in_grid", "uint3"),
    ("thread_position_in_threadgroup", "uint3"),
    ("threadgroup_position_in_grid", "uint3"),
    ("threadgroups_per_grid", "uint3"),
    ("threads_per_grid", "uint3"),
    ("threads_per_simdgroup", "uint"),
    ("threads_per_threadgroup", "uint3"),
)

#: MLX places inputs with fewer elements in the constant address space.
_MAX_CONSTANT_ARRAY_SIZE = 8

#: What MLX puts before every Metal kernel (its utils.h); a stand-in with the
#: names generated signatures use, for the syntax check.
METAL_UTILS_STANDIN = ("#include <metal_stdlib>\nusing namespace metal;\ntypedef half float16_t;\n"
                       "struct complex64_t { float real; float imag; };\n")

#: What MLX puts before every CUDA kernel.
CUDA_DEFAULT_HEADER = (
    '\n#include "mlx/backend/cuda/device/utils.cuh"\n\n#include <cooperative_groups.h>\n\n'
    "#define inf cuda::std::numeric_limits<float>::infinity()\n\n"
)

#: A stand-in for :data:`CUDA_DEFAULT_HEADER` that compiles without MLX's headers
#: (NVRTC with CUDA's own headers only), for the compile check.
CUDA_HEADER_STANDIN = (
    "\n#include <cuda_fp16.h>\nnamespace cooperative_groups {}\n"
    "typedef signed char int8_t; typedef short int16_t; typedef int int32_t;\n"
    "typedef long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;\n"
    "typedef unsigned int uint32_t; typedef unsigned long uint64_t;\n"
    "#define inf __int_as_float(0x7f800000)\n\n"
)

_TEMPLATES = {"metal": "metal/mlx.j2", "cuda": "metal/mlx_cuda.j2"}

_MAX_GRID = 2**31 - 1  # MLX takes the grid and threadgroup as C ints


# -- dtypes ---------------------------------------------------------------------------------

def _mx() -> Any:
    import mlx.core as mx

    return mx


def _dtype_name(mx_dtype: Any) -> str:
    # str(mx.float32) is "mlx.core.float32".
    return str(mx_dtype).rsplit(".", 1)[-1]


def numpy_dtype(mx_dtype: Any) -> np.dtype | None:
    """The NumPy dtype of an MLX dtype, or None (bfloat16 has none)."""
    name = _dtype_name(mx_dtype)
    if name == "bool":
        return np.dtype(np.bool_)
    try:
        return np.dtype(name)
    except TypeError:
        return mlx_optional.storage_dtype(name)


def mlx_dtype(dtype: Any) -> Any:
    """The MLX dtype of an MLX dtype, a NumPy dtype, or anything ``numpy.dtype`` accepts."""
    mx = _mx()
    if isinstance(dtype, mx.Dtype):
        return dtype
    dt = np.dtype(dtype)
    return getattr(mx, "bool_" if dt.kind == "b" else dt.name)


# -- the program: what compile() hands to launch() ----------------------------------------------

@dataclass(frozen=True)
class InputSpec:
    """One MLX input: its name, what it carries, and for which parameter.

    ``kind`` is ``"array"`` (a read-only array), ``"scalar"``, ``"current"`` (the
    current value of a fused written array), ``"work"`` (the private copy of a
    staged written array) or ``"dims"`` (``pk_dims``; ``index`` is -1).
    """

    name: str
    kind: str
    index: int


@dataclass
class Program:
    """A kernel ready for MLX: the rendered pieces and how to marshal arguments."""

    dialect: str
    name: str
    kernel_name: str
    header: str
    source: str
    inputs: tuple[InputSpec, ...]
    outputs: tuple[str, ...]
    output_params: tuple[int, ...]
    modes: dict[str, str]
    params: tuple
    ndim: int
    cast64: bool
    filename: str
    user_source: str
    #: The type bindings it was rendered with (``{"T": "float"}``).
    bindings: dict[str, str] = field(default_factory=dict)
    #: The MLX kernel object, made at the first launch, and the factory that made it.
    mlx_kernel: Any = field(default=None, repr=False)
    mlx_factory: Any = field(default=None, repr=False)
    sized: tuple = ()  #: @localmem sized at launch (.local_sizes; set by backends.metal)
    structs: tuple[str, ...] = ()  #: arrays of structs, passed as their bytes (mlx_structs)

    @property
    def fused(self) -> tuple[int, ...]:
        """Indices of the written parameters in fused mode, in order."""
        return tuple(i for i, p in enumerate(self.params)
                     if self.modes.get(p.name) == "fused")


def build_program(rendered: Any, dialect: str, cast64: bool = False,
                  **options: Any) -> Program:
    """Render ``rendered``'s kernel in MLX's shape and name its inputs and outputs.

    ``dialect`` is ``"metal"`` or ``"cuda"``; ``options`` reach the template.
    """
    rendered = rendered.with_lowered()
    if rendered.lowered is None:
        raise KernelTypeError(
            f"kernel {rendered.name!r} was rendered without its lowered form; render it "
            f"with portakern.render.emit.render_lowered")
    params = tuple(rendered.params)
    # MLX declares `x_shape`, `x_strides`, `x_ndim` for an array input x whose name plus
    # the suffix occurs in the body: the kernel's own names of that form are renamed.
    renames = tuple(rendered.fact("mlx_renames", ()))  # found while rendering
    renamed = dict(renames)
    modes = writeback_modes(rendered.lowered, rendered.helpers or ())
    # MLX declares each input from its dtype, so a vector array (float4*) arrives as its
    # components; the prologue views it as vectors, which an MLX output cannot be: a
    # written one is staged (docs/language.md, "Vector types"); so is a complex one.
    vectors = mlx_optional.viewed_arrays(rendered.name, params, dict(rendered.bindings), dialect)
    structs = struct_params(params, rendered.bindings)  # their bytes, viewed likewise
    modes.update({p.name: "staged" for p in params if p.writable and p.name in vectors + structs})
    inputs: list[InputSpec] = []
    outputs: list[str] = []
    output_params: list[int] = []
    for i, p in enumerate(params):
        if not p.pointer:
            # MLX passes a 0-d input to Metal by reference but to CUDA as a pointer.
            inputs.append(InputSpec(renamed.get(p.name, p.name) if dialect == "metal"
                                    else f"pk_arg_{p.name}", "scalar", i))
        elif p.const:
            inputs.extend(InputSpec(*s) for s in array_inputs(p, i, dialect, vectors, renamed,
                                                              structs))
        elif modes[p.name] == "fused":
            inputs.append(InputSpec(f"pk_in_{p.name}", "current", i))
            outputs.append(renamed.get(p.name, p.name))
            output_params.append(i)
        else:
            inputs.append(InputSpec(f"pk_work_{p.name}", "work", i))
    inputs.append(InputSpec("pk_dims", "dims", -1))
    if not outputs:
        # MLX needs an output; this one also orders the staged copies after the kernel.
        outputs.append("pk_done")
        output_params.append(-1)
    variant = rendered.variant(
        template=_TEMPLATES[dialect],
        mlx_fused=tuple(p.name for p in params if modes.get(p.name) == "fused"),
        mlx_staged=tuple(p.name for p in params if modes.get(p.name) == "staged"),
        mlx_cast64=cast64,
        mlx_vectors=tuple(p.name for p in params if p.const and p.name in vectors),
        mlx_structs=tuple(p.name for p in params if p.const and p.name in structs),
        renames=renames,
        **options,
    )
    header, source = variant.section("header"), variant.section("source")
    source = prologue(params, dialect, vectors, renamed, structs) + source
    digest = hashlib.sha1((header + "\0" + source).encode()).hexdigest()[:12]
    # MLX caches compiled kernels by name, so a name must never stand for two sources.
    name = f"pk_{rendered.name}_{digest}"
    return Program(dialect, name, rendered.name, header, source, tuple(inputs),
                   tuple(outputs), tuple(output_params), modes, params, rendered.ndim,
                   cast64, rendered.filename, getattr(rendered, "user_source", ""),
                   dict(rendered.bindings), structs=structs)


# -- the source MLX compiles ----------------------------------------------------------------------

def metal_translation_unit(name: str, header: str, source: str,
                           inputs: Sequence[tuple[str, str, int, int]],
                           outputs: Sequence[tuple[str, str]], *,
                           utils: str = METAL_UTILS_STANDIN) -> str:
    """The Metal source ``mx.fast.metal_kernel`` compiles, written as MLX writes it.

    Parameters
    ----------
    name : str
        The ``name`` given to ``metal_kernel``.
    header, source : str
        The ``header`` and ``source`` given to ``metal_kernel``.
    inputs : sequence of (name, type, ndim, size)
        Each input's name, MLX type string (:data:`METAL_TYPE_NAMES`), and the
        rank and element count of the array passed.
    outputs : sequence of (name, type)
        Each output's name and MLX type string.
    utils : str, optional
        What MLX prepends (its ``utils.h``); a stand-in by default.
    """
    kernel = "custom_kernel_" + name
    for _, type_name, ndim, size in inputs:
        kernel += "_" + type_name + ("s" if ndim == 0 else
                                     "c" if size < _MAX_CONSTANT_ARRAY_SIZE else "")
    for _, type_name in outputs:
        kernel += "_" + type_name
    attributes = [f"  {t} {a} [[{a}]]" for a, t in _METAL_ATTRIBUTES if a in source]
    out = [utils, header, "[[kernel]] void ", kernel, "(\n"]
    index = 0
    for arg, type_name, ndim, size in inputs:
        space = "constant" if size < _MAX_CONSTANT_ARRAY_SIZE else "device"
        ref = "&" if ndim == 0 else "*"
        out.append(f"  const {space} {type_name}{ref} {arg} [[buffer({index})]],\n")
        index += 1
        if ndim > 0:
            for suffix, decl in (("_shape", "const constant int*"),
                                 ("_strides", "const constant int64_t*"),
                                 ("_ndim", "const constant int&")):
                if arg + suffix in source:
                    out.append(f"  {decl} {arg}{suffix} [[buffer({index})]],\n")
                    index += 1
    for arg, type_name in outputs:
        out.append(f"  device {type_name}* {arg} [[buffer({index})]]")
        # MLX's own test, which miscounts when shape buffers were added.
        more = index < len(inputs) + len(outputs) - 1 or bool(attributes)
        out.append(",\n" if more else ") {\n")
        index += 1
    for k, attribute in enumerate(attributes):
        out.append(attribute + (",\n" if k < len(attributes) - 1 else ") {\n"))
    out += [source, "\n}\n"]
    return "".join(out)


def cuda_translation_unit(name: str, header: str, source: str,
                          inputs: Sequence[tuple[str, str, int, int]],
                          outputs: Sequence[tuple[str, str]], *,
                          default_header: str = CUDA_DEFAULT_HEADER) -> str:
    """The CUDA source ``mx.fast.cuda_kernel`` compiles, written as MLX writes it.

    Same parameters as :func:`metal_translation_unit`, with CUDA type strings
    (:data:`CUDA_TYPE_NAMES`); ``default_header`` replaces MLX's includes (which
    need MLX's CUDA headers) for a compile check.
    """
    out = [default_header, header, "namespace mlx::core::cu {\n\n",
           "namespace cg = cooperative_groups;\n\n", "__global__ void custom_kernel_", name,
           "(\n"]
    for arg, type_name, ndim, _ in inputs:
        out.append(f"    const {type_name}* {arg},\n")
        if ndim > 0:
            for suffix, decl in (("_shape", "Shape"), ("_strides", "Strides"), ("_ndim", "int")):
                if arg + suffix in source:
                    out.append(f"    const __grid_constant__ {decl} {arg}{suffix},\n")
    for k, (arg, type_name) in enumerate(outputs):
        out.append(f"    {type_name}* {arg}" + (",\n" if k < len(outputs) - 1 else ") {\n"))
    out += [source, "\n}\n\n} // namespace mlx::core::cu\n"]
    return "".join(out)


def _input_types(program: Program, shapes: dict[str, tuple[int, ...]] | None,
                 bindings: dict[int, np.dtype] | None) -> tuple[list, list]:
    names = METAL_TYPE_NAMES if program.dialect == "metal" else CUDA_TYPE_NAMES
    inputs, outputs = [], []
    for spec in program.inputs:
        dt = np.dtype(np.int64) if spec.kind == "dims" else (bindings or {}).get(spec.index)
        if dt is None:
            raise KernelTypeError(f"no dtype known for MLX input {spec.name!r}")
        if program.cast64 and dt == np.float64:
            dt = np.dtype(np.float32)
        shape = (shapes or {}).get(spec.name)
        if shape is None:
            dims = (max(program.ndim + len(program.fused), 1),)
            shape = {"scalar": (), "dims": dims}.get(spec.kind, (1024,))
        size = int(np.prod(shape)) if shape else 1
        inputs.append((spec.name, names[_np_name(dt)], len(shape), size))
    for arg, index in zip(program.outputs, program.output_params, strict=True):
        dt = np.dtype(np.uint8) if index < 0 else (bindings or {})[index]
        if program.cast64 and dt == np.float64:
            dt = np.dtype(np.float32)
        outputs.append((arg, names[_np_name(dt)]))
    return inputs, outputs


def _np_name(dt: np.dtype) -> str:
    return "bool" if dt.kind == "b" else dt.name


def translation_unit(program: Program, bindings: dict[str, str] | None = None,
                     shapes: dict[str, tuple[int, ...]] | None = None, **kwargs: Any) -> str:
    """The whole source MLX would compile for ``program``, for a check or an error message.

    ``bindings`` binds the type variables (default: the ones rendered);
    ``shapes`` gives the shape of MLX inputs by name (default: scalars 0-d,
    arrays of 1024 elements, which MLX places in device memory).
    """
    dtypes = param_dtypes(program, program.bindings if bindings is None else bindings)
    inputs, outputs = _input_types(program, shapes, dtypes)
    wrap = metal_translation_unit if program.dialect == "metal" else cuda_translation_unit
    return wrap(program.name, program.header, program.source, inputs, outputs, **kwargs)


# -- launching ------------------------------------------------------------------------------------

def _grid3(sizes: Sequence[int], what: str) -> tuple[int, int, int]:
    dims = [int(s) for s in sizes] + [1] * (3 - len(sizes))
    if any(s > _MAX_GRID for s in dims):
        raise NDRangeError(
            f"{what} {tuple(sizes)} has an axis over {_MAX_GRID} work-items, the most MLX "
            f"takes; split the launch")
    return dims[0], dims[1], dims[2]


def _scalar(value: Any, program: Program, index: int) -> Any:
    mx = _mx()
    if program.cast64 and isinstance(value, np.float64):
        with np.errstate(over="ignore"):
            narrowed = np.float32(value)
        if np.isinf(narrowed) and np.isfinite(value):
            p = program.params[index]
            raise KernelArgumentError(
                f"argument {index} {p.name!r} ({p.describe()}) = {value!r} overflows float32, "
                f"which float64='cast' computes in")
        value = narrowed
    return mx.array(value)


def _mlx_error(exc: Exception, program: Program, inputs: list, outputs: list) -> Exception:
    from ..checks.diagnostics import format_diagnostics, parse_diagnostics

    text = str(exc)
    target = program.dialect
    if "Thread group size" in text or "threadgroup" in text.lower() and "maximum" in text:
        return NDRangeError(f"MLX rejected the workgroup size of {program.kernel_name!r}: {text}")
    compiling = re.search(r"build metal library|compil|nvrtc|error:", text, re.IGNORECASE)
    if compiling:
        names = METAL_TYPE_NAMES if target == "metal" else CUDA_TYPE_NAMES
        shapes = [(spec.name, names.get(_dtype_name(a.dtype), "?"), a.ndim, a.size)
                  for spec, a in zip(program.inputs, inputs, strict=True)]
        outs = [(n, names.get(_dtype_name(o.dtype), "?")) for n, o in
                zip(program.outputs, outputs, strict=False)]
        wrap = metal_translation_unit if target == "metal" else cuda_translation_unit
        source = wrap(program.name, program.header, program.source, shapes, outs)
        pretty = format_diagnostics(parse_diagnostics(text),
                                    {program.filename: program.user_source})
        return CompilationError(
            f"MLX could not compile kernel {program.kernel_name!r} for {target}:\n"
            f"{pretty or text}", log=text, source=source, target=target)
    return LaunchError(f"MLX failed to run kernel {program.kernel_name!r}: {text}")


def launch(program: Program, factory: Any, args: list, global_size: tuple[int, ...],
           local_size: tuple[int, ...], counter: Any, template: Any = None) -> None:
    """Launch ``program`` with MLX and rebind every written array into the caller's object.

    ``factory`` is ``mx.fast.metal_kernel`` or ``mx.fast.cuda_kernel``;
    ``counter.count(nbytes)`` is called once per whole-array copy. Nothing is
    rebound unless MLX accepted the launch. ``template``: MLX's ``template=`` keyword.
    """
    mx = _mx()
    params = program.params
    grid = _grid3(global_size, "the global size")
    threadgroup = _grid3(local_size, "the workgroup size")
    written = [i for i, p in enumerate(params) if p.pointer and not p.const]
    seen: dict[int, int] = {}
    for i in written:
        first = seen.setdefault(id(args[i]), i)
        if first != i:
            raise KernelArgumentError(
                f"arguments {first} {params[first].name!r} and {i} {params[i].name!r} are the "
                f"same MLX array, and the kernel may write both; MLX arrays are updated by "
                f"rebinding each written parameter to its own result, so pass two arrays")
    scalars = {i: _scalar(args[i], program, i) for i, p in enumerate(params) if not p.pointer}
    copies: list[int] = []
    inputs: list = []
    outs: list = []
    try:
        results = _enqueue(program, factory, args, grid, threadgroup, scalars, copies,
                           inputs, outs, template or {})
        # Start the work now, as a launch on a stream would; the caller's later reads
        # of the rebound arrays wait for it.
        mx.async_eval(*(list(results.values()) or outs))
    except (RuntimeError, ValueError) as exc:
        if isinstance(exc, PortakernError):
            raise
        raise _mlx_error(exc, program, inputs, outs) from exc
    for index, value in results.items():
        if value.size:
            args[index][...] = value
    for nbytes in copies:
        counter.count(nbytes)


def _enqueue(program: Program, factory: Any, args: list, grid: tuple[int, int, int],
             threadgroup: tuple[int, int, int], scalars: dict[int, Any], copies: list[int],
             inputs: list, outs: list, template: dict) -> dict[int, Any]:
    """Build the MLX inputs, call the kernel and the copies; return new values by parameter."""
    mx = _mx()
    params = program.params
    ndrange = [int(n) for n in args[len(params):]]
    views: dict[int, Any] = {}
    for i, p in enumerate(params):
        if p.pointer:
            a = null_view(program, i, args[i], mx)
            if program.cast64 and a.dtype == mx.float64 and p.name not in program.structs:
                a = a.astype(mx.float32, stream=mx.cpu)
                copies.append(a.nbytes)
            elif p.axes and a.size and not memoryview(a).c_contiguous:
                a = mx.contiguous(a)  # an N-d array takes row-major strides: counted
                copies.append(a.nbytes)
            views[i] = a
    fused = program.fused

    def count_of(i: int) -> Any:
        return mx.array(np.array([views[i].size], np.int64))

    for spec in program.inputs:
        if spec.kind in ("array", "current"):
            inputs.append(views[spec.index])
        elif spec.kind in ("scalar", "has"):  # "has": an optional array's flag (mlx_optional)
            inputs.append(scalar_input(spec.kind, spec.index, scalars, args, mx))
        elif spec.kind == "dims":
            dims = ndrange + [int(views[i].size) for i in fused]
            inputs.append(mx.array(np.array(dims or [0], dtype=np.int64)))
        else:  # "work": a private copy the kernel writes in place
            a = views[spec.index]
            # Padding keeps it out of MLX's constant address space, which is read-only.
            padded = max(a.size, _MAX_CONSTANT_ARRAY_SIZE)
            if a.size:
                copy_in = copy_kernel(factory, program.dialect, "in", _dtype_name(a.dtype))
                inputs.append(copy_in(
                    inputs=[a.reshape(-1), count_of(spec.index)], output_shapes=[(padded,)],
                    output_dtypes=[a.dtype], grid=(a.size, 1, 1),
                    threadgroup=(min(256, a.size), 1, 1), stream=mx.gpu)[0])
                copies.append(a.nbytes)
            else:
                inputs.append(mx.zeros((padded,), a.dtype))

    if program.mlx_kernel is None or program.mlx_factory is not factory:
        program.mlx_kernel = factory(
            name=program.name, input_names=[s.name for s in program.inputs],
            output_names=list(program.outputs), source=program.source,
            header=program.header, ensure_row_contiguous=True)
        program.mlx_factory = factory
    output_shapes, output_dtypes = [], []
    for index in program.output_params:
        if index < 0:
            output_shapes.append((1,))
            output_dtypes.append(mx.uint8)
        else:
            output_shapes.append(tuple(views[index].shape))
            output_dtypes.append(views[index].dtype)
    copies.extend(views[i].nbytes for i in fused)
    outs.extend(program.mlx_kernel(inputs=inputs, output_shapes=output_shapes,
                                   output_dtypes=output_dtypes, grid=grid,
                                   threadgroup=threadgroup, stream=mx.gpu, **template))
    results = {index: out for out, index in zip(outs, program.output_params, strict=True)
               if index >= 0}
    for spec, work in zip(program.inputs, inputs, strict=True):
        a = views.get(spec.index)
        if spec.kind != "work" or not a.size:
            continue
        copy_out = copy_kernel(factory, program.dialect, "out", _dtype_name(a.dtype))
        # outs[0] is an output of the kernel: consuming it orders this copy after it.
        flat = copy_out(inputs=[work, count_of(spec.index), outs[0]],
                        output_shapes=[(a.size,)], output_dtypes=[a.dtype],
                        grid=(a.size, 1, 1), threadgroup=(min(256, a.size), 1, 1),
                        stream=mx.gpu)[0]
        results[spec.index] = flat.reshape(a.shape)
        copies.append(a.nbytes)
    for index, value in list(results.items()):
        if args[index].dtype != value.dtype:
            results[index] = back_to(value, args[index].dtype, mx, copies)
    return results


def is_mlx_array(obj: Any) -> bool:
    """Whether ``obj`` is an ``mlx.core.array`` (without importing MLX)."""
    mx = sys.modules.get("mlx.core")
    return mx is not None and isinstance(obj, mx.array)
