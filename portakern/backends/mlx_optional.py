"""Optional arrays on MLX (``const T* mask = null`` passed None).

MLX binds a buffer to every input, so a null pointer cannot be passed. On the Metal
dialect an optional read-only array ``mask`` becomes two inputs: the array
``pk_opt_mask`` (a zero-filled stand-in when None is passed) and the flag
``pk_has_mask``; the kernel's body starts with
``auto mask = pk_has_mask ? pk_opt_mask : nullptr;``, so ``if (mask)`` and every use
of the pointer see what they would see on a target that passes null. A written
optional array (an MLX output of its own) and MLX's CUDA dialect refuse None.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import KernelArgumentError, KernelTypeError
from ..syntax.vectors import VECTOR_TYPES
from ..types import TYPE_DTYPES

__all__ = ["NULL", "array_inputs", "null_view", "prologue", "scalar_input", "viewed_arrays"]

_COMPLEX = frozenset({"cfloat", "cdouble"})


def viewed_arrays(kernel: str, params: Any, bindings: dict[str, str],
                  dialect: str) -> tuple[str, ...]:
    """The array parameters MLX declares in its own element type, which the body views as
    the kernel's (``pk_as_vector``): vector arrays (``float4*`` arrives as floats) and, on
    the Metal dialect, complex ones (``complex64_t*``, seen as ``cfloat*``). A complex
    scalar, which MLX would pass as its ``complex64_t``, is refused."""
    out = []
    for p in params:
        t = bindings.get(p.type, p.type)
        if t in _COMPLEX and (not p.pointer or dialect != "metal"):
            raise KernelTypeError(
                f"kernel {kernel!r}: parameter {p.name!r} is a complex "
                f"{'scalar' if not p.pointer else 'array'}, which MLX's "
                f"{'Metal' if dialect == 'metal' else 'CUDA'} kernels take in their own "
                f"complex type; pass it as a one-element complex64 array (Metal) or use "
                f"another backend")
        if p.pointer and (t in VECTOR_TYPES or t in _COMPLEX):
            out.append(p.name)
    return tuple(out)


class _Null:
    """The launch handle of an optional array passed None (see ``Backend.null_array``)."""

    def __repr__(self) -> str:
        return "portakern.backends.mlx_optional.NULL"


NULL = _Null()

#: Elements of the stand-in array: enough to keep it out of MLX's constant address
#: space (which MLX picks for inputs of at most 8 elements), like the real array.
_STANDIN_SIZE = 16


def _handled(p: Any, dialect: str, vectors: tuple[str, ...]) -> bool:
    return bool(p.optional) and dialect == "metal" and p.name not in vectors


def array_inputs(p: Any, i: int, dialect: str, vectors: tuple[str, ...],
                 renames: dict[str, str],
                 structs: tuple[str, ...] = ()) -> list[tuple[str, str, int]]:
    """The MLX inputs ``(name, kind, index)`` for read-only array parameter ``p``; an array
    of structs is its bytes, ``pk_bytes_<name>`` (:mod:`.mlx_structs`)."""
    if p.name in structs:
        return [(f"pk_bytes_{p.name}", "array", i)]
    if _handled(p, dialect, vectors):
        return [(f"pk_opt_{p.name}", "array", i), (f"pk_has_{p.name}", "has", i)]
    return [(f"pk_vec_{p.name}" if p.name in vectors else renames.get(p.name, p.name),
             "array", i)]


def prologue(params: Any, dialect: str, vectors: tuple[str, ...],
             renames: dict[str, str], structs: tuple[str, ...] = ()) -> str:
    """The body's first line: each optional array, null where its flag says so."""
    return "".join(f"auto {renames.get(p.name, p.name)} = pk_has_{p.name} ? "
                   f"pk_opt_{p.name} : nullptr;\n"
                   for p in params if p.pointer and p.const and _handled(p, dialect, vectors)
                   and p.name not in structs)


def null_view(program: Any, i: int, a: Any, mx: Any) -> Any:
    """``a``, or for NULL a zero-filled stand-in of the parameter's dtype."""
    if a is not NULL:
        # bfloat16 is its 16 bits on every target (portakern.lower.bf16_storage): a view.
        return a.view(mx.uint16) if a.dtype == mx.bfloat16 else a
    p = program.params[i]
    if p.name in program.structs:
        raise KernelArgumentError(
            f"argument {i} {p.name!r} ({p.describe()}) is None, which MLX cannot pass for an "
            f"array of structs; pass an array (its bytes), or launch on another backend")
    if not (p.const and _handled(p, program.dialect, ())):
        raise KernelArgumentError(
            f"argument {i} {p.name!r} ({p.describe()}) is None, which MLX cannot pass "
            f"{'to a written array' if not p.const else 'on its CUDA dialect'}; pass an "
            f"array, or launch on another backend")
    dtype = TYPE_DTYPES.get(program.bindings.get(p.type, p.type), np.dtype(np.uint16))
    return mx.array(np.zeros(_STANDIN_SIZE, dtype))


def back_to(value: Any, dtype: Any, mx: Any, copies: list[int]) -> Any:
    """A result in the caller's MLX ``dtype``: bfloat16's 16 bits viewed back (no copy),
    else (float64="cast") converted on the CPU, the copy counted."""
    if dtype == mx.bfloat16 and value.dtype == mx.uint16:
        return value.view(mx.bfloat16)
    out = value.astype(dtype, stream=mx.cpu)
    copies.append(out.nbytes)
    return out


def storage_dtype(name: str) -> np.dtype | None:
    """The NumPy dtype of MLX's ``bfloat16`` (``ml_dtypes``'), None for another name or
    without ml_dtypes."""
    if name != "bfloat16":
        return None
    from ..errors import KernelTypeError
    from ..types import bfloat16_dtype

    try:
        return bfloat16_dtype()
    except KernelTypeError:
        return None


def scalar_input(kind: str, i: int, scalars: dict[int, Any], args: list, mx: Any) -> Any:
    """Scalar parameter ``i``'s input, or for ``kind == "has"`` optional array ``i``'s flag
    ``pk_has_<name>``: 1 where an array was passed, 0 where None was."""
    if kind == "scalar":
        return scalars[i]
    return mx.array(np.int32(args[i] is not NULL))
