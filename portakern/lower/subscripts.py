"""Debug mode's lowering: every subscript of an array parameter bounds-checked.

:func:`check_subscripts` rewrites the lowered parts of a debug-mode kernel
(``debug=True``, docs/debugging.md); :data:`DEBUG_RECORD` is the hidden parameter
that carries the fault record and the arrays' extents (layout in
:mod:`portakern.launch.debug`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..syntax.language import (
    KernelDef,
    Token,
    significant,
)
from ..syntax.parts import SUBGROUP as _SUBGROUP
from ..syntax.parts import Call, Gen
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items

__all__ = ["DEBUG_RECORD", "check_subscripts", "localmem_names"]


#: The hidden last parameter of a debug-mode kernel: an int64 array holding the fault
#: record, a spare slot and each array parameter's extent (layout in portakern.launch.debug).
DEBUG_RECORD = "pk_dbg"


def check_subscripts(parts: list, arrays: set[str], ndim: int, *,
                     inside_item: bool = True, local: dict[str, list[list]] | None = None,
                     ) -> list:
    """``parts`` with each ``p[expr]`` of an array parameter ``p`` bounds-checked.

    ``p[expr]`` becomes a ``checked(p, expr, line, g0, g1, g2)`` primitive (the
    target's accessor returns the element's address, or a spare slot after
    recording the fault); ``g0..g2`` are the work-item's global index per ndrange
    axis. ``inside_item`` says whether the parts start inside a work-item: in a
    lockstep lowering, code outside ``items_begin``/``items_end`` runs once per
    group and has no work-item (it reports -1). Pointer arithmetic (``*(p + i)``)
    and a member named like a parameter (``s.p[i]``) are left as written.

    ``local`` maps each ``@localmem`` array to its sizes: each subscript ``[e]`` of
    dimension ``d`` becomes ``[checked_local(e, size, code, line, g0, g1, g2)]``,
    which records a fault and gives index 0 (an element of the array) when ``e`` is
    out of range; ``code`` is ``-1 - (16 * k + d)`` for the ``k``-th array.
    """
    local = local or {}
    names = list(local)
    out: list = []
    depth = 0 if inside_item else -1  # >= 0: inside a work-item loop
    n = 0
    while n < len(parts):
        it = parts[n]
        if isinstance(it, Call) and it.macro == "items_begin":
            depth += 1
        elif isinstance(it, Call) and it.macro == "items_end":
            depth -= 1
        elif isinstance(it, Call) and it.macro == _SUBGROUP:
            # The value and lane arguments of a subgroup collective are user code.
            it = Call(it.macro, tuple(
                check_subscripts(a, arrays, ndim, inside_item=depth >= 0, local=local)
                if k in (3, 4) else a for k, a in enumerate(it.args)), it.line, it.col)
        if isinstance(it, Token) and it.kind == "id" and it.text in local:
            n = _check_local(parts, n, out, local[it.text], -1 - 16 * names.index(it.text),
                             _item_ids(ndim, it.line, depth >= 0),
                             lambda inner, inside=depth >= 0: check_subscripts(
                                 inner, arrays, ndim, inside_item=inside, local=local))
            continue
        if isinstance(it, Token) and it.kind == "id" and it.text in arrays:
            prev = next((o for o in reversed(out)
                         if not (isinstance(o, Token) and o.kind in ("ws", "comment"))), None)
            j = n + 1
            while j < len(parts) and isinstance(parts[j], Token) \
                    and parts[j].kind in ("ws", "comment"):
                j += 1
            if j < len(parts) and _is_tok(parts[j], "[") and not _is_tok(prev, ".", "->"):
                close = _match_items(parts, j)
                inner = check_subscripts(parts[j + 1:close], arrays, ndim,
                                         inside_item=depth >= 0, local=local)
                ids = _item_ids(ndim, it.line, depth >= 0)
                out.append(Call("checked", (it.text, inner, it.line, *ids), it.line, it.col))
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def localmem_names(kernel: KernelDef) -> list[str]:
    """The kernel's ``@localmem`` arrays, in the order lowering meets them."""
    names = []
    sig = significant(kernel.body)
    for i, t in enumerate(sig):
        if t.kind == "at" and t.text == "@localmem":
            bracket = next((j for j in range(i + 1, len(sig)) if sig[j].is_punct("[")), None)
            if bracket is not None:
                names.append(sig[bracket - 1].text)
    return names


def _item_ids(ndim: int, line: int, inside: bool) -> list[list]:
    """The work-item's global index per ndrange axis (three part lists), or -1s outside one."""
    if not inside:
        return [[Gen("-1")]] * 3
    ids: list[list] = [[Call("global_id", (ndim - 1 - d,), line)] for d in range(ndim)]
    return ids + [[Gen("0")]] * (3 - ndim)


def _check_local(parts: list, n: int, out: list, dims: list[list], code: int,
                 ids: list[list], inner_of: Callable[[list], list]) -> int:
    """Append ``parts[n]`` (a @localmem array) and its checked subscripts; return the next index."""
    name = parts[n]
    out.append(name)
    n += 1
    for d, size in enumerate(dims):
        j = n
        while j < len(parts) and isinstance(parts[j], Token) \
                and parts[j].kind in ("ws", "comment"):
            j += 1
        if j >= len(parts) or not _is_tok(parts[j], "["):
            break
        close = _match_items(parts, j)
        inner = inner_of(parts[j + 1:close])
        out += parts[n:j + 1]
        out.append(Call("checked_local", (inner, size, code - d, name.line, *ids), name.line))
        out.append(parts[close])
        n = close + 1
    return n
