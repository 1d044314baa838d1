"""What a module declares outside its kernels, read for the typed tree.

The helper code's functions (name and return type), its ``struct``\\ s and ``typedef``\\ s
(with the statements of their fields) and its ``#define NAME value`` constants: the
names :mod:`portakern.analysis.expression_types` puts in a kernel's symbol table.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import KernelSyntaxError
from ..source.source_map import SourceMap
from .expressions import Expr, parse_value_or_type
from .macros import macro_of
from .tokens import Token, function_signatures, split_top, tokenize

__all__ = ["function_signatures", "parse_define", "split_statements", "top_level_types"]




def parse_define(pp: Token, type_names: Iterable[str] = ()) -> tuple[str, Expr] | None:
    """``#define NAME value`` (no parameters): the name and its value's tree, or None.

    A value that names a type (``#define real float``) is a :class:`TypeName`.
    """
    macro = macro_of(pp)
    if macro is None or macro.undef or macro.params is not None or not macro.body:
        return None
    text = macro.body
    try:
        toks = tokenize(text, SourceMap("", text, [pp.line] * (text.count("\n") + 1)))
    except KernelSyntaxError:
        return None
    tree = parse_value_or_type(toks, type_names)
    if tree is None:
        return None
    return macro.name, tree


def top_level_types(helpers: list[Token]) -> list[tuple[str, str, list[list[Token]]]]:
    """``("struct", name, field statements)`` and ``("typedef", name, [tokens])`` at depth 0."""
    sig = [t for t in helpers if t.kind not in ("ws", "comment", "pp")]
    out: list[tuple[str, str, list[list[Token]]]] = []
    n = 0
    while n < len(sig):
        t = sig[n]
        if t.kind == "id" and t.text in ("typedef", "struct"):
            end, depth, brace = n, 0, None
            while end < len(sig):
                s = sig[end]
                if s.is_punct("{"):
                    depth += 1
                    brace = end if brace is None else brace
                elif s.is_punct("}"):
                    depth -= 1
                elif depth == 0 and s.is_punct(";"):
                    break
                end += 1
            stmt = sig[n:end]
            if brace is not None:
                close = max(i for i, s in enumerate(stmt) if s.is_punct("}"))
                inner = stmt[brace - n + 1:close]
                fields = split_statements(inner)
                names = [s.text for s in stmt[close + 1:] if s.kind == "id"]
                head = [s.text for s in stmt[:brace - n] if s.kind == "id"
                        and s.text not in ("typedef", "struct")]
                for name in names[-1:] + head[:1]:
                    out.append(("struct", name, fields))
            elif t.text == "typedef" and len(stmt) > 2:
                out.append(("typedef", stmt[-1].text, [stmt[1:]]))
            n = end + 1
            continue
        n += 1
    return out


def split_statements(tokens: list[Token]) -> list[list[Token]]:
    """``tokens`` cut at each ``;`` outside brackets, empty statements dropped."""
    return [s for s in split_top(tokens, ";") if s]
