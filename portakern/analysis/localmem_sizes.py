"""What a ``@localmem`` size may read (DESIGN §1a, "Sizes chosen at launch"), checked on the
parsed kernel so that ``pk.kernel()`` refuses the source: integer literals, ``#define`` and
Jinja constants, scalar parameters and ``@groupsize``. The lowering
(:meth:`portakern.lower.constructs.ConstructLowering.do_localmem`) makes the same check where
it lowers the declaration, and turns a size that reads a parameter or an undeclared
``@groupsize`` into one the launch computes."""

from __future__ import annotations

from ..patterns import lazy
from ..syntax.language import KernelDef, Module, significant

__all__ = ["check_localmem_sizes", "size_message"]

_NUMBER = lazy(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_DEFINE = lazy(r"#\s*define\s+([A-Za-z_]\w*)(?!\()")


def size_message(text: str) -> str:
    """The refusal of a ``@localmem`` size that reads ``text``."""
    return (f"@localmem size may read integer literals, #define and Jinja constants, "
            f"scalar parameters and @groupsize, and {text!r} is none of these; use a "
            f"literal, a constant such as {{{{ TILE }}}}, or a scalar parameter "
            f"('@localmem float buf[n * 2];')")


def check_localmem_sizes(module: Module, kernel: KernelDef) -> None:
    """Raise a ``KernelSyntaxError`` at the first thing a ``@localmem`` size reads that it
    may not (see the module docstring)."""
    body = significant(kernel.body)
    if not any(t.kind == "at" and t.text == "@localmem" for t in body):
        return
    macros = {m.group(1) for t in module.helpers if t.kind == "pp"
              for m in [_DEFINE.match(t.text)] if m}
    scalars = {p.name for p in kernel.params if not p.pointer and not p.axes}
    n = 0
    while n < len(body):
        if not (body[n].kind == "at" and body[n].text == "@localmem"):
            n += 1
            continue
        n += 1
        depth = 0
        while n < len(body) and not body[n].is_punct(";"):
            t = body[n]
            n += 1
            if t.is_punct("["):
                depth += 1
            elif t.is_punct("]"):
                depth -= 1
            elif depth and not (
                    t.kind == "num" and _NUMBER.fullmatch(t.text)
                    or t.kind == "punct" and t.text in "+-*/%()<<>>"
                    or t.kind == "id" and (t.text in macros or t.text in scalars)
                    or t.kind == "at" and t.text == "@groupsize"):
                raise module.source_map.error_at(size_message(t.text), t)
