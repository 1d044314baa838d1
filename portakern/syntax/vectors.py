"""Vector types of the kernel language: ``float4``, ``int2``, ``uchar4``...

One table (:data:`VECTOR_TYPES`) says which vector types exist, their element type and
width; everything else about them is decided here and handed to the lowering
(:mod:`portakern.lower.lowering` calls :func:`lower_word` and :func:`lower_access`), the parser
(:func:`check_components`) and the argument checks (:func:`check_array`).

The portable spellings and what they become (docs/language.md, "Vector types"):

- ``float4(a, b, c, d)`` and the broadcast ``float4(a)`` become ``pk_make_float4(...)``,
  which each target's prelude defines: OpenCL's ``(float4)(...)``, Metal's ``float4(...)``,
  CUDA's ``make_float4``, an aggregate of the C++ path's struct.
- ``@vload(4, x, i)`` reads ``x[4*i .. 4*i+3]`` of a scalar array as a vector and
  ``@vstore(4, v, x, i)`` writes it back (OpenCL's ``vload4``/``vstore4``), as
  ``pk_vload4(i, x)`` / ``pk_vstore4(v, i, x)``.
- ``.x .y .z .w`` are native everywhere; swizzles (``.xy``) are not portable (the CUDA
  and C++ structs have no such members) and are refused where the variable's declaration
  is visible, as is a component past the width (``.z`` of a ``float2``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import KernelArgumentError, KernelTypeError
from ..types import TYPE_DTYPES
from .parts import Gen
from .tokens import (
    SourceMap,
    Token,
    function_signatures,
    match_bracket,
    next_significant,
    significant,
    split_commas,
)

__all__ = ["VectorType", "VECTOR_TYPES", "COMPONENTS", "ARRAY_WIDTHS", "is_vector",
           "element_dtype", "lower_word", "lower_access", "helper_word", "check_components",
           "check_array", "check_param"]


@dataclass(frozen=True)
class VectorType:
    """One vector type: its name, element type (a language scalar type) and width."""

    name: str
    element: str
    width: int

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of one component."""
        return TYPE_DTYPES[self.element]


#: The vector types, by name. The C++ and CUDA preludes (templates/c/vectors.j2), the
#: OpenCL and Metal preludes and the CUDA stand-in define the same set; a test renders
#: each on every target. No ``double4`` (CUDA 13 deprecates it for double4_16a/_32a),
#: no ``half`` vectors yet.
VECTOR_TYPES: dict[str, VectorType] = {
    f"{prefix}{n}": VectorType(f"{prefix}{n}", element, n)
    for prefix, element in [("float", "float"), ("double", "double"), ("int", "int"),
                            ("uint", "uint"), ("uchar", "uint8_t")]
    for n in (2, 3, 4)
    if not (prefix == "double" and n == 4)
}

#: The component names, in order.
COMPONENTS = "xyzw"
#: Widths a vector may have as an array element or kernel parameter: a 3-component
#: vector is 12 bytes in CUDA and 16 in OpenCL and Metal, so arrays of them would not
#: have one layout (``@vload(3, ...)`` reads three packed scalars instead).
ARRAY_WIDTHS = (2, 4)


def is_vector(type_name: str) -> bool:
    """Whether ``type_name`` names a vector type."""
    return type_name in VECTOR_TYPES


def element_dtype(type_name: str) -> np.dtype:
    """The NumPy dtype of an array element of a scalar or vector type's components."""
    v = VECTOR_TYPES.get(type_name)
    return v.dtype if v is not None else TYPE_DTYPES[type_name]


# -- lowering -----------------------------------------------------------------------------------

