"""A kernel body as a small statement tree, and the facts read off it.

:func:`parse_body` turns the tokens of a ``@kernel`` body
(:attr:`~portakern.syntax.language.KernelDef.body`) into nodes: a :class:`Block` of
statements, each a :class:`Simple` statement (declaration or expression), an
:class:`If`, a :class:`Loop` (``for``/``while``/``do``), a :class:`Switch`, a
:class:`Label` (``case``/``default``), a :class:`Jump`
(``return``/``break``/``continue``/``goto``) or a :class:`Barrier`
(``@synchronize()``). Every node keeps its tokens, blanks and comments included,
so the tree is lossless (:func:`tokens_of` gives back the body) and ``#line``
mapping survives; a preprocessor line (``#pragma unroll``) is kept with the
statement after it.

The same parser reads a body after its ``@`` constructs are lowered to *parts*
(:mod:`portakern.syntax.parts`: the user's tokens, generated text and primitive calls).
Then a lowered ``@synchronize()`` is a :class:`Barrier`, a group collective
(``@groupreduce``, a subgroup collective) a :class:`Collective`, and a statement
after ``@uniform`` keeps its :class:`~portakern.syntax.parts.UniformMark` as its first
part. Generated text and calls are opaque: only the user's punctuation gives the
structure. This is the tree the convergence analysis reads and the lowering
transforms (:mod:`portakern.lower.lowerer`), so both agree on what a statement is.

Analyses are visitors over this tree (:func:`walk`, :class:`Visitor`) that
publish facts (:func:`body_facts`), instead of re-finding the structure by
counting brackets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import KernelSyntaxError
from .cursor import Cursor
from .language import SourceMap, Token
from .parts import BARRIER, Call, UniformMark, is_barrier
from .vocabulary import COLLECTIVES as _SUBGROUP_COLLECTIVES

__all__ = ["Barrier", "Block", "BodyFacts", "Collective", "If", "Jump", "Label", "Loop", "Node",
           "Simple", "Switch", "Visitor", "body_facts", "has_barrier", "parse_body", "tokens_of",
           "walk"]

_BLANK = frozenset({"ws", "comment", "pp"})
_JUMPS = frozenset({"return", "break", "continue", "goto"})
_LOOPS = frozenset({"for", "while", "do"})


def _blank(t: object) -> bool:
    return isinstance(t, Token) and t.kind in _BLANK


def _punct(t: object, text: str) -> bool:
    return isinstance(t, Token) and t.is_punct(text)


def _word(t: object) -> str | None:
    return t.text if isinstance(t, Token) and t.kind == "id" else None


@dataclass(eq=False)
class Node:
    """A statement: ``tokens`` are all of its tokens, in order, blanks included."""

    tokens: list[Token] = field(repr=False)

    def __repr__(self) -> str:
        first = next((t for t in self.tokens if isinstance(t, Token) and not _blank(t)), None)
        where = f" line {first.line}" if first is not None else ""
        return f"<{type(self).__name__}{where}>"

    @property
    def first(self) -> Token:
        """The statement's first significant token (its position in errors)."""
        return next(t for t in self.tokens if isinstance(t, Token) and not _blank(t))

    @property
    def lead(self) -> int:
        """Where the statement's code starts in :attr:`tokens` (after its blanks and pragmas)."""
        return next(n for n, t in enumerate(self.tokens) if not _blank(t))

    @property
    def pragmas(self) -> list[Token]:
        """Preprocessor lines written just before the statement (``#pragma unroll``)."""
        out = []
        for t in self.tokens:
            if not isinstance(t, Token):
                break
            if t.kind == "pp":
                out.append(t)
            elif t.kind not in ("ws", "comment"):
                break
        return out

    def children(self) -> list[Node]:
        return []


