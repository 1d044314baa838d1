"""Expressions and declarations of one statement, parsed from its tokens.

:mod:`portakern.syntax.tree` cuts a body into statements; this module reads the code of
one of them (a :class:`~portakern.syntax.tree.Simple` statement, a condition, a loop
header, what a ``return`` or ``case`` holds) into nodes: :class:`Name`, :class:`Literal`,
:class:`Unary`, :class:`Binary`, :class:`Assign`, :class:`Ternary`, :class:`Comma`,
:class:`Call`, :class:`Subscript`, :class:`Member`, :class:`Cast`, :class:`Construct`
(``@index(Global, Linear)``), :class:`Paren`, :class:`InitList`, :class:`TypeName` and,
for a declaration, a :class:`Decl` of :class:`Declarator`\\ s (the nodes are defined in
:mod:`portakern.syntax.expression_nodes` and re-exported here).

The parser climbs C's precedence table over the one
:class:`~portakern.syntax.cursor.Cursor` (``look``, ``next_if``, ``expect``). Every
node keeps its first and last token (error positions) and the tokens it reads itself
(:attr:`Expr.ops`: operators, brackets, commas, type words), so the tokens of a tree are
exactly the statement's (:func:`tokens_in`). Input it does not understand gives no tree
(``None``), never an exception: the compilers of the targets stay the judges of C; what
this tree adds is what analyses can read (:mod:`portakern.analysis.expression_types` puts
a type on every node).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..types import KNOWN_TYPES
from .cursor import Cursor, NoParse
from .expression_nodes import (
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
    children,
    tokens_in,
    walk,
)
from .tokens import Token
from .vectors import VECTOR_TYPES

__all__ = ["Assign", "Binary", "Call", "Cast", "Comma", "Construct", "Cursor", "Decl",
           "Declarator", "Expr", "ForHeader", "InitList", "Literal", "Member", "Name",
           "NoParse", "Paren", "Subscript", "Ternary", "TypeName", "Unary", "children",
           "parse_expression", "parse_for_header", "parse_run",
           "parse_statement", "parse_value_or_type", "statement_code", "tokens_in", "walk"]

_BLANK = frozenset({"ws", "comment", "pp"})

#: The words that spell a C scalar type (with the language's own names).
BASE_TYPE_WORDS = frozenset(KNOWN_TYPES | set(VECTOR_TYPES) | {
    "void", "char", "short", "unsigned", "signed", "size_t", "ptrdiff_t", "uchar", "ushort",
    "auto", "intptr_t", "uintptr_t"})
#: Words a type may carry besides its name.
QUALIFIERS = frozenset({"const", "volatile", "restrict", "__restrict__", "__restrict",
                        "static", "constexpr", "inline"})
#: ``@`` words that start a declaration (``@localmem float tile[16];``).
DECL_CONSTRUCTS = frozenset({"@localmem", "@private", "@uniform"})

_ASSIGN = ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=")
#: Binary operators by precedence level (higher binds tighter); all left-associative.
_BINARY = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
    "*": 10, "/": 10, "%": 10,
}
_PREFIX = frozenset({"+", "-", "!", "~", "*", "&", "++", "--"})
#: Operators the tokenizer splits in two (``+=`` is ``+`` then ``=``): glued back when
#: the two tokens touch.
_GLUED = frozenset(op for op in _ASSIGN if len(op) == 2 and op not in ("<=", ">="))


# -- the parser ------------------------------------------------------------------------

class _Parser:
    def __init__(self, cursor: Cursor, type_names: frozenset[str]) -> None:
        self.c = cursor
        self.type_names = type_names

    # -- types -------------------------------------------------------------------------
    def is_type_start(self, k: int = 0) -> bool:
        word = self.c.look(k)
        if self.c.kind(k) != "id" or word is None:
            return False
        return word in BASE_TYPE_WORDS or word in QUALIFIERS or word in self.type_names \
            or word in ("struct", "long")

    def type_name(self) -> TypeName:
        ops: list[Token] = []
        words: list[str] = []
        const = False
        while self.c.kind() == "id":
            word = self.c.look()
            assert word is not None
            if word in QUALIFIERS:
                const = const or word == "const"
                ops += self.c.next()
                continue
            if word == "struct":
                ops += self.c.next()
                if self.c.kind() != "id":
                    raise NoParse("struct name")
                words.append(self.c.look() or "")
                ops += self.c.next()
                break
            if words and (words[-1] not in ("unsigned", "signed", "long", "short")
                          or word not in BASE_TYPE_WORDS | {"long"}):
                break  # the next word is a name (or a second type name)
            if not words and not (word in BASE_TYPE_WORDS or word in self.type_names
                                  or word == "long"):
                # A name the parser was not told is a type, after a qualifier or before a
                # declared name or '*' ('const block_q4_0* b'): take it as one.
                if not (ops or self.c.kind(1) == "id" or self.c.look(1) == "*"):
                    break
            words.append(word)
            ops += self.c.next()
        stars = 0
        while self.c.look() in ("*", "const") and self.c.kind() in ("punct", "id"):
            if self.c.look() == "const":
                ops += self.c.next()
            else:
                stars += 1
                ops += self.c.next()
        if not words:
            raise NoParse("a type name")
        return TypeName(ops[0], ops[-1], tuple(ops), tuple(words), stars, const)

    # -- statements --------------------------------------------------------------------
    def statement(self) -> Expr:
        """A declaration or an expression (the ``;`` already removed)."""
        if self.declaration_ahead():
            return self.declaration()
        return self.expression()

    def declaration_ahead(self) -> bool:
        k = 0
        while self.c.kind(k) == "at" and self.c.look(k) in DECL_CONSTRUCTS:
            k += 1
        if k and self.c.look(k - 1) != "@uniform":
            return True  # @localmem / @private
        if not self.c.kind(k) == "id":
            return False
        if self.is_type_start(k):
            # 'float4(a)' and 'T(x)' are constructor calls, '(float)' is not here.
            return not (self.c.look(k + 1) == "(" and self.c.look(k) not in QUALIFIERS)
        # An unknown name followed by a name ('block_q4_0 b;'); 'a * b' stays a product.
        return self.c.kind(k + 1) == "id" and self.c.look(k + 2) in ("=", ";", ",", "[", None)

    def declaration(self) -> Decl:
        ops: list[Token] = []
        constructs: list[str] = []
        while self.c.kind() == "at" and self.c.look() in DECL_CONSTRUCTS:
            constructs.append(self.c.look() or "")
            ops += self.c.next()
        if self.c.kind() == "id" and not self.is_type_start():
            # A type the module does not name to the parser: take the word as the type.
            word = self.c.next()
            t = self.type_name_from(word)
        else:
            t = self.type_name()
        first = ops[0] if ops else t.first
        if self.c.look() == "[" and t.words == ("auto",):
            ops += self.c.next()
            names: list[Name] = []
            while True:
                if self.c.kind() != "id":
                    raise NoParse("a name in a structured binding")
                tok = self.c.next()[0]
                names.append(Name(tok, tok, (tok,), tok.text))
                if self.c.next_if("]"):
                    ops.append(self.c.previous())
                    break
                ops += self.c.expect(",")
            ops += self.c.expect("=")
            init = self.assignment()
            return Decl(first, init.last, tuple(ops), t, [], tuple(constructs), names, init)
        decls: list[Declarator] = []
        while True:
            decls.append(self.declarator())
            comma = self.c.next_if(",")
            if comma is None:
                break
            ops += comma
        return Decl(first, decls[-1].last, tuple(ops), t, decls, tuple(constructs))

    def type_name_from(self, word: tuple[Token, ...]) -> TypeName:
        ops = list(word)
        stars = 0
        while self.c.look() == "*":
            stars += 1
            ops += self.c.next()
        return TypeName(ops[0], ops[-1], tuple(ops), (word[0].text,), stars, False)

    def declarator(self) -> Declarator:
        ops: list[Token] = []
        stars = 0
        while self.c.look() in ("*", "const"):
            stars += self.c.look() == "*"
            ops += self.c.next()
        if self.c.kind() != "id":
            raise NoParse("a declared name")
        name = self.c.next()[0]
        ops.append(name)
        dims: list[Expr | None] = []
        while self.c.next_if("["):
            ops.append(self.c.previous())
            if self.c.next_if("]"):
                dims.append(None)
            else:
                dims.append(self.expression())
                ops += self.c.expect("]")
        init = None
        if self.c.next_if("="):
            ops.append(self.c.previous())
            init = self.initializer()
        last = init.last if init is not None else ops[-1]
        return Declarator(ops[0], last, tuple(ops), name.text, stars, dims, init)

    def initializer(self) -> Expr:
        if self.c.look() == "{":
            return self.init_list()
        return self.assignment()

    def init_list(self) -> InitList:
        ops = list(self.c.expect("{"))
        items: list[Expr] = []
        while not self.c.next_if("}"):
            items.append(self.initializer())
            if not self.c.next_if(","):
                ops += self.c.expect("}")
                return InitList(ops[0], ops[-1], tuple(ops), items)
            ops.append(self.c.previous())
        ops.append(self.c.previous())
        return InitList(ops[0], ops[-1], tuple(ops), items)

    # -- expressions -------------------------------------------------------------------
    def expression(self) -> Expr:
        first = self.assignment()
        if self.c.look() != ",":
            return first
        items = [first]
        ops: list[Token] = []
        while self.c.look() == ",":
            ops += self.c.next()
            items.append(self.assignment())
        return Comma(first.first, items[-1].last, tuple(ops), items)

    def assignment(self) -> Expr:
        left = self.ternary()
        if self.c.look() in _ASSIGN and self.c.kind() in ("punct", None):
            op = self.c.look() or "="
            ops = self.c.next()
            value = self.assignment()  # right-associative
            return Assign(left.first, value.last, ops, op, left, value)
        return left

    def ternary(self) -> Expr:
        cond = self.binary(1)
        if self.c.look() != "?":
            return cond
        ops = list(self.c.next())
        then = self.expression()
        ops += self.c.expect(":")
        orelse = self.assignment()  # 'c ? a : b = x' parses as C++ does
        return Ternary(cond.first, orelse.last, tuple(ops), cond, then, orelse)

    def binary(self, level: int) -> Expr:
        left = self.unary()
        while True:
            op = self.c.look()
            prec = _BINARY.get(op or "") if self.c.kind() in ("punct",) else None
            if prec is None or prec < level:
                return left
            ops = self.c.next()
            right = self.binary(prec + 1)  # left-associative: climb one level up
            left = Binary(left.first, right.last, ops, op or "", left, right)

    def unary(self) -> Expr:
        op = self.c.look()
        if op in _PREFIX and self.c.kind() == "punct":
            taken = self.c.next()
            operand = self.unary()
            return Unary(taken[0], operand.last, taken, op or "", operand)
        if op == "sizeof" and self.c.kind() == "id":
            ops = list(self.c.next())
            if self.c.look() == "(" and self.is_type_start(1):
                ops += self.c.next()
                t = self.type_name()
                ops += self.c.expect(")")
                return Unary(ops[0], ops[-1], tuple(ops), "sizeof", t)
            operand = self.unary()
            return Unary(ops[0], operand.last, tuple(ops), "sizeof", operand)
        if op == "(" and self.is_type_start(1):
            save = self.c.i
            try:
                ops = list(self.c.next())
                t = self.type_name()
                ops += self.c.expect(")")
            except NoParse:
                self.c.i = save
            else:
                operand = self.unary()
                return Cast(ops[0], operand.last, tuple(ops), t, operand)
        return self.postfix(self.primary())

    def postfix(self, node: Expr) -> Expr:
        while True:
            op = self.c.look()
            if self.c.kind() != "punct":
                return node
            if op == "[":
                ops = list(self.c.next())
                indices = [self.assignment()]
                while self.c.look() == ",":
                    ops += self.c.next()
                    indices.append(self.assignment())
                ops += self.c.expect("]")
                node = Subscript(node.first, ops[-1], tuple(ops), node, indices)
            elif op == "(":
                ops, args = self.arguments()
                node = Call(node.first, ops[-1], tuple(ops), node, args)
            elif op in (".", "->"):
                ops = list(self.c.next())
                if self.c.kind() != "id":
                    raise NoParse("a member name")
                name = self.c.next()
                ops += name
                node = Member(node.first, name[0], tuple(ops), node, op, name[0].text)
            elif op in ("++", "--"):
                taken = self.c.next()
                node = Unary(node.first, taken[0], taken, op, node, postfix=True)
            else:
                return node

    def arguments(self, lenient: bool = False) -> tuple[list[Token], list[Expr]]:
        ops = list(self.c.expect("("))
        args: list[Expr] = []
        if self.c.next_if(")"):
            ops.append(self.c.previous())
            return ops, args
        while True:
            args.append(self.argument(lenient))
            if self.c.next_if(")"):
                ops.append(self.c.previous())
                return ops, args
            ops += self.c.expect(",")

    def argument(self, lenient: bool) -> Expr:
        if lenient:
            # A construct's argument may be a type (@vload's), an operator (@groupreduce(+, v))
            # or a parenthesised list of sizes.
            nxt = self.c.look(1)
            if self.c.kind() == "punct" and self.c.look() not in ("(", "{") \
                    and nxt in (",", ")"):
                tok = self.c.next()
                return Name(tok[0], tok[-1], tok, "".join(t.text for t in tok))
            if self.is_type_start() and self.c.look() != "sizeof":
                save = self.c.i
                try:
                    t = self.type_name()
                    if self.c.look() in (",", ")"):
                        return t
                except NoParse:
                    pass
                self.c.i = save
        return self.assignment()

    def primary(self) -> Expr:
        kind = self.c.kind()
        text = self.c.look()
        if text is None:
            raise NoParse("an expression")
        if kind == "num":
            tok = self.c.next()[0]
            return _number(tok)
        if kind == "str":
            tok = self.c.next()[0]
            if tok.text.startswith("'"):
                return Literal(tok, tok, (tok,), "char", tok.text, "")
            ops = [tok]
            while self.c.kind() == "str" and (self.c.look() or "").startswith('"'):
                ops += self.c.next()  # adjacent string literals are one
            return Literal(tok, ops[-1], tuple(ops), "string", tok.text, "")
        if kind == "at":
            word = self.c.next()
            if self.c.look() == "(":
                ops, args = self.arguments(lenient=True)
                return Construct(word[0], ops[-1], (*word, *ops), text, args)
            return Construct(word[0], word[0], word, text, [])
        if kind == "id":
            if self.is_type_start() and text not in ("true", "false"):
                t = self.type_name()
                if self.c.look() == "(":  # float4(a, b, c, d), T(x)
                    ops, args = self.arguments()
                    return Call(t.first, ops[-1], tuple(ops), t, args)
                raise NoParse("a type where a value was expected")
            tok = self.c.next()[0]
            if text in ("true", "false"):
                return Literal(tok, tok, (tok,), "bool", text, "")
            return Name(tok, tok, (tok,), text)
        if text == "(":
            ops = list(self.c.next())
            inner = self.expression()
            ops += self.c.expect(")")
            return Paren(ops[0], ops[-1], tuple(ops), inner)
        if text == "{":
            return self.init_list()
        raise NoParse(f"unexpected {text!r}")


def _number(tok: Token) -> Literal:
    text = tok.text.replace("'", "")
    low = text.lower()
    if low.startswith("0x"):
        body = low.rstrip("ul")
        return Literal(tok, tok, (tok,), "int", text, low[len(body):])
    body = low.rstrip("ulfh")
    suffix = low[len(body):]
    is_float = "." in body or "e" in body or "f" in suffix or "h" in suffix
    return Literal(tok, tok, (tok,), "float" if is_float else "int", text, suffix)


def _run(tokens: Iterable[object], type_names: frozenset[str], what: str) -> Expr | None:
    try:
        cursor = Cursor(tokens)
        if cursor.done():
            return None
        parser = _Parser(cursor, type_names)
        node = parser.statement() if what == "statement" else parser.expression()
        if not cursor.done():
            return None
        return node
    except (NoParse, RecursionError):
        return None


def parse_statement(tokens: Iterable[object], type_names: Iterable[str] = ()) -> Expr | None:
    """The declaration or expression of a statement's tokens (a trailing ``;`` is dropped).

    ``type_names`` are the names the module declares as types (typedefs, structs, type
    variables). None when the tokens are not one this parser reads.
    """
    toks = _code(tokens)
    if toks and isinstance(toks[-1], Token) and toks[-1].is_punct(";"):
        toks = toks[:-1]
    return _run(toks, frozenset(type_names), "statement")


def parse_expression(tokens: Iterable[object], type_names: Iterable[str] = ()) -> Expr | None:
    """An expression (a condition, what ``return`` gives): None if it is not one."""
    return _run(_code(tokens), frozenset(type_names), "expression")


def parse_value_or_type(tokens: Iterable[object],
                        type_names: Iterable[str] = ()) -> Expr | None:
    """An expression, or else a type name (``float``, ``unsigned int*``); None if neither."""
    names = frozenset(type_names)
    tree = _run(_code(tokens), names, "expression")
    if tree is not None:
        return tree
    try:
        cursor = Cursor(_code(tokens))
        tree = _Parser(cursor, names).type_name()
    except NoParse:
        return None
    return tree if cursor.done() else None


def parse_for_header(tokens: Iterable[object],
                     type_names: Iterable[str] = ()) -> ForHeader | None:
    """``init; condition; step`` of a ``for`` loop's parentheses, or None."""
    toks = _code(tokens)
    if any(not isinstance(t, Token) for t in toks):
        return None
    semis = [n for n, t in enumerate(toks) if isinstance(t, Token) and t.is_punct(";")]
    depth = 0
    top: list[int] = []
    for n, t in enumerate(toks):
        if isinstance(t, Token) and t.kind == "punct":
            if t.text in "([{":
                depth += 1
            elif t.text in ")]}":
                depth -= 1
            elif t.text == ";" and depth == 0:
                top.append(n)
    if len(top) != 2 or not semis:
        return None
    names = frozenset(type_names)
    parts = [toks[:top[0]], toks[top[0] + 1:top[1]], toks[top[1] + 1:]]
    trees: list[Expr | None] = []
    for n, part in enumerate(parts):
        if not part:
            trees.append(None)
            continue
        tree = _run(part, names, "statement" if n == 0 else "expression")
        if tree is None:
            return None
        trees.append(tree)
    ops = (toks[top[0]], toks[top[1]])
    first = toks[0] if toks else ops[0]
    last = toks[-1] if toks else ops[1]
    return ForHeader(first, last, ops, trees[0], trees[1], trees[2])  # type: ignore[arg-type]


