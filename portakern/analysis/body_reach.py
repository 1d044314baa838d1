"""Which statements of a kernel body every work-item reaches, read off its tokens.

Shared by the bounds analyses (:mod:`.bounds` for array parameters, :mod:`.local_bounds`
for ``@localmem`` and private arrays): the body's top-level statements
(:func:`statements`), whether a variable is only read after its declaration
(:func:`untouched`), and the macros of the source that could hide a condition
(:func:`hiding_macros`). A statement counts as reached by every work-item when it is a
top-level declaration or expression statement without a partial evaluation in it
(:data:`PARTIAL`), after no statement that may leave the kernel (:data:`EXITS`).
"""

from __future__ import annotations

import re

from ..patterns import lazy
from ..syntax.language import KernelDef, Module, Token
from ..syntax.macros import macro_of
from ..syntax.parts import match_items

__all__ = ["ASSIGN_OPS", "CONTROL", "EXITS", "GIVE_UP", "INDEX_TYPES", "NOT_CALLS", "PARTIAL",
           "body_tokens", "closing", "hiding_macros", "in_binding", "statements", "strip_parens",
           "texts", "untouched"]

#: Declared types of a linear index variable (integers of at least 32 bits).
INDEX_TYPES = frozenset({"int", "long", "uint", "ulong", "int32_t", "int64_t", "uint32_t",
                          "uint64_t", "size_t", "ptrdiff_t", "intptr_t", "auto"})
#: A statement that starts with one of these runs conditionally (or not at all).
CONTROL = frozenset({"if", "else", "for", "while", "do", "switch", "case", "default",
                      "return", "goto", "try", "catch", "break", "continue", "throw"})
#: Inside a statement: part of it may not be evaluated.
PARTIAL = frozenset({"?", "&&", "||", "sizeof", "decltype", "alignof", "_Alignof", "typeid",
                      "noexcept"})
#: After one of these, later statements may not run.
EXITS = frozenset({"return", "throw", "exit", "_Exit", "quick_exit", "abort",
                    "__builtin_trap", "__builtin_unreachable", "__trap", "trap", "longjmp"})
#: Anywhere in the body: no conclusion is drawn.
GIVE_UP = frozenset({"goto", "asm", "__asm", "__asm__", "setjmp"})
ASSIGN_OPS = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"})
NOT_CALLS = frozenset({"if", "while", "for", "switch", "return"})
INCLUDE = lazy(r"#\s*(include|import)\b")
#: In a macro's replacement: it may skip code, or leave the kernel.
MACRO_FLOW = lazy(
    r"\b(?:if|else|for|while|do|switch|case|return|goto|break|continue|throw|exit|abort|"
    r"__builtin_trap|__builtin_unreachable|__trap|longjmp)\b|\?|&&|\|\||;|\{")


def hiding_macros(helpers: list[Token]) -> set[str] | None:
    """Names of the source's macros that may hide a condition (None: some cannot be seen)."""
    names: set[str] = set()
    for t in helpers:
        if t.kind != "pp":
            continue
        text = re.sub(r"\\\n", " ", t.text)
        if INCLUDE.match(text):
            return None
        m = macro_of(t)
        if m is not None and not m.undef and MACRO_FLOW.search(m.body):
            names.add(m.name)
    return names


def body_tokens(tokens: list[Token]) -> list[Token]:
    """``tokens`` without whitespace and comments."""
    return [t for t in tokens if t.kind not in ("ws", "comment")]


def closing(sig: list[Token], i: int) -> int:
    """Index of the bracket closing ``sig[i]`` (len(sig) if never closed)."""
    try:
        return match_items(sig, i)
    except ValueError:
        return len(sig)


def statements(module: Module, kdef: KernelDef, sig: list[Token]
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


def texts(toks: list[Token]) -> tuple[str, ...]:
    return tuple(t.text for t in toks)


def strip_parens(toks: list[Token]) -> list[Token]:
    while len(toks) >= 2 and toks[0].is_punct("(") and closing(toks, 0) == len(toks) - 1:
        toks = toks[1:-1]
    return toks


def untouched(sig: list[Token], name: str, declared_at: set[int]) -> bool:
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
                                 or (prev.text in ("[", ",") and in_binding(sig, j))):
            return False  # redeclared, its address taken, incremented, or bound again
        if nxt is not None and (nxt.text in ("=", "++", "--") or (
                nxt.text in ASSIGN_OPS and j + 2 < len(sig) and sig[j + 2].text == "=")):
            return False  # assigned
        if opens and prev is not None and prev.text in ("(", ","):
            o = opens[-1]
            caller = sig[o - 1] if o else None
            if caller is not None and caller.kind == "id" and caller.text not in NOT_CALLS:
                return False  # an argument of a call: a reference parameter could change it
    return True


def in_binding(sig: list[Token], j: int) -> bool:
    """Whether ``sig[j]`` is a name in an ``auto [a, b]`` binding list."""
    k = j
    while k > 0 and (sig[k].kind == "id" or sig[k].is_punct(",")):
        k -= 1
    return sig[k].is_punct("[") and k > 0 and sig[k - 1].text in ("auto", "&", "&&")
