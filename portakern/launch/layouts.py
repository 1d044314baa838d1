"""Array layouts at launch: which library an array is from, the contiguous copy spelled in
its own words, and what an N-d array parameter (``T x[:, :]``) passes for a view.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import KernelArgumentError

__all__ = ["ARRAY_TYPES", "contiguous_fix", "library_of", "nd_layout", "span_view"]


#: Array types by library, looked up only in modules already imported (a stand-in
#: installed as ``cupy`` counts as CuPy).
ARRAY_TYPES = (("numpy", "numpy", "ndarray"), ("cupy", "cupy", "ndarray"),
               ("mlx", "mlx.core", "array"), ("torch", "torch", "Tensor"),
               ("pyopencl", "pyopencl.array", "Array"))


def library_of(a: Any) -> str:
    """The array's library (``numpy``, ``cupy``, ``mlx``, ``torch``, ``pyopencl``)."""
    import sys

    for lib, module, name in ARRAY_TYPES:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and isinstance(a, cls):
            return lib
    return type(a).__module__.partition(".")[0]


def contiguous_fix(a: Any, name: str) -> str:
    """How the array's own library makes a C-contiguous copy of ``name``."""
    lib = library_of(a)
    if lib == "mlx":
        return f"mx.contiguous({name})"
    if lib == "torch":
        return f"{name}.contiguous()"
    if lib == "cupy":
        return f"cupy.ascontiguousarray({name})"
    if lib == "pyopencl":  # (pyopencl's copy() refuses a non-contiguous array)
        return f"pyopencl.array.to_device({name}.queue, numpy.ascontiguousarray({name}.get()))"
    if lib == "numpy":
        return f"numpy.ascontiguousarray({name})"
    return f"a contiguous copy of {name}"


def nd_layout(where: str, p: Any, a: Any, info: Any, label: str | None) -> tuple[Any, Any, list]:
    """What an N-d array parameter ``p`` passes for ``a``: ``(handle, extent, hidden)``.

    ``where`` names the argument in messages (``argument 1 'in' (const T[:, :])``).

    ``hidden`` is its extents, element strides and element offset (int64 scalars, the
    order of :func:`portakern.syntax.language.hidden_params`). The strides come from the
    array, so a view (a slice, a transpose, a negative step, a broadcast) runs without a
    copy: a NumPy array passes the lowest address its elements occupy (a C pointer or
    a PoCL buffer over exactly that span) and the offset of its first element from
    there; a CuPy array its first element's pointer; a PyOpenCL array its buffer and
    ``.offset``. Another array (DLPack, MLX) must be C-contiguous here (MLX's launcher
    makes its arrays contiguous, counting the copy).
    """
    shape = tuple(int(n) for n in info.shape)
    name = label or p.name
    if len(shape) != p.axes:
        raise KernelArgumentError(
            f"{where} has {p.axes} ax{'is' if p.axes == 1 else 'es'}, got an array of shape "
            f"{shape} ({len(shape)} ax{'is' if len(shape) == 1 else 'es'}); pass a "
            f"{p.axes}-d array ({name}.reshape(...)) or declare the parameter with one ':' "
            f"per axis")
    itemsize = info.dtype.itemsize
    lib = library_of(a)
    byte_strides = getattr(a, "strides", None) if lib in ("numpy", "cupy", "pyopencl") else None
    if byte_strides is None:
        if not info.c_contiguous:
            raise KernelArgumentError(
                f"{where}: this array does not expose its strides; pass a C-contiguous "
                f"one ({contiguous_fix(a, name)})")
        byte_strides = tuple(int(math.prod(shape[d + 1:])) * itemsize for d in range(len(shape)))
    odd = [d for d, s in enumerate(byte_strides) if s % itemsize and shape[d] > 1]
    if odd:
        raise KernelArgumentError(
            f"{where} has a stride of {byte_strides[odd[0]]} bytes along axis {odd[0]}, not a "
            f"multiple of its {itemsize}-byte elements; pass a copy ({contiguous_fix(a, name)})")
    strides = [int(s) // itemsize if shape[d] > 1 else 0 for d, s in enumerate(byte_strides)]
    if p.writable:
        zero = [d for d, s in enumerate(strides) if s == 0 and shape[d] > 1]
        if zero and math.prod(shape):
            raise KernelArgumentError(
                f"{where} has stride 0 along axis {zero[0]} (a broadcast view of shape "
                f"{shape}): its elements share memory, so work-items writing them would race; "
                f"pass a writable array of its own ({contiguous_fix(a, name)}), or declare the "
                f"parameter 'const {p.type} {p.name}[{', '.join(':' * p.axes)}]' if the kernel "
                f"only reads it")
    if p.writable and not info.writable:
        raise KernelArgumentError(
            f"{where} is read-only but the kernel may write it; pass a writable array, or "
            f"declare the parameter 'const {p.type} {p.name}[{', '.join(':' * p.axes)}]' if "
            f"the kernel only reads it")
    empty = math.prod(shape) == 0
    # The element with the lowest address, relative to the first one.
    low = 0 if empty else sum(s * (n - 1) for s, n in zip(strides, shape, strict=True) if s < 0)
    span = 0 if empty else 1 + sum(abs(s) * (n - 1) for s, n in zip(strides, shape, strict=True))
    handle, extent, offset = info.handle, info.extent, 0
    if lib == "numpy" and isinstance(info.handle, np.ndarray) and (low or span != a.size):
        # Gaps or negative steps: the memory from the lowest element, and the offset.
        handle = span_view(a, span)
        offset = -low
    elif lib == "pyopencl":
        if a.offset % itemsize:
            raise KernelArgumentError(
                f"{where} starts {a.offset} bytes into its buffer, not a multiple of its "
                f"{itemsize}-byte elements; pass a copy ({contiguous_fix(a, name)})")
        handle, offset = a.base_data, a.offset // itemsize
    elif handle is None:
        raise KernelArgumentError(f"{where} cannot be passed as it is; pass a copy "
                                  f"({contiguous_fix(a, name)})")
    if extent is not None:
        extent = (extent[0] + low * itemsize, span * itemsize)
    values = [np.int64(n) for n in shape] + [np.int64(s) for s in strides] + [np.int64(offset)]
    return handle, extent, values


def span_view(a: np.ndarray, span: int) -> np.ndarray:
    """A 1-d contiguous view of the ``span`` elements of ``a``'s memory from its lowest
    address: what a kernel indexes with ``a``'s strides (no copy)."""
    if span == 0:
        return np.empty(0, a.dtype)
    if a.flags.c_contiguous:
        return a.reshape(-1)
    # Each axis with a negative stride reversed: the first element is the lowest one.
    low = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in a.strides)]
    root = a
    while type(root.base) is np.ndarray:
        root = root.base
    if root is not a and root.flags.c_contiguous:
        # A view into the contiguous array the view comes from (one call).
        at = low.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if 0 <= at and at + span * a.itemsize <= root.nbytes:
            view = np.ndarray((span,), a.dtype, buffer=root, offset=at)
            if not a.flags.writeable:
                view.flags.writeable = False
            return view
    from numpy.lib.stride_tricks import as_strided

    return as_strided(low, shape=(span,), strides=(a.itemsize,),
                      writeable=bool(a.flags.writeable))
