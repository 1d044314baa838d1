"""Arrays of structs on MLX (``const block_q4_0* blocks``), which has no structured dtypes.

An MLX array stands for an array of structs by its bytes: any MLX array whose byte length
is a whole number of the struct's size on the target (``mx.array(blocks.view(np.uint8))``,
or ``Metal().to_device(blocks)`` of a NumPy structured array, which makes that array).
MLX declares the input from the array's dtype (``const device uint8_t*``); the kernel's
body starts by viewing it as the struct (``templates/metal/mlx.j2``, ``mlx_structs``), in
the address space MLX gave it. A written array of structs is staged (see :mod:`._mlx`):
its private copy is cast to the struct the same way, and the copies move its bytes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import KernelTypeError
from ..syntax.vectors import VECTOR_TYPES, element_dtype
from ..types import KNOWN_TYPES

__all__ = ["check_struct_bytes", "param_dtypes", "struct_bytes", "struct_params"]


def struct_params(params: Any, bindings: Any) -> tuple[str, ...]:
    """The names of the array parameters whose element is a struct of the source.

    The type of such a parameter is neither a scalar nor a vector type, under the type
    bindings (a struct name is never a type variable)."""
    bound = dict(bindings)
    return tuple(p.name for p in params if p.pointer
                 and bound.get(p.type, p.type) not in KNOWN_TYPES
                 and bound.get(p.type, p.type) not in VECTOR_TYPES)


def param_dtypes(program: Any, bindings: dict[str, str]) -> dict[int, np.dtype]:
    """The dtype of each parameter under type bindings (``{"T": "float"}``); an array of
    structs is its bytes (uint8), as :meth:`Metal.to_device` makes it."""
    structs = getattr(program, "structs", ())
    return {i: np.dtype(np.uint8) if p.name in structs
            else element_dtype({"bfloat16": "uint16_t"}.get(t, t))  # bfloat16: its bits
            for i, (p, t) in enumerate((p, bindings.get(p.type, p.type))
                                       for p in program.params)}


def struct_bytes(array: np.ndarray) -> np.ndarray:
    """A NumPy structured array's bytes, flat and C-ordered (what MLX is given)."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


def check_struct_bytes(where: str, layout: Any, dtype: np.dtype, shape: tuple[int, ...],
                       want: str, backend: Any) -> None:
    """Refuse an MLX array whose bytes are not a whole number of struct ``layout``, or a
    struct with a double field where ``backend`` has no float64 (``float64="cast"``
    would change the struct's layout, so it is refused too).

    Raises
    ------
    KernelTypeError
        Naming the argument, the struct, its size on the target and the fix.
    """
    type_name, itemsize, target = layout.name, layout.itemsize, layout.target
    double = _float64_field(layout)
    if double is not None and (getattr(backend, "float64", "") == "cast"
                               or not backend.supports("float64")):
        raise KernelTypeError(
            f"{where} is an array of struct {type_name}, whose field {double!r} is a double; "
            f"{backend!r} has no float64, and float64='cast' cannot narrow a field without "
            f"changing the struct's layout. Use a float field, or another backend")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes % itemsize == 0:
        return
    raise KernelTypeError(
        f"{where} is an array of struct {type_name}, which is {itemsize} bytes on {target}; "
        f"MLX has no structured dtypes, so an MLX array stands for the structs by its bytes, "
        f"but this one (shape {tuple(shape)}, dtype {dtype}) has {nbytes} bytes, not a "
        f"whole number of structs. Pass mlx.core.array(blocks.view(numpy.uint8)) of a NumPy "
        f"array of dtype {want}, or backend.to_device(blocks)")


def _float64_field(layout: Any, prefix: str = "") -> str | None:
    """The first double field of ``layout`` (``"in.w"`` inside a nested struct), or None."""
    for f in layout.fields:
        if f.struct is not None:
            inner = _float64_field(f.struct, f"{prefix}{f.name}.")
            if inner is not None:
                return inner
        elif f.dtype.base == np.float64:
            return prefix + f.name
    return None
