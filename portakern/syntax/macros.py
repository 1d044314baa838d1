"""The one reader of ``#define`` and ``#undef`` lines.

A preprocessor line is one ``pp`` token (:mod:`portakern.syntax.tokens`). :func:`macro_of`
reads it as a :class:`Macro` (its name, parameters for a function-like macro, and its
replacement text with comments and line continuations removed), so the analyses that
need macros (the return check, the bounds proofs, the typed tree's constants, the
reserved-name check) read one record instead of each keeping a regular expression.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..patterns import lazy
from .tokens import Token

__all__ = ["Macro", "expand_macros", "macro_of", "macros_in"]

_LINE = lazy(r"#\s*(define|undef)\s+([A-Za-z_]\w*)(\([^)]*\))?(.*)", re.DOTALL)
_COMMENT = lazy(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


@dataclass(frozen=True)
class Macro:
    """``#define name(params) body`` or ``#undef name``: ``params`` is None for an
    object-like macro; ``body`` the replacement, comments and continuations removed."""

    name: str
    params: tuple[str, ...] | None
    body: str
    token: Token
    undef: bool = False


def macro_of(pp: Token) -> Macro | None:
    """The macro a ``pp`` token defines or undefines, or None for another directive."""
    m = _LINE.match(pp.text.replace("\\\n", " "))
    if m is None:
        return None
    word, name, params, rest = m.groups()
    body = _COMMENT.sub(" ", rest).strip()
    if word == "undef":
        return Macro(name, None, "", pp, undef=True)
    names = None
    if params is not None:
        names = tuple(p.strip() for p in params[1:-1].split(",") if p.strip())
    return Macro(name, names, body, pp)


def macros_in(tokens: Iterable[object]) -> Iterator[Macro]:
    """Each ``#define``/``#undef`` among ``tokens``, in order."""
    for t in tokens:
        if isinstance(t, Token) and t.kind == "pp":
            macro = macro_of(t)
            if macro is not None:
                yield macro


def _body_tokens(body: str, at: Token) -> list[Token] | None:
    """A macro's replacement as tokens placed at ``at`` (the use), or None if it
    pastes or stringifies (``#``, ``##``), which :func:`expand_macros` leaves alone."""
    from .tokens import SourceMap, tokenize

    if "#" in body:
        return None
    try:
        toks = tokenize(body, SourceMap("", body, [at.line] * (body.count("\n") + 1)))
    except Exception:  # noqa: BLE001 - text the compiler will judge: leave it unexpanded
        return None
    return [Token(t.kind, t.text, at.line, at.col) for t in toks if t.kind != "comment"]


def _arguments(tokens: list[Token], open_at: int) -> tuple[list[list[Token]], int] | None:
    """The arguments of a function-like macro's use whose ``(`` is at ``open_at``."""
    args: list[list[Token]] = [[]]
    depth = 0
    for k in range(open_at, len(tokens)):
        t = tokens[k]
        if t.kind == "punct" and t.text in "([{":
            depth += 1
            if depth == 1:
                continue
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0:
                return args, k
        elif depth == 1 and t.is_punct(","):
            args.append([])
            continue
        args[-1].append(t)
    return None


def expand_macros(tokens: list[Token], defined: Iterable[object] = (),
                  before_line: int | None = None) -> list[Token]:
    """``tokens`` with each use of a ``#define`` macro replaced by its expansion.

    Debug mode reads its subscripts through this (docs/debugging.md): a subscript
    written in a macro's body is then a subscript of the code it is used in. The
    macros are those of ``defined`` (``pp`` tokens, those before ``before_line`` when
    given), then those ``tokens`` define themselves, in order, ``#undef`` included.
    Every token of an expansion takes the position of the macro's name at the use, so
    a fault reports the line of the use. A macro is not expanded again inside its own
    expansion (as in C); one that pastes or stringifies, or is variadic, stays as written.
    """
    table: _Table = _Table()
    for t in defined:
        if isinstance(t, Token) and t.kind == "pp" and (before_line is None
                                                        or t.line < before_line):
            table.read(t)
    return _expand(tokens, table, frozenset())


_IF = lazy(r"#\s*if")
_ENDIF = lazy(r"#\s*endif\b")


class _Table(dict):
    """The macros in force, read one ``pp`` token at a time. A macro defined under an
    ``#if``/``#ifdef`` is never expanded: which definition holds is the compiler's to say."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.unsure: set[str] = set()

    def read(self, pp: Token) -> None:
        if _IF.match(pp.text):
            self.depth += 1
        elif _ENDIF.match(pp.text):
            self.depth = max(0, self.depth - 1)
        m = macro_of(pp)
        if m is None:
            return
        if self.depth or m.name in self.unsure:
            self.unsure.add(m.name)
            self.pop(m.name, None)
        elif m.undef:
            self.pop(m.name, None)
        else:
            self[m.name] = m


def _expand(tokens: list[Token], table: _Table, off: frozenset[str]) -> list[Token]:
    out: list[Token] = []
    n = 0
    while n < len(tokens):
        t = tokens[n]
        if t.kind == "pp":
            table.read(t)
            out.append(t)
            n += 1
            continue
        m = table.get(t.text) if t.kind == "id" and t.text not in off else None
        prev = next((o for o in reversed(out) if o.kind not in ("ws", "comment")), None)
        if m is None or (prev is not None and prev.kind == "punct" and prev.text in (".", "->")):
            out.append(t)
            n += 1
            continue
        body = _body_tokens(m.body, t)
        if body is None or (m.params is not None and "..." in m.params):
            out.append(t)
            n += 1
            continue
        if m.params is None:
            out += _expand(body, table, off | {m.name})
            n += 1
            continue
        j = n + 1
        while j < len(tokens) and tokens[j].kind in ("ws", "comment"):
            j += 1
        found = _arguments(tokens, j) if j < len(tokens) and tokens[j].is_punct("(") else None
        if found is None:  # the name alone is not a use of a function-like macro
            out.append(t)
            n += 1
            continue
        args, close = found
        if args == [[]] and not m.params:
            args = []
        if len(args) != len(m.params):
            out.append(t)
            n += 1
            continue
        values = {p: _expand(a, table, off) for p, a in zip(m.params, args, strict=True)}
        replaced: list[Token] = []
        for b in body:
            replaced += values.get(b.text, [b]) if b.kind == "id" else [b]
        out += _expand(replaced, table, off | {m.name})
        n = close + 1
    return out
