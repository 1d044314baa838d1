"""The helper functions a module defines, found in one walk over its helper tokens.

A helper is a top-level function definition outside the ``@kernel`` functions
(``float sq(float x) { return x * x; }``). :func:`functions_of` finds each one once
per :class:`~portakern.syntax.language.Module` and keeps the answer on the module, so
the checks that read helpers (:mod:`portakern.analysis.definition_checks`) and the
lowering that inlines barrier helpers (:mod:`portakern.lower.barrier_helpers`) see the
same definitions, instead of each re-finding them by counting brackets.
"""

from __future__ import annotations

from dataclasses import dataclass

from .language import Module, Token
from .tokens import match_bracket

__all__ = ["FunctionDef", "functions_of", "skip_blank"]

_BLANK = ("ws", "comment", "pp")


@dataclass(frozen=True)
class FunctionDef:
    """One top-level function definition; indices are into ``module.helpers``.

    ``start`` is where its declaration starts (after the previous ``;``, ``}`` or
    preprocessor line at the top level: its return type and specifiers), ``name_at``
    its name, ``params`` the tokens between its parentheses, ``brace`` its ``{``,
    ``end`` its ``}`` and ``close`` that token.
    """

    name: Token
    start: int
    name_at: int
    params: tuple[Token, ...]
    brace: int
    end: int
    body: tuple[Token, ...]
    close: Token

    def returns(self, helpers: list[Token]) -> list[Token]:
        """The code tokens before the name: specifiers and the return type."""
        return [t for t in helpers[self.start:self.name_at] if t.kind not in _BLANK]


def skip_blank(toks: list[Token], k: int, step: int) -> int:
    """The first index from ``k`` on, stepping by ``step``, that is not blank or a
    preprocessor line (``len(toks)`` or -1 if none)."""
    while 0 <= k < len(toks) and toks[k].kind in _BLANK:
        k += step
    return k


def functions_of(module: Module) -> tuple[FunctionDef, ...]:
    """Each top-level function definition of ``module``, in source order (kept on it)."""
    known = module.__dict__.get("_functions")
    if known is not None and known[0] is module.helpers:
        return known[1]
    toks = module.helpers
    smap = module.source_map
    found: list[FunctionDef] = []
    depth = 0
    start = 0
    n = 0
    while n < len(toks):
        t = toks[n]
        if t.kind in _BLANK:
            if depth == 0 and t.kind == "pp":
                start = n + 1
            n += 1
            continue
        if depth == 0 and t.kind == "punct" and t.text in (";", "}"):
            start = n + 1
        if depth == 0 and t.is_punct("("):
            close = match_bracket(toks, n, smap)
            brace = skip_blank(toks, close + 1, 1)
            if brace < len(toks) and toks[brace].is_punct("{"):
                end = match_bracket(toks, brace, smap)
                name_at = skip_blank(toks, n - 1, -1)
                if name_at >= 0 and toks[name_at].kind == "id":
                    made = FunctionDef(toks[name_at], start, name_at, tuple(toks[n + 1:close]),
                                       brace, end, tuple(toks[brace + 1:end]), toks[end])
                    found.append(made)
                n = end + 1
                start = n
                continue
            n = close + 1
            continue
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        n += 1
    out = tuple(found)
    module.__dict__["_functions"] = (module.helpers, out)
    return out
