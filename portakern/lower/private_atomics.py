"""Thread-private sums for a lockstep kernel's global ``@atomic_add`` / ``@atomic_sub``.

On the native path a whole workgroup runs on one OpenMP thread (the lockstep
lowering), and a thread runs many groups. A kernel that adds a group's partial
results to global memory with one atomic per element (the histogram example: clear
``@localmem`` bins, count into them, add each non-zero bin to ``counts``) pays one
contended atomic per element *per group*; with groups of 4096 items and 256 bins that
is one global atomic per 16 items. Where it provably changes nothing, each thread
instead adds into a private copy of those elements and adds its copy to memory once,
when it has run all its groups: the per-group cost becomes one plain add per element.

:func:`private_targets` decides, off the user's tokens, which array parameters qualify.
An array ``P`` qualifies only if

* it is a writable flat array (``T* P``, not ``const``, not N-d);
* every use of ``P`` in the kernel body is ``@atomic_add(&P[...], v)`` or
  ``@atomic_sub(&P[...], v)`` as a whole statement (the old value it returns is never
  read), so no work-item ever reads ``P`` or writes it otherwise: its final contents are
  the same whatever the order and grouping of the updates, as long as the arithmetic is
  exact. That holds for integer element types only (modular addition is associative
  and commutative), which :func:`taken` checks once the types are bound; a float
  ``P`` keeps its atomics (rounding would depend on the grouping);
* every other writable array the body names qualifies too (it could be the same
  memory as ``P``: a kernel may be passed one array twice, and a read of it would see
  the private sums missing); a ``const`` array cannot overlap a written one (the
  launcher refuses that, docs/api.md);
* ``P`` appears in no preprocessor line of the kernel, and the body has a subscript
  bound to size the private copy by (see below).

The private copy's size ``U`` is only a sizing hint, never a proof: an update whose
index falls outside ``[0, U)`` goes to memory with the atomic, as written. ``U`` is the
constant size of a ``@localmem`` array that the value reads with the same subscript
(``@atomic_add(&counts[b], local_counts[b])``), else the literal of a ``for`` condition
``b < N`` (``b <= N``) on the subscript's variable, else a literal subscript plus one.
Copies over :data:`MAX_BYTES` (per thread, on its stack) are not made.

The lowering keeps the candidates in
:attr:`portakern.lower.lowering.LoweredKernel.private_atomics`; the ``c`` rendering
publishes those it takes (integer element types) as its ``private_atomics`` fact
(``RenderedKernel.fact("private_atomics")``: ``((name, U), ...)``), and
``templates/c/module.j2`` declares a ``pk_private_sums`` per array in each OpenMP thread.
Debug mode keeps the atomics (its bounds checks see every update).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..syntax.language import KernelDef, Token
from ..types import TYPE_DTYPES

__all__ = ["MAX_BYTES", "private_targets", "taken"]

#: The most bytes of one thread's private copy of one array.
MAX_BYTES = 16384
_OPS = ("@atomic_add", "@atomic_sub")
_LITERAL = re.compile(r"(\d+)[uUlL]*\Z")
#: What may stand before a statement that is a whole ``@atomic_*(...);``.
_STATEMENT_START = frozenset({";", "{", "}"})
_HEADS = frozenset({"if", "for", "while"})


def _significant(tokens: Iterable[Token]) -> list[Token]:
    return [t for t in tokens if t.kind not in ("ws", "comment")]


def _close(toks: list[Token], i: int) -> int:
    """Index of the bracket closing ``toks[i]`` (len if unbalanced)."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return len(toks)


def _open(toks: list[Token], j: int) -> int:
    """Index of the bracket opening the one closed at ``toks[j]`` (-1 if none)."""
    depth = 0
    for i in range(j, -1, -1):
        t = toks[i]
        if t.kind == "punct" and t.text in ")]}":
            depth += 1
        elif t.kind == "punct" and t.text in "([{":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _starts_statement(toks: list[Token], i: int) -> bool:
    """Whether ``toks[i]`` begins a statement (so its value is not read)."""
    if i == 0:
        return True
    prev = toks[i - 1]
    if prev.kind == "punct" and prev.text in _STATEMENT_START:
        return True
    if prev.kind == "id" and prev.text in ("else", "do"):
        return True
    if prev.is_punct(")"):
        o = _open(toks, i - 1)
        return o > 0 and toks[o - 1].kind == "id" and toks[o - 1].text in _HEADS
    return False


def _literal(tok: Token) -> int | None:
    m = _LITERAL.match(tok.text) if tok.kind == "num" else None
    return int(m.group(1)) if m else None


