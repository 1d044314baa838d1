"""The one reader of ``#define`` and ``#undef`` lines, and debug mode's macro expansion.

A preprocessor line is one ``pp`` token (:mod:`portakern.syntax.tokens`). :func:`macro_of`
reads it as a :class:`Macro` (its name, parameters for a function-like macro, and its
replacement text with comments and line continuations removed), so the analyses that
need macros (the return check, the bounds proofs, the typed tree's constants, the
reserved-name check) read one record instead of each keeping a regular expression.

:func:`expand_macros` is the expansion debug mode checks subscripts through. It is
written here rather than taken from a C preprocessor library (``pcpp``, the one on PyPI,
had its last release in 2021): such a library reads and writes text, so it would lose
each token's position in the user's file (a fault must name the line of the macro's
use), it would run ``#include`` and evaluate every ``#if``, where debug mode must leave
to the target's compiler the conditions only it can decide (``__CUDA_ARCH__``), the
target's own macros and the ``@`` constructs, and the expansion here is one pass over
tokens the front end already has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..patterns import lazy
from .macro_conditions import TARGET_NAMES, condition_value
from .tokens import Token, next_significant

__all__ = ["Macro", "expand_macros", "macro_of", "macros_in"]

_LINE = lazy(r"#\s*(define|undef)\s+([A-Za-z_]\w*)(\([^)]*\))?(.*)", re.DOTALL)
_COMMENT = lazy(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_DIRECTIVE = lazy(r"#\s*(ifdef|ifndef|if|elif|else|endif)\b(.*)", re.DOTALL)


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


def expand_macros(tokens: list[Token], defined: Iterable[object] = (),
                  before_line: int | None = None) -> list[Token]:
    """``tokens`` with each use of a ``#define`` macro replaced by its expansion.

    Debug mode reads its subscripts through this (docs/debugging.md): a subscript
    written in a macro's body is then a subscript of the code it is used in. The
    macros are those of ``defined`` (``pp`` tokens, those before ``before_line`` when
    given), then those ``tokens`` define themselves, in order, ``#undef`` included.
    Every token of an expansion takes the position of the macro's name at the use, so
    a fault reports the line of the use. As in C, a macro is not expanded again inside
    its own expansion; ``#`` stringifies, ``##`` pastes, ``...`` and ``__VA_ARGS__`` (and
    GNU's ``args...`` and ``, ## __VA_ARGS__``) take the rest of the arguments; and the
    ``#if`` groups are followed: a macro defined in a branch the source turns off is not
    defined, and code there stays as written. A macro defined or undefined under a
    condition the source cannot decide (:mod:`.macro_conditions`), one using
    ``__VA_OPT__``, and a use C would reject (a paste that is not one token, the wrong
    number of arguments) stay as written, for the compiler.
    """
    table: _Table = _Table()
    for t in defined:
        if isinstance(t, Token) and t.kind == "pp" and (before_line is None
                                                        or t.line < before_line):
            table.read(t)
    return _expand(tokens, table, frozenset())


class _Table(dict):
    """The macros in force, read one ``pp`` token at a time, and the ``#if`` groups open.

    Each open group is ``[now, taken]``: whether its current branch is on (True, False
    or None: unsure), and whether an earlier branch was (the same three). A name
    defined or undefined in an unsure branch is in ``unsure``: never expanded, and a
    condition reading it is unsure too, until it is defined or undefined for sure.
    """

    def __init__(self) -> None:
        super().__init__()
        self.groups: list[list[bool | None]] = []
        self.unsure: set[str] = set()

    @property
    def off(self) -> bool:
        """In a branch the source turns off: code and directives there are skipped."""
        return any(g[0] is False for g in self.groups)

    def read(self, pp: Token) -> None:
        text = pp.text.replace("\\\n", " ")
        d = _DIRECTIVE.match(text)
        if d is not None:
            self._conditional(d.group(1), _COMMENT.sub(" ", d.group(2)).strip())
            return
        m = macro_of(pp)
        if m is None or self.off:
            return
        if any(g[0] is None for g in self.groups):
            self.unsure.add(m.name)
            self.pop(m.name, None)
            return
        self.unsure.discard(m.name)
        if m.undef:
            self.pop(m.name, None)
        else:
            self[m.name] = m

    def _conditional(self, word: str, rest: str) -> None:
        if word in ("if", "ifdef", "ifndef"):
            if self.off:  # a group inside a branch turned off is off, whatever it says
                self.groups.append([False, True])
                return
            now = self._value(word, rest)
            self.groups.append([now, now])
        elif not self.groups:
            return  # an #else or #endif with no #if: the compiler's error
        elif word == "endif":
            self.groups.pop()
        else:
            group = self.groups.pop()
            taken = group[1]
            if taken is True or self.off:
                now: bool | None = False
            else:
                cond = True if word == "else" else self._value("if", rest)
                now = cond if taken is False or cond is False else None
            self.groups.append([now, True if now is True or taken is True else
                                (None if now is None or taken is None else False)])

    def _value(self, word: str, rest: str) -> bool | None:
        """The condition of ``#if rest`` (``#ifdef``/``#ifndef``: of ``defined(rest)``)."""
        from .tokens import SourceMap, tokenize

        text = "_ " + (f"defined({rest})" if word != "if" else rest)
        try:
            toks = [t for t in tokenize(text, SourceMap("", text, [1]))[2:]
                    if t.kind not in ("ws", "comment")]
        except Exception:  # noqa: BLE001 - the compiler's to judge
            return None
        replaced: list[Token] = []
        k = 0
        while k < len(toks):
            t = toks[k]
            if t.kind == "id" and t.text == "defined":
                paren = k + 1 < len(toks) and toks[k + 1].is_punct("(")
                name = toks[k + 2 if paren else k + 1] if k + (2 if paren else 1) < len(toks) \
                    else None
                if name is None or name.kind != "id" or (
                        paren and not (k + 3 < len(toks) and toks[k + 3].is_punct(")"))):
                    return None
                sure = self._known(name.text)
                value = "defined" if sure is None else str(int(name.text in self))
                replaced.append(Token("id" if sure is None else "num", value, t.line, t.col))
                k += 4 if paren else 2
                continue
            replaced.append(t)
            k += 1
        expanded = [t for t in _expand(replaced, self, frozenset())
                    if t.kind not in ("ws", "comment")]
        held = condition_value(expanded, self._known)
        return (not held) if word == "ifndef" and held is not None else held

    def _known(self, name: str) -> bool | None:
        """Whether ``name`` is surely defined (True) or undefined (False) for this source,
        or None where a target's compiler may define it or an unsure branch did."""
        if name in self:
            return True
        if name in self.unsure or TARGET_NAMES.match(name):
            return None
        return False


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
        m = table.get(t.text) if t.kind == "id" and t.text not in off and not table.off \
            else None
        prev = next((o for o in reversed(out) if o.kind not in ("ws", "comment")), None)
        if m is None or (prev is not None and prev.kind == "punct" and prev.text in (".", "->")):
            out.append(t)
            n += 1
            continue
        body = _body_tokens(m, t)
        if body is None:
            out.append(t)
            n += 1
            continue
        if m.params is None:
            found: tuple[list[list[Token]], int] | None = ([], n)
        else:
            j = next_significant(tokens, n + 1)
            found = _arguments(tokens, j) if j < len(tokens) and tokens[j].is_punct("(") \
                else None
        replaced = None if found is None else _replacement(m, body, found[0], t, table, off)
        if found is None or replaced is None:  # not a use, or one C rejects: as written
            out.append(t)
            n += 1
            continue
        done = _expand(replaced, table, off | {m.name})
        rest = found[1] + 1
        # A function-like macro's name that ends the expansion takes its arguments from
        # the text after the use (``#define F G`` then ``F(y)``), as C's rescan does.
        last = next((k for k in range(len(done) - 1, -1, -1)
                     if done[k].kind not in ("ws", "comment")), None)
        if last is not None and _calls(done[last], table, off | {m.name}) and \
                next_significant(tokens, rest) < len(tokens) and \
                tokens[next_significant(tokens, rest)].is_punct("("):
            out += done[:last]
            tokens, n = [done[last], *tokens[rest:]], 0
            continue
        out += done
        n = rest
    return out


