"""``@localmem`` and private-array subscripts a launch provably overruns (issue 28).

Without debug mode a subscript of workgroup or private memory is not checked, so a
``@localmem uint s[128]`` indexed by ``2 * @index(Local, Linear)`` in a group of more
than 64 work-items writes past it (a bare SIGSEGV on the native path, silent
corruption on PoCL). :func:`local_overruns` finds, once per parsed kernel, the
subscripts whose index is known for each work-item of a group (a constant, or
``a * l + b`` of the local linear index ``l``) in statements every work-item reaches
(:mod:`.body_reach`); :func:`check_workgroup` refuses a launch whose workgroup takes
one past its array, before it runs, with :class:`~portakern.errors.KernelFaultError`.
As in :mod:`.bounds`, a miss only leaves the launch to the kernel (or debug mode); a
refusal is always a real overrun.
"""

from __future__ import annotations

import math
import re
import weakref
from dataclasses import dataclass
from typing import Any

from ..patterns import lazy
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

__all__ = ["LocalAccess", "check_workgroup", "local_overruns"]

_LOCAL = ("@index", "(", "Local", ",", "Linear", ")")
#: A word before a name that makes ``word name[...]`` something other than a declaration.
_NOT_TYPES = frozenset({"return", "case", "else", "do", "goto", "sizeof", "typedef", "throw",
                        "new", "delete", "co_return", "co_yield", "operator"})
_INT_CASTS = frozenset({"int", "long", "uint", "ulong", "unsigned", "signed", "short",
                        "size_t", "ptrdiff_t", "int32_t", "int64_t", "uint32_t", "uint64_t"})
