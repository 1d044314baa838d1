"""A Jinja constant that is a C expression (``{{ op | expr }}``), parsed before it is written.

:mod:`portakern.source.template` keeps a string constant that names no type as an
:class:`~portakern.source.template.ExpressionConstant`, usable only through the ``expr``
filter. The filter needs this stage's lexer and expression parser, so the template class
that the later stages use (:class:`KernelTemplate`, exported by
:mod:`portakern.render.emit`) hands it :func:`check_constant_expression`. A constant that
is not one C expression is a :class:`~portakern.errors.KernelSyntaxError` at the
constant's own text, with a caret, before anything is pasted.
"""

from __future__ import annotations

from ..errors import KernelSyntaxError
from ..source import template
from ..source.source_map import SourceMap
from .expressions import parse_expression, parse_statement
from .tokens import significant, tokenize

__all__ = ["KernelTemplate", "check_constant_expression"]

_JINJA = ("{{", "}}", "{%", "%}", "{#", "#}")
_PAIRS = {")": "(", "]": "[", "}": "{"}


def check_constant_expression(name: str, text: str) -> str:
    """The C text constant ``name`` stands for: ``text`` checked, in parentheses.

    Raises
    ------
    KernelSyntaxError
        At the constant's line and column: a Jinja marker, a preprocessor line, a ``;``
        or a brace, an unbalanced bracket, a declaration or anything else that is not one
        C expression.
    """
    where = f"<constant {name!r}>"
    lines = text.split("\n")

    def error(msg: str, line: int, col: int) -> KernelSyntaxError:
        shown = lines[line - 1] if 0 < line <= len(lines) else None
        return KernelSyntaxError(f"constant {name!r}: {msg}", where, line, col, shown)

    for marker in _JINJA:
        at = text.find(marker)
        if at >= 0:
            line = text.count("\n", 0, at) + 1
            raise error(f"{marker!r} is Jinja, not C; a constant is never a template",
                        line, at - (text.rfind("\n", 0, at) + 1) + 1)
    smap = SourceMap(where, text, list(range(1, len(lines) + 1)))
    try:
        every = tokenize(text, smap)
    except KernelSyntaxError as exc:
        raise error(exc.msg, exc.lineno or 1, exc.offset or 1) from None
    toks = significant(every)
    if not toks:
        raise error("empty; give one C expression such as 'a + b'", 1, 1)
    stack = []
    for t in toks:
        if t.kind == "pp":
            raise error("a preprocessor line cannot be part of an expression", t.line, t.col)
        if t.kind != "punct":
            continue
        if t.text in (";", "{", "}"):
            raise error(f"{t.text!r} cannot appear in one C expression", t.line, t.col)
        if t.text in "([":
            stack.append(t)
        elif t.text in _PAIRS:
            if not stack or stack[-1].text != _PAIRS[t.text]:
                raise error(f"{t.text!r} closes nothing", t.line, t.col)
            stack.pop()
    if stack:
        raise error(f"{stack[-1].text!r} is never closed", stack[-1].line, stack[-1].col)
    if parse_expression(toks) is None:
        what = ("a declaration, not an expression" if parse_statement(toks) is not None
                else "not one C expression")
        raise error(what, toks[0].line, toks[0].col)
    if len(lines) == 1 and not any(t.kind == "comment" for t in every):
        return f"({text.strip()})"
    # Comments dropped and lines joined: the expression stays on the template's line.
    return "(" + " ".join(t.text for t in toks) + ")"


class KernelTemplate(template.KernelTemplate):
    """The user's source as a Jinja template whose ``expr`` filter checks C expressions."""

    check_expression = staticmethod(check_constant_expression)
