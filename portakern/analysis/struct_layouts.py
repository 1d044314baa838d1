"""The memory layout of a struct the source defines, per target.

A struct that is an array parameter's element type (``const block_q4_0* blocks``) is
passed as a NumPy structured array, whose field names, offsets and itemsize must be the
ones the target's compiler gives the struct. This module computes that layout once per
target by C's rules: each field at the next multiple of its alignment, the struct's
alignment the largest of its fields', its size rounded up to that alignment. Scalars are
their NumPy itemsize (``half`` 2 bytes, ``bool`` 1); 2- and 4-component vectors are
aligned to their size on every target; a 3-component vector is 4 components wide on
OpenCL and Metal but 3 wide (aligned to its element) in CUDA and the C++ path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import KernelTypeError
from ..syntax.structs import StructDef
from ..syntax.vectors import VECTOR_TYPES
from ..types import TYPE_DTYPES

__all__ = ["FieldLayout", "StructLayout", "struct_layout"]

#: The targets whose 3-component vectors occupy 4 components.
_WIDE_VEC3 = frozenset({"opencl", "metal"})


@dataclass(frozen=True)
class FieldLayout:
    """One field: its name, type as written, byte offset, and NumPy dtype (with shape)."""

    name: str
    type: str
    offset: int
    dtype: np.dtype  # a subarray dtype for array and vector fields
    struct: StructLayout | None = None  # the nested struct's layout


@dataclass(frozen=True)
class StructLayout:
    """A struct's fields, size and alignment on one target."""

    name: str
    target: str
    fields: tuple[FieldLayout, ...]
    itemsize: int
    alignment: int

    @property
    def dtype(self) -> np.dtype:
        """The NumPy structured dtype that has this layout (``np.zeros(n, layout.dtype)``)."""
        return np.dtype({"names": [f.name for f in self.fields],
                         "formats": [f.dtype for f in self.fields],
                         "offsets": [f.offset for f in self.fields],
                         "itemsize": self.itemsize})


def struct_layout(name: str, structs: dict[str, StructDef], target: str,
                  _seen: tuple[str, ...] = ()) -> StructLayout:
    """The layout of struct ``name`` (one of ``structs``) on ``target``.

    Raises
    ------
    KernelTypeError
        A field's type has no fixed layout (a type variable, a pointer, an unknown name).
    """
    d = structs[name]
    if name in _seen:
        raise KernelTypeError(f"struct {name} (line {d.line}) contains itself")
    fields: list[FieldLayout] = []
    offset = 0
    align = 1
    for f in d.fields:
        nested = None
        vt = VECTOR_TYPES.get(f.type)
        if f.type in TYPE_DTYPES:
            base = TYPE_DTYPES[f.type]
            size = a = base.itemsize
        elif vt is not None:
            base = TYPE_DTYPES[vt.element]
            width = 4 if vt.width == 3 and target in _WIDE_VEC3 else vt.width
            size = base.itemsize * width
            a = base.itemsize if vt.width == 3 and target not in _WIDE_VEC3 else size
            base = np.dtype((base, (width,)))  # a padded float3 is 4 wide (3 are checked)
        elif f.type in structs:
            nested = struct_layout(f.type, structs, target, _seen + (name,))
            base, size, a = nested.dtype, nested.itemsize, nested.alignment
        else:
            raise KernelTypeError(
                f"struct {name} (line {d.line}): field {f.name!r} has type {f.type!r}, "
                f"which has no fixed layout; a struct passed as an array must have fields "
                f"of built-in scalar or vector types, fixed-size arrays of them, or other "
                f"structs")
        offset = -(-offset // a) * a
        dt = np.dtype((base, f.dims)) if f.dims else base
        fields.append(FieldLayout(f.name, f.type + "".join(f"[{n}]" for n in f.dims),
                                  offset, dt, nested))
        offset += size * math.prod(f.dims)
        align = max(align, a)
    return StructLayout(name, target, tuple(fields), -(-offset // align) * align, align)