@dataclass(eq=False, repr=False)
class Block(Node):
    """``{ ... }`` (or the whole body, ``braced`` false): its statements in order."""

    body: list[Node] = field(default_factory=list)
    braced: bool = True

    def children(self) -> list[Node]:
        return list(self.body)

    def around(self) -> tuple[list, list, list]:
        """The parts around the statements: up to ``{``, after the last one, and ``}``.

        ``head + statements + tail + close`` is :attr:`tokens` again (the whole body:
        no braces, ``tail`` its trailing blanks).
        """
        used = sum(len(s.tokens) for s in self.body)
        if not self.braced:
            return [], self.tokens[used:], []
        open_at = self.lead
        return (self.tokens[:open_at + 1], self.tokens[open_at + 1 + used:-1],
                self.tokens[-1:])


@dataclass(eq=False, repr=False)
class Simple(Node):
    """A declaration or an expression statement, up to its ``;``.

    ``uniform`` is true after ``@uniform``; ``constructs`` are the ``@`` words it uses.
    """

    uniform: bool = False
    constructs: tuple[str, ...] = ()


@dataclass(eq=False, repr=False)
class Barrier(Node):
    """``@synchronize();``"""


@dataclass(eq=False, repr=False)
class Collective(Simple):
    """A lowered group collective (``T r = @groupreduce(op, v);``): one primitive call.

    Only in a tree of lowered parts; ``call`` is the :class:`~portakern.syntax.parts.Call`.
    """

    call: Call | None = None


@dataclass(eq=False, repr=False)
class Jump(Node):
    """``return``, ``break``, ``continue`` or ``goto``; ``word`` says which."""

    word: str = ""


@dataclass(eq=False, repr=False)
class Label(Node):
    """``case X:`` or ``default:`` inside a ``switch``."""


@dataclass(eq=False, repr=False)
class If(Node):
    """``if (condition) then else orelse``; ``condition``: the tokens inside the parentheses."""

    condition: list[Token] = field(default_factory=list)
    then: Node | None = None
    orelse: Node | None = None
    #: Where the condition's ``(`` and ``)`` are in :attr:`tokens`.
    paren: tuple[int, int] = (0, 0)

    def children(self) -> list[Node]:
        return [n for n in (self.then, self.orelse) if n is not None]


@dataclass(eq=False, repr=False)
class Loop(Node):
    """``for``/``while``/``do``; ``header`` holds the tokens inside the parentheses."""

    word: str = ""
    header: list[Token] = field(default_factory=list)
    body: Node | None = None
    #: Where the header's ``(`` and ``)`` are in :attr:`tokens` (a ``do``'s: after ``while``).
    paren: tuple[int, int] = (0, 0)

    def children(self) -> list[Node]:
        return [] if self.body is None else [self.body]


@dataclass(eq=False, repr=False)
class Switch(Node):
    """``switch (condition) body``."""

    condition: list[Token] = field(default_factory=list)
    body: Node | None = None
    paren: tuple[int, int] = (0, 0)

    def children(self) -> list[Node]:
        return [] if self.body is None else [self.body]


def parse_body(tokens: list, smap: SourceMap) -> Block:
    """The statement tree of a kernel body: its tokens, or its lowered parts."""
    parser = _Parser(tokens, smap)
    body = []
    try:
        while parser.more():
            body.append(parser.statement())
    except RecursionError:
        first = next((t for t in tokens if isinstance(t, Token) and not _blank(t)),
                     Token("ws", "", 1, 1))
        raise smap.error_at("statements nested too deeply to parse (hundreds of levels of "
                            "blocks); flatten the nesting", first) from None
    return Block(list(tokens), body, braced=False)


def has_barrier(node: Node) -> bool:
    """Whether a statement of lowered parts reaches a barrier or collective at any depth."""
    return any(is_barrier(it) for it in node.tokens)


def tokens_of(node: Node) -> list[Token]:
    """The node's tokens: for the root block, exactly the body it was parsed from."""
    return node.tokens


