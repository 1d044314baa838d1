"""Arrays of a struct the kernel source defines: a NumPy structured dtype, checked.

``const block_q4_0* blocks`` takes an array whose dtype is structured with the struct's
field names, in order, at the offsets the target lays them out
(:mod:`portakern.analysis.struct_layouts`), and the same itemsize. CuPy and PyOpenCL
arrays carry NumPy dtypes, so they are checked the same way. MLX has no structured dtypes:
an MLX array stands for the structs by its bytes, and only its byte length is checked (a
whole number of structs; :mod:`portakern.backends.mlx_structs`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis.struct_layouts import FieldLayout, StructLayout, struct_layout
from ..backends.mlx_structs import check_struct_bytes
from ..errors import KernelTypeError
from ..syntax.structs import StructDef

__all__ = ["check_struct_array", "struct_dtype"]

#: The backends whose arrays are MLX arrays (no structured dtypes).
_MLX = frozenset({"Metal", "MLX-CUDA"})


def struct_dtype(kernel: Any, name: str, target: str = "c") -> np.dtype:
    """The NumPy structured dtype of struct ``name`` of ``kernel``'s source on ``target``.

    ``target`` is ``"c"`` (CPU()'s native path), ``"cuda"``, ``"opencl"`` or ``"metal"``;
    the layouts differ only where a field is a 3-component vector (padded to 4 on OpenCL
    and Metal). ``numpy.zeros(n, pk.struct_dtype(kernel, "block_q4_0"))`` makes an array
    the kernel takes.

    Raises
    ------
    KernelTypeError
        ``name`` is no struct the kernel's source defines, or it has no fixed layout.
    """
    structs = kernel.parsed(target)[1].structs
    if name not in structs:
        raise KernelTypeError(
            f"struct_dtype: the kernel's source defines no struct {name!r} (it defines: "
            f"{', '.join(sorted(structs)) or 'none'})")
    return struct_layout(name, structs, target).dtype


def check_struct_array(where: str, type_name: str, structs: dict[str, StructDef],
                       target: str, info: Any, backend: Any) -> None:
    """Refuse an array whose dtype is not struct ``type_name``'s layout on ``target``.

    Raises
    ------
    KernelTypeError
        Naming the first field that differs (name, type or offset), or the itemsize.
    """
    layout = struct_layout(type_name, structs, target)
    got = np.dtype(info.dtype) if not isinstance(info.dtype, np.dtype) else info.dtype
    want = _spelled(layout)
    if got.fields is None:
        if getattr(backend, "name", "") in _MLX:
            check_struct_bytes(where, layout, got, tuple(info.shape), want, backend)
            return
        raise KernelTypeError(
            f"{where} is an array of struct {type_name}: pass a structured array of dtype "
            f"{want} (portakern.struct_dtype(kernel, {type_name!r}, {target!r})), "
            f"got dtype {got}")
    names = list(got.names or ())
    for n, f in enumerate(layout.fields):
        if n >= len(names) or names[n] != f.name:
            found = f"{names[n]!r}" if n < len(names) else "nothing"
            raise KernelTypeError(
                f"{where}: struct {type_name}'s field {n} is {f.name!r} ({f.type}), but the "
                f"array's dtype has {found} there; the dtype must be {want}")
        dt, offset = got.fields[f.name][:2]
        if offset != f.offset or not _same_type(f, dt, target):
            raise KernelTypeError(
                f"{where}: field {f.name!r} of struct {type_name} must be {f.type} at offset "
                f"{f.offset} on {target}, but the array's dtype has {_describe(dt)} at offset "
                f"{offset}; the dtype must be {want}")
    if len(names) > len(layout.fields):
        raise KernelTypeError(
            f"{where}: the array's dtype has a field {names[len(layout.fields)]!r} that "
            f"struct {type_name} does not; the dtype must be {want}")
    if got.itemsize != layout.itemsize:
        raise KernelTypeError(
            f"{where}: struct {type_name} is {layout.itemsize} bytes on {target} (its "
            f"alignment is {layout.alignment}), but the array's dtype has itemsize "
            f"{got.itemsize}; the dtype must be {want}")


def _same_type(f: FieldLayout, dt: np.dtype, target: str) -> bool:
    if f.struct is not None:
        base, shape = (dt.base, dt.shape) if dt.subdtype else (dt, ())
        if shape != f.dtype.shape:
            return False
        return _nested_ok(f.struct, base)
    if dt == f.dtype:
        return True
    # A padded 3-component vector (OpenCL, Metal) may be given as its 3 components.
    return (f.dtype.subdtype is not None and dt.subdtype is not None
            and dt.base == f.dtype.base and f.dtype.shape[-1:] == (4,)
            and dt.shape == f.dtype.shape[:-1] + (3,) and f.type.rstrip("]").endswith("3"))


def _nested_ok(layout: StructLayout, dt: np.dtype) -> bool:
    if dt.fields is None or list(dt.names or ()) != [f.name for f in layout.fields]:
        return False
    if dt.itemsize != layout.itemsize:
        return False
    return all(dt.fields[f.name][1] == f.offset and _same_type(f, dt.fields[f.name][0],
                                                               layout.target)
               for f in layout.fields)


def _describe(dt: np.dtype) -> str:
    if dt.subdtype is not None:
        return f"{dt.base} {dt.shape}"
    return str(dt)


def _spelled(layout: StructLayout) -> str:
    """The dtype as code: ``numpy.dtype([('d', '<f4'), ('qs', 'u1', (16,))])``."""
    return f"numpy.{layout.dtype!r}"
