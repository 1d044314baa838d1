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

from .tokens import Token

__all__ = ["Macro", "macro_of", "macros_in"]

_LINE = re.compile(r"#\s*(define|undef)\s+([A-Za-z_]\w*)(\([^)]*\))?(.*)", re.DOTALL)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


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