def walk(node: Node) -> Iterator[tuple[Node, tuple[Node, ...]]]:
    """Every node under ``node`` (itself first), each with its ancestors (outermost first)."""
    stack: list[tuple[Node, tuple[Node, ...]]] = [(node, ())]
    while stack:
        current, ancestors = stack.pop()
        yield current, ancestors
        inner = (*ancestors, current)
        stack.extend((child, inner) for child in reversed(current.children()))


class Visitor:
    """Calls ``visit_<NodeClass>(node)`` for each node, outermost first.

    A method returning False skips the node's children; a missing method visits
    the children.
    """

    def visit(self, node: Node) -> None:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is not None and method(node) is False:
            return
        for child in node.children():
            self.visit(child)


@dataclass(frozen=True)
class BodyFacts:
    """What the lowering and the choice of a CPU path need to know about a body, found once.

    Attributes
    ----------
    barriers : int
        ``@synchronize()`` statements.
    lockstep : bool
        The body has a barrier, workgroup memory (``@localmem``), a ``@groupreduce``
        or a subgroup collective, in a statement, a condition or a loop header: a
        target that runs a group's work-items one after another needs work-item loops
        for it. This is the one definition (the lowering and the CPU path read it).
    loops_with_barriers : tuple of Loop
        Loops whose body (at any depth) holds a barrier.
    jumps_leaving_items : tuple of Jump
        In a ``lockstep`` body, the jumps that would leave a work-item loop:
        ``return`` and ``goto`` anywhere, ``break``/``continue`` whose own loop
        holds a barrier (that loop is cut at the barrier). A ``break`` or
        ``continue`` of a loop without a barrier, or of a ``switch``, stays inside
        one work-item's part and is fine.
    constructs : frozenset of str
        Every ``@`` construct the body's statements use.
    root : Block
        The statement tree the facts were read off (later stages read it again through
        :meth:`derived`, e.g. the typed tree of
        :func:`portakern.analysis.expression_types.typed_body`).
    reads_group_shape : bool
        The body can tell the shape of its workgroups
        (:func:`portakern.syntax.group_shape.reads_group_shape`); ``CPU()``'s two paths
        then give it the same default groups.
    """

    barriers: int
    lockstep: bool
    loops_with_barriers: tuple[Loop, ...]
    jumps_leaving_items: tuple[Jump, ...]
    constructs: frozenset[str]
    root: Block | None = field(default=None, compare=False, repr=False)
    _derived: dict = field(default_factory=dict, compare=False, repr=False)
    reads_group_shape: bool = True

    def derived(self, key: object, make: Callable[[], Any]) -> Any:
        """What a later stage reads off :attr:`root`, made on first use and kept with these
        facts (one type map per parsed body, however many analyses read it)."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    @property
    def lockstep_blocker(self) -> str | None:
        """Why work-item loops cannot run this body (``"'return' at line 7"``), or None."""
        if not self.jumps_leaving_items:
            return None
        first = self.jumps_leaving_items[0].first
        return f"'{first.text}' at line {first.line}"


def _headers(node: Node) -> tuple[list, ...]:
    if isinstance(node, (If, Switch)):
        return (node.condition,)
    if isinstance(node, Loop):
        return (node.header,)
    return ()


def body_facts(root: Block) -> BodyFacts:
    """The :class:`BodyFacts` of a parsed body."""
    barriers = 0
    loops: list[Loop] = []
    constructs: set[str] = set()
    for node, ancestors in walk(root):
        if isinstance(node, Barrier):
            barriers += 1
            for outer in ancestors:
                if isinstance(outer, Loop) and outer not in loops:
                    loops.append(outer)
        elif isinstance(node, Simple):
            constructs.update(node.constructs)
        # A construct in a condition or loop header counts as much as one in a statement
        # (a shuffle in an ``if`` condition needs work-item loops too).
        for header in _headers(node):
            constructs.update(t.text for t in header if isinstance(t, Token) and t.kind == "at")
    # @groupreduce and the subgroup collectives: on a lockstep target, loops over the items too.
    lockstep = bool(barriers) or "@localmem" in constructs or "@groupreduce" in constructs \
        or not constructs.isdisjoint(_SUBGROUP_COLLECTIVES)
    jumps: list[Jump] = []
    if lockstep:
        for node, ancestors in walk(root):
            if not isinstance(node, Jump):
                continue
            # break/continue leave only their own loop or switch.
            own = next((a for a in reversed(ancestors) if isinstance(a, (Loop, Switch))),
                       None)
            if node.word in ("return", "goto") or any(own is loop for loop in loops):
                jumps.append(node)
    jumps.sort(key=lambda j: (j.first.line, j.first.col))
    from .group_shape import reads_group_shape

    return BodyFacts(barriers, lockstep, tuple(loops), tuple(jumps), frozenset(constructs),
                     root, reads_group_shape=reads_group_shape(root.tokens))


class _Parser:
    """Recursive descent over the tokens (or parts) with the one cursor
    (:class:`~portakern.syntax.cursor.Cursor`); positions index ``tokens``, blanks included."""

    def __init__(self, tokens: list, smap: SourceMap) -> None:
        self.toks = tokens
        self.smap = smap
        self.cur = Cursor(tokens, parts=True)
        #: The ``(`` and ``)`` of the last parenthesised header read (positions in toks).
        self.paren = (0, 0)

    # -- the cursor's errors, at the user's line ---------------------------------------
    def more(self) -> bool:
        return not self.cur.done()

    def _take(self) -> object:
        """Move past the next significant token or part (and the blanks before it)."""
        if self.cur.done():
            last = self._position(len(self.toks) - 1)
            raise self.smap.error_at("the statement is not finished: expected more code", last)
        return self.cur.next()[0]

    def _position(self, at: int) -> Token:
        """The user's token at or before ``toks[at]``, for an error's position."""
        for t in reversed(self.toks[:at + 1]):
            if isinstance(t, Token):
                return t
        return Token("ws", "", 1, 1)

    def _expect(self, text: str, after: Token) -> object:
        got = self.cur.next_if(text)
        if got is not None:
            return got[0]
        t = self._take() if not self.cur.done() else None
        # On the line of what it follows, as a C compiler puts it (the next line's
        # first token is not where the ';' is missing).
        where = t if isinstance(t, Token) and t.line == after.line else after
        raise self.smap.error_at(f"expected '{text}' after '{after.text}'", where)

    def _parenthesised(self, keyword: Token) -> list:
        """The tokens inside ``( ... )`` after ``keyword`` (the cursor ends after ')')."""
        self._expect("(", keyword)
        start = self.cur.pos
        depth = 1
        while depth:
            t = self._take()
            if isinstance(t, Token) and t.kind == "punct" and t.text in "([{":
                depth += 1
            elif isinstance(t, Token) and t.kind == "punct" and t.text in ")]}":
                depth -= 1
        self.paren = (start - 1, self.cur.pos - 1)
        return self.toks[start:self.cur.pos - 1]

    # -- statements --------------------------------------------------------------------
    def statement(self) -> Node:
        start = self.cur.pos
        t = self._take()
        node = self._statement(t)
        node.tokens = self.toks[start:self.cur.pos]
        if isinstance(node, (If, Loop, Switch)):
            node.paren = (node.paren[0] - start, node.paren[1] - start)
        return node

    def _statement(self, t: object) -> Node:
        if isinstance(t, Call):
            if t.macro == BARRIER:
                self._expect(";", self._position(self.cur.pos - 1))
                return Barrier([])
            self._until(";", self._position(self.cur.pos - 1))
            return Collective([], call=t) if is_barrier(t) else Simple([])
        if isinstance(t, UniformMark):
            return self._uniform()
        if not isinstance(t, Token):  # generated text starts the statement
            self._until(";", self._position(self.cur.pos - 1))
            return Simple([])
        if t.is_punct("{"):
            body: list[Node] = []
            while True:
                nxt = self.cur.part()
                if nxt is None:
                    raise self.smap.error_at("unbalanced '{': missing '}'", t)
                if _punct(nxt, "}"):
                    self._take()
                    return Block([], body)
                body.append(self.statement())
        word = _word(t)
        if word == "if":
            cond = self._parenthesised(t)
            paren = self.paren
            then = self.statement()
            orelse = None
            if self.cur.look() == "else" and self.cur.kind() == "id":
                self._take()
                orelse = self.statement()
            return If([], cond, then, orelse, paren)
        if word in _LOOPS:
            try:
                return self._loop(t)
            except KernelSyntaxError as exc:
                raise self._malformed_loop(t) or exc from None
        if word == "switch":
            cond = self._parenthesised(t)
            paren = self.paren
            return Switch([], cond, self.statement(), paren)
        if word in ("case", "default"):
            self._until(":", t)
            return Label([])
        if word in _JUMPS:
            self._until(";", t)
            return Jump([], word=t.text)
        if t.kind == "at" and t.text == "@synchronize":
            if _punct(self.cur.part(), "("):
                self._parenthesised(t)
            self._expect(";", t)
            return Barrier([])
        if t.kind == "at" and t.text == "@uniform":
            return self._uniform()
        if t.is_punct(";"):
            return Simple([])
        constructs = self._until(";", t, first=t)
        return Simple([], constructs=constructs)

    def _uniform(self) -> Node:
        """The statement after ``@uniform``, marked uniform where it is a simple one."""
        inner = self.statement()
        if isinstance(inner, Simple):
            inner.uniform = True
        return inner

    def _loop(self, t: Token) -> Loop:
        if t.text != "do":
            header = self._parenthesised(t)
            paren = self.paren
            return Loop([], t.text, header, self.statement(), paren)
        body = self.statement()
        w = self._take()
        if not isinstance(w, Token) or _word(w) != "while":
            raise self.smap.error_at("expected 'while (...);' after the body of 'do'",
                                     w if isinstance(w, Token) else t)
        header = self._parenthesised(w)
        paren = self.paren
        self._expect(";", w)
        return Loop([], "do", header, body, paren)

    def _malformed_loop(self, keyword: Token) -> KernelSyntaxError | None:
        """A loop that does not parse and holds a barrier: say what shape is expected."""
        start = next(n for n, it in enumerate(self.toks) if it is keyword)
        for it in self.toks[start:]:
            if is_barrier(it) or isinstance(it, Token) and it.kind == "at" \
                    and it.text == "@synchronize":
                return self.smap.error_at(
                    "malformed statement around @synchronize: expected 'for (...) {...}', "
                    "'while (...) {...}', 'do {...} while (...);' or a '{...}' block", keyword)
            if _punct(it, ";"):
                break
        return None

    def _until(self, text: str, opener: Token, first: object = None) -> tuple[str, ...]:
        """Move past the ``text`` punctuation at bracket depth 0; the ``@`` words seen."""
        constructs = [first.text] if isinstance(first, Token) and first.kind == "at" else []
        depth = 0
        if isinstance(first, Token) and first.kind == "punct" and first.text in "([{":
            depth = 1
        while True:
            if self.cur.done():
                raise self.smap.error_at(f"expected '{text}' to end the statement", opener)
            if depth == 0 and text == ";" and _punct(self.cur.part(), "}"):
                # No ';' before the block's '}' ('{ ...; @synchronize(); ... }' in the
                # docs): the statement ends there; the compiler reports a missing ';'.
                return tuple(dict.fromkeys(constructs))
            t = self._take()
            if not isinstance(t, Token):
                continue
            if t.kind == "at":
                constructs.append(t.text)
            elif t.kind == "punct":
                if depth == 0 and t.text == text:
                    return tuple(dict.fromkeys(constructs))
                if t.text in "([{":
                    depth += 1
                elif t.text in ")]}":
                    depth -= 1
                    if depth < 0:
                        raise self.smap.error_at(f"unbalanced '{t.text}'", t)
