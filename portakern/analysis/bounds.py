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
import re
import weakref
from dataclasses import dataclass
from typing import Any

from ..errors import NDRangeError
from ..syntax.language import KernelDef, Module, Token
from ..syntax.parts import match_items

__all__ = ["LocalAccess", "check_ndrange", "check_workgroup", "checked", "local_overruns",
           "overrun_params"]

_LINEAR = ("@index", "(", "Global", ",", "Linear", ")")
_NTUPLE = ("@index", "(", "Global", ",", "NTuple", ")")
#: Declared types of a linear index variable (integers of at least 32 bits).
_INDEX_TYPES = frozenset({"int", "long", "uint", "ulong", "int32_t", "int64_t", "uint32_t",
                          "uint64_t", "size_t", "ptrdiff_t", "intptr_t", "auto"})
#: A statement that starts with one of these runs conditionally (or not at all).
_CONTROL = frozenset({"if", "else", "for", "while", "do", "switch", "case", "default",
                      "return", "goto", "try", "catch", "break", "continue", "throw"})
#: Inside a statement: part of it may not be evaluated.
_PARTIAL = frozenset({"?", "&&", "||", "sizeof", "decltype", "alignof", "_Alignof", "typeid",
                      "noexcept"})
#: After one of these, later statements may not run.
_EXITS = frozenset({"return", "throw", "exit", "_Exit", "quick_exit", "abort",
                    "__builtin_trap", "__builtin_unreachable", "__trap", "trap", "longjmp"})
#: Anywhere in the body: no conclusion is drawn.
_GIVE_UP = frozenset({"goto", "asm", "__asm", "__asm__", "setjmp"})
_ASSIGN_OPS = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"})
_NOT_CALLS = frozenset({"if", "while", "for", "switch", "return"})
_DEFINE = re.compile(r"#\s*define\s+(\w+)(.*)", re.DOTALL)
_INCLUDE = re.compile(r"#\s*(include|import)\b")
#: In a macro's replacement: it may skip code, or leave the kernel.
_MACRO_FLOW = re.compile(
    r"\b(?:if|else|for|while|do|switch|case|return|goto|break|continue|throw|exit|abort|"
    r"__builtin_trap|__builtin_unreachable|__trap|longjmp)\b|\?|&&|\|\||;|\{")


def _hiding_macros(helpers: list[Token]) -> set[str] | None:
    """Names of the source's macros that may hide a condition (None: some cannot be seen)."""
    names: set[str] = set()
    for t in helpers:
        if t.kind != "pp":
            continue
        text = re.sub(r"\\\n", " ", t.text)
        if _INCLUDE.match(text):
            return None
        m = _DEFINE.match(text)
        if m and _MACRO_FLOW.search(re.sub(r"//[^\n]*|/\*.*?\*/", "", m.group(2),
                                           flags=re.DOTALL)):
            names.add(m.group(1))
    return names


def _sig(tokens: list[Token]) -> list[Token]:
    return [t for t in tokens if t.kind not in ("ws", "comment")]


def _closing(sig: list[Token], i: int) -> int:
    """Index of the bracket closing ``sig[i]`` (len(sig) if never closed)."""
    try:
        return match_items(sig, i)
    except ValueError:
        return len(sig)


def _statements(module: Module, kdef: KernelDef, sig: list[Token]
                ) -> list[tuple[int, int, bool]] | None:
    """``(start, end, top)`` of each statement of the body's top level, as spans of ``sig``.

    ``top``: a declaration or expression statement (:class:`~portakern.syntax.tree.Simple`,
    without its ``;``), which every work-item reaches unless a jump came before; an
    ``if``, loop, ``switch`` or block is one span with ``top`` false. None where the
    body does not parse as statements (the lowering reports it).
    """
    from ..errors import PortakernError
    from ..syntax.tree import Simple, parse_body

    try:
        root = parse_body(kdef.body, module.source_map)
    except PortakernError:
        return None
    where = {id(t): n for n, t in enumerate(sig)}
    out: list[tuple[int, int, bool]] = []
    for node in root.body:
        span = [where[id(t)] for t in node.tokens if id(t) in where]
        if not span:
            continue
        start, end = span[0], span[-1] + 1
        simple = isinstance(node, Simple)
        if simple and sig[end - 1].is_punct(";"):
            end -= 1
        out.append((start, end, simple))
    return out