def _args(toks: list[Token], open_at: int, smap: SourceMap) -> tuple[list[list[Token]], int]:
    """The top-level comma-separated arguments of the bracket at ``open_at`` (blanks
    inside each kept, so ``sizeof x`` stays two words) and the index of its closing
    bracket."""

    close = match_bracket(toks, open_at, smap)
    args = split_commas(toks[open_at + 1:close])
    blank = ("ws", "comment")
    for a in args:  # without the blanks around each argument
        while a and a[0].kind in blank:
            a.pop(0)
        while a and a[-1].kind in blank:
            a.pop()
    return ([] if args == [[]] else args), close


def lower_word(toks: list[Token], i: int, out: list, smap: SourceMap) -> int:
    """A vector type name at ``toks[i]``: a constructor call becomes ``pk_make_<type>``.

    The arguments stay in the token stream (the caller lowers them); only the count is
    checked here: one value (every component) or one per component.
    """

    t = toks[i]
    vt = VECTOR_TYPES[t.text]
    j = next_significant(toks, i + 1)
    if j < len(toks) and toks[j].is_punct("("):
        args, _ = _args(toks, j, smap)
        if len(args) not in (1, vt.width) or any(not significant(a) for a in args):
            raise smap.error_at(
                f"{vt.name}(...) takes 1 value (every component) or {vt.width} values "
                f"(one per component), got {len(args)}; e.g. {vt.name}("
                f"{', '.join(['0'] * vt.width)})", t)
        out.append(Gen(f"pk_make_{vt.name}", t))
    else:
        out.append(t)
    return i + 1


def lower_access(toks: list[Token], i: int, out: list, smap: SourceMap,
                 lower: Any) -> int:
    """``@vload(N, x, i)`` -> ``pk_vload<N>(i, x)``; ``@vstore(N, v, x, i)`` ->
    ``pk_vstore<N>(v, i, x)``. ``lower`` lowers an argument's tokens (they may hold
    ``@index`` and the like). Returns the index after the closing parenthesis."""

    t = toks[i]
    store = t.text == "@vstore"
    spelling = "@vstore(4, v, x, i)" if store else "@vload(4, x, i)"
    j = next_significant(toks, i + 1)
    if j >= len(toks) or not toks[j].is_punct("("):
        raise smap.error_at(f"expected '(' after {t.text}: {spelling}", t)
    args, close = _args(toks, j, smap)
    want = 4 if store else 3
    if len(args) != want or any(not significant(a) for a in args):
        raise smap.error_at(
            f"{t.text} takes {want} arguments, the width then "
            f"{'the vector, the array and the index' if store else 'the array and the index'}"
            f": {spelling}", t)
    width = significant(args[0])
    if len(width) != 1 or width[0].kind != "num" or width[0].text not in ("2", "3", "4"):
        raise smap.error_at(
            f"{t.text}'s first argument is the width, 2, 3 or 4 as a literal: {spelling}",
            width[0])
    n = width[0].text
    low = lower
    if store:
        value, array, index = args[1:]
        out += [Gen(f"pk_vstore{n}(", t), *low(value), Gen(", "), *low(index), Gen(", "),
                *low(array), Gen(")")]
    else:
        array, index = args[1:]
        out += [Gen(f"pk_vload{n}(", t), *low(index), Gen(", "), *low(array), Gen(")")]
    return close + 1


# -- checks -------------------------------------------------------------------------------------

def check_param(name: str, type_name: str, pointer: bool, tok: Token,
                smap: SourceMap) -> None:
    """A vector kernel parameter must be an array of a vector of width 2 or 4."""
    vt = VECTOR_TYPES.get(type_name)
    if vt is None:
        return
    if not pointer:
        raise smap.error_at(
            f"parameter {name!r}: a vector cannot be passed by value ({vt.name} {name}); "
            f"pass its {vt.width} components as {vt.element} scalars and build it with "
            f"{vt.name}(...), or pass an array 'const {vt.name}* {name}'", tok)
    if vt.width not in ARRAY_WIDTHS:
        raise smap.error_at(
            f"parameter {name!r}: arrays of {vt.name} are not portable ({vt.name} is 12 "
            f"bytes in CUDA but 16 in OpenCL and Metal); pass a {vt.element} array and read "
            f"it with @vload(3, {name}, i), or use {vt.name[:-1]}4", tok)


