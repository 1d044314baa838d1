"""C's types and their rules, as the typed tree uses them.

:class:`CType` is a type (a scalar, a pointer, an array, a vector, a struct, a type
variable, ``unknown``); :func:`arithmetic` is C's usual arithmetic conversions and
:func:`binary_type`, :func:`swizzle_type`, :func:`literal_type` and
:func:`library_call_type` the rules for operators, vector components, literals and the
math library. :mod:`portakern.analysis.expression_types` applies them to a body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..syntax.expressions import Expr, Literal
from ..syntax.vectors import VECTOR_TYPES
from ..types import type_name_of

__all__ = ["COMPLEX", "COMPLEX_FUNCS", "COMPLEX_REAL_FUNCS", "CType", "SCALARS",
           "complex_call_type", "UNKNOWN", "VOID", "WORD", "arithmetic", "binary_type",
           "bound_name", "library_call_type", "literal_int", "literal_type", "pointer_to",
           "promote", "scalar", "swizzle_type", "vector", "vector_named"]


@dataclass(frozen=True)
class CType:
    """A C type: ``kind`` is ``int``, ``float``, ``bool``, ``void``, ``pointer``, ``array``,
    ``vector``, ``complex`` (``cfloat``, ``cdouble``: ``element`` is the part's type),
    ``struct``, ``typevar``, ``tuple`` (``@index(..., NTuple)``), ``word`` (a
    construct's keyword argument, ``Global``) or ``unknown``; ``name`` its spelling."""

    kind: str
    name: str
    element: CType | None = None
    width: int = 0
    const: bool = False

    def __str__(self) -> str:
        return self.name

    @property
    def complex(self) -> bool:
        return self.kind == "complex"

    @property
    def arithmetic(self) -> bool:
        return self.kind in ("int", "float", "bool")

    @property
    def unknown(self) -> bool:
        return self.kind == "unknown"


UNKNOWN = CType("unknown", "unknown")
VOID = CType("void", "void")
WORD = CType("word", "word")

#: Scalar name -> (kind, rank, signed, bits). Ranks: bool 0, 8-bit 1, 16-bit 2, int 3,
#: long 4; floating: half 1, float 2, double 3.
SCALARS: dict[str, tuple[str, int, bool, int]] = {
    "bool": ("bool", 0, False, 8), "char": ("int", 1, True, 8), "int8_t": ("int", 1, True, 8),
    "uint8_t": ("int", 1, False, 8), "int16_t": ("int", 2, True, 16),
    "uint16_t": ("int", 2, False, 16), "int": ("int", 3, True, 32), "uint": ("int", 3, False, 32),
    "long": ("int", 4, True, 64), "ulong": ("int", 4, False, 64),
    "half": ("float", 1, True, 16), "float": ("float", 2, True, 32),
    "double": ("float", 3, True, 64),
}
#: Other spellings of the scalar types.
_ALIASES = {
    "signed char": "int8_t", "unsigned char": "uint8_t", "uchar": "uint8_t",
    "short": "int16_t", "short int": "int16_t", "signed short": "int16_t",
    "unsigned short": "uint16_t", "ushort": "uint16_t", "unsigned short int": "uint16_t",
    "int32_t": "int", "signed": "int", "signed int": "int", "uint32_t": "uint",
    "unsigned": "uint", "unsigned int": "uint", "int64_t": "long", "long long": "long",
    "long int": "long", "long long int": "long", "ptrdiff_t": "long", "intptr_t": "long",
    "uint64_t": "ulong", "unsigned long": "ulong", "unsigned long long": "ulong",
    "unsigned long int": "ulong", "size_t": "ulong", "uintptr_t": "ulong", "_Bool": "bool",
}
#: Complex type -> the type of its parts.
COMPLEX: dict[str, str] = {"cfloat": "float", "cdouble": "double"}
_UNSIGNED_OF = {"int8_t": "uint8_t", "int16_t": "uint16_t", "int": "uint", "long": "ulong",
                "char": "uint8_t"}


def scalar(name: str) -> CType:
    """The scalar type spelled ``name`` (any alias: ``unsigned int``, ``size_t``), or unknown."""
    name = _ALIASES.get(name, name)
    if name in COMPLEX:
        return CType("complex", name, scalar(COMPLEX[name]))
    info = SCALARS.get(name)
    return UNKNOWN if info is None else CType(info[0], name)


def vector(element: str, width: int) -> CType:
    prefix = {"uint8_t": "uchar"}.get(element, element)
    name = f"{prefix}{width}"
    return CType("vector", name, scalar(element), width)


def vector_named(name: str) -> CType:
    v = VECTOR_TYPES[name]
    return vector(v.element, v.width)


def pointer_to(t: CType, const: bool = False) -> CType:
    return CType("pointer", f"{'const ' if const else ''}{t.name}*", t, 0, const)


def promote(t: CType) -> CType:
    """C's integer promotions (everything narrower than int becomes int)."""
    if t.kind in ("int", "bool") and SCALARS[t.name][1] < 3:
        return scalar("int")
    return t


def arithmetic(a: CType, b: CType) -> CType:
    """C's usual arithmetic conversions of two operand types (vectors and type variables too).

    A complex operand wins over a real one, whose value is converted to the complex's part
    type (``cfloat * 2.0`` is ``cfloat``, as NumPy treats a Python scalar); of two complex
    operands the wider one wins."""
    if a.kind == "complex" or b.kind == "complex":
        if a.kind == "complex" and b.kind == "complex":
            return a if a.name == "cdouble" or b.name == "cfloat" else b
        other = b if a.kind == "complex" else a
        return (a if a.kind == "complex" else b) if other.arithmetic else UNKNOWN
    if a.kind == "vector" or b.kind == "vector":
        if a.kind == "vector" and b.kind == "vector":
            return a if a.name == b.name else UNKNOWN
        vec = a if a.kind == "vector" else b
        other = b if vec is a else a
        return vec if other.arithmetic or other.kind == "typevar" else UNKNOWN
    if a.kind == "typevar" or b.kind == "typevar":
        if a == b:
            return a
        tv, other = (a, b) if a.kind == "typevar" else (b, a)
        return tv if other.kind in ("int", "bool") else UNKNOWN
    if not (a.arithmetic and b.arithmetic):
        return UNKNOWN
    if a.kind == "float" or b.kind == "float":
        floats = [t for t in (a, b) if t.kind == "float"]
        return max(floats, key=lambda t: SCALARS[t.name][1])
    a, b = promote(a), promote(b)
    if a == b:
        return a
    _, ra, sa, ba = SCALARS[a.name]
    _, rb, sb, bb = SCALARS[b.name]
    if sa == sb:
        return a if ra > rb else b
    signed, unsigned = (a, b) if sa else (b, a)
    rs, ru = (ra, rb) if sa else (rb, ra)
    if ru >= rs:
        return unsigned
    if SCALARS[signed.name][3] > SCALARS[unsigned.name][3]:
        return signed
    return scalar(_UNSIGNED_OF[signed.name])


# -- the math library's result types ---------------------------------------------------

_FLOAT_FUNCS = frozenset("""
sqrt rsqrt cbrt exp exp2 exp10 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh
tanh asinh acosh atanh atan2 pow powr fabs floor ceil round trunc rint fmod fmin fmax fma mad
hypot erf erfc tgamma lgamma logb nearbyint remainder copysign fdim sinpi cospi tanpi degrees
radians sign step smoothstep mix native_sqrt native_exp native_log native_sin native_cos
native_rsqrt native_recip native_divide half_sqrt half_exp half_log half_recip ldexp pown rootn
""".split())
#: Functions whose result is the arithmetic conversion of their arguments (ints stay ints).
_GENERIC_FUNCS = frozenset("min max abs clamp add_sat sub_sat hadd rhadd mul24 mad24 popcount "
                           "clz ctz rotate mul_hi".split())
_FIRST_ARG_FUNCS = frozenset({"select", "ldexp", "pown", "rootn", "normalize", "cross", "frexp",
                              "modf", "nextafter"})
_ELEMENT_FUNCS = frozenset({"dot", "length", "distance", "fast_length", "fast_distance"})
_BOOL_FUNCS = frozenset({"isnan", "isinf", "isfinite", "signbit", "isnormal", "any", "all"})
_INT_FUNCS = frozenset({"ilogb"})
_SWIZZLE = {c: n for n, c in enumerate("xyzw")} | {c: n for n, c in enumerate("rgba")}


def bound_name(value: Any) -> str:
    """A type variable's binding (a type name or anything ``np.dtype`` takes) as a scalar
    name; ``""`` when it names none."""
    if isinstance(value, str) and (value in _ALIASES or value in SCALARS or value in COMPLEX):
        return _ALIASES.get(value, value)
    try:
        return type_name_of(np.dtype(value)) or ""
    except (TypeError, ValueError):
        return ""


def literal_int(node: Expr | None) -> int | None:
    if isinstance(node, Literal) and node.kind == "int":
        try:
            return int(node.text.rstrip("uUlL"), 0)
        except ValueError:
            return None
    return None


def literal_type(node: Literal) -> CType:
    if node.kind == "bool":
        return scalar("bool")
    if node.kind == "char":
        return scalar("char")
    if node.kind == "string":
        return pointer_to(scalar("char"), const=True)
    suffix = node.suffix
    if node.kind == "float":
        return scalar("float" if "f" in suffix else "half" if "h" in suffix else "double")
    value = literal_int(node)
    decimal = not node.text.lower().startswith("0x") and not (
        len(node.text) > 1 and node.text.startswith("0"))
    unsigned = "u" in suffix
    long_ = "l" in suffix
    if value is None:
        return UNKNOWN
    candidates = (["uint", "ulong"] if unsigned else ["int", "long"] if decimal
                  else ["int", "uint", "long", "ulong"])
    if long_:
        candidates = [c for c in candidates if c in ("long", "ulong")]
    for name in candidates:
        bits = SCALARS[name][3]
        limit = 2 ** (bits - 1) if SCALARS[name][2] else 2 ** bits
        if value < limit:
            return scalar(name)
    return scalar("ulong")


def binary_type(op: str, a: CType, b: CType) -> CType:
    if op in ("&&", "||"):
        return scalar("bool")
    if (a.kind == "complex" or b.kind == "complex") and op not in ("+", "-", "*", "/", "==",
                                                                   "!="):
        return UNKNOWN  # complex numbers have no order and no bits
    if op in ("==", "!=", "<", ">", "<=", ">="):
        common = arithmetic(a, b)
        if common.kind == "vector" and common.element is not None:
            return vector("int", common.width) if common.element.name != "double" else \
                vector("long", common.width)
        if a.kind in ("pointer", "array") or b.kind in ("pointer", "array") or \
                not common.unknown:
            return scalar("bool")
        return UNKNOWN
    if a.kind == "array" and a.element is not None:
        a = pointer_to(a.element)
    if b.kind == "array" and b.element is not None:
        b = pointer_to(b.element)
    if op in ("+", "-") and a.kind == "pointer":
        if b.kind == "pointer" and op == "-":
            return scalar("long")
        return a if b.kind in ("int", "bool", "typevar") else UNKNOWN
    if op == "+" and b.kind == "pointer":
        return b if a.kind in ("int", "bool", "typevar") else UNKNOWN
    if op in ("<<", ">>"):
        if a.kind in ("int", "bool"):
            return promote(a)
        return a if a.kind in ("vector", "typevar") else UNKNOWN
    if op in ("%", "&", "|", "^") and (a.kind == "float" or b.kind == "float"):
        return UNKNOWN
    return arithmetic(a, b)


def swizzle_type(base: CType, name: str) -> CType:
    element = base.element
    assert element is not None
    if name in ("lo", "hi", "even", "odd"):
        n = base.width // 2
        return element if n == 1 else vector(element.name, n)
    picks = name[1:] if re.fullmatch(r"s[0-9a-fA-F]+", name) else name
    if name.startswith("s") and picks is not name:
        indices = [int(c, 16) for c in picks]
    elif all(c in _SWIZZLE for c in name):
        indices = [_SWIZZLE[c] for c in name]
    else:
        return UNKNOWN
    if any(i >= base.width for i in indices) or not 1 <= len(indices) <= 4:
        return UNKNOWN
    return element if len(indices) == 1 else vector(element.name, len(indices))


#: The complex functions (docs/language.md "Complex numbers"): those giving a part's type
#: for a complex argument, and those giving the complex type.
COMPLEX_REAL_FUNCS = frozenset({"real", "imag", "abs", "arg"})
COMPLEX_FUNCS = frozenset({"conj", "exp", "log", "sqrt", "pow"})


def complex_call_type(name: str, args: list[CType]) -> CType | None:
    """The type of a complex function's call, or None when it is not one (``sqrt(x)`` of a
    real ``x`` is the math library's)."""
    if name == "polar" and args:
        common = args[0]
        for t in args[1:]:
            common = arithmetic(common, t)
        if common.kind == "float" or common.kind in ("int", "bool"):
            return scalar("cfloat" if common.name in ("float", "half") else "cdouble")
        return UNKNOWN
    if not any(t.kind == "complex" for t in args):
        return None
    if name in COMPLEX_REAL_FUNCS and len(args) == 1:
        return args[0].element or UNKNOWN
    if name in COMPLEX_FUNCS:
        common = args[0]
        for t in args[1:]:
            common = arithmetic(common, t)
        return common
    return UNKNOWN


def library_call_type(name: str, args: list[CType]) -> CType:
    if (hit := complex_call_type(name, args)) is not None:
        return hit
    if m := re.fullmatch(r"(?:as|convert)_([a-z]+[0-9]*)(?:_\w+)?", name):
        t = m.group(1)
        return vector_named(t) if t in VECTOR_TYPES else scalar(t)
    if name in _BOOL_FUNCS:
        return scalar("bool")
    if name in _INT_FUNCS:
        return scalar("int")
    if name in _ELEMENT_FUNCS:
        return args[0].element if args and args[0].kind == "vector" and args[0].element \
            else (args[0] if args and args[0].kind == "float" else UNKNOWN)
    if name in _FIRST_ARG_FUNCS and name not in _FLOAT_FUNCS:
        return args[0] if args else UNKNOWN
    floaty = name[:-1] if name.endswith("f") and name[:-1] in _FLOAT_FUNCS else None
    if floaty is not None or name in ("fabsf", "fminf", "fmaxf", "fmaf"):
        return scalar("float")
    if name in _FLOAT_FUNCS or name in _GENERIC_FUNCS:
        if not args:
            return UNKNOWN
        use = args[:1] if name in _FIRST_ARG_FUNCS else args
        common = use[0]
        for t in use[1:]:
            common = arithmetic(common, t)
        if name in _FLOAT_FUNCS and common.kind in ("int", "bool"):
            return scalar("double")  # C++'s overload for an integer argument
        return common
    return UNKNOWN
