"""Arrays as the generated kernels see them: a flat buffer, an element offset, strides.

A building block passes each broadcast array as a one-dimensional buffer plus scalar
parameters (its offset and per-axis strides, in elements), so NumPy views (slices,
transposes, negative steps, ``np.broadcast_to``) and PyOpenCL arrays at an offset run
without a copy. Arrays of libraries that expose no buffer (CuPy and MLX views) are made
contiguous first, on their own device.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Flat", "flat", "broadcast_shape", "aligned_strides", "collapse", "c_strides"]


@dataclass(frozen=True)
class Flat:
    """One array as a buffer the kernel indexes: ``handle[offset + sum(k * strides)]``."""

    handle: Any
    offset: int
    strides: tuple[int, ...]
    shape: tuple[int, ...]


def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def _numpy_flat(a: np.ndarray) -> Flat:
    item = a.itemsize
    if a.flags.c_contiguous and a.ndim:
        # The array itself (kernels see a pointer): the same object on every call lets
        # the launcher's warm path recognise it.
        return Flat(a, 0, c_strides(a.shape), a.shape)
    if a.flags.c_contiguous:
        return Flat(a.reshape(1), 0, (), a.shape)
    if a.size == 0 or any(s % item for s in a.strides):
        b = np.ascontiguousarray(a)
        return Flat(b.reshape(-1), 0, c_strides(a.shape), a.shape)
    strides = tuple(s // item for s in a.strides)
    # Flip the axes with negative steps: the view's first element is then the lowest
    # address the array touches, where the flat buffer starts.
    flip = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)
    low = a[flip]
    offset = sum((n - 1) * -s for n, s in zip(a.shape, strides, strict=False) if s < 0)
    span = sum((n - 1) * abs(s) for n, s in zip(a.shape, strides, strict=False)) + 1
    buf = np.lib.stride_tricks.as_strided(low, shape=(span,), strides=(item,),
                                          writeable=bool(a.flags.writeable))
    return Flat(buf, offset, strides, a.shape)


def _opencl_flat(a: Any) -> Flat | None:
    import pyopencl.array as cla

    item = a.dtype.itemsize
    if a.offset % item or any(s % item for s in a.strides) or a.base_data is None:
        return None
    if a.flags.c_contiguous and not a.offset:
        return Flat(a.reshape(-1) if a.ndim != 1 else a, 0, c_strides(a.shape), a.shape)
    total = a.base_data.size // item
    buf = cla.Array(a.queue, (total,), a.dtype, data=a.base_data)
    return Flat(buf, a.offset // item, tuple(s // item for s in a.strides), a.shape)


def flat(array: Any, backend: Any) -> Flat:
    """The flat view of ``array`` on ``backend`` (a copy only where the library forces it)."""
    if isinstance(array, np.ndarray):
        return _numpy_flat(array)
    shape = tuple(int(n) for n in array.shape)
    cla = sys.modules.get("pyopencl.array")
    if cla is not None and isinstance(array, cla.Array):
        hit = _opencl_flat(array)
        if hit is not None:
            return hit
    info = backend.array_info(array)
    if info is None or not info.c_contiguous or info.handle is None:
        array = backend.to_device(backend.to_host(array))  # counted: see the docs page
    return Flat(array, 0, c_strides(shape), shape)


def broadcast_shape(shapes: list[tuple[int, ...]], names: list[str], kernel: str
                    ) -> tuple[int, ...]:
    """NumPy's broadcast of ``shapes``; a ``ValueError`` naming the arguments that clash."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listing = ", ".join(f"{n!r} {tuple(s)}" for n, s in zip(names, shapes, strict=False))
        raise ValueError(
            f"{kernel}: the shapes of the arguments do not broadcast together: {listing}; "
            f"give them shapes NumPy can broadcast (equal, or 1, axis by axis from the "
            f"last)") from None


def aligned_strides(f: Flat, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``f``'s strides over broadcast ``shape``: 0 on the axes it is broadcast along."""
    lead = len(shape) - len(f.shape)
    out = [0] * lead
    for n, s in zip(f.shape, f.strides, strict=False):
        out.append(0 if n == 1 else s)
    return tuple(out)


def collapse(shape: tuple[int, ...], strides: list[tuple[int, ...]]
             ) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Merge adjacent axes that every array steps through as one; drop axes of extent 1."""
    keep = [k for k, n in enumerate(shape) if n != 1]
    dims = [shape[k] for k in keep]
    st = [[s[k] for k in keep] for s in strides]
    k = len(dims) - 2
    while k >= 0:
        if all(s[k] == s[k + 1] * dims[k + 1] for s in st):
            dims[k] *= dims[k + 1]
            del dims[k + 1]
            for s in st:
                s[k] = s[k + 1]
                del s[k + 1]
        k -= 1
    return tuple(dims), [tuple(s) for s in st]