def vector_returns(before: list[Token]) -> dict[str, int]:
    """The functions defined in ``before`` (the code ahead of a kernel) that return a
    vector, ``float4 make(...)``: name -> its width."""
    out: dict[str, int] = {}
    for name, returns in function_signatures(before):
        word = returns.split()[-1]
        if word in VECTOR_TYPES:
            out[name] = VECTOR_TYPES[word].width
    return out


def check_components(body: list[Token], params: list, smap: SourceMap,
                     returns: dict[str, int] | None = None) -> None:
    """Refuse ``.q``, swizzles (``.xy``) and components past the width (``.z`` of a
    ``float2``) on the vector variables whose declarations the kernel shows, and on the
    value of a call of a helper in ``returns`` (name -> the width of the vector it
    returns: ``make(a).xy`` is CUDA's compiler error otherwise)."""

    sig = significant(body)
    for k, t in enumerate(sig):
        if t.kind == "id" and t.text in (returns or {}) and k + 1 < len(sig) \
                and sig[k + 1].is_punct("(") and not (k and sig[k - 1].text in (".", "->")):
            close = _closing(sig, k + 1)
            if close + 2 < len(sig) and sig[close + 1].is_punct(".") \
                    and sig[close + 2].kind == "id":
                _check_component(sig[close + 2], f"{t.text}(...)", returns[t.text], smap)
    width: dict[str, int] = {p.name: VECTOR_TYPES[p.type].width for p in params
                             if p.type in VECTOR_TYPES}
    for k, t in enumerate(sig):
        vt = VECTOR_TYPES.get(t.text) if t.kind == "id" else None
        if vt is None or (k + 1 < len(sig) and sig[k + 1].is_punct("(")):
            continue
        # Declarators after the type: `float4 a = ..., *b, c[4];` up to ';' or ')'.
        depth = 0
        expect_name = True
        for s in sig[k + 1:]:
            if s.kind == "punct" and s.text in "([{":
                depth += 1
            elif s.kind == "punct" and s.text in ")]}":
                depth -= 1
                if depth < 0:
                    break
            elif depth == 0 and s.is_punct(";"):
                break
            elif depth == 0 and s.is_punct(","):
                expect_name = True
            elif depth == 0 and expect_name and s.kind == "id" and s.text != "const":
                # The widest, should one name be declared in two scopes.
                width[s.text] = max(width.get(s.text, 0), vt.width)
                expect_name = False
    if not width:
        return
    for k, t in enumerate(sig):
        if t.kind != "id" or t.text not in width or (k and sig[k - 1].is_punct(".")):
            continue
        j = k + 1
        while j < len(sig) and sig[j].is_punct("["):
            depth = 0
            while j < len(sig):
                if sig[j].is_punct("["):
                    depth += 1
                elif sig[j].is_punct("]"):
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            j += 1
        if j + 1 < len(sig) and sig[j].is_punct(".") and sig[j + 1].kind == "id":
            _check_component(sig[j + 1], t.text, width[t.text], smap)


def _closing(sig: list[Token], at: int) -> int:
    """The index of the ')' closing the '(' at ``sig[at]`` (the last index if none)."""
    depth = 0
    for j in range(at, len(sig)):
        depth += sig[j].is_punct("(") - sig[j].is_punct(")")
        if depth == 0:
            return j
    return len(sig) - 1