def _texts(toks: list[Token]) -> tuple[str, ...]:
    return tuple(t.text for t in toks)


def _strip_parens(toks: list[Token]) -> list[Token]:
    while len(toks) >= 2 and toks[0].is_punct("(") and _closing(toks, 0) == len(toks) - 1:
        toks = toks[1:-1]
    return toks


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
        words = _texts(s)
        if len(words) >= 7 and words[-5:] == ("=", "@ndrange", "(", words[-2], ")") \
                and s[-6].kind == "id":
            head = [w for w in words[:-6] if w != "const"]
            if len(head) == 1 and head[0] in _INDEX_TYPES and words[-2] in ("1", "2"):
                extents[words[-6]] = (start + len(words) - 6, words[-2])
        elif len(words) >= 3 + len(_LINEAR) and words[-len(_LINEAR):] == _LINEAR \
                and words[-len(_LINEAR) - 1] == "=" and s[-len(_LINEAR) - 2].kind == "id":
            head = [w for w in words[:-len(_LINEAR) - 2] if w != "const"]
            if len(head) == 1 and head[0] in _INDEX_TYPES:
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


def _untouched(sig: list[Token], name: str, declared_at: set[int]) -> bool:
    """Whether ``name`` is only read after its declaration (at ``declared_at``)."""
    opens: list[int] = []  # positions of the open '(' around each token
    for j, t in enumerate(sig):
        if t.is_punct("("):
            opens.append(j)
        elif t.is_punct(")") and opens:
            opens.pop()
        if t.kind != "id" or t.text != name or j in declared_at:
            continue
        prev = sig[j - 1] if j else None
        nxt = sig[j + 1] if j + 1 < len(sig) else None
        if prev is not None and prev.kind == "punct" and prev.text in (".", "->", "::"):
            continue  # a member of the same name
        if prev is not None and (prev.kind == "id" or prev.text in ("&", "++", "--")
                                 or (prev.text in ("[", ",") and _in_binding(sig, j))):
            return False  # redeclared, its address taken, incremented, or bound again
        if nxt is not None and (nxt.text in ("=", "++", "--") or (
                nxt.text in _ASSIGN_OPS and j + 2 < len(sig) and sig[j + 2].text == "=")):
            return False  # assigned
        if opens and prev is not None and prev.text in ("(", ","):
            o = opens[-1]
            caller = sig[o - 1] if o else None
            if caller is not None and caller.kind == "id" and caller.text not in _NOT_CALLS:
                return False  # an argument of a call: a reference parameter could change it
    return True


def _in_binding(sig: list[Token], j: int) -> bool:
    """Whether ``sig[j]`` is a name in an ``auto [a, b]`` binding list."""
    k = j
    while k > 0 and (sig[k].kind == "id" or sig[k].is_punct(",")):
        k -= 1
    return sig[k].is_punct("[") and k > 0 and sig[k - 1].text in ("auto", "&", "&&")


