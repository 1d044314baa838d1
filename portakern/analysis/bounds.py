"""Array parameters that a too-large ndrange provably overruns, read off the kernel body.

Without debug mode a subscript is not checked at run time, so a launch whose ndrange
is larger than an array would write past its end. One case is certain before the
launch: every work-item reaches ``a[i]``, with ``i`` the global linear index, so the
work-item ``i == a.size`` accesses past the end. :func:`overrun_params` finds the
array parameters of that shape (the fact, computed once per parsed kernel) and
:func:`check_ndrange` refuses such a launch with :class:`~portakern.errors.NDRangeError`.

The analysis reads the body's statement tree (:func:`portakern.syntax.tree.parse_body`: which
statements every work-item reaches) and its tokens (each use of a name). It is
conservative: a false refusal would stop a correct program, a miss only leaves the
launch to the kernel (or to debug mode). A parameter counts only if

* every use of it is a subscript whose index is exactly the global linear index:
  ``@index(Global, Linear)``, a variable ``[const] long i = @index(Global, Linear);``
  declared at the top of the body and never assigned, incremented, redeclared,
  passed to a call or had its address taken, or the ``NTuple`` indices in order
  (``auto [i, j] = @index(Global, NTuple); a[i * @ndrange(1) + j]``);
* at least one of those subscripts is unconditional: in a declaration or expression
  statement at the top of the body (not inside a block, an ``if``/``else``, a loop or
  a ``switch``), with no ``?:``, ``&&``, ``||`` or ``sizeof`` in it, after no
  ``return``;

and the kernel is not ``@kernel(unsafe_indices)``, has no preprocessor line or
``goto`` in its body, uses no macro of the source that could hide a condition or a
``return`` (``#define GUARD if (i >= n) return;``), and the source has no ``#include``
(whose macros cannot be seen). ``if (i < n) y[i] = ...`` is never refused: that
subscript is under a guard.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

from ..errors import NDRangeError
from ..syntax.language import KernelDef, Module, Token
from .body_reach import (
    CONTROL,
    EXITS,
    GIVE_UP,
    INDEX_TYPES,
    PARTIAL,
    body_tokens,
    closing,
    hiding_macros,
    statements,
    strip_parens,
    texts,
    untouched,
)

__all__ = ["check_ndrange", "checked", "overrun_params"]

_LINEAR = ("@index", "(", "Global", ",", "Linear", ")")
_NTUPLE = ("@index", "(", "Global", ",", "NTuple", ")")
def _declared_indices(sig: list[Token], stmts: list[tuple[int, int, bool]]
                      ) -> tuple[dict[str, int], list[tuple[int, list[str]]],
                                 dict[str, tuple[int, str]]]:
    """Linear index variables and ``@ndrange(d)`` copies ``{name: (position, d)}`` declared
    at the top, and NTuple unpackings ``(position, names)``."""
    linear: dict[str, int] = {}
    tuples: list[tuple[int, list[str]]] = []
    extents: dict[str, tuple[int, str]] = {}
    for start, end, top in stmts:
        if not top:
            continue
        s = sig[start:end]
        words = texts(s)
        if len(words) >= 7 and words[-5:] == ("=", "@ndrange", "(", words[-2], ")") \
                and s[-6].kind == "id":
            head = [w for w in words[:-6] if w != "const"]
            if len(head) == 1 and head[0] in INDEX_TYPES and words[-2] in ("1", "2"):
                extents[words[-6]] = (start + len(words) - 6, words[-2])
        elif len(words) >= 3 + len(_LINEAR) and words[-len(_LINEAR):] == _LINEAR \
                and words[-len(_LINEAR) - 1] == "=" and s[-len(_LINEAR) - 2].kind == "id":
            head = [w for w in words[:-len(_LINEAR) - 2] if w != "const"]
            if len(head) == 1 and head[0] in INDEX_TYPES:
                linear[words[-len(_LINEAR) - 2]] = start + len(words) - len(_LINEAR) - 2
        elif words[-len(_NTUPLE):] == _NTUPLE and "[" in words:
            k = words.index("[")
            head = [w for w in words[:k] if w != "const"]
            names = list(words[k + 1:-len(_NTUPLE) - 2:2])
            if head == ["auto"] and words[-len(_NTUPLE) - 2:-len(_NTUPLE)] == ("]", "=") \
                    and all(n != "," for n in names) \
                    and all(w == "," for w in words[k + 2:-len(_NTUPLE) - 2:2]):
                tuples.append((start + k + 1, names))
    return linear, tuples, extents


def _index_text(toks: list[Token], copies: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """A subscript's text, outer parentheses gone and ``@ndrange(d)`` copies spelled out."""
    out: list[str] = []
    for t in strip_parens(toks):
        out.extend(copies.get(t.text, (t.text,)) if t.kind == "id" else (t.text,))
    return tuple(out)


def _linear_forms(linear: list[str], tuples: list[list[str]]) -> set[tuple[str, ...]]:
    """Every index text that is exactly the global linear index."""
    forms = {_LINEAR} | {(v,) for v in linear}
    nd = ("@ndrange", "(", "1", ")")
    nd2 = ("@ndrange", "(", "2", ")")
    for names in tuples:
        if len(names) == 1:
            forms.add((names[0],))
        elif len(names) == 2:
            i, j = names
            forms.add((i, "*", *nd, "+", j))
            forms.add((j, "+", i, "*", *nd))
        elif len(names) == 3:
            i, j, k = names
            forms.add(("(", i, "*", *nd, "+", j, ")", "*", *nd2, "+", k))
            forms.add((i, "*", *nd, "*", *nd2, "+", j, "*", *nd2, "+", k))
    return forms