def _check_component(tok: Token, var: str, width: int, smap: SourceMap) -> None:
    name = tok.text
    allowed = COMPONENTS[:width]
    if len(name) == 1 and name in allowed:
        return
    listed = " ".join(f".{c}" for c in allowed)
    if len(name) > 1 and all(c in COMPONENTS for c in name):
        raise smap.error_at(
            f"'{var}.{name}': swizzles are not portable (CUDA and C++ vectors have no "
            f".{name}); the components of a {width}-vector are {listed}: build the vector "
            f"from them, e.g. float{len(name)}("
            f"{', '.join(f'{var}.{c}' for c in name)})" if len(name) <= 4 else
            f"'{var}.{name}': unknown component; the components are {listed}", tok)
    raise smap.error_at(
        f"'{var}.{name}': unknown component of a {width}-component vector; the "
        f"components are {listed}", tok)


def check_array(where: str, type_name: str, info: Any) -> None:
    """A ``float4*`` parameter takes a float32 array whose last axis has length 4.

    ``where`` names the argument (``argument 0 'p' (float4*)``); ``info`` is the
    backend's ``ArrayInfo``. Raises :class:`KernelTypeError` for another dtype,
    :class:`KernelArgumentError` for another shape or a NumPy array whose data is not
    aligned to the vector's size (the C++ path loads it with aligned instructions),
    each saying what to pass.
    """
    dtype, shape = info.dtype, tuple(info.shape)
    vt = VECTOR_TYPES[type_name]
    want = vt.dtype
    example = f"numpy.zeros((n, {vt.width}), numpy.{want})"
    if np.dtype(dtype) != want:
        raise KernelTypeError(
            f"{where} must be a {want} array whose last axis has length {vt.width} (one "
            f"{vt.name} per row, e.g. {example}), got dtype {dtype}")
    if not shape or shape[-1] != vt.width:
        raise KernelArgumentError(
            f"{where} must have a last axis of length {vt.width} (one {vt.name} per row, "
            f"e.g. {example}), got shape {tuple(shape)}; reshape it with "
            f".reshape(-1, {vt.width})")
    handle = info.handle
    align = vt.dtype.itemsize * vt.width
    if isinstance(handle, np.ndarray) and handle.size and handle.ctypes.data % align:
        raise KernelArgumentError(
            f"{where}: its data is not aligned to {align} bytes, as a {vt.name} must be; "
            f"pass a copy (numpy.ascontiguousarray(...) allocates an aligned one)")


def helper_word(helpers: list[Token], n: int) -> Any:
    """A vector type name in helper code: ``pk_make_<type>`` where it is a constructor call
    (as :func:`lower_word`, without the argument count check: the compiler makes it)."""

    t = helpers[n]
    j = next_significant(helpers, n + 1)
    if t.kind == "id" and j < len(helpers) and helpers[j].is_punct("("):
        return Gen(f"pk_make_{t.text}", t)
    return t


def cast_literal(code: list[Token]) -> tuple[Token, int] | None:
    """The first OpenCL vector literal in significant tokens, ``(float4)(1, 2, 3, 4)``:
    a cast to a vector type followed by a parenthesised list with a top-level comma, as
    (its type's token, the number of values), or None. In C++ (CUDA, Metal, the native
    path) the list is the comma operator (Metal builds it, every component the last value)."""
    for n in range(len(code) - 3):
        if not (code[n].is_punct("(") and code[n + 1].kind == "id"
                and code[n + 1].text in VECTOR_TYPES and code[n + 2].is_punct(")")
                and code[n + 3].is_punct("(")):
            continue
        if n > 0 and code[n - 1].kind == "id" and code[n - 1].text not in (
                "return", "case", "else", "do"):
            continue  # a call, sizeof(float4)(...) aside
        depth, values = 0, 1
        for t in code[n + 3:]:
            if t.is_punct("(") or t.is_punct("[") or t.is_punct("{"):
                depth += 1
            elif t.is_punct(")") or t.is_punct("]") or t.is_punct("}"):
                depth -= 1
                if depth == 0:
                    break
            elif t.is_punct(",") and depth == 1:
                values += 1
        if values > 1:
            return code[n + 1], values
    return None