def _index_text(toks: list[Token], copies: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """A subscript's text, outer parentheses gone and ``@ndrange(d)`` copies spelled out."""
    out: list[str] = []
    for t in _strip_parens(toks):
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
    hiding = _hiding_macros(module.helpers)
    if kdef.unsafe_indices or hiding is None:
        return frozenset()
    sig = _sig(kdef.body)
    if any(t.kind == "pp" or (t.kind == "id" and (t.text in _GIVE_UP or t.text in hiding))
           for t in sig):
        return frozenset()
    stmts = _statements(module, kdef, sig)
    if stmts is None:
        return frozenset()
    linear, tuples, extents = _declared_indices(sig, stmts)
    copies = {v: ("@ndrange", "(", d, ")") for v, (at, d) in extents.items()
              if _untouched(sig, v, {at})}
    linear_ok = [v for v, at in linear.items() if _untouched(sig, v, {at})]
    tuples_ok = [names for at, names in tuples
                 if len(set(names)) == len(names)
                 and all(_untouched(sig, n, {at + 2 * m}) for m, n in enumerate(names))]
    forms = _linear_forms(linear_ok, tuples_ok)
    arrays = {p.name for p in kdef.params if p.pointer}
    bad: set[str] = set()
    hit: set[str] = set()
    exited = False
    for start, end, top in stmts:
        words = _texts(sig[start:end])
        unconditional = (top and not exited and bool(words) and words[0] not in _CONTROL
                         and not _PARTIAL.intersection(words))
        j = start
        while j < end:
            t = sig[j]
            if t.kind == "id" and t.text in _EXITS:
                exited = True
            if t.kind == "id" and t.text in arrays:
                prev = sig[j - 1] if j else None
                if prev is not None and prev.kind == "punct" and prev.text in (".", "->", "::"):
                    j += 1
                    continue
                close = _closing(sig, j + 1) if j + 1 < end and sig[j + 1].is_punct("[") \
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


# ---------------------------------------------------------------- @localmem and @private

_LOCAL = ("@index", "(", "Local", ",", "Linear", ")")
#: A word before a name that makes ``word name[...]`` something other than a declaration.
_NOT_TYPES = frozenset({"return", "case", "else", "do", "goto", "sizeof", "typedef", "throw",
                        "new", "delete", "co_return", "co_yield", "operator"})
_INT_CASTS = frozenset({"int", "long", "uint", "ulong", "unsigned", "signed", "short",
                        "size_t", "ptrdiff_t", "int32_t", "int64_t", "uint32_t", "uint64_t"})
_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_OBJECT_MACRO = re.compile(r"#\s*define\s+(\w+)[ \t]+(\(?\s*-?\s*(?:0[xX][0-9a-fA-F]+|\d+)"
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
        words = _texts(self.toks[self.k:self.k + len(_LOCAL)])
        if words == _LOCAL:
            self.k += len(_LOCAL)
            return 1, 0
        if t.kind == "at" and t.text == "@groupsize" and self.groupsize is not None:
            close = _closing(self.toks, self.k + 1)
            inner = _texts(self.toks[self.k + 2:close])
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
            close = _closing(self.toks, self.k)
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
        close = _closing(sig, k)
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
            head = _texts(sig[k:j])
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
            v = _Affine(_strip_parens(sig[o + 1:c]), set(), macros, groupsize).parse()
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
        words = _texts(sig[start:end])
        n = len(_LOCAL)
        if len(words) >= n + 3 and words[-n:] == _LOCAL and words[-n - 1] == "=" \
                and sig[start + len(words) - n - 2].kind == "id":
            head = [w for w in words[:-n - 2] if w != "const"]
            if len(head) == 1 and head[0] in _INDEX_TYPES:
                names[words[-n - 2]] = start + len(words) - n - 2
    return {v for v, at in names.items() if _untouched(sig, v, {at})}


def _analyse_local(module: Module, kdef: KernelDef) -> tuple[LocalAccess, ...]:
    hiding = _hiding_macros(module.helpers)
    if hiding is None:
        return ()
    sig = _sig(kdef.body)
    if any(t.kind == "pp" or (t.kind == "id" and (t.text in _GIVE_UP or t.text in hiding))
           for t in sig):
        return ()
    stmts = _statements(module, kdef, sig)
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
        words = _texts(sig[start:end])
        unconditional = (top and not exited and bool(words) and words[0] not in _CONTROL
                         and not _PARTIAL.intersection(words))
        if any(t.kind == "id" and t.text in _EXITS for t in sig[start:end]):
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
                index = _strip_parens(sig[o + 1:c])
                v = _Affine(index, local, macros, groupsize).parse()
                if v is None:
                    continue
                decl = f"{t.text}" + "".join(f"[{n}]" for n in extents)
                out.append(LocalAccess(t.text, kind, d, extents[d], v[0], v[1],
                                       " ".join(_texts(index)), t.line,
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
