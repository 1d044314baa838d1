"""Subscripts: N-d array parameters, and debug mode's bounds checks.

:func:`lower_nd` lowers ``x[i, j]`` on an N-d array parameter ``T x[:, :]`` to a flat
subscript of its base pointer with the strides that travel with the array
(``x[pk_x_o + (i) * pk_x_s0 + (j) * pk_x_s1]``, the hidden scalars of
:func:`portakern.syntax.language.hidden_params`); :func:`lower_size` lowers
``@size(x, d)`` and ``@length(x)``.

:func:`check_subscripts` rewrites the lowered parts of a debug-mode kernel
(``debug=True``, docs/debugging.md); :data:`DEBUG_RECORD` is the hidden parameter
that carries the fault record and the arrays' extents (layout in
:mod:`portakern.launch.debug`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..syntax.language import (
    KernelDef,
    Token,
    match_bracket,
    next_significant,
    significant,
    split_commas,
)
from ..syntax.parts import SUBGROUP as _SUBGROUP
from ..syntax.parts import Call, Gen, item_step
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items

__all__ = ["DEBUG_RECORD", "ND_CODE", "AxisGen", "check_subscripts", "item_ids", "localmem_names",
           "lower_nd", "lower_size"]

#: Debug mode's fault code for axis ``d`` of the N-d array argument ``k``:
#: ``ND_CODE - (16 * k + d)`` (``@localmem`` arrays use -1 - (16 * k + d)).
ND_CODE = -(1 << 24)


@dataclass(frozen=True)
class AxisGen(Gen):
    """The text around one axis's index of an N-d subscript (``(`` before, ``) * s`` after).

    It renders as its text; debug mode (:func:`check_subscripts`) finds the index
    between an opening and its closing and checks it against the axis's extent.
    """

    array: str = ""
    axis: int = 0
    argument: int = 0
    closing: bool = False
    line: int = 0


def lower_nd(lw: Any, toks: list[Token], i: int, out: list) -> int:
    """Lower ``x[i, j]`` at ``toks[i]`` (an N-d array parameter ``x``); return the next index.

    ``lw`` is the lowerer (its ``nd`` parameters, ``smap`` and ``lower_tokens`` for the
    indices). A bare use of ``x`` (a call argument, pointer arithmetic) is refused: the
    strides would not travel with it.
    """
    t = toks[i]
    p = lw.nd[t.text]
    prev = next((o for o in reversed(out)
                 if not (isinstance(o, Token) and o.kind in ("ws", "comment"))), None)
    if _is_tok(prev, ".", "->"):
        out.append(t)  # a member named like the parameter
        return i + 1
    j = next_significant(toks, i + 1)
    form = f"{t.text}[{', '.join('ijkl'[:p.axes])}]"
    if j >= len(toks) or not toks[j].is_punct("["):
        raise lw.smap.error_at(
            f"{t.text!r} is an N-d array ({p.describe()} {t.text}): use it subscripted, "
            f"{form}, or measured, @size({t.text}, d) and @length({t.text}); its strides "
            f"do not travel with a bare pointer (to pass it to a helper, pass the element "
            f"or declare the parameter flat, '{p.type}* {t.text}')", t)
    close = match_bracket(toks, j, lw.smap)
    inner = toks[j + 1:close]
    groups = split_commas(inner)
    if len(groups) != p.axes or any(not significant(g) for g in groups):
        given = 0 if groups == [[]] else len(groups)
        raise lw.smap.error_at(
            f"{t.text!r} has {p.axes} ax{'is' if p.axes == 1 else 'es'} "
            f"({p.describe()}), so it takes {p.axes} ind{'ex' if p.axes == 1 else 'ices'}: "
            f"{form}; got {given}", toks[j])
    out += toks[i:j + 1]
    out.append(Gen(f"pk_{t.text}_o"))
    # Split at the top-level commas of the token list (split_commas drops the commas).
    starts: list[int] = []
    depth = 0
    start = j + 1
    for n in range(j + 1, close):
        s = toks[n]
        if s.kind == "punct" and s.text in "([{":
            depth += 1
        elif s.kind == "punct" and s.text in ")]}":
            depth -= 1
        elif depth == 0 and s.is_punct(","):
            starts.append(start)
            start = n + 1
    starts.append(start)
    ends = [s - 1 for s in starts[1:]] + [close]
    for d, (a, b) in enumerate(zip(starts, ends, strict=True)):
        out.append(AxisGen(" + (", None, t.text, d, p.index, False, t.line))
        out += lw.lower_tokens(toks[a:b])
        out.append(AxisGen(f") * pk_{t.text}_s{d}", None, t.text, d, p.index, True, t.line))
    out.append(toks[close])
    return close + 1


def lower_size(lw: Any, toks: list[Token], i: int) -> tuple[list, int]:
    """``@size(x, d)`` -> ``pk_x_n{d}``; ``@length(x)`` -> the product of the extents."""
    t = toks[i]
    args, close = lw.args_of(toks, i)
    form = "@size(x, d) (d an integer literal) or @length(x), x an N-d array parameter"
    want = 2 if t.text == "@size" else 1
    if len(args) != want or len(args[0]) != 1 or args[0][0].kind != "id":
        raise lw.smap.error_at(f"{t.text} takes {form}", t)
    name = args[0][0]
    p = lw.nd.get(name.text)
    if p is None:
        flat = next((q for q in lw.k.params if q.name == name.text and q.pointer), None)
        hint = (f"; declare it '{'const ' if flat.const else ''}{flat.type} {name.text}[:]' "
                f"(or one ':' per axis) to know its shape" if flat is not None else "")
        raise lw.smap.error_at(
            f"{t.text}({name.text}...) needs an N-d array parameter (T x[:, :]), and "
            f"{name.text!r} is not one{hint}", name)
    if t.text == "@length":
        text = " * ".join(f"pk_{name.text}_n{d}" for d in range(p.axes))
        return [Gen(f"({text})" if p.axes > 1 else text)], close + 1
    axis = args[1]
    if len(axis) != 1 or axis[0].kind != "num" or not axis[0].text.isdigit():
        raise lw.smap.error_at(f"@size takes {form}", axis[0] if axis else t)
    d = int(axis[0].text)
    if d >= p.axes:
        raise lw.smap.error_at(
            f"@size({name.text}, {d}): {name.text!r} has {p.axes} "
            f"ax{'is' if p.axes == 1 else 'es'} (0 to {p.axes - 1})", axis[0])
    return [Gen(f"pk_{name.text}_n{d}")], close + 1


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
        step = item_step(it)
        depth += step
        if not step and isinstance(it, Call) and it.macro == _SUBGROUP:
            # The value and lane arguments of a subgroup collective are user code.
            it = Call(it.macro, tuple(
                check_subscripts(a, arrays, ndim, inside_item=depth >= 0, local=local)
                if k in (3, 4) else a for k, a in enumerate(it.args)), it.line, it.col)
        if isinstance(it, AxisGen):
            out += _checked_axis(it, item_ids(ndim, it.line, depth >= 0))
            n += 1
            continue
        if isinstance(it, Token) and it.kind == "id" and it.text in local:
            n = _check_local(parts, n, out, local[it.text], -1 - 16 * names.index(it.text),
                             item_ids(ndim, it.line, depth >= 0),
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
                ids = item_ids(ndim, it.line, depth >= 0)
                out.append(Call("checked", (it.text, inner, it.line, *ids), it.line, it.col))
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def _checked_axis(part: AxisGen, ids: list[list]) -> list:
    """Debug mode's text for one side of an N-d axis index: the index goes through
    ``pk_dbg_local`` (the target's checked index), against the axis's extent."""
    if not part.closing:
        return [Gen(" + pk_dbg_local((")]
    code = ND_CODE - (16 * part.argument + part.axis)
    out: list = [Gen(f"), pk_{part.array}_n{part.axis}, pk_dbg, {code}, {part.line}")]
    for g in ids:
        out += [Gen(", "), *g]
    return out + [Gen(f") * pk_{part.array}_s{part.axis}")]


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


def item_ids(ndim: int, line: int, inside: bool) -> list[list]:
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
