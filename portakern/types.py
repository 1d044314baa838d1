"""The kernel language's scalar types and their NumPy dtypes.

One table serves every stage: the parser uses it to tell a known type from a
type variable, the launcher to check and convert arguments, and the renderer to
bind type variables.
"""

from __future__ import annotations

import numpy as np

from .errors import KernelTypeError

__all__ = ["TYPE_DTYPES", "KNOWN_TYPES", "STORAGE_TYPES", "dtype_of", "type_name_of",
           "as_type_name", "bfloat16_dtype"]

#: Language type name -> NumPy dtype. Several names may share a dtype; the first
#: name listed for a dtype is the canonical one used when binding type variables.
TYPE_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(dt)
    for name, dt in [
        ("float", np.float32),
        ("double", np.float64),
        ("half", np.float16),
        ("int", np.int32),
        ("uint", np.uint32),
        ("long", np.int64),
        ("ulong", np.uint64),
        ("bool", np.bool_),
        ("int8_t", np.int8),
        ("int16_t", np.int16),
        ("int32_t", np.int32),
        ("int64_t", np.int64),
        ("uint8_t", np.uint8),
        ("uint16_t", np.uint16),
        ("uint32_t", np.uint32),
        ("uint64_t", np.uint64),
        # OpenCL's short names (C's char and short): the same dtypes as the fixed-width ones.
        ("char", np.int8),
        ("uchar", np.uint8),
        ("short", np.int16),
        ("ushort", np.uint16),
        # Complex numbers (docs/language.md "Complex numbers"): {re, im} pairs, NumPy's layout.
        ("cfloat", np.complex64),
        ("cdouble", np.complex128),
    ]
}

#: Storage types: arrays of them are loaded and stored, their values computed in float
#: (docs/language.md, "Half and bfloat16 storage"). NumPy has no bfloat16: its dtype is
#: ``ml_dtypes.bfloat16``, imported only when an array or a name needs it, so it is not in
#: :data:`TYPE_DTYPES`.
STORAGE_TYPES: frozenset[str] = frozenset({"bfloat16"})

KNOWN_TYPES: frozenset[str] = frozenset(TYPE_DTYPES) | STORAGE_TYPES

_CANONICAL: dict[np.dtype, str] = {}
for _name, _dt in TYPE_DTYPES.items():
    _CANONICAL.setdefault(_dt, _name)
# The fixed-width names read better for the small integer types.
_CANONICAL[np.dtype(np.int8)] = "int8_t"
_CANONICAL[np.dtype(np.uint8)] = "uint8_t"
_CANONICAL[np.dtype(np.int16)] = "int16_t"
_CANONICAL[np.dtype(np.uint16)] = "uint16_t"


def bfloat16_dtype() -> np.dtype:
    """``ml_dtypes.bfloat16`` as a NumPy dtype; a :class:`KernelTypeError` naming the fix
    where ``ml_dtypes`` is not installed."""
    try:
        import ml_dtypes
    except ImportError as exc:
        raise KernelTypeError(
            "bfloat16 arrays on the host are ml_dtypes.bfloat16 arrays (NumPy has no "
            "bfloat16 dtype), and ml_dtypes is not installed: pip install ml_dtypes"
        ) from exc
    return np.dtype(ml_dtypes.bfloat16)


def dtype_of(type_name: str) -> np.dtype:
    """Return the NumPy dtype of a language type name (bfloat16's is ``ml_dtypes``')."""
    if type_name == "bfloat16":
        return bfloat16_dtype()
    return TYPE_DTYPES[type_name]


def type_name_of(dtype: np.dtype) -> str | None:
    """Return the canonical language type for a dtype, or None if it has none."""
    dt = np.dtype(dtype)
    name = _CANONICAL.get(dt)
    if name is None and dt.name == "bfloat16" and dt.itemsize == 2:
        return "bfloat16"  # ml_dtypes.bfloat16, known by its name without importing it
    return name


def as_type_name(value: object, *, what: str) -> str:
    """Turn a type name or anything ``np.dtype`` accepts into a language type name.

    Raises :class:`KernelTypeError` naming ``what`` when the value is neither.
    """
    if isinstance(value, str) and value in KNOWN_TYPES:
        return value
    try:
        dt = np.dtype(value)  # type: ignore[call-overload]
    except TypeError:
        dt = None
    name = type_name_of(dt) if dt is not None else None
    if name is None:
        known = ", ".join(sorted(KNOWN_TYPES))
        raise KernelTypeError(
            f"{what} must be a type name ({known}) or a NumPy dtype with one, got {value!r}"
        )
    return name