def _local_sizes(toks: list[Token]) -> dict[str, int]:
    """``@localmem T name[N];`` with one literal size: name -> N."""
    out: dict[str, int] = {}
    for i, t in enumerate(toks):
        if t.kind != "at" or t.text != "@localmem":
            continue
        j = i + 1
        while j + 4 < len(toks) and not toks[j].is_punct("["):
            j += 1
        if (j + 2 < len(toks) and toks[j - 1].kind == "id" and _literal(toks[j + 1])
                is not None and toks[j + 2].is_punct("]")
                and not (j + 3 < len(toks) and toks[j + 3].is_punct("["))):
            out[toks[j - 1].text] = int(_literal(toks[j + 1]) or 0)
    return out


def _loop_bound(toks: list[Token], var: str) -> int | None:
    """The literal ``N`` of a ``for (...; var < N; ...)`` (``<= N``: N + 1)."""
    for i, t in enumerate(toks):
        if not (t.kind == "id" and t.text == "for" and i + 1 < len(toks)
                and toks[i + 1].is_punct("(")):
            continue
        head = toks[i + 2:_close(toks, i + 1)]
        semis = [n for n, h in enumerate(head) if h.is_punct(";")]
        if len(semis) != 2:
            continue
        cond = head[semis[0] + 1:semis[1]]
        if (len(cond) == 3 and cond[0].kind == "id" and cond[0].text == var
                and cond[1].kind == "punct" and cond[1].text in ("<", "<=")):
            n = _literal(cond[2])
            if n is not None:
                return n + (cond[1].text == "<=")
    return None


def _use(toks: list[Token], i: int, name: str, local: dict[str, int],
         ) -> tuple[bool, int | None]:
    """At ``toks[i]``, the identifier ``name``: whether this use may be privatised, and the
    size hint it gives."""
    # ... @atomic_add ( & name [ index ] , value ) ;
    if not (i >= 3 and toks[i - 1].is_punct("&") and toks[i - 2].is_punct("(")
            and toks[i - 3].kind == "at" and toks[i - 3].text in _OPS
            and i + 1 < len(toks) and toks[i + 1].is_punct("[")):
        return False, None
    call = i - 3
    end = _close(toks, i - 2)
    shut = _close(toks, i + 1)
    if (end >= len(toks) or shut + 1 >= end or not toks[shut + 1].is_punct(",")
            or end + 1 >= len(toks) or not toks[end + 1].is_punct(";")
            or not _starts_statement(toks, call)):
        return False, None
    index = [t.text for t in toks[i + 2:shut]]
    value = toks[shut + 2:end]
    hint = None
    if (len(value) == len(index) + 3 and value[0].kind == "id" and value[0].text in local
            and value[1].is_punct("[") and value[-1].is_punct("]")
            and [t.text for t in value[2:-1]] == index):
        hint = local[value[0].text]
    elif len(index) == 1 and toks[i + 2].kind == "id":
        hint = _loop_bound(toks, index[0])
    elif len(index) == 1 and _literal(toks[i + 2]) is not None:
        hint = int(_literal(toks[i + 2]) or 0) + 1
    return True, hint


def private_targets(kernel: KernelDef) -> tuple[tuple[str, int], ...]:
    """The writable arrays of ``kernel`` whose atomics may add into thread-private copies
    (see the module docstring), each with the copy's size: ``((name, U), ...)``, or ``()``
    when any writable array the body names does not qualify."""
    toks = _significant(kernel.body)
    local = _local_sizes(toks)
    writable = {p.name: p for p in kernel.params if p.writable}
    found: dict[str, int] = {}
    for name, p in writable.items():
        if p.axes or p.optional:
            return ()
        hints: list[int | None] = []
        named = False
        for i, t in enumerate(toks):
            if t.kind == "pp" and re.search(rf"\b{re.escape(name)}\b", t.text):
                return ()
            if t.kind != "id" or t.text != name:
                continue
            named = True
            ok, hint = _use(toks, i, name, local)
            if not ok:
                return ()
            hints.append(hint)
        if not named:
            continue  # never touched: nothing to privatise, and no alias to fear
        sized = [h for h in hints if h]
        if not sized:
            return ()
        found[name] = max(sized)
    return tuple(sorted(found.items()))


def taken(candidates: Iterable[tuple[str, int]], element_types: dict[str, str],
          ) -> tuple[tuple[str, int], ...]:
    """The candidates that get private copies once the types are bound: an integer
    element type (``element_types``: array name -> language type), at most
    :data:`MAX_BYTES` per copy. All or none: a float array that keeps its atomics could
    be the same memory as an integer one (one buffer passed twice, as two dtypes)."""
    out = []
    for name, size in candidates:
        dt = TYPE_DTYPES.get(element_types.get(name, ""))
        if dt is None or dt.kind not in "iu" or size * dt.itemsize > MAX_BYTES:
            return ()
        out.append((name, size))
    return tuple(out)