_NUMBER = lazy(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_OBJECT_MACRO = lazy(r"#\s*define\s+(\w+)[ \t]+(\(?\s*-?\s*(?:0[xX][0-9a-fA-F]+|\d+)"
                     r"[uUlL]*\s*\)?)\s*$")


@dataclass(frozen=True)
class LocalAccess:
    """A subscript of a ``@localmem`` or private array that every work-item reaches.

    The index is ``scale * l + offset`` with ``l`` the work-item's local linear index
    (``scale`` 0: a constant), in dimension ``dimension`` of ``array``, whose extent
    there is ``extent``; ``kind`` is ``"@localmem"`` or ``"private"`` (``@private`` or a
    plain local array).
    """

    array: str
    kind: str
    dimension: int
    extent: int
    scale: int
    offset: int
    index: str
    line: int
    declaration: str

    def reach(self, last: int) -> tuple[int, int]:
        """The smallest and largest index for local indices ``0 .. last``."""
        ends = (self.offset, self.scale * last + self.offset)
        return min(ends), max(ends)

    def first_out(self, last: int) -> int | None:
        """The smallest local index in ``0 .. last`` whose access is out of range."""
        lo, hi = self.reach(last)
        if lo >= 0 and hi < self.extent:
            return None
        if not 0 <= self.offset < self.extent or self.scale == 0:
            return 0
        if self.scale > 0:
            return -(-(self.extent - self.offset) // self.scale)
        return self.offset // -self.scale + 1


def _int_macros(helpers: list[Token]) -> dict[str, int]:
    """The source's object-like macros that are one integer (``#define BLOCK 4``)."""
    out: dict[str, int] = {}
    for t in helpers:
        if t.kind == "pp":
            m = _OBJECT_MACRO.match(re.sub(r"//[^\n]*|/\*.*?\*/", "", t.text,
                                           flags=re.DOTALL).strip())
            if m:
                text = m.group(2).replace("(", "").replace(")", "").replace(" ", "")
                sign = -1 if text.startswith("-") else 1
                n = _NUMBER.fullmatch(text.lstrip("-"))
                if n:
                    out[m.group(1)] = sign * int(n.group(1), 0)
    return out


class _Affine:
    """``scale * l + offset`` read off a token list (None where it is not of that form)."""

    def __init__(self, toks: list[Token], local: set[str], macros: dict[str, int],
                 groupsize: tuple[int, ...] | None) -> None:
        self.toks, self.local, self.macros, self.groupsize = toks, local, macros, groupsize
        self.k = 0

    def parse(self) -> tuple[int, int] | None:
        try:
            v = self._sum()
        except (IndexError, ValueError):
            return None
        return v if self.k == len(self.toks) else None

    def _at(self, *texts: str) -> bool:
        return self.k < len(self.toks) and self.toks[self.k].text in texts \
            and self.toks[self.k].kind == "punct"

    def _sum(self) -> tuple[int, int]:
        a, b = self._product()
        while self._at("+", "-"):
            sign = 1 if self.toks[self.k].text == "+" else -1
            self.k += 1
            c, d = self._product()
            a, b = a + sign * c, b + sign * d
        return a, b

    def _product(self) -> tuple[int, int]:
        a, b = self._unary()
        while self._at("*"):
            self.k += 1
            c, d = self._unary()
            if a and c:
                raise ValueError("not affine")
            a, b = a * d + c * b, b * d
        return a, b

    def _unary(self) -> tuple[int, int]:
        if self._at("-", "+"):
            sign = -1 if self.toks[self.k].text == "-" else 1
            self.k += 1
            a, b = self._unary()
            return sign * a, sign * b
        return self._primary()

    def _primary(self) -> tuple[int, int]:
        t = self.toks[self.k]
        words = texts(self.toks[self.k:self.k + len(_LOCAL)])
        if words == _LOCAL:
            self.k += len(_LOCAL)
            return 1, 0
        if t.kind == "at" and t.text == "@groupsize" and self.groupsize is not None:
            close = closing(self.toks, self.k + 1)
            inner = texts(self.toks[self.k + 2:close])
            self.k = close + 1
            if not inner:
                return 0, math.prod(self.groupsize)
            d = int(inner[0]) if len(inner) == 1 and inner[0].isdigit() else -1
            if not 0 <= d < len(self.groupsize):
                raise ValueError("axis")
            return 0, self.groupsize[d]
        if t.kind == "num":
            m = _NUMBER.fullmatch(t.text)
            if m is None:
                raise ValueError("not an integer")
            self.k += 1
            return 0, int(m.group(1), 0)
        if t.kind == "id" and t.text in self.local:
            self.k += 1
            return 1, 0
        if t.kind == "id" and t.text in self.macros:
            self.k += 1
            return 0, self.macros[t.text]
        if t.is_punct("("):
            close = closing(self.toks, self.k)
            inner = self.toks[self.k + 1:close]
            if inner and all(x.kind == "id" and x.text in _INT_CASTS for x in inner):
                self.k = close + 1  # a cast to an integer type
                return self._unary()
            self.k += 1
            v = self._sum()
            if not self._at(")"):
                raise ValueError("unbalanced")
            self.k += 1
            return v
        raise ValueError("not affine")


def _bracket_groups(sig: list[Token], j: int, end: int) -> list[tuple[int, int]]:
    """``(open, close)`` of each ``[...]`` that follows ``sig[j]`` directly."""
    out = []
    k = j + 1
    while k < end and sig[k].is_punct("["):
        close = closing(sig, k)
        if close >= end:
            break
        out.append((k, close))
        k = close + 1
    return out


def _local_arrays(sig: list[Token], stmts: list[tuple[int, int, bool]], groupsize: Any,
                  macros: dict[str, int], params: set[str]
                  ) -> dict[str, tuple[str, list[int], int, int]]:
    """Arrays declared in a top-level statement: ``{name: (kind, extents, at, line)}``.

    A name declared more than once anywhere in the body (shadowed), or whose extent is
    not a constant, is left out.
    """
    found: dict[str, tuple[str, list[int], int, int]] = {}
    counts: dict[str, int] = {}
    tops = {start for start, _, top in stmts if top}
    stmt_of = {}
    for start, end, top in stmts:
        for k in range(start, end):
            stmt_of[k] = (start, end, top)
    for j, t in enumerate(sig):
        if t.kind != "id" or j + 1 >= len(sig) or not sig[j + 1].is_punct("["):
            continue
        prev = sig[j - 1] if j else None
        localmem = False
        if prev is not None and prev.kind == "id" and prev.text not in _NOT_TYPES:
            k = j - 1
            while k > 0 and (sig[k - 1].kind in ("id", "at") or sig[k - 1].is_punct("*")):
                k -= 1
            head = texts(sig[k:j])
            if any(w == "@localmem" for w in head):
                localmem = True
            elif k > 0 and not (sig[k - 1].is_punct(";") or sig[k - 1].is_punct("{")
                                or sig[k - 1].is_punct("}")):
                continue  # not at the start of a statement
            if "*" in head:
                continue  # an array of pointers: not an element access shape we check
        else:
            continue
        counts[t.text] = counts.get(t.text, 0) + 1
        where = stmt_of.get(j)
        if where is None or not where[2] or where[0] not in tops:
            continue
        extents = []
        for o, c in _bracket_groups(sig, j, where[1]):
            v = _Affine(strip_parens(sig[o + 1:c]), set(), macros, groupsize).parse()
            if v is None or v[0] != 0 or v[1] < 0:
                extents = []
                break
            extents.append(v[1])
        if extents:
            found[t.text] = ("@localmem" if localmem else "private", extents, j, t.line)
    return {n: v for n, v in found.items() if counts.get(n) == 1 and n not in params}


def _local_indices(sig: list[Token], stmts: list[tuple[int, int, bool]]) -> set[str]:
    """Variables declared at the top as ``@index(Local, Linear)`` and never changed."""
    names: dict[str, int] = {}
    for start, end, top in stmts:
        if not top:
            continue
        words = texts(sig[start:end])
        n = len(_LOCAL)
        if len(words) >= n + 3 and words[-n:] == _LOCAL and words[-n - 1] == "=" \
                and sig[start + len(words) - n - 2].kind == "id":
            head = [w for w in words[:-n - 2] if w != "const"]
            if len(head) == 1 and head[0] in INDEX_TYPES:
                names[words[-n - 2]] = start + len(words) - n - 2
    return {v for v, at in names.items() if untouched(sig, v, {at})}


def _analyse_local(module: Module, kdef: KernelDef) -> tuple[LocalAccess, ...]:
    hiding = hiding_macros(module.helpers)
    if hiding is None:
        return ()
    sig = body_tokens(kdef.body)
    if any(t.kind == "pp" or (t.kind == "id" and (t.text in GIVE_UP or t.text in hiding))
           for t in sig):
        return ()
    stmts = statements(module, kdef, sig)
    if stmts is None:
        return ()
    macros = _int_macros(module.helpers)
    groupsize = kdef.workgroupsize if isinstance(kdef.workgroupsize, tuple) else (
        (kdef.workgroupsize,) if isinstance(kdef.workgroupsize, int) else None)
    arrays = _local_arrays(sig, stmts, groupsize, macros, {p.name for p in kdef.params})
    if not arrays:
        return ()
    local = _local_indices(sig, stmts)
    out: list[LocalAccess] = []
    exited = False
    for start, end, top in stmts:
        words = texts(sig[start:end])
        unconditional = (top and not exited and bool(words) and words[0] not in CONTROL
                         and not PARTIAL.intersection(words))
        if any(t.kind == "id" and t.text in EXITS for t in sig[start:end]):
            exited = True
        if not unconditional:
            continue
        for j in range(start, end):
            t = sig[j]
            if t.kind != "id" or t.text not in arrays:
                continue
            kind, extents, at, line = arrays[t.text]
            prev = sig[j - 1] if j else None
            if j == at or (prev is not None and prev.text in (".", "->", "::", "&")):
                continue
            for d, (o, c) in enumerate(_bracket_groups(sig, j, end)[:len(extents)]):
                index = strip_parens(sig[o + 1:c])
                v = _Affine(index, local, macros, groupsize).parse()
                if v is None:
                    continue
                decl = f"{t.text}" + "".join(f"[{n}]" for n in extents)
                out.append(LocalAccess(t.text, kind, d, extents[d], v[0], v[1],
                                       " ".join(texts(index)), t.line,
                                       f"{kind} array {decl} (line {line})"))
    return tuple(out)


#: id(KernelDef) -> (weak reference to it, its accesses).
_LOCAL_FACTS: dict[int, tuple[Any, tuple[LocalAccess, ...]]] = {}


def local_overruns(module: Module, kdef: KernelDef) -> tuple[LocalAccess, ...]:
    """The subscripts of ``@localmem`` and private arrays a launch could provably overrun.

    Each is in a statement every work-item reaches (as :func:`overrun_params` reads
    it), of an array declared once at the top of the body with constant extents
    (integer literals, ``#define`` integers, ``@groupsize`` of a declared workgroup
    size), and its index is a constant or ``a * l + b`` with ``l`` the local linear
    index (``@index(Local, Linear)`` or a variable that holds it, unchanged).
    Computed once per parsed kernel.
    """
    key = id(kdef)
    hit = _LOCAL_FACTS.get(key)
    if hit is not None and hit[0]() is kdef:
        return hit[1]
    fact = _analyse_local(module, kdef)
    _LOCAL_FACTS[key] = (weakref.ref(kdef, lambda _, key=key: _LOCAL_FACTS.pop(key, None)),
                         fact)
    return fact


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for n in reversed(shape):
        flat, r = divmod(flat, n)
        out.append(r)
    return tuple(reversed(out))


def check_workgroup(kdef: KernelDef, accesses: tuple[LocalAccess, ...],
                    ndrange: tuple[int, ...], workgroup: tuple[int, ...], filename: str,
                    source: str) -> None:
    """Refuse a launch in which one of ``accesses`` provably leaves its array.

    ``workgroup`` is the launch's group shape in ndrange order. The work-items that
    run are those of the ndrange (all of each group with ``unsafe_indices``); the
    first group holds the largest local index that runs.

    Raises
    ------
    KernelFaultError
        Naming the array, its extent, the index expression, the workgroup and the
        first work-item that would overrun it; nothing was launched.
    """
    if not accesses:
        return
    from ..errors import KernelFaultError

    shape = tuple(workgroup) or (1,)
    clipped = shape if kdef.unsafe_indices or not ndrange else tuple(
        min(w, n) for w, n in zip(shape, ndrange, strict=False))
    last = 0
    for c, w in zip(clipped, shape, strict=True):
        last = last * w + (c - 1)
    for acc in accesses:
        first = acc.first_out(last)
        if first is None:
            continue
        item = _unravel(first, shape)
        if any(i >= c for i, c in zip(item, clipped, strict=True)):
            first, item = last, _unravel(last, shape)  # that one does not run: the last does
        value = acc.scale * first + acc.offset
        lo, hi = acc.reach(last)
        lines = source.split("\n")
        text = lines[acc.line - 1] if 0 < acc.line <= len(lines) else None
        items = math.prod(shape)
        if acc.scale:
            fits = (acc.extent - 1 - acc.offset) // acc.scale + 1 if acc.scale > 0 else 0
            reach = (f"in a workgroup of {tuple(workgroup)} ({items} work-item"
                     f"{'' if items == 1 else 's'}) the index runs from {lo} to {hi}")
            fix = (f"launch with at most {fits} work-item{'' if fits == 1 else 's'} per group "
                   f"(workgroupsize=...), " if fits > 0 else "")
            fix += ("size the array by the group (@kernel(workgroupsize=...) and "
                    f"{acc.array}[... @groupsize() ...]), or guard the access")
        else:
            reach = f"the index is {value} for every work-item"
            fix = "use an index inside the array, or declare the array larger"
        dim = f" (dimension {acc.dimension})" if "][" in acc.declaration else ""
        message = (
            f"kernel {kdef.name!r}: {acc.array}[{acc.index}]{dim} at {filename}:{acc.line} "
            f"is out of bounds: {acc.declaration} has {acc.extent} element"
            f"{'' if acc.extent == 1 else 's'} there (valid indices 0 to {acc.extent - 1}), "
            f"and {reach}; work-item {item} would be the first to access "
            f"{acc.array}[{value}]. Refused before launch (nothing ran): {fix}")
        if text is not None:
            message += f"\n    {acc.line} | {text.strip()}"
        raise KernelFaultError(kdef.name, acc.array, None, value, acc.extent, item, filename,
                               acc.line, text, acc.dimension, message=message)