def _calls(t: Token, table: _Table, off: frozenset[str]) -> bool:
    """Whether ``t`` names a function-like macro that may still be expanded."""
    m = table.get(t.text) if t.kind == "id" and t.text not in off else None
    return m is not None and m.params is not None


def _body_tokens(m: Macro, at: Token) -> list[Token] | None:
    """A macro's replacement as tokens placed at ``at`` (the use), ``##`` one token, or
    None for a body that does not tokenize or uses ``__VA_OPT__`` (left as written)."""
    from .tokens import SourceMap, tokenize

    text = "_ " + m.body  # not at a line's start: a leading '#' is stringify, not a directive
    try:
        toks = tokenize(text, SourceMap("", text, [at.line]))[2:]
    except Exception:  # noqa: BLE001 - text the compiler will judge: leave it unexpanded
        return None
    out: list[Token] = []
    for t in toks:
        if t.kind == "comment":
            t = Token("ws", " ", t.line, t.col)
        if t.kind == "id" and t.text == "__VA_OPT__":
            return None
        if t.is_punct("#") and out and out[-1].is_punct("#") and out[-1].col == t.col - 1:
            out[-1] = Token("punct", "##", at.line, at.col)
            continue
        out.append(Token(t.kind, t.text, at.line, t.col))
    return [Token(t.kind, t.text, at.line, at.col) for t in out]


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


