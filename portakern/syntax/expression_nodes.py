"""The nodes of an expression tree, and the walks over them.

:mod:`portakern.syntax.expressions` builds them from a statement's tokens; every node keeps
its first and last token and the tokens it reads itself (:attr:`Expr.ops`), so
:func:`tokens_in` gives back exactly the statement's code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .tokens import Token

__all__ = ["Assign", "Binary", "Call", "Cast", "Comma", "Construct", "Decl", "Declarator",
           "Expr", "ForHeader", "InitList", "Literal", "Member", "Name", "Paren", "Subscript",
           "Ternary", "TypeName", "Unary", "children", "tokens_in", "walk"]


# -- nodes ----------------------------------------------------------------------------

@dataclass(eq=False)
class Expr:
    """A node: ``first``/``last`` are its first and last tokens; ``ops`` the tokens it reads
    itself (its children read the others)."""

    first: Token = field(repr=False)
    last: Token = field(repr=False)
    ops: tuple[Token, ...] = field(default=(), repr=False)

    @property
    def line(self) -> int:
        return self.first.line


@dataclass(eq=False)
class Name(Expr):
    name: str = ""


@dataclass(eq=False)
class Literal(Expr):
    """``kind``: ``int``, ``float``, ``char``, ``string`` or ``bool``; ``suffix`` lower-cased
    (``u``, ``ul``, ``f``, ``h``...)."""

    kind: str = ""
    text: str = ""
    suffix: str = ""


@dataclass(eq=False)
class Unary(Expr):
    """``-x``, ``!x``, ``*p``, ``&x``, ``++i`` (``postfix`` false) or ``i++`` (true);
    ``sizeof`` too (its operand may be a :class:`TypeName`)."""

    op: str = ""
    operand: Expr | None = None
    postfix: bool = False


@dataclass(eq=False)
class Binary(Expr):
    op: str = ""
    left: Expr | None = None
    right: Expr | None = None


@dataclass(eq=False)
class Assign(Expr):
    """``target op value``; ``op`` is ``=`` or a compound one (``+=``)."""

    op: str = "="
    target: Expr | None = None
    value: Expr | None = None


@dataclass(eq=False)
class Ternary(Expr):
    condition: Expr | None = None
    then: Expr | None = None
    orelse: Expr | None = None


@dataclass(eq=False)
class Comma(Expr):
    """``a, b, c``: C's comma operator (the value is the last)."""

    items: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Call(Expr):
    """``f(args)``; ``func`` is a :class:`TypeName` for a constructor (``float4(a, b, c, d)``)."""

    func: Expr | None = None
    args: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Subscript(Expr):
    """``base[i]`` or ``base[i, j]``: ``indices`` holds each comma-separated index."""

    base: Expr | None = None
    indices: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Member(Expr):
    """``base.name`` or ``base->name`` (a vector swizzle is ``v.xy``)."""

    base: Expr | None = None
    op: str = "."
    name: str = ""


@dataclass(eq=False)
class TypeName(Expr):
    """A type as written: ``words`` without qualifiers (``("unsigned", "int")``),
    ``stars`` its pointer levels, ``const`` whether it is read-only."""

    words: tuple[str, ...] = ()
    stars: int = 0
    const: bool = False

    @property
    def spelling(self) -> str:
        return " ".join(self.words) + "*" * self.stars


@dataclass(eq=False)
class Cast(Expr):
    type: TypeName | None = None
    operand: Expr | None = None


@dataclass(eq=False)
class Construct(Expr):
    """``@name(args)`` (or ``@name`` alone); a lone operator argument
    (``@groupreduce(+, v)``) is a :class:`Name` of its text."""

    name: str = ""
    args: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Paren(Expr):
    inner: Expr | None = None


@dataclass(eq=False)
class InitList(Expr):
    """``{a, b}``, an initializer."""

    items: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Declarator(Expr):
    """One name a declaration makes: ``*name[d0][d1] = init``."""

    name: str = ""
    stars: int = 0
    dims: list[Expr | None] = field(default_factory=list)
    init: Expr | None = None


@dataclass(eq=False)
class Decl(Expr):
    """``T a = e, b[3];``, ``@localmem float tile[16];`` or ``auto [i, j] = e;``.

    ``constructs`` are the ``@`` words before the type; ``bindings`` the names of a
    structured binding (then ``declarators`` is empty and ``init`` the value).
    """

    type: TypeName | None = None
    declarators: list[Declarator] = field(default_factory=list)
    constructs: tuple[str, ...] = ()
    bindings: list[Name] = field(default_factory=list)
    init: Expr | None = None


@dataclass(eq=False)
class ForHeader(Expr):
    """``init; condition; step`` of a ``for`` (each part may be None when empty)."""

    init: Expr | None = None
    condition: Expr | None = None
    step: Expr | None = None


def children(node: Expr) -> list[Expr]:
    """The node's child nodes, in source order."""
    if isinstance(node, Unary):
        return [node.operand] if node.operand is not None else []
    if isinstance(node, (Binary,)):
        return [n for n in (node.left, node.right) if n is not None]
    if isinstance(node, Assign):
        return [n for n in (node.target, node.value) if n is not None]
    if isinstance(node, Ternary):
        return [n for n in (node.condition, node.then, node.orelse) if n is not None]
    if isinstance(node, (Comma, InitList)):
        return list(node.items)
    if isinstance(node, Call):
        return [node.func, *node.args] if node.func is not None else list(node.args)
    if isinstance(node, Subscript):
        return [node.base, *node.indices] if node.base is not None else list(node.indices)
    if isinstance(node, Member):
        return [node.base] if node.base is not None else []
    if isinstance(node, Cast):
        return [n for n in (node.type, node.operand) if n is not None]
    if isinstance(node, Construct):
        return list(node.args)
    if isinstance(node, Paren):
        return [node.inner] if node.inner is not None else []
    if isinstance(node, Declarator):
        return [d for d in node.dims if d is not None] + ([node.init] if node.init else [])
    if isinstance(node, Decl):
        out: list[Expr] = [node.type] if node.type is not None else []
        out += node.bindings
        out += node.declarators
        return out + ([node.init] if node.init is not None else [])
    if isinstance(node, ForHeader):
        return [n for n in (node.init, node.condition, node.step) if n is not None]
    return []


def walk(node: Expr) -> Iterator[Expr]:
    """``node`` and every node under it, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def tokens_in(node: Expr) -> list[Token]:
    """Every token the tree reads, each once (tree order, not source order)."""
    out: list[Token] = []
    for n in walk(node):
        out.extend(n.ops)
    return out