def statement_code(node: object) -> list[tuple[str, list]]:
    """The runs of code a statement node holds, each with how it parses.

    ``("statement", tokens)`` for a :class:`~portakern.syntax.tree.Simple` statement,
    ``("expression", tokens)`` for a condition, ``return``'s value or a ``case`` label,
    ``("for", tokens)`` for a ``for`` header. Nested statements are nodes of their own.
    """
    from .tree import If, Jump, Label, Loop, Simple, Switch  # tree.py does not import this

    if isinstance(node, Simple):
        if getattr(node, "call", None) is not None:
            return []  # a lowered collective
        code = _code(node.tokens)
        return [("statement", code)] if code and not (
            len(code) == 1 and isinstance(code[0], Token) and code[0].is_punct(";")) else []
    if isinstance(node, (If, Switch)):
        return [("expression", list(node.condition))]
    if isinstance(node, Loop):
        return [("for" if node.word == "for" else "expression", list(node.header))]
    if isinstance(node, Jump):
        code = _code(node.tokens)[1:]
        if code and isinstance(code[-1], Token) and code[-1].is_punct(";"):
            code = code[:-1]
        return [("expression", code)] if code else []
    if isinstance(node, Label):
        code = _code(node.tokens)
        if code and isinstance(code[0], Token) and code[0].text == "case":
            return [("expression", code[1:-1])]
    return []


def parse_run(how: str, tokens: list, type_names: Iterable[str] = ()) -> Expr | None:
    """Parse one run of :func:`statement_code`."""
    if how == "statement":
        return parse_statement(tokens, type_names)
    if how == "for":
        return parse_for_header(tokens, type_names)
    return parse_expression(tokens, type_names)


def _code(tokens: Iterable[object]) -> list:
    return [t for t in tokens if not (isinstance(t, Token) and t.kind in _BLANK)]