def _trimmed(tokens: list[Token]) -> list[Token]:
    sig = [k for k, t in enumerate(tokens) if t.kind not in ("ws", "comment")]
    return [t for t in tokens[sig[0]:sig[-1] + 1] if t.kind != "comment"] if sig else []


def _stringified(arg: list[Token], at: Token) -> Token:
    """``#arg``: the argument's spelling as a string literal, each run of spaces one."""
    words = []
    for t in _trimmed(arg):
        if t.kind == "ws":
            words.append(" ")
        elif t.kind == "str":
            words.append(t.text.replace("\\", "\\\\").replace('"', '\\"'))
        else:
            words.append(t.text)
    return Token("str", '"' + "".join(words) + '"', at.line, at.col)


_MARK = "pk placemarker"  # an empty argument next to ## (C's placemarker)


def _pasted(left: Token, right: Token, at: Token) -> Token | None:
    """``left ## right``, or None where the result is not one token (the compiler's error)."""
    from .tokens import SourceMap, tokenize

    if left.kind == _MARK:
        return right
    if right.kind == _MARK:
        return left
    text = "_ " + left.text + right.text
    try:
        toks = tokenize(text, SourceMap("", text, [at.line]))[2:]
    except Exception:  # noqa: BLE001
        return None
    if len(toks) != 1 or toks[0].kind in ("ws", "comment"):
        return None
    return Token(toks[0].kind, toks[0].text, at.line, at.col)


def _parameters(m: Macro) -> tuple[list[str], str | None]:
    """The named parameters of a function-like macro and its variadic one's name."""
    names = list(m.params or ())
    if names and names[-1].endswith("..."):
        last = names.pop()[:-3].strip()
        return names, last or "__VA_ARGS__"
    return names, None


def _replacement(m: Macro, body: list[Token], args: list[list[Token]], at: Token,
                 table: _Table, off: frozenset[str]) -> list[Token] | None:
    """The body of function-like ``m`` with ``args`` substituted, ``#`` and ``##`` applied
    (C11 6.10.3.1 to 6.10.3.3), or None where the use is not one C accepts."""
    function = m.params is not None
    names, variadic = _parameters(m)
    if args == [[]] and not names and variadic is None:
        args = []
    if len(args) < len(names) or (variadic is None and len(args) != len(names)):
        return None
    raw = dict(zip(names, args, strict=False))
    if variadic is not None:
        rest: list[Token] = []
        for k, a in enumerate(args[len(names):]):
            rest += ([Token("punct", ",", at.line, at.col)] if k else []) + a
        raw[variadic] = rest
    memo: dict[str, list[Token]] = {}

    def paste_before(n: int) -> bool:
        return n > 0 and body[sig[n - 1]].is_punct("##")

    out: list[Token] = []
    paste = False
    sig = [k for k, b in enumerate(body) if b.kind != "ws"]
    for n, k in enumerate(sig):
        b = body[k]
        if b.is_punct("##"):
            if not out or n + 1 == len(sig):
                return None
            paste = True
            continue
        if function and b.is_punct("#"):
            continue  # the stringify operator, applied with its parameter below
        stringify = function and n > 0 and body[sig[n - 1]].is_punct("#")
        if stringify and b.text not in raw:
            return None
        nxt = body[sig[n + 1]] if n + 1 < len(sig) else None
        if stringify:
            piece = [_stringified(raw[b.text], at)]
        elif b.kind == "id" and b.text in raw:
            if paste and b.text == variadic and out[-1].is_punct(","):  # GNU's ", ## args"
                paste = False
                if not _trimmed(raw[b.text]):
                    out.pop()
                    continue
            if paste or (nxt is not None and nxt.is_punct("##")):
                piece = _trimmed(raw[b.text]) or [Token(_MARK, "", at.line, at.col)]
            else:
                if b.text not in memo:
                    memo[b.text] = _trimmed(_expand(raw[b.text], table, off))
                piece = memo[b.text]
        else:
            piece = [b]
        if paste:
            joined = _pasted(out.pop(), piece[0], at) if piece else None
            if joined is None:
                return None
            piece = [joined, *piece[1:]]
            paste = False
        start = sig[n - 1] if stringify else k  # where the element starts in the body
        if out and start > 0 and body[start - 1].kind == "ws" and not paste_before(n):
            out.append(Token("ws", " ", at.line, at.col))
        out += piece
    return [t for t in out if t.kind != _MARK]
