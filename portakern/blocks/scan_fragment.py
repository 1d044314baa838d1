"""Checked C expressions for the scan blocks: ``scan_expr`` (``"a+b"``) and a predicate.

A building block pastes the user's expression into a kernel it generates, so the
expression is checked here first, on its own text: one C expression (no statement,
assignment, increment or portakern construct), naming only the variables the block
provides, the math functions of the portable subset, the portable constants and type
names (in casts). An error is a :class:`~portakern.errors.KernelSyntaxError` at the
fragment's own column, with a caret under it, never one inside the generated code.
"""

from __future__ import annotations

from ..errors import KernelSyntaxError
from ..source.source_map import SourceMap
from ..syntax.tokens import Token, significant, tokenize
from ..target_facts import CONSTANTS, MATH_FUNCTIONS
from ..types import KNOWN_TYPES

__all__ = ["check_expression"]

#: Binary operators by precedence, loosest first (C's table, without assignment and comma).
_BINARY = (("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%"))
_UNARY = ("-", "+", "!", "~")
_REFUSED = {"=": "an assignment", "+=": "an assignment", "-=": "an assignment",
            "++": "an increment", "--": "a decrement", ";": "a statement separator",
            "{": "a block", "}": "a block", ",": "a comma outside a call"}


class _Check:
    """A recursive-descent walk over one expression's tokens (C's grammar, no side effects)."""

    def __init__(self, toks: list[Token], smap: SourceMap, what: str, names: frozenset[str],
                 end: Token) -> None:
        self.toks, self.smap, self.what, self.names = toks, smap, what, names
        self.k = 0
        self.end = end

    def error(self, msg: str, tok: Token | None = None) -> KernelSyntaxError:
        at = tok or self.peek()
        return self.smap.error(f"{self.what}: {msg}", at.line, at.col, 0)

    def peek(self) -> Token:
        return self.toks[self.k] if self.k < len(self.toks) else self.end

    def take(self, text: str | None = None) -> Token:
        tok = self.peek()
        if tok is self.end:
            raise self.error("the expression ends too early" if text is None
                             else f"expected {text!r} before the end of the expression")
        if text is not None and tok.text != text:
            raise self.error(f"expected {text!r}, found {tok.text!r}", tok)
        self.k += 1
        return tok

    def at(self, *texts: str) -> bool:
        tok = self.peek()
        return tok is not self.end and tok.kind == "punct" and tok.text in texts

    def expression(self) -> None:
        self.binary(0)
        if self.at("?"):
            self.take("?")
            self.expression()
            self.take(":")
            self.expression()

    def binary(self, level: int) -> None:
        if level == len(_BINARY):
            self.unary()
            return
        self.binary(level + 1)
        while self.at(*_BINARY[level]):
            self.take()
            self.binary(level + 1)

    def unary(self) -> None:
        if self.at(*_UNARY):
            self.take()
            self.unary()
            return
        tok = self.peek()
        if self.at("(") and self.k + 2 < len(self.toks) \
                and self.toks[self.k + 1].text in KNOWN_TYPES and self.toks[self.k + 2].text == ")":
            self.k += 3  # a cast to a portable type: (float)a
            self.unary()
            return
        self.primary(tok)

    def primary(self, tok: Token) -> None:
        if tok is self.end:
            raise self.error("the expression ends too early (an operand is missing)")
        if tok.kind == "punct" and tok.text == "(":
            self.take("(")
            self.expression()
            self.take(")")
        elif tok.kind == "num":
            self.take()
        elif tok.kind == "id":
            self.take()
            if self.at("("):
                if tok.text not in MATH_FUNCTIONS:
                    raise self.error(f"unknown function {tok.text!r} (the math functions of "
                                     "docs/language.md#math may be called)", tok)
                self.take("(")
                if not self.at(")"):
                    self.expression()
                    while self.at(","):
                        self.take(",")
                        self.expression()
                self.take(")")
            elif tok.text not in self.names and tok.text not in CONSTANTS \
                    and tok.text not in ("true", "false"):
                have = ", ".join(sorted(self.names))
                raise self.error(f"unknown name {tok.text!r}; the expression may use {have}",
                                 tok)
        elif tok.kind == "at":
            raise self.error(f"{tok.text} is a kernel construct, not allowed in an "
                             "expression", tok)
        elif tok.text in _REFUSED:
            raise self.error(f"{_REFUSED[tok.text]} ({tok.text!r}) is not allowed: give one "
                             "C expression without side effects", tok)
        else:
            raise self.error(f"unexpected {tok.text!r}", tok)
        while self.at("["):  # a subscript is refused: the variables are values
            raise self.error("the variables are values, not arrays: no subscript",
                             self.peek())


def check_expression(text: object, what: str, names: frozenset[str] | set[str]) -> str:
    """Check that ``text`` is one C expression over ``names``; return it, stripped.

    ``what`` names the argument in messages (``"scan_expr"``). Raises
    :class:`~portakern.errors.KernelSyntaxError` at the fragment's column, or
    ``TypeError`` when ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a C expression as a string (like \"a+b\"), got "
                        f"{type(text).__name__} {text!r}")
    if "\n" in text.strip():
        raise KernelSyntaxError(f"{what}: give the expression on one line", f"<{what}>", 1, 1,
                                text)
    smap = SourceMap(f"<{what}>", text, [1])
    toks = [t for t in significant(tokenize(text, smap)) if t.kind != "pp"]
    end = Token("end", "", 1, len(text.rstrip()) + 1)
    if not toks:
        raise smap.error(f"{what} is empty: give a C expression", 1, 1, 0)
    check = _Check(toks, smap, what, frozenset(names), end)
    check.expression()
    if check.k < len(toks):
        tok = toks[check.k]
        if tok.text in _REFUSED:
            raise check.error(f"{_REFUSED[tok.text]} ({tok.text!r}) is not allowed: give one "
                              "C expression without side effects", tok)
        raise check.error(f"unexpected {tok.text!r} after the end of the expression", tok)
    return text.strip()
