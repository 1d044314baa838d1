"""Kernel shapes the native C++ path runs in another form (docs/cpu.md, issue 27).

Two rewrites of a barrier-free, one-dimensional kernel's lowered body, for templates
whose macros say ``native_shapes`` (the ``c`` target); each keeps the kernel's meaning
and is chosen per launch by ``pk_launch``:

* **Wide 32-bit indices.** ``uint tid = @index(Global, Linear);`` (or ``int``), never
  assigned again and used only as a whole subscript (``y[tid]``), is declared
  ``pk_idx<PK_W, unsigned int>::type``: ``long long`` when the launch's items all fit the
  32-bit type (the values are the same), the declared type otherwise. g++ cannot prove
  that a 32-bit index does not wrap between consecutive work-items, so it gathers.
* **Grid-stride loops.** A body that is exactly
  ``for (T i = @index(Global, Linear); i < BOUND; i += @ndrange()) { ... }``, ``BOUND``
  made of scalar parameters and literals that the loop does not name, its body free of
  ``@`` constructs, ``break``, ``return`` and ``goto`` and never assigning ``i``, covers
  each ``i`` in ``[0, BOUND)`` once, in work-items that are unordered anyway. Its
  iterations are independent: every array parameter it may write is subscripted by
  exactly ``[i]`` and no scalar parameter is assigned (else the loop is left as written). With
  ``PK_F`` the loop's body runs once per item, for its own ``i``, and the launch runs
  ``BOUND`` items (where each index fits ``i``'s type): consecutive items are consecutive
  elements, which vectorise, where each item's strided walk through the whole array did
  not. The once form has no ``i < BOUND`` test: the item loop ends at ``BOUND``, and a
  test per item made the store conditional, which g++ 12 left scalar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..syntax.language import Token
from ..syntax.parts import Call, Gen

__all__ = ["NativeShapes", "native_shapes"]

#: A 32-bit index type: the most items whose linear indices it holds.
_WIDE_LIMITS = {"uint": 1 << 32, "int": 1 << 31}
#: Integer types a grid-stride loop's index and bound may have (a float bound would
#: compare otherwise than its conversion to an item count).
_INTEGERS = frozenset({"int", "uint", "long", "ulong", "short", "ushort", "char", "uchar",
                       "size_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t",
                       "uint32_t", "int64_t", "uint64_t"})
_INT_LITERAL = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")


@dataclass(frozen=True)
class NativeShapes:
    """What :func:`native_shapes` found: ``wide`` the most items for the wide form (0:
    none), ``flat_bound`` the grid-stride loop's bound in ``pk_launch``'s names and
    ``flat_type`` its index's C type (the flat form runs where the items' indices fit it)."""

    wide: int = 0
    flat_bound: str = ""
    flat_type: str = ""

    @property
    def any(self) -> bool:
        return bool(self.wide or self.flat_bound)


def _sig(parts: list, i: int) -> int:
    """The index of the first part at or after ``i`` that is not whitespace."""
    while i < len(parts) and isinstance(parts[i], Token) and parts[i].kind in ("ws",
                                                                             "comment"):
        i += 1
    return i


def _is(part: object, text: str) -> bool:
    return isinstance(part, Token) and part.text == text


def _global_linear(parts: list, i: int) -> int:
    """The end of ``(global_id(0))`` at ``i`` (1-D ``@index(Global, Linear)``), or -1."""
    if (i + 2 < len(parts) and isinstance(parts[i], Gen) and parts[i].text == "("
            and isinstance(parts[i + 1], Call) and parts[i + 1].macro == "global_id"
            and parts[i + 1].args == (0,) and isinstance(parts[i + 2], Gen)
            and parts[i + 2].text == ")"):
        return i + 3
    return -1


def _subscript_only(parts: list, name: str, skip: int) -> bool:
    """Whether every use of ``name`` but the one at ``skip`` is a whole subscript."""
    for k, p in enumerate(parts):
        if k == skip or not (isinstance(p, Token) and p.kind == "id" and p.text == name):
            continue
        before = k - 1
        while before >= 0 and isinstance(parts[before], Token) and parts[before].kind == "ws":
            before -= 1
        after = _sig(parts, k + 1)
        if before < 0 or not _is(parts[before], "[") or after >= len(parts) or not _is(
                parts[after], "]"):
            return False
        prev = before - 1
        while prev >= 0 and isinstance(parts[prev], Token) and parts[prev].kind == "ws":
            prev -= 1
        if prev < 0 or not (isinstance(parts[prev], Token) and parts[prev].kind == "id"):
            return False  # x[tid] on a named array only (not (p + 1)[tid])
    return True


def _widen(parts: list, type_names: dict[str, str]) -> tuple[list, int]:
    out, most = list(parts), 0
    for k, p in enumerate(parts):
        if not (isinstance(p, Token) and p.kind == "id" and p.text in _WIDE_LIMITS):
            continue
        before = k - 1
        while before >= 0 and isinstance(parts[before], Token) and parts[before].kind == "ws":
            before -= 1
        if before >= 0 and isinstance(parts[before], Token) and parts[before].text in (
                "unsigned", "signed", "long", "short"):
            continue  # `unsigned int tid`: another type than the token says
        n = _sig(parts, k + 1)
        if n >= len(parts) or not (isinstance(parts[n], Token) and parts[n].kind == "id"):
            continue
        eq = _sig(parts, n + 1)
        if eq >= len(parts) or not _is(parts[eq], "="):
            continue
        end = _global_linear(parts, _sig(parts, eq + 1))
        if end < 0 or not _is(parts[min(_sig(parts, end), len(parts) - 1)], ";"):
            continue
        if not _subscript_only(parts, parts[n].text, n):
            continue
        ctype = type_names.get(p.text, p.text)
        out[k] = Gen(f"typename pk_idx<PK_W, {ctype}>::type")
        limit = _WIDE_LIMITS[p.text]
        most = limit if not most else min(most, limit)
    return out, most


def _grid_stride(parts: list, params: list) -> tuple[list, str, str]:
    """The body with its grid-stride loop's once form added, the bound, the index type."""
    scalars = {p.name: k for k, p in enumerate(params)
               if not p.pointer and p.type in _INTEGERS}
    # parts: mask prologue ... Gen('if (pk_active) {') BODY Gen('}'), or BODY unmasked
    start = next((k for k, p in enumerate(parts)
                  if isinstance(p, Gen) and p.text == "if (pk_active) {"), -1)
    if start >= 0 and not (isinstance(parts[-1], Gen) and parts[-1].text == "}"):
        return parts, "", ""
    end = len(parts) - 1 if start >= 0 else len(parts)  # masked, or unmasked (no if)
    k = for_ = _sig(parts, start + 1)
    if not _is(parts[k], "for"):
        return parts, "", ""
    k = _sig(parts, k + 1)
    if not _is(parts[k], "("):
        return parts, "", ""
    k = init = _sig(parts, k + 1)
    if not (isinstance(parts[k], Token) and parts[k].text in _INTEGERS):
        return parts, "", ""
    k = _sig(parts, k + 1)
    var = parts[k]
    if not (isinstance(var, Token) and var.kind == "id"):
        return parts, "", ""
    k = _sig(parts, k + 1)
    if not _is(parts[k], "="):
        return parts, "", ""
    k = _global_linear(parts, _sig(parts, k + 1))
    if k < 0:
        return parts, "", ""
    k = init_end = _sig(parts, k)
    if not _is(parts[k], ";"):
        return parts, "", ""
    k = _sig(parts, k + 1)
    if not _is(parts[k], var.text):
        return parts, "", ""
    k = _sig(parts, k + 1)
    if not _is(parts[k], "<"):
        return parts, "", ""
    bound, k = [], k + 1
    b0 = k
    while k < len(parts) and not _is(parts[k], ";"):
        p = parts[k]
        if not isinstance(p, Token):
            return parts, "", ""
        if p.kind == "id":
            if p.text not in scalars:
                return parts, "", ""
            bound.append(f"pk_a{scalars[p.text]}")
        elif p.kind == "ws" or p.text in ("+", "-", "*", "/", "(", ")") or (
                p.kind == "num" and _INT_LITERAL.fullmatch(p.text)):
            bound.append(p.text)
        else:
            return parts, "", ""
        k += 1
    b1 = k
    bound_names = {p.text for p in parts[b0:b1] if isinstance(p, Token) and p.kind == "id"}
    inc = _sig(parts, k + 1)
    k = _sig(parts, inc + 1) if _is(parts[inc], var.text) else -1
    if k < 0 or not (_is(parts[k], "+") and _is(parts[k + 1], "=")):
        return parts, "", ""
    step = _sig(parts, k + 2)
    if not (isinstance(parts[step], Gen) and parts[step].text == "("
            and isinstance(parts[step + 1], Call) and parts[step + 1].macro == "ndrange"
            and parts[step + 1].args == (0,) and isinstance(parts[step + 2], Gen)
            and parts[step + 2].text == ")"):
        return parts, "", ""
    close = _sig(parts, step + 3)
    if not _is(parts[close], ")"):
        return parts, "", ""
    open_ = _sig(parts, close + 1)
    if not _is(parts[open_], "{"):
        return parts, "", ""
    written = {p.name for p in params if p.writable}
    values = {p.name for p in params if not p.pointer}
    depth, k = 1, open_ + 1
    while k < len(parts) and depth:
        p = parts[k]
        if isinstance(p, Call) or (isinstance(p, Gen) and "pk_" in p.text):
            return parts, "", ""
        if isinstance(p, Token):
            if p.text in ("break", "return", "goto") or p.text in bound_names:
                return parts, "", ""
            depth += p.text == "{"
            depth -= p.text == "}"
            if p.text in (var.text, *values) and not _read_only(parts, k):
                return parts, "", ""  # i, or a scalar parameter carried between iterations
            if p.kind == "id" and p.text in written and not _at_index(parts, k, var.text):
                return parts, "", ""  # y[i - 1] may be another iteration's element
        k += 1
    if depth or _sig(parts, k) != end:
        return parts, "", ""  # more than the loop in the kernel
    text = "".join(bound).strip()
    # With PK_F: the loop's body once, for i = the item's index; in a do-while(0), so
    # that a `continue` still ends the iteration. No `i < BOUND` test: the launch runs
    # BOUND items, and only where each index fits i's type (pk_fits), so every item's i
    # is below BOUND. A test per item made the item loop's store conditional, and g++
    # did not vectorise it in the parallel group loop (docs/cpu.md).
    once = [Gen("if (PK_F) { "), *parts[init:init_end + 1], Gen(" do "), *parts[open_:k],
            Gen(" while (0); } else ")]
    new = [*parts[:for_], *once, *parts[for_:]]
    return new, text, parts[init].text


