"""CuPy's parameter strings (``"float32 x, T y, raw T z"``) and the binding of their types.

A parameter string lists ``[raw] TYPE NAME`` items separated by commas. ``TYPE`` is a
NumPy dtype name (``float32``), a kernel-language type name (``float``) or a type
variable: any other identifier, bound from the dtypes of the arguments passed, CuPy's
convention. Arrays bind type variables first; a Python scalar binds one that no array
bound, with NumPy's dtype for it (``int`` -> int64, ``float`` -> float64).
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import KernelSyntaxError, KernelTypeError
from ..types import KNOWN_TYPES, TYPE_DTYPES, type_name_of

__all__ = ["BlockParam", "parse_params", "bind_types", "is_scalar"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Names the generated kernels use for themselves; a parameter may not take one.
RESERVED = frozenset({"i", "_ind", "_in_ind", "_out_ind", "_type_reduce"})
#: The reduction's own names besides.
REDUCTION_RESERVED = RESERVED | {"a", "b"}


@dataclass(frozen=True)
class BlockParam:
    """One parameter of a building block.

    Attributes
    ----------
    name : str
        The name the fragments use.
    ctype : str
        The kernel-language type name, or the type variable's name.
    raw : bool
        ``raw``: the whole array, indexed by the fragment (``z[i]``), not broadcast.
    is_out : bool
        Listed among the output parameters.
    type_var : bool
        ``ctype`` is a type variable.
    """

    name: str
    ctype: str
    raw: bool
    is_out: bool
    type_var: bool

    def describe(self) -> str:
        return f"{'raw ' if self.raw else ''}{self.ctype} {self.name}"


def language_type(word: str) -> str | None:
    """The language type ``word`` names: ``float`` itself, or ``float32`` as a dtype name."""
    if word in KNOWN_TYPES:
        return word
    try:
        dt = np.dtype(word)
    except TypeError:
        return None
    return type_name_of(dt)


def parse_params(text: str, is_out: bool, what: str,
                 reserved: frozenset[str] = RESERVED) -> tuple[BlockParam, ...]:
    """Parse a parameter string; ``what`` names it in errors (``"in_params"``)."""
    if not isinstance(text, str):
        raise KernelTypeError(f"{what} must be a str such as 'float32 x, T y', got {text!r}")
    params: list[BlockParam] = []
    filename = f"<{what}>"
    col = 1
    for item in text.split(","):
        words = item.split()
        where = col + len(item) - len(item.lstrip())
        col += len(item) + 1
        if not words and not text.strip():
            break
        raw = bool(words) and words[0] == "raw"
        body = words[1:] if raw else words
        if len(body) != 2:
            raise KernelSyntaxError(
                f"each parameter of {what} is '[raw] TYPE NAME', got {item.strip()!r}",
                filename, 1, where, text)
        ctype, name = body
        if not _IDENT.match(name) or keyword.iskeyword(name) or name in reserved:
            raise KernelSyntaxError(
                f"{name!r} cannot name a parameter of {what} (an identifier other than "
                f"{', '.join(sorted(reserved))})", filename, 1, where, text)
        if not _IDENT.match(ctype):
            raise KernelSyntaxError(f"{ctype!r} is not a type name or type variable in {what}",
                                    filename, 1, where, text)
        known = language_type(ctype)
        params.append(BlockParam(name, known or ctype, raw, is_out, known is None))
    return tuple(params)


def check_unique(params: tuple[BlockParam, ...]) -> None:
    seen: set[str] = set()
    for p in params:
        if p.name in seen:
            raise KernelSyntaxError(f"parameter {p.name!r} is listed twice", "<params>", 1, 1,
                                    None)
        seen.add(p.name)


def is_scalar(value: Any) -> bool:
    """A Python or NumPy scalar (or a 0-d NumPy array is not one: it is an array)."""
    return isinstance(value, (bool, int, float, np.generic))


def scalar_dtype(value: Any) -> np.dtype:
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    return np.dtype(np.int64) if isinstance(value, int) else np.dtype(np.float64)


def bind_types(kernel: str, params: tuple[BlockParam, ...], args: list[Any],
               dtype_of: Any = None) -> dict[str, str]:
    """Bind each type variable to a language type name from ``args`` (None: not passed).

    ``dtype_of(array)`` gives an array's NumPy dtype (MLX's dtypes are not NumPy's).

    Raises
    ------
    KernelTypeError
        Two arrays bind one type variable to different dtypes, an array's dtype differs
        from its parameter's fixed type, or a dtype has no kernel-language type.
    """
    bound: dict[str, str] = {}
    dtype_of = dtype_of or (lambda a: np.dtype(a.dtype))
    origin: dict[str, str] = {}
    for scalars in (False, True):
        for p, a in zip(params, args, strict=False):
            if a is None or is_scalar(a) != scalars:
                continue
            dt = scalar_dtype(a) if scalars else dtype_of(a)
            name = type_name_of(dt)
            if not p.type_var:
                if not scalars and dt != TYPE_DTYPES[p.ctype]:
                    raise KernelTypeError(
                        f"{kernel}: argument {p.name!r} ({p.describe()}) must have dtype "
                        f"{TYPE_DTYPES[p.ctype]}, got {dt}; pass x.astype("
                        f"{TYPE_DTYPES[p.ctype].name!r}) or declare it with a type variable")
                continue
            if name is None:
                raise KernelTypeError(
                    f"{kernel}: argument {p.name!r} ({p.describe()}) has dtype {dt}, which "
                    f"kernels cannot take; use one of "
                    f"{', '.join(sorted({d.name for d in TYPE_DTYPES.values()}))}")
            if p.ctype not in bound:
                bound[p.ctype], origin[p.ctype] = name, p.name
            elif bound[p.ctype] != name and not scalars:
                first = origin.get(p.ctype)
                was = f"argument {first!r}" if first else "the caller"
                raise KernelTypeError(
                    f"{kernel}: type variable {p.ctype} is {TYPE_DTYPES[bound[p.ctype]]} "
                    f"from {was} but argument {p.name!r} ({p.describe()}) has dtype {dt}; "
                    f"give both the same dtype (x.astype(...))")
    return bound