def _analyse(module: Module, kdef: KernelDef) -> frozenset[str]:
    hiding = hiding_macros(module.helpers)
    if kdef.unsafe_indices or hiding is None:
        return frozenset()
    sig = body_tokens(kdef.body)
    if any(t.kind == "pp" or (t.kind == "id" and (t.text in GIVE_UP or t.text in hiding))
           for t in sig):
        return frozenset()
    stmts = statements(module, kdef, sig)
    if stmts is None:
        return frozenset()
    linear, tuples, extents = _declared_indices(sig, stmts)
    copies = {v: ("@ndrange", "(", d, ")") for v, (at, d) in extents.items()
              if untouched(sig, v, {at})}
    linear_ok = [v for v, at in linear.items() if untouched(sig, v, {at})]
    tuples_ok = [names for at, names in tuples
                 if len(set(names)) == len(names)
                 and all(untouched(sig, n, {at + 2 * m}) for m, n in enumerate(names))]
    forms = _linear_forms(linear_ok, tuples_ok)
    arrays = {p.name for p in kdef.params if p.pointer}
    bad: set[str] = set()
    hit: set[str] = set()
    exited = False
    for start, end, top in stmts:
        words = texts(sig[start:end])
        unconditional = (top and not exited and bool(words) and words[0] not in CONTROL
                         and not PARTIAL.intersection(words))
        j = start
        while j < end:
            t = sig[j]
            if t.kind == "id" and t.text in EXITS:
                exited = True
            if t.kind == "id" and t.text in arrays:
                prev = sig[j - 1] if j else None
                if prev is not None and prev.kind == "punct" and prev.text in (".", "->", "::"):
                    j += 1
                    continue
                close = closing(sig, j + 1) if j + 1 < end and sig[j + 1].is_punct("[") \
                    else None
                if close is None or close >= end or (prev is not None and prev.text == "&") \
                        or _index_text(sig[j + 2:close], copies) not in forms:
                    bad.add(t.text)
                elif unconditional:
                    hit.add(t.text)
            j += 1
    return frozenset(hit - bad)


#: id(KernelDef) -> (weak reference to it, its fact).
_FACTS: dict[int, tuple[Any, frozenset[str]]] = {}


def overrun_params(module: Module, kdef: KernelDef) -> frozenset[str]:
    """Names of the array parameters every work-item subscripts by its linear index.

    ``kdef`` is one kernel of the parsed ``module`` (whose helpers may define macros).
    A launch whose ndrange has more work-items than such an array has elements
    accesses past its end. Computed once per parsed kernel.
    """
    key = id(kdef)
    hit = _FACTS.get(key)
    if hit is not None and hit[0]() is kdef:
        return hit[1]
    fact = _analyse(module, kdef)
    _FACTS[key] = (weakref.ref(kdef, lambda _, key=key: _FACTS.pop(key, None)), fact)
    return fact


def _elements(a: Any) -> int | None:
    shape = getattr(a, "shape", None)
    try:
        return math.prod(shape) if shape is not None else None
    except TypeError:
        return None


def check_ndrange(kdef: KernelDef, names: frozenset[str], args: tuple,
                  ndrange: tuple[int, ...]) -> None:
    """Refuse a launch of ``ndrange`` that overruns one of the arrays ``names``.

    Raises
    ------
    NDRangeError
        Naming the kernel, the parameter, its element count and the ndrange.
    """
    items = math.prod(ndrange)
    for p, a in zip(kdef.params, args, strict=False):
        if p.name not in names:
            continue
        size = _elements(a)
        if size is not None and items > size:
            over = (f"work-item {size}" if items - 1 == size
                    else f"work-items {size} to {items - 1}")
            raise NDRangeError(
                f"kernel {kdef.name!r}: ndrange {ndrange} has {items} work-items, but "
                f"argument {p.index} {p.name!r} ({p.describe()}) has {size} element"
                f"{'' if size == 1 else 's'}, and every work-item accesses "
                f"{p.name}[@index(Global, Linear)]: {over} would access memory past its "
                f"end. Pass an ndrange of at most {size} work-items "
                f"(e.g. ndrange={p.name}.shape), a larger array, or guard the access "
                f"(if (i < n) ...)")


def checked(parsed: tuple[Module, KernelDef], seen: tuple, args: tuple,
            ndrange: tuple[int, ...], memo: Any) -> tuple:
    """A launcher's bounds state after checking a launch (see ``Launcher.__call__``).

    ``parsed`` is the launched ``(module, kernel)``; ``seen`` is ``(kernel, fact,
    memo, ndrange)`` as last returned: the arrays the argument memo ``memo`` describes
    (same shapes) were checked against ``ndrange``. ``memo`` is None when the
    arguments were just checked in full (the next launch with a memo checks once
    more, then the state holds).
    """
    kdef = parsed[1]
    fact = seen[1] if seen[0] is kdef else overrun_params(*parsed)
    if fact:
        check_ndrange(kdef, fact, args, ndrange)
    return (kdef, fact, memo, ndrange if memo is not None else None)