def _at_index(parts: list, k: int, var: str) -> bool:
    """Whether the array named at ``k`` is subscripted by exactly ``[var]``: an iteration
    then touches only its own element of a written array, so iterations are independent."""
    o = _sig(parts, k + 1)
    v = _sig(parts, o + 1) if o < len(parts) and _is(parts[o], "[") else len(parts)
    c = _sig(parts, v + 1) if v < len(parts) and _is(parts[v], var) else len(parts)
    return c < len(parts) and _is(parts[c], "]")


def _read_only(parts: list, k: int) -> bool:
    """Whether the id at ``k`` is read, not assigned, incremented or addressed."""
    after = _sig(parts, k + 1)
    nxt = parts[after] if after < len(parts) else None
    if isinstance(nxt, Token) and nxt.kind == "punct":
        two = nxt.text + (parts[after + 1].text if after + 1 < len(parts)
                          and isinstance(parts[after + 1], Token) else "")
        if nxt.text in ("=", "++", "--") and two != "==" or two in (
                "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "++", "--"):
            return False
        if nxt.text in ("<<", ">>") and after + 1 < len(parts) and _is(parts[after + 1], "="):
            return False
    before = k - 1
    while before >= 0 and isinstance(parts[before], Token) and parts[before].kind == "ws":
        before -= 1
    return not (before >= 0 and isinstance(parts[before], Token)
                and parts[before].text in ("&", "++", "--"))


def native_shapes(body: list, params: list, ndim: int, type_names: dict[str, str],
                  ) -> tuple[list, NativeShapes]:
    """``body`` with the rewrites above applied, and what was found."""
    if ndim != 1:
        return body, NativeShapes()
    try:
        body, bound, index = _grid_stride(body, params)
    except IndexError:  # the kernel ends before the pattern does
        bound, index = "", ""

    body, wide = _widen(body, type_names)
    return body, NativeShapes(wide, bound, type_names.get(index, index) if bound else "")
