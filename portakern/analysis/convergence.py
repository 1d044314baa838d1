"""Convergence: which values around a barrier are group-uniform (DESIGN §1).

Every work-item of a group must reach each ``@synchronize()``, also the ones
outside the ndrange (the bounds mask skips their other statements). So control
flow that encloses a barrier is *group-uniform*: a loop around ``@synchronize()``
runs the same number of times for every work-item of the group, which means its
condition, its counter, and every statement that updates them are computed by
every work-item, in the ndrange or not, from values that are the same across
the group. This module finds those values and statements:

- the *control* variables: those a loop around a barrier reads or writes in its
  header (``for (...)``, ``while (...)``, ``do ... while (...)``), those declared
  ``@uniform``, and, transitively, everything a statement that changes a control
  variable reads or writes;
- the *per-item* variables: those set, directly or through other variables, from
  ``@index(Global|Local, ...)`` or an atomic's result, or changed by a statement
  that reads a per-item variable (which covers ``if (lid == 0) s = 0;``);
- the *group-uniform statements*: those that change a control variable, those that
  leave a loop around a barrier (``if (s == 3) break;``: every work-item leaves together),
  and the ``@uniform`` declarations. The lowering runs them unmasked (GPU targets: every
  work-item; the lockstep C path: once per group, outside the work-item loops).

A control variable that is per-item is a :class:`~portakern.errors.KernelSyntaxError`
at the line, never a hang or a silently wrong result. So is ``@uniform`` on
anything but a declaration, and a group-uniform statement that also writes memory
(it would write outside the ndrange).

Variables are resolved by scope (a ``for`` header or a ``{}`` block opens one),
so a name reused for another variable elsewhere is another variable. Arrays
(parameters, ``@localmem``) are memory, not variables: reading ``x[0]`` is
group-uniform, reading ``x[i]`` is as uniform as ``i``.

What the walk records, and the checks that turn its findings into errors, are in
:mod:`portakern.analysis.convergence_checks`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..syntax.language import SourceMap, Token
from ..syntax.parts import (
    SUBGROUP,
    Call,
    Gen,
    UniformMark,
    assigned_target,
    code,
    declarators,
    declared_name,
    is_barrier,
    is_tok,
    is_unary,
    operand_target,
    split_top,
)
from ..syntax.tree import Block, If, Jump, Label, Node, Switch, has_barrier
from ..syntax.tree import Loop as LoopNode
from .convergence_checks import PER_ITEM, Binding, Loop, Unit, Write, check

__all__ = ["analyse"]

#: Followed by '=', these make a compound assignment (the tokenizer splits '+=').
_COMPOUND = frozenset("+-*/%&|^")

class _Acc:
    """What a piece of code reads, writes, and whether it uses a per-item construct."""

    def __init__(self) -> None:
        self.reads: list = []
        self.writes: list = []
        self.source: object = None
        self.store: Token | None = None
        #: A 'break', 'continue', 'return' or 'goto' that leaves the loop around it.
        self.jump: Token | None = None
        self.loops = 0  # loops (and switches) entered inside the statement
        self.switches = 0

    def merge(self, other: _Acc) -> None:
        self.reads += other.reads
        self.writes += other.writes
        self.source = self.source or other.source
        self.store = self.store or other.store


def analyse(root: Block, smap: SourceMap,
            is_declaration: Callable[[list], bool]) -> frozenset[int]:
    """The group-uniform statements of a lowered kernel body, by ``id`` of their first part.

    ``root`` is the body's statement tree of lowered parts
    (:func:`portakern.syntax.tree.parse_body`).
    Raises :class:`~portakern.errors.KernelSyntaxError` where control flow around a
    barrier, or a ``@uniform`` value, is not group-uniform (see the module docstring).
    """
    an = _Analysis(smap, is_declaration)
    an.block(root.body)
    return an.solve()


class _Analysis:
    def __init__(self, smap: SourceMap, is_declaration: Callable[[list], bool]) -> None:
        self.smap = smap
        self.is_declaration = is_declaration
        self.scopes: list[dict[str, Binding]] = [{}]
        self.units: list[Unit] = []
        self.loops: list[Loop] = []
        self.writes: dict[Binding, list[Write]] = {}
        self.enclosing: list[Loop] = []  # the loops around @synchronize() being read

    # -- the statements the lowering places ------------------------------------------
    def block(self, stmts: list[Node]) -> None:
        self.scopes.append({})
        try:
            for node in stmts:
                sig = code(node.tokens)
                if is_barrier(sig[0]):
                    self.collective_result(sig)
                elif has_barrier(node):
                    self.compound(node)
                else:
                    self.unit(node)
        finally:
            self.scopes.pop()

    def collective_result(self, sig: list) -> None:
        """A subgroup collective declares its result, which has a value per work-item."""
        call = sig[0] if sig else None
        if not (isinstance(call, Call) and call.macro == SUBGROUP):
            return
        tok = Token("id", call.args[2], call.line, call.col)
        b = Binding(tok.text, tok)
        self.scopes[-1][tok.text] = b
        self.writes.setdefault(b, []).append(Write(b, tok, [], call, True))

    def compound(self, node: Node) -> None:
        """A statement around a barrier: a loop, an ``if`` or a block (the lowering refuses
        others)."""
        first = code(node.tokens)[0]
        if not isinstance(first, Token):
            return
        if isinstance(node, LoopNode) and node.word in ("for", "while"):
            self.scopes.append({})
            try:
                acc = _Acc()
                header = code(node.header)
                if node.word == "for":
                    pieces = split_top(header, ";")
                    self.init(pieces[0], acc)
                    for piece in pieces[1:]:
                        self.expr(piece, acc)
                else:
                    self.expr(header, acc)
                loop = self.loop(first, acc, node.tokens)
                self.body(loop, node.body)
            finally:
                self.scopes.pop()
        elif isinstance(node, LoopNode) and isinstance(node.body, Block):  # do {...} while (...);
            keyword = code(node.tokens[:node.paren[0]])[-1]  # the 'while'
            loop = self.loop(keyword, _Acc(), node.tokens)
            self.body(loop, node.body)
            acc = _Acc()
            self.expr(code(node.header), acc)
            self.header(loop, acc)
        elif isinstance(node, If):
            # Like a loop's header: every work-item of the group evaluates the
            # condition and takes the same branch, so it must be group-uniform.
            acc = _Acc()
            self.expr(code(node.condition), acc)
            branch = self.loop(first, acc, node.tokens)
            self.body(branch, node.then)
            if node.orelse is not None:
                self.body(branch, node.orelse)
        elif isinstance(node, Block):
            self.block(node.body)
        # Anything else around a barrier is malformed: the lowering says so.

    def loop(self, keyword: Token, acc: _Acc, stmt: list) -> Loop:
        barrier = next(it for it in stmt if is_barrier(it))
        loop = Loop(keyword, [], None, barrier.line)
        self.loops.append(loop)
        self.header(loop, acc)
        return loop

    def header(self, loop: Loop, acc: _Acc) -> None:
        """What a loop's header reads and writes (a do-while's: after its body)."""
        loop.refs += acc.reads + acc.writes
        loop.source = loop.source or acc.source
        for tok, b in acc.writes:
            self.writes.setdefault(b, []).append(
                Write(b, tok, acc.reads, acc.source, False))

    def body(self, loop: Loop, node: Node | None) -> None:
        self.enclosing.append(loop)
        try:
            if node is not None:
                self.block(node.body if isinstance(node, Block) else [node])
        finally:
            self.enclosing.pop()

    def unit(self, node: Node) -> None:
        sig = code(node.tokens)
        mark = sig[0] if isinstance(sig[0], UniformMark) else None
        body = sig[1:] if mark else sig
        unit = Unit(sig[0], mark)
        acc = _Acc()
        if mark is not None:
            self.check_mark(mark, body)
        if self.declares(body):
            for b, dacc in self.declaration(body[:-1], acc):
                unit.declared.append((b, dacc.reads, dacc.source))
                self.writes.setdefault(b, []).append(
                    Write(b, b.at, dacc.reads, dacc.source, True))
        else:
            self.one(node, acc)
        unit.reads, unit.writes, unit.source, unit.store = (
            acc.reads, acc.writes, acc.source, acc.store)
        # A jump leaves the innermost loop (an 'if' around a barrier is not one).
        unit.loop = next((lp for lp in reversed(self.enclosing) if lp.is_loop), None)
        unit.jump = acc.jump if unit.loop is not None else None
        declared = {b for b, _, _ in unit.declared}
        for tok, b in acc.writes:
            if b not in declared:
                self.writes.setdefault(b, []).append(
                    Write(b, tok, acc.reads, acc.source, False))
        self.units.append(unit)

    def declares(self, sig: list) -> bool:
        return bool(sig) and is_tok(sig[-1], ";") and self.is_declaration(sig)

    def check_mark(self, mark: UniformMark, body: list) -> None:
        if not self.declares(body):
            raise self.smap.error_at(
                "@uniform marks the declaration of a value that is the same for every "
                "work-item of the group ('@uniform const long n = @ndrange();'); it cannot "
                "mark a store or any other statement (it would run outside the bounds "
                "mask, for work-items past the end of the ndrange)", mark.at)

    # -- reads and writes inside a statement -------------------------------------------
    def one(self, node: Node | None, acc: _Acc) -> None:
        """What a statement without a barrier reads and writes, walking its tree."""
        if node is None:
            return
        if isinstance(node, Block):
            self.scopes.append({})
            try:
                for inner in node.body:
                    self.one(inner, acc)
            finally:
                self.scopes.pop()
        elif isinstance(node, If):
            self.expr(code(node.condition), acc)
            self.one(node.then, acc)
            if node.orelse is not None:
                self.one(node.orelse, acc)
        elif isinstance(node, LoopNode):
            acc.loops += 1
            self.scopes.append({})  # a 'for' header's declarations
            try:
                if node.word == "for":
                    pieces = split_top(code(node.header), ";")
                    self.init(pieces[0], acc)
                    for piece in pieces[1:]:
                        self.expr(piece, acc)
                elif node.word == "while":
                    self.expr(code(node.header), acc)
                self.one(node.body, acc)
                if node.word == "do":
                    self.expr(code(node.header), acc)
            finally:
                self.scopes.pop()
                acc.loops -= 1
        elif isinstance(node, Switch):
            acc.switches += 1
            try:
                self.expr(code(node.condition), acc)
                self.one(node.body, acc)
            finally:
                acc.switches -= 1
        else:
            self.simple(node, code(node.tokens), acc)

    def simple(self, node: Node, sig: list, acc: _Acc) -> None:
        """A declaration, an expression, a ``case`` label or a jump."""
        if not sig:
            return
        if isinstance(node, Label):
            colon = next((n for n, it in enumerate(sig) if is_tok(it, ":")), len(sig))
            self.expr(sig[1:colon], acc)
            return
        if isinstance(node, Jump):
            word = node.word
            leaves = word in ("return", "goto") or (
                word == "break" and not acc.loops and not acc.switches) or (
                word == "continue" and not acc.loops)
            if leaves and acc.jump is None:
                acc.jump = sig[0]
            self.expr(sig[1:], acc)
            return
        if isinstance(sig[0], UniformMark):
            self.check_mark(sig[0], sig[1:])
            sig = sig[1:]
        if self.declares(sig):
            self.declaration(sig[:-1], acc)
        else:
            self.expr(sig, acc)

    def init(self, sig: list, acc: _Acc) -> None:
        """A ``for`` header's first part: a declaration or an expression."""
        if sig and self.is_declaration(sig):
            self.declaration(sig, acc)
        else:
            self.expr(sig, acc)

    def declaration(self, sig: list, acc: _Acc) -> list[tuple[Binding, _Acc]]:
        """Declare each declarator of ``T a = x, *p, b[4];`` (no ';'), after its initializer."""
        out = []
        for chunk in declarators(sig):
            eq = next((n for n, it in enumerate(chunk)
                       if is_tok(it, "=") or (isinstance(it, Gen) and it.text == " = ")),
                      len(chunk))
            target = chunk[:eq]
            name_at = declared_name(target)
            dacc = _Acc()
            self.expr(target[name_at + 1:] if name_at is not None else target, dacc)
            self.expr(chunk[eq + 1:], dacc)
            acc.merge(dacc)
            if name_at is None:
                continue
            tok = target[name_at]
            b = Binding(tok.text, tok, any(is_tok(it, "*") for it in target[:name_at]))
            self.scopes[-1][tok.text] = b
            acc.writes.append((tok, b))
            out.append((b, dacc))
        return out

    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.scopes):
            b = scope.get(name)
            if b is not None:
                return b
        return None

    def expr(self, sig: list, acc: _Acc) -> None:
        n = len(sig)
        for k, it in enumerate(sig):
            if isinstance(it, UniformMark):
                self.check_mark(it, [])
            if isinstance(it, Call):
                if it.macro in PER_ITEM and acc.source is None:
                    acc.source = it
                continue
            if isinstance(it, Gen):
                if it.at is not None and acc.source is None:
                    acc.source = it
                continue
            if not isinstance(it, Token):
                continue
            if it.kind == "id":
                if k and is_tok(sig[k - 1], ".", "->"):
                    continue  # a member's name
                if k + 1 < n and is_tok(sig[k + 1], "("):
                    continue  # a function or macro called
                b = self.lookup(it.text)
                if b is not None:
                    acc.reads.append((it, b))
            elif it.kind == "punct":
                if it.text in ("=", "<<=", ">>="):
                    j = k - 1
                    if it.text == "=" and j >= 0 and isinstance(sig[j], Token) \
                            and sig[j].kind == "punct" and sig[j].text in _COMPOUND:
                        j -= 1
                    self.assigned(*assigned_target(sig, j), acc)
                elif it.text in ("++", "--"):
                    prev = sig[k - 1] if k else None
                    if isinstance(prev, Token) and (prev.kind == "id" or prev.text in ")]"):
                        self.assigned(*assigned_target(sig, k - 1), acc)
                    else:
                        self.assigned(*operand_target(sig, k + 1), acc)
                elif it.text == "&" and is_unary(sig, k):
                    # The address of a variable: whatever it is passed to may change it.
                    self.assigned(*operand_target(sig, k + 1), acc)

    def assigned(self, base: Token | None, subscripted: bool, through: bool,
                 acc: _Acc) -> None:
        """Record the target of an assignment: a variable, or memory (a store)."""
        b = self.lookup(base.text) if base is not None else None
        if through or (subscripted and (b is None or b.pointer)) or base is None:
            acc.store = acc.store or base
            return
        if b is not None:
            acc.writes.append((base, b))
            acc.reads.append((base, b))

    # -- the verdict -------------------------------------------------------------------
    def solve(self) -> frozenset[int]:
        per_item = self.per_item()
        # Control variables, each with why: a loop, or (the unit, the control variable
        # it changes).
        why: dict[Binding, object] = {}
        for loop in self.loops:
            for _, b in loop.refs:
                why.setdefault(b, loop)
        uniform: list[Unit] = []
        for unit in self.units:
            if unit.mark is not None:
                for b, _, _ in unit.declared:
                    why.setdefault(b, unit)
        changed = True
        while changed:
            changed = False
            for unit in self.units:
                if unit in uniform:
                    continue
                hit = next((b for _, b in unit.writes if b in why), None)
                if unit.mark is None and unit.jump is None and hit is None:
                    continue
                uniform.append(unit)
                changed = True
                for _, b in unit.reads + unit.writes:
                    why.setdefault(b, (unit, hit))
        check(self.smap, self.loops, uniform, per_item, why)
        return frozenset(id(u.first) for u in uniform)

    def per_item(self) -> dict[Binding, tuple[Write, object]]:
        """Variables with a value per work-item, each with the write that makes it so."""
        reason: dict[Binding, tuple[Write, object]] = {}
        changed = True
        while changed:
            changed = False
            for b, writes in self.writes.items():
                if b in reason:
                    continue
                for w in writes:
                    if w.source is not None:
                        reason[b] = (w, w.source)
                    else:
                        hit = next(((t, r) for t, r in w.reads if r in reason), None)
                        if hit is None:
                            continue
                        reason[b] = (w, hit)
                    changed = True
                    break
        return reason
