"""A type on every expression of a kernel body: the typed tree, computed once.

:func:`typed_body` reads a body's statement tree (:mod:`portakern.syntax.tree`) and the
expressions of each statement (:mod:`portakern.syntax.expressions`) with a symbol table
(the kernel's parameters, locals in scope order, ``for`` variables, ``@localmem`` and
``@private`` arrays, structured bindings, the module's helper functions, ``typedef``\\ s,
structs and ``#define`` constants, the limit and math constants every target defines) and
gives each node a :class:`CType` by C's rules (:mod:`portakern.analysis.c_types`):

* the usual arithmetic conversions: integer promotions (``bool``, ``char``, 8- and 16-bit
  integers become ``int``); between integers the higher rank, unsigned winning at equal
  or higher rank unless the signed type is wider; a floating operand wins over an
  integer one, ``double`` over ``float`` over ``half``;
* pointers: ``p + n`` is ``p``'s type, ``p - q`` a ``long``, ``p[i]`` and ``*p`` the
  element, ``&x`` a pointer; arrays decay to pointers in arithmetic;
* vectors (``float4``): a scalar operand widens, a swizzle ``v.xy`` is ``float2``, ``v.x``
  a ``float``, comparisons an ``int`` vector;
* literals by their suffix and value (``1`` int, ``1u`` uint, ``1ul`` ulong, ``1.0``
  double, ``1.0f`` float, ``1.0h`` half, ``'a'`` char as in C++);
* ``@index(..., Linear)``, ``@ndrange``, ``@groupsize``, ``@groups`` and the subgroup
  indices are ``long`` (docs/language.md); the collectives give their value's type;
* the math functions their argument's floating type (``sqrt(int)`` is double as in C++),
  their ``f`` forms float; ``dot``/``length`` a vector's element;
* a type variable is its binding (``{"T": "float"}``) or stays a ``typevar`` type.

Whatever it does not understand is typed ``unknown``, never an error: this is a reader
for analyses, and the target compilers stay the judges of the program. The result is a
:class:`TypedBody`, cached in the body's :class:`~portakern.syntax.tree.BodyFacts`
(``facts.derived``), so every analysis reads the same type map (docs/rendering.md,
"The typed tree").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..syntax.declarations import function_signatures, parse_define, top_level_types
from ..syntax.expressions import (
    Assign,
    Binary,
    Call,
    Cast,
    Comma,
    Construct,
    Decl,
    Declarator,
    Expr,
    ForHeader,
    InitList,
    Literal,
    Member,
    Name,
    Paren,
    Subscript,
    Ternary,
    TypeName,
    Unary,
    parse_run,
    parse_statement,
    statement_code,
    walk,
)
from ..syntax.language import KernelDef, Module, Token
from ..syntax.tree import Block, If, Loop, Node, Switch, parse_body
from ..syntax.vectors import VECTOR_TYPES
from ..target_facts import CONSTANTS
from .c_types import (
    SCALARS,
    UNKNOWN,
    VOID,
    WORD,
    CType,
    arithmetic,
    binary_type,
    bound_name,
    library_call_type,
    literal_int,
    literal_type,
    pointer_to,
    promote,
    scalar,
    swizzle_type,
    vector,
    vector_named,
)

__all__ = ["CType", "Narrowing", "Symbol", "TypedBody", "UNKNOWN", "arithmetic", "scalar",
           "index_narrowing", "typed_body", "unknown_nodes"]


@dataclass(eq=False)
class Symbol:
    """A name the body can use: ``kind`` is ``param``, ``local``, ``loop`` (declared in a
    ``for`` header), ``localmem``, ``private``, ``binding`` (``auto [i, j]``), ``global``
    (the module's) or ``function``."""

    name: str
    type: CType
    kind: str
    line: int = 0
    #: The declarator or binding that made it (None for parameters and the module's names).
    node: Expr | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Narrowing:
    """A variable narrower than 64 bits that holds the global linear index (or arithmetic
    on it): ``int i = @index(Global, Linear);`` wraps past 2**31 items."""

    name: str
    type: str
    line: int
    col: int
    #: ``declared`` (its initializer) or ``assigned`` (a later ``=``).
    how: str


_INDEX_CONSTRUCTS = frozenset({"@ndrange", "@groupsize", "@groups", "@subgroupsize",
                               "@laneid", "@subgroupid"})
_VALUE_CONSTRUCTS = frozenset({"@shuffle", "@shuffle_down", "@shuffle_up", "@shuffle_xor",
                               "@broadcast"})


class TypedBody:
    """A kernel body's statements, their expression trees, and a type on every node.

    Attributes
    ----------
    root : Block
        The statement tree (:func:`portakern.syntax.tree.parse_body`).
    trees : dict
        Statement node -> list of ``(tokens, tree)``, one per run of code the statement
        holds (:func:`portakern.syntax.expressions.statement_code`); ``tree`` is None
        when the parser does not read it.
    types : dict
        Expression node -> :class:`CType` (every node of every tree).
    symbols : list of Symbol
        Every name declared, in declaration order (parameters first).
    resolved : dict
        :class:`~portakern.syntax.expressions.Name` node -> the :class:`Symbol` it uses.
    """

    def __init__(self, root: Block, module: Module, kdef: KernelDef,
                 binding: Mapping[str, Any] | None = None) -> None:
        self.root = root
        self.module = module
        self.kdef = kdef
        self.binding = {k: bound_name(v) for k, v in (binding or {}).items()
                        if k in kdef.type_vars}
        self.trees: dict[Node, list[tuple[list, Expr | None]]] = {}
        self.types: dict[Expr, CType] = {}
        self.symbols: list[Symbol] = []
        self.resolved: dict[Name, Symbol] = {}
        self.structs: dict[str, dict[str, CType]] = {}
        self.aliases: dict[str, CType] = {}
        self.functions: dict[str, CType] = {}
        self._type_names = frozenset(module.type_names) | frozenset(kdef.type_vars)
        globals_ = self._read_module()
        scope: dict[str, Symbol] = dict(globals_)
        for p in kdef.params:
            t = self.named_type((p.type,))
            if p.pointer:
                t = pointer_to(t, p.const)
            self._declare(scope, Symbol(p.name, t, "param", p.line))
        self._statement(root, scope)

    # -- what the module declares ----------------------------------------------------
    def _read_module(self) -> dict[str, Symbol]:
        out: dict[str, Symbol] = {}
        helpers = self.module.helpers
        for name, returns in function_signatures(helpers):
            self.functions[name] = self.spelled_type(returns)
        for t in helpers:
            if t.kind == "pp":
                hit = parse_define(t, self._type_names)
                if hit is None:
                    continue
                name, tree = hit
                if isinstance(tree, TypeName):
                    self.aliases[name] = self.type_of_name(tree)
                else:
                    out[name] = Symbol(name, self._expr(tree, out), "global", t.line)
                    self.symbols.append(out[name])
        for kind, name, body in top_level_types(helpers):
            if kind == "struct":
                fields: dict[str, CType] = {}
                for stmt in body:
                    decl = parse_statement(stmt, self._type_names)
                    if isinstance(decl, Decl) and decl.type is not None:
                        base = self.type_of_name(decl.type)
                        for d in decl.declarators:
                            fields[d.name] = self._declared(base, d)
                self.structs[name] = fields
            else:
                decl = parse_statement(body[0], self._type_names) if body else None
                if isinstance(decl, Decl) and decl.type is not None and decl.declarators:
                    self.aliases[name] = self._declared(self.type_of_name(decl.type),
                                                        decl.declarators[-1])
        return out

    # -- types as written --------------------------------------------------------------
    def named_type(self, words: tuple[str, ...]) -> CType:
        text = " ".join(words)
        if text in self.binding:
            return scalar(self.binding[text]) if self.binding[text] else UNKNOWN
        if text in self.kdef.type_vars:
            return CType("typevar", text)
        if text in self.aliases:
            return self.aliases[text]
        if text in VECTOR_TYPES:
            return vector_named(text)
        if text == "void":
            return VOID
        if text in self.structs or text in self._type_names:
            return CType("struct", text)
        return scalar(text)

    def spelled_type(self, spelling: str) -> CType:
        """``"const float*"`` -> its type."""
        stars = spelling.count("*")
        words = tuple(w for w in spelling.replace("*", " ").replace("&", " ").split()
                      if w not in ("const", "volatile", "struct", "__device__", "static",
                                   "inline"))
        t = self.named_type(words)
        for _ in range(stars):
            t = pointer_to(t)
        return t

    def type_of_name(self, tn: TypeName) -> CType:
        t = self.named_type(tn.words)
        for n in range(tn.stars):
            t = pointer_to(t, tn.const and n == 0)
        return t

    def _declared(self, base: CType, d: Declarator) -> CType:
        t = base
        for _ in range(d.stars):
            t = pointer_to(t)
        for dim in reversed(d.dims):
            width = literal_int(dim)
            at = t.name.find("[")  # float tile[16][8]: an array of 16 float[8]
            size = f"[{width or ''}]"
            name = t.name + size if at < 0 else t.name[:at] + size + t.name[at:]
            t = CType("array", name, t, width or 0)
        return t

    # -- statements --------------------------------------------------------------------
    def _declare(self, scope: dict[str, Symbol], sym: Symbol) -> None:
        scope[sym.name] = sym
        self.symbols.append(sym)

    def _statement(self, node: Node, scope: dict[str, Symbol]) -> None:
        if isinstance(node, Block):
            inner = dict(scope)
            for child in node.body:
                self._statement(child, inner)
            return
        own = dict(scope) if isinstance(node, Loop) else scope
        runs = []
        for how, code in statement_code(node):
            tree = parse_run(how, code, self._type_names)
            if tree is not None:
                try:
                    self._expr(tree, own, loop=isinstance(node, Loop))
                except RecursionError:  # thousands of operands (an unrolled sum): no tree
                    tree = None
            runs.append((code, tree))
        self.trees[node] = runs
        if isinstance(node, (If, Loop, Switch)):
            for child in node.children():
                self._statement(child, dict(own))

    # -- expressions -------------------------------------------------------------------
    def _expr(self, node: Expr, scope: dict[str, Symbol], loop: bool = False,
              expected: CType | None = None) -> CType:
        t = self._type(node, scope, loop, expected)
        self.types[node] = t
        return t

    def _type(self, node: Expr, scope: dict[str, Symbol], loop: bool,
              expected: CType | None) -> CType:
        sub = self._expr
        if isinstance(node, Literal):
            return literal_type(node)
        if isinstance(node, Name):
            sym = scope.get(node.name)
            if sym is None:  # a limit or math constant every target defines (FLT_MAX, M_PI)
                constant = CONSTANTS.get(node.name)
                return UNKNOWN if constant is None else scalar(constant.ctype)
            self.resolved[node] = sym
            return sym.type
        if isinstance(node, TypeName):
            return self.type_of_name(node)
        if isinstance(node, Paren):
            return sub(node.inner, scope) if node.inner is not None else UNKNOWN
        if isinstance(node, Decl):
            return self._decl(node, scope, loop)
        if isinstance(node, ForHeader):
            for part in (node.init, node.condition, node.step):
                if part is not None:
                    sub(part, scope, loop=True)
            return VOID
        if isinstance(node, Cast):
            if node.operand is not None:
                sub(node.operand, scope)
            return sub(node.type, scope) if node.type is not None else UNKNOWN
        if isinstance(node, InitList):
            inner = expected.element if expected is not None and expected.kind == "array" \
                else None
            for item in node.items:
                sub(item, scope, expected=inner)
            return expected or CType("initlist", "initializer list")
        if isinstance(node, Comma):
            types = [sub(item, scope) for item in node.items]
            return types[-1]
        if isinstance(node, Assign):
            target = sub(node.target, scope)  # type: ignore[arg-type]
            sub(node.value, scope, expected=target)  # type: ignore[arg-type]
            return target
        if isinstance(node, Ternary):
            sub(node.condition, scope)  # type: ignore[arg-type]
            a = sub(node.then, scope)  # type: ignore[arg-type]
            b = sub(node.orelse, scope)  # type: ignore[arg-type]
            if a == b:
                return a
            return arithmetic(a, b) if a.arithmetic and b.arithmetic else UNKNOWN
        if isinstance(node, Unary):
            return self._unary(node, scope)
        if isinstance(node, Binary):
            return binary_type(node.op, sub(node.left, scope),  # type: ignore[arg-type]
                           sub(node.right, scope))  # type: ignore[arg-type]
        if isinstance(node, Subscript):
            base = sub(node.base, scope)  # type: ignore[arg-type]
            for index in node.indices:
                sub(index, scope)
            if base.kind in ("pointer", "array", "vector") and base.element is not None:
                return base.element
            return UNKNOWN
        if isinstance(node, Member):
            return self._member(node, sub(node.base, scope))  # type: ignore[arg-type]
        if isinstance(node, Call):
            return self._call(node, scope)
        if isinstance(node, Construct):
            return self._construct(node, scope)
        return UNKNOWN

    def _decl(self, node: Decl, scope: dict[str, Symbol], loop: bool) -> CType:
        base = self._expr(node.type, scope) if node.type is not None else UNKNOWN
        if node.bindings:
            value = self._expr(node.init, scope) if node.init is not None else UNKNOWN
            each = value.element if value.kind == "tuple" and value.element else UNKNOWN
            for b in node.bindings:
                self.types[b] = each
                self._declare(scope, Symbol(b.name, each, "binding", b.line, b))
            return value
        kind = "localmem" if "@localmem" in node.constructs else \
            "private" if "@private" in node.constructs else "loop" if loop else "local"
        for d in node.declarators:
            for dim in d.dims:
                if dim is not None:
                    self._expr(dim, scope)
            t = self._declared(base, d)
            if d.init is not None:
                value = self._expr(d.init, scope, expected=t)
                if node.type is not None and node.type.words == ("auto",) and not d.stars:
                    t = value
            self.types[d] = t
            self._declare(scope, Symbol(d.name, t, kind, d.line, d))
        return base

    def _unary(self, node: Unary, scope: dict[str, Symbol]) -> CType:
        t = self._expr(node.operand, scope) if node.operand is not None else UNKNOWN
        op = node.op
        if op == "sizeof":
            return scalar("ulong")
        if op == "!":
            return scalar("bool")
        if op in ("++", "--"):
            return t
        if op == "*":
            return t.element if t.kind in ("pointer", "array") and t.element else UNKNOWN
        if op == "&":
            return UNKNOWN if t.unknown else pointer_to(t)
        if t.kind in ("int", "bool"):
            return promote(t)
        return t if t.kind in ("float", "vector", "typevar", "complex") else UNKNOWN

    def _member(self, node: Member, base: CType) -> CType:
        if node.op == "->":
            base = base.element if base.kind == "pointer" and base.element else UNKNOWN
        if base.kind == "vector" and base.element is not None:
            return swizzle_type(base, node.name)
        if base.kind == "complex" and base.element is not None:  # the parts, z.re and z.im
            return base.element if node.name in ("re", "im") else UNKNOWN
        if base.kind == "struct":
            return self.structs.get(base.name, {}).get(node.name, UNKNOWN)
        return UNKNOWN

    def _call(self, node: Call, scope: dict[str, Symbol]) -> CType:
        args = [self._expr(a, scope) for a in node.args]
        if isinstance(node.func, TypeName):  # float4(a, b, c, d), T(x)
            return self._expr(node.func, scope)
        if not isinstance(node.func, Name):
            if node.func is not None:
                self._expr(node.func, scope)
            return UNKNOWN
        name = node.func.name
        self.types[node.func] = WORD
        if name in self.functions:
            return self.functions[name]
        return library_call_type(name, args)

    def _construct(self, node: Construct, scope: dict[str, Symbol]) -> CType:
        name = node.name
        args = node.args
        words = [a.name if isinstance(a, Name) else None for a in args]
        if name == "@index":
            for a in args:
                self.types[a] = WORD
            if words[-1:] == ["Linear"]:
                return scalar("long")
            if words[-1:] == ["NTuple"]:
                return CType("tuple", "NTuple", scalar("long"))
            return UNKNOWN
        if name in ("@groupreduce", "@subgroupreduce") and args:
            self.types[args[0]] = WORD
            for a in args[1:]:
                self._expr(a, scope)
            return self.types[args[-1]]
        types = [self._expr(a, scope) for a in args]
        if name in _INDEX_CONSTRUCTS:
            return scalar("long")
        if name in _VALUE_CONSTRUCTS and types:
            return types[0]
        if name.startswith("@atomic_") and types:
            p = types[0]
            return p.element if p.kind in ("pointer", "array") and p.element else UNKNOWN
        if name == "@vload" and len(types) >= 2:
            width = literal_int(args[0])
            p = types[1]
            if width and p.kind in ("pointer", "array") and p.element is not None \
                    and p.element.kind in ("int", "float"):
                return vector(p.element.name, width)
            return UNKNOWN
        if name in ("@vstore", "@print", "@synchronize"):
            return VOID
        return UNKNOWN

    # -- what analyses read --------------------------------------------------------------
    def type_of(self, node: Expr) -> CType:
        """The type of one node (unknown for a node of another tree)."""
        return self.types.get(node, UNKNOWN)

    def expressions(self) -> Iterable[Expr]:
        """Every expression node of the body, statement by statement."""
        for runs in self.trees.values():
            for _, tree in runs:
                if tree is not None:
                    yield from walk(tree)

    @cached_property
    def unparsed(self) -> tuple[Node, ...]:
        """Statements with a run of code the parser did not read."""
        return tuple(n for n, runs in self.trees.items() if any(t is None for _, t in runs))

    @cached_property
    def unknown_share(self) -> float:
        """The share of value nodes (not type names or keywords) typed ``unknown``."""
        values = [self.types.get(n, UNKNOWN) for n in self.expressions()
                  if not isinstance(n, (TypeName, Decl, ForHeader))]
        values = [t for t in values if t.kind not in ("word", "void")]
        return sum(t.unknown for t in values) / len(values) if values else 0.0

    @cached_property
    def index_narrowing(self) -> tuple[Narrowing, ...]:
        """Variables narrower than 64 bits given the global linear index or arithmetic on it.

        Read off the typed tree: a declaration (``int i = @index(Global, Linear);``,
        ``uint j = 2 * i + 1`` where ``i`` holds it) or an assignment into such a variable.
        A 64-bit variable that holds it passes it on (``const long g = ...; int k = g;``).
        """
        holders: set[Symbol] = set()
        out: list[Narrowing] = []
        for runs in self.trees.values():
            for _, tree in runs:
                if tree is None:
                    continue
                for node in walk(tree):
                    value: Expr | None
                    if isinstance(node, Declarator) and node.init is not None:
                        target, value, how = self._symbol_of(node), node.init, "declared"
                        first = _name_token(node)
                    elif isinstance(node, Assign) and isinstance(node.target, Name):
                        target, value, how = self.resolved.get(node.target), node.value, \
                            "assigned"
                        first = node.first
                    else:
                        continue
                    try:
                        holds = value is not None and self._holds_index(value, holders)
                    except RecursionError:
                        holds = False
                    if target is None or not holds:
                        continue
                    t = target.type
                    if t.kind == "int" and SCALARS[t.name][3] < 64:
                        out.append(Narrowing(target.name, t.name, first.line, first.col, how))
                    elif t.kind == "int":
                        holders.add(target)
        return tuple(out)

    def _symbol_of(self, d: Declarator) -> Symbol | None:
        return next((s for s in self.symbols if s.node is d), None)

    def _holds_index(self, value: Expr | None, holders: set[Symbol]) -> bool:
        """Whether ``value`` is the global linear index, or arithmetic on it (not a value read
        at it: ``x[@index(Global, Linear)]`` is an element, ``i < n`` a truth value)."""
        if isinstance(value, Construct):
            return value.name == "@index" and [
                a.name if isinstance(a, Name) else None for a in value.args] \
                == ["Global", "Linear"]
        if isinstance(value, Name):
            return self.resolved.get(value) in holders
        if isinstance(value, (Paren, Cast)):
            inner = value.inner if isinstance(value, Paren) else value.operand
            return self._holds_index(inner, holders)
        if isinstance(value, Binary):
            return value.op in _ARITHMETIC_OPS and (self._holds_index(value.left, holders)
                                                   or self._holds_index(value.right, holders))
        if isinstance(value, Unary):
            return value.op in ("+", "-", "~", "++", "--") and \
                self._holds_index(value.operand, holders)
        if isinstance(value, Ternary):
            return self._holds_index(value.then, holders) or \
                self._holds_index(value.orelse, holders)
        if isinstance(value, Comma):
            return self._holds_index(value.items[-1], holders)
        if isinstance(value, Assign):
            return self._holds_index(value.value, holders)
        return False


#: Binary operators whose result carries an operand's value (not a comparison).
_ARITHMETIC_OPS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"})


def typed_body(facts: Any, module: Module, kdef: KernelDef,
               binding: Mapping[str, Any] | None = None) -> TypedBody:
    """The :class:`TypedBody` of ``kdef`` (``facts``: its :class:`BodyFacts`), built once.

    ``binding`` maps type variables to type names or dtypes (``{"T": np.float32}``);
    unbound ones stay ``typevar`` types. The result is cached in ``facts`` per binding.
    """
    key = ("typed_body", tuple(sorted((k, bound_name(v)) for k, v in (binding or {}).items())))

    def build() -> TypedBody:
        root = facts.root if facts.root is not None else parse_body(kdef.body,
                                                                   module.source_map)
        return TypedBody(root, module, kdef, binding)

    return facts.derived(key, build)


def index_narrowing(facts: Any, module: Module, kdef: KernelDef) -> tuple[Narrowing, ...]:
    """:attr:`TypedBody.index_narrowing` of a body (types bound or not, the same answer)."""
    return typed_body(facts, module, kdef).index_narrowing


# -- helpers ---------------------------------------------------------------------------

def _name_token(d: Declarator) -> Token:
    return next((t for t in d.ops if t.kind == "id" and t.text == d.name), d.first)


def unknown_nodes(typed: TypedBody) -> list[Expr]:
    """The value nodes typed ``unknown`` (what to improve next)."""
    return [n for n in typed.expressions() if typed.type_of(n).unknown
            and not isinstance(n, (TypeName, Decl, ForHeader))]

