"""The lowerer: one kernel body's tokens to parts, with its bounds mask and barriers.

:class:`Lowerer` walks a kernel body once. The ``@`` constructs become target
primitives (:class:`ConstructLowering`, in :mod:`portakern.lower.constructs`); the
statements between barriers are masked by the implicit bounds and their
declarations hoisted, so that every barrier is reached by every work-item of the
group (the rules are in :mod:`portakern.lower.lowering`'s docstring). The lockstep emitter of
the native CPU path (:class:`portakern.lower.lockstep.LockstepLowerer`) subclasses it.
"""

from __future__ import annotations

import re

from ..analysis.convergence import analyse
from ..errors import CompilationError
from ..syntax import vectors
from ..syntax.language import (
    KernelDef,
    Module,
    SourceMap,
    Token,
    declared_workgroup,
    match_bracket,
    next_significant,
    significant,
    unknown_construct_message,
)
from ..syntax.parts import BARRIER as _BARRIER
from ..syntax.parts import GROUPREDUCE as _GROUPREDUCE
from ..syntax.parts import SUBGROUP as _SUBGROUP
from ..syntax.parts import Call, Gen, UniformMark, code, is_barrier, split_array
from ..syntax.parts import declarator_name as _declarator_name
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import split_top as _split_top
from ..syntax.parts import starts_static_const as _static_const
from ..syntax.tree import Block, If, Loop, Node, Simple, has_barrier, parse_body, walk
from ..types import KNOWN_TYPES
from . import bits, subgroups
from .constructs import ConstructLowering

__all__ = ["Lowerer", "NotLockstep", "ATOMIC_OPS", "KEYWORDS"]

ATOMIC_OPS = ("add", "sub", "min", "max", "xchg", "cas", "and", "or", "xor")
KEYWORDS = frozenset({
    "return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
    "continue", "goto", "sizeof",
})
#: Primitives PoCL mis-compiles in the header of a loop around a barrier (hoist_sizes).
_GROUP_SIZES = frozenset({"local_size", "num_groups", "group_id"})
_DECL_WORDS = frozenset({"const", "volatile", "unsigned", "signed", "struct", "auto", "static"})


class NotLockstep(CompilationError):
    """A kernel the lockstep lowering cannot express; its launcher runs it elsewhere."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class Lowerer(ConstructLowering):
    def __init__(self, kernel: KernelDef, module: Module, ndim: int) -> None:
        self.k = kernel
        self.module = module
        self.smap: SourceMap = module.source_map
        self.ndim = ndim
        self.localmem: list[list] = []
        #: Each @localmem array's sizes, one part list per dimension (debug mode checks them).
        self.local_dims: dict[str, list[list]] = {}
        self.macros = _defined_macros(module.helpers)
        self.type_words = (KNOWN_TYPES | set(kernel.type_vars) | set(module.type_names)
                           | _DECL_WORDS | set(vectors.VECTOR_TYPES))
        #: The group-uniform statements, by ``id`` of their first part (see analyse).
        self.uniform: frozenset[int] = frozenset()
        #: ``@kernel(workgroupsize=...)`` for this rank (ndrange order), or None.
        self.declared = declared_workgroup(kernel, ndim)
        #: The conditions of the group-uniform ``if`` branches being lowered (see
        #: :meth:`if_statement`): each masked run and group-level statement is guarded.
        self.predicates: list[str] = []
        self.n_if = 0
        #: The group sizes read before loops so far (:meth:`hoist_sizes`).
        self.n_sizes = 0

    # -- index arithmetic -------------------------------------------------------
    def hw(self, d: int) -> int:
        return self.ndim - 1 - d

    def per_axis(self, prim: str, line: int, col: int = 0) -> list[Call]:
        return [Call(prim, (self.hw(d),), line, col) for d in range(self.ndim)]

    def linear(self, idx: list[Call], sizes: list[Call]) -> list:
        if not idx:
            return [Gen("0")]
        out: list = [Gen("(")]
        expr: list = [idx[0]]
        for d in range(1, len(idx)):
            expr = [Gen("(")] + expr + [Gen(" * "), sizes[d], Gen(" + "), idx[d], Gen(")")]
        out += expr + [Gen(")")]
        return out

    def product(self, sizes: list[Call]) -> list:
        if not sizes:
            return [Gen("1")]
        out: list = [Gen("(")]
        for d, s in enumerate(sizes):
            if d:
                out.append(Gen(" * "))
            out.append(s)
        return out + [Gen(")")]

    def index_parts(self, locale: str, line: int, col: int = 0,
                    ) -> tuple[list[Call], list[Call]]:
        prim = {"Global": "global_id", "Local": "local_id", "Group": "group_id"}[locale]
        size = {"Global": "ndrange", "Local": "local_size", "Group": "num_groups"}[locale]
        idx = self.per_axis(prim, line, col)
        if size == "ndrange":
            sizes = [Call("ndrange", (d,), line) for d in range(self.ndim)]
        else:
            sizes = self.per_axis(size, line)
        return idx, sizes

    def active(self) -> list:
        if self.ndim == 0:
            return [Gen("true")]
        out: list = []
        for d in range(self.ndim):
            if d:
                out.append(Gen(" && "))
            out += [Call("global_id", (self.hw(d),)), Gen(" < "), Call("ndrange", (d,))]
        return out

    # -- constructs ---------------------------------------------------------------
    def args_of(self, toks: list[Token], i: int) -> tuple[list[list[Token]], int]:
        """Parse ``( a, b )`` after ``toks[i]``; return arg token lists and end index."""
        j = next_significant(toks, i + 1)
        if j >= len(toks) or not toks[j].is_punct("("):
            raise self.smap.error_at(f"expected '(' after {toks[i].text}", toks[i])
        close = match_bracket(toks, j, self.smap)
        args: list[list[Token]] = [[]]
        for t in significant(toks[j + 1:close]):
            if t.is_punct(","):
                args.append([])
            else:
                args[-1].append(t)
        if args == [[]]:
            args = []
        return args, close

    def lower_tokens(self, toks: list[Token]) -> list:
        out: list = []
        i = 0
        parens: list[Token] = []  # the '(' around the current token
        while i < len(toks):
            t = toks[i]
            if t.kind == "id" and t.text in vectors.VECTOR_TYPES:
                i = vectors.lower_word(toks, i, out, self.smap)
                continue
            if t.kind == "id" and t.text in self.nd or t.text in ("@size", "@length"):
                i = self.do_nd(toks, i, out)  # N-d array parameters
                continue
            if t.kind != "at":
                if t.is_punct("("):
                    parens.append(t)
                elif t.is_punct(")") and parens:
                    parens.pop()
                out.append(t)
                if t.text == "static" and _static_const(toks, i):  # OpenCL, Metal: constant
                    out.append(Call("static_constant", (), t.line, t.col))
                i += 1
                continue
            name = t.text
            if name == "@index":
                i = self.do_index(toks, i, out)
            elif name in ("@ndrange", "@groupsize"):
                args, close = self.args_of(toks, i)
                out += self.do_size(name, args, t)
                i = close + 1
            elif name == "@synchronize":
                if parens:
                    self.barrier_in_parentheses(toks, parens[-1], t)
                j = next_significant(toks, i + 1)
                if j < len(toks) and toks[j].is_punct("("):
                    args, close = self.args_of(toks, i)
                    if args:
                        raise self.smap.error_at("@synchronize() takes no arguments", t)
                    j = close + 1
                k = next_significant(toks, j)
                if k >= len(toks) or not toks[k].is_punct(";"):
                    raise self.smap.error_at("expected ';' after @synchronize()", t)
                out.append(Call(_BARRIER, (), t.line, t.col))
                i = j
            elif name == "@localmem":
                i = self.do_localmem(toks, i)
            elif name == "@groupreduce":
                i = self.do_groupreduce(toks, i, out)
            elif name in subgroups.CONSTRUCTS:
                i = subgroups.lower_construct(self, toks, i, out)
            elif name == "@private":
                i += 1
            elif name == "@uniform":
                out.append(UniformMark(t))
                i += 1
            elif name.startswith("@atomic_") and name[8:] in ATOMIC_OPS:
                out.append(Gen(self.atomic_function(toks, i, name[8:]), t))
                i += 1
            elif name == "@groups":
                args, close = self.args_of(toks, i)
                out += self.do_groups(args, t)
                i = close + 1
            elif name == "@print":
                i = self.do_print(toks, i, out)
            elif name in bits.ACCESS_CONSTRUCTS:  # @vload/@vstore, @bitcast/@load/@store
                i = bits.lower_access_or_bits(toks, i, out, self.smap, self.lower_tokens)
            elif name == "@kernel":
                raise self.smap.error_at("@kernel cannot appear inside a kernel body", t)
            else:
                raise self.smap.error_at(unknown_construct_message(name), t)
        return out

    def barrier_in_parentheses(self, toks: list[Token], paren: Token, t: Token) -> None:
        """Refuse ``@synchronize()`` inside parentheses: a loop header, a condition, a call."""
        at = next(n for n, it in enumerate(toks) if it is paren)
        k = at - 1
        while k >= 0 and toks[k].kind in ("ws", "comment"):
            k -= 1
        word = toks[k].text if k >= 0 and toks[k].kind == "id" else None
        if word in ("for", "while"):
            raise self.smap.error_at(
                f"@synchronize() cannot be part of a '{word}' header (the loop's condition and "
                f"updates are evaluated per work-item, not as a statement every work-item "
                f"reaches): put it in the loop body as a statement of its own", t)
        raise self.smap.error_at(
            "@synchronize() must be a statement of its own, not inside parentheses (a "
            "condition, a call or an expression): every work-item of the group must reach "
            "it", t)
    def collective(self, stmt: list) -> list:
        """A ``@groupreduce`` statement: the target's primitive does the whole collective."""
        return stmt

    # -- masking ------------------------------------------------------------------
    def mask(self, items: list) -> tuple[list, bool]:
        root = parse_body(items, self.smap)
        if self.k.unsafe_indices:
            self.analyse(root)
            if any(is_barrier(it) for it in items):
                items = self.unmasked_fixes(root, items)
            return [it for it in items if not isinstance(it, UniformMark)], False
        if not any(is_barrier(it) for it in items):
            self.analyse(root)
            body = [Gen("if (pk_active) {")]
            body += [it for it in items if not isinstance(it, UniformMark)]
            return body + [Gen("}")], True
        self.check_returns(items)
        self.analyse(root)
        return self.block(root.body, root.around()[1]), True

    def unmasked_fixes(self, root: Block, items: list) -> list:
        """``items`` of an unmasked kernel with barriers, with what PoCL needs done in place.

        Unmasked (``unsafe_indices``, or a launch that covers the ndrange exactly),
        nothing is hoisted, yet an initialised array must not live across a barrier
        (:func:`~portakern.syntax.parts.split_array`: ``T a[2];`` and its filling, where it
        was written) and a loop around a barrier reads its group sizes before it
        (:meth:`hoist_sizes`).
        """
        edits: dict[int, tuple[list, int]] = {}  # id of a part -> (replacement, parts taken)
        for node, _ in walk(root):
            if isinstance(node, Loop) and node.tokens and has_barrier(node):
                sizes, header = self.hoist_sizes(node.header)
                if sizes:
                    edits[id(node.tokens[0])] = (sizes + node.tokens[:1], 1)
                    for old, new in zip(node.header, header, strict=True):
                        if old is not new:
                            edits[id(old)] = ([new], 1)
            if not isinstance(node, Simple) or not node.tokens:
                continue
            sig = code(node.tokens)
            if not self.is_declaration(sig) or not any(
                    _is_tok(sig[n - 1], "]") and _is_tok(sig[n], "=") for n in range(1, len(sig))):
                continue
            split = self.split_declaration(node.tokens)
            if split is not None:
                edits[id(node.tokens[0])] = ([*split[0], *split[1]], len(node.tokens))
        out: list = []
        n = 0
        while n < len(items):
            edit = edits.get(id(items[n]))
            if edit is None:
                out.append(items[n])
                n += 1
            else:
                out += edit[0]
                n += edit[1]
        return out

    def analyse(self, root: Block) -> None:
        """Find the group-uniform statements (:mod:`portakern.analysis.convergence`).

        Control flow around a barrier must be the same for every work-item of the
        group: the statements that set what it depends on, and the ``@uniform``
        declarations, run for every work-item, in the ndrange or not (:meth:`block`
        places them outside the mask; the lockstep lowering, once per group).
        """
        if any(is_barrier(it) or isinstance(it, UniformMark) for it in root.tokens):
            self.uniform = analyse(root, self.smap, self.is_declaration)

    def check_returns(self, items: list) -> None:
        last_barrier = max(n for n, it in enumerate(items) if is_barrier(it))
        for it in items[:last_barrier]:
            if isinstance(it, Token) and it.kind == "id" and it.text == "return":
                raise self.smap.error_at(
                    "'return' before @synchronize cannot be convergent: the work-items that "
                    "return never reach the barrier; restructure the kernel so every "
                    "work-item reaches each @synchronize", it)

    def block(self, stmts: list[Node], tail: list) -> list:
        """Statements of one block (and its trailing blanks), cut at their barriers.

        The statements between barriers form *runs*, masked together (:meth:`flush`);
        a barrier, a collective, a statement around a barrier (:meth:`compound`) and a
        group-uniform statement end the run before them.
        """
        out: list = []
        run: list[list] = []
        for node in stmts:
            stmt = node.tokens
            first = code(stmt)[0]  # a '#pragma unroll' before a loop is not its first word
            if isinstance(first, Call) and first.macro in (_GROUPREDUCE, _SUBGROUP):
                out += self.flush(run)
                out += self.collective(stmt)
            elif isinstance(first, Call) and first.macro == _BARRIER:
                out += self.flush(run)
                out += stmt
            elif has_barrier(node):
                out += self.flush(run)
                out += self.compound(node)
            elif isinstance(first, UniformMark) or id(first) in self.uniform:
                # Group-uniform (see analyse): every work-item runs it, unmasked.
                out += self.flush(run)
                self.group_level(stmt)
                plain: list = [it for it in stmt if not isinstance(it, UniformMark)]
                if self.predicates and not self.is_declaration(code(plain)):
                    # In a predicated branch (if_statement): only where it is taken. A
                    # declaration stays visible to what follows: every item evaluates
                    # its group-uniform initializer.
                    plain = ([Gen(f"if ({' && '.join(self.predicates)}) {{")] + plain
                             + [Gen("}")])
                out += plain
            else:
                run.append(list(stmt))
        if tail:
            (run[-1].extend(tail) if run else out.extend(tail))
        out += self.flush(run)
        return out

    def braced(self, node: Node | None) -> list:
        """A loop's or branch's body as a ``{}`` block, cut at its barriers."""
        assert node is not None  # the parser gives every loop a body
        if isinstance(node, Block):
            head, tail, close = node.around()
            return head + self.block(node.body, tail) + close
        return [Gen(" {")] + self.block([node], []) + [Gen("}")]

    def branch(self, node: Node | None) -> list:
        """An ``if`` branch's statements, cut at their barriers (no braces of its own)."""
        assert node is not None  # the parser gives every 'if' a branch
        if isinstance(node, Block):
            return self.block(node.body, node.around()[1])
        return self.block([node], [])

    def group_level(self, items: list) -> None:
        """Code every work-item runs alike (``@uniform``, a loop around a barrier)."""

    def atomic_function(self, toks: list[Token], i: int, op: str) -> str:
        """The prelude function an ``@atomic_<op>`` at ``toks[i]`` calls."""
        return f"pk_atomic_{op}"

    def compound(self, node: Node) -> list:
        """A statement around a barrier: a loop, a ``{}`` block or a uniform ``if``."""
        stmt = node.tokens
        if isinstance(node, Loop) and node.word in ("for", "while"):
            popen, pclose = node.paren
            sizes, header = self.hoist_sizes(node.header)
            lead = stmt[:popen + 1] + self.predicated(node, header) + stmt[pclose:pclose + 1]
            self.group_level(lead)
            return sizes + lead + self.braced(node.body)
        if isinstance(node, Loop) and isinstance(node.body, Block):  # do {...} while (...);
            end = node.lead + 1 + len(node.body.tokens)
            popen, pclose = node.paren
            sizes, header = self.hoist_sizes(node.header)
            after = (stmt[end:popen + 1] + self.predicated(node, header) + stmt[pclose:])
            self.group_level(after)
            return sizes + stmt[:node.lead + 1] + self.braced(node.body) + after
        if isinstance(node, Block):
            return self.braced(node)
        if isinstance(node, If):
            return self.if_statement(node)
        if isinstance(node, Loop):  # 'do' without '{'
            raise self.smap.error_at(
                "malformed statement around @synchronize: expected 'for (...) {...}', "
                "'while (...) {...}', 'do {...} while (...);' or a '{...}' block", node.first)
        barrier = next(it for it in stmt if isinstance(it, Call) and is_barrier(it))
        what = {_GROUPREDUCE: "@groupreduce", _BARRIER: "@synchronize"}.get(barrier.macro) \
            or subgroups.construct_name(barrier)
        raise self.smap.error_at(
            f"{what} inside if/else/switch or an expression cannot be convergent: every "
            f"work-item of the group must reach it; move it out of the conditional (loops with "
            f"uniform bounds are fine)",
            Token("at", what, barrier.line, barrier.col or 1))

    def flush(self, run: list[list]) -> list:
        if not run:
            return []
        hoisted, inner = self.split_run(run)
        guard = "".join(f" && {p}" for p in self.predicates)
        return hoisted + [Gen(f"if (pk_active{guard}) {{")] + inner + [Gen("}")]

    def if_statement(self, node: If) -> list:
        """An ``if`` around a barrier, as straight-line code with every barrier kept.

        The convergence analysis checked that its condition is group-uniform. Every
        work-item evaluates it once, into ``pk_if<n>``; each branch is lowered as a
        block whose masked runs and group-level statements are guarded by it (the
        ``else`` branch by its negation), while the barriers stay outside every
        ``if``: all work-items pass every barrier of both branches. So no target
        sees a barrier under a condition (PoCL mis-compiles masked stores after
        one), at the cost of the barriers of the branch not taken.
        """
        stmt = node.tokens
        popen, pclose = node.paren
        self.group_level(stmt[:pclose + 1])
        name = f"pk_if{self.n_if}"
        self.n_if += 1
        outer = " && ".join(self.predicates)
        out = stmt[:node.lead] + [Gen(f"const bool {name} = {outer + ' && ' if outer else ''}(")]
        out += node.condition + [Gen(");")]
        # Each branch keeps a scope of its own (a '{}' block: no condition around it).
        self.predicates.append(name)
        try:
            out += [Gen(" {")] + self.branch(node.then) + [Gen("}")]
        finally:
            self.predicates.pop()
        if node.orelse is not None:
            self.predicates.append(f"!{name}")
            try:
                out += [Gen(" {")] + self.block([node.orelse], []) + [Gen("}")]
            finally:
                self.predicates.pop()
        return out

    def hoist_sizes(self, header: list) -> tuple[list, list]:
        """The group sizes a loop around a barrier reads in its header, read before it.

        ``while (s < @groupsize()) {...; @synchronize(); }`` never runs its body on
        PoCL: it mis-compiles ``get_local_size`` (and ``get_num_groups``,
        ``get_group_id``) in the condition of a loop that holds a barrier, while the
        same value read into a variable before the loop is right. Each such read
        becomes ``const long pk_size<n> = ...;`` before the loop (on every target but
        the lockstep one, where sizes are variables already). Returns the
        declarations and the header that reads them.
        """
        decls: list = []
        out: list = []
        for it in header:
            if isinstance(it, Call) and it.macro in _GROUP_SIZES:
                name = f"pk_size{self.n_sizes}"
                self.n_sizes += 1
                decls += [Gen(f"const long {name} = "), it, Gen("; ")]
                out.append(Gen(name))
            else:
                out.append(it)
        return decls, out

    def predicated(self, loop: Loop, header: list | None = None) -> list:
        """A loop's header; inside a predicated branch (:meth:`if_statement`), it runs
        only where the branch is taken."""
        header = loop.header if header is None else header
        if not self.predicates:
            return header
        pred = " && ".join(self.predicates)
        if loop.word != "for":
            return [Gen(f"{pred} && (")] + header + [Gen(")")]
        semis = [n for n, it in enumerate(header) if _is_tok(it, ";")]
        a, b = semis[0], semis[1]
        cond = header[a + 1:b]
        if not code(cond):
            cond = [Gen("true")]
        return header[:a + 1] + [Gen(f" {pred} && (")] + cond + [Gen(")")] + header[b:]

    def split_run(self, run: list[list]) -> tuple[list, list]:
        """A run's declarations to hoist (through :meth:`hoist`), and its statements."""
        hoisted: list = []
        inner: list = []
        for stmt in run:
            decl = self.split_declaration(stmt)
            if decl is None or self.stays_in_run(stmt):
                inner += stmt
            else:
                h, body = decl
                hoisted += self.hoist(h)
                inner += body
        run.clear()
        return hoisted, inner

    def stays_in_run(self, stmt: list) -> bool:
        """Whether a declaration stays whole inside its run instead of being hoisted."""
        return False

    def hoist(self, declarations: list) -> list:
        """What a hoisted declaration becomes (as written, here)."""
        return declarations

    def split_declaration(self, stmt: list) -> tuple[list, list] | None:
        """Split ``T a = x, b;`` into ``T a; T b;`` (hoisted) and ``a = x;`` (masked)."""
        sig = code(stmt)
        if not self.is_declaration(sig) or not _is_tok(sig[-1], ";"):
            return None
        start = next(n for n, it in enumerate(stmt) if it is sig[0])
        end = max(n for n, it in enumerate(stmt) if it is sig[-1])
        lead = stmt[:start]
        body = stmt[start:end]
        chunks = _split_top(body, ",")
        first_chunk = chunks[0]
        name_at = _declarator_name(first_chunk)
        if name_at is None:
            return None
        prefix = first_chunk[:name_at]
        stars_start = len(prefix)
        while stars_start > 0 and _is_tok(prefix[stars_start - 1], "*", "const", "ws"):
            stars_start -= 1
        type_prefix = prefix[:stars_start]
        declarators = [first_chunk[stars_start:]] + chunks[1:]
        hoisted: list = list(lead)
        masked: list = []
        for decl in declarators:
            eq = next((n for n, it in enumerate(decl) if _is_tok(it, "=")), None)
            target = decl if eq is None else decl[:eq]
            has_dims = any(_is_tok(it, "[") for it in target)
            if eq is not None and has_dims:
                # An array with an initializer: declared above (without it), filled here,
                # where it was written, for the items in the ndrange.
                h, m = split_array(type_prefix, target, decl[eq + 1:], self.smap, sig[0])
                hoisted += h
                masked += m
                continue
            if eq is None:
                hoisted += type_prefix + [Gen(" ")] + decl + [Gen(";")]
                continue
            if any(isinstance(it, Token) and it.text == "auto" for it in type_prefix):
                name = _declarator_name(target)
                bad = target[name] if name is not None else sig[0]
                raise self.smap.error_at(
                    "this declaration is hoisted out of the bounds check (the kernel has "
                    "@synchronize), so it needs an explicit type instead of 'auto'; or use "
                    "@kernel(unsafe_indices)", bad)
            pointer = any(_is_tok(it, "*") for it in target)
            prefix_out = type_prefix if pointer else [
                it for it in type_prefix if not _is_tok(it, "const")]
            target_out = [it for it in target if not _is_tok(it, "const")]
            name = _declarator_name(target)
            if name is None:
                return None  # not a declarator (malformed code): leave it masked as written
            hoisted += prefix_out + [Gen(" ")] + target_out + [Gen(";")]
            masked += [target[name], Gen(" = ")] + decl[eq + 1:] + [Gen(";")]
        return hoisted, masked

    def is_constant(self, items: list) -> bool:
        """True when an initializer uses only literals, operators, macros and type names."""
        for it in items:
            if not isinstance(it, Token):
                return False
            if it.kind == "id" and not (it.text in self.macros or it.text in self.type_words
                                        or it.text in ("true", "false", "sizeof")):
                return False
        return True

    def is_declaration(self, sig: list) -> bool:
        if not sig or not isinstance(sig[0], Token) or sig[0].kind != "id":
            return False
        t0 = sig[0]
        if t0.text in KEYWORDS:
            return False
        if t0.text in self.type_words:
            return True
        if len(sig) > 1 and isinstance(sig[1], Token) and sig[1].kind == "id":
            return True
        n = 1
        while n < len(sig) and isinstance(sig[n], Token) and sig[n].is_punct("*"):
            n += 1
        return (n > 1 and n + 1 < len(sig) and isinstance(sig[n], Token) and sig[n].kind == "id"
                and isinstance(sig[n + 1], Token) and sig[n + 1].text in ("=", ";", "[", ","))


def _defined_macros(helpers: list[Token]) -> set[str]:
    found = (re.match(r"#\s*define\s+([A-Za-z_]\w*)(?!\()", t.text)
             for t in helpers if t.kind == "pp")
    return {m.group(1) for m in found if m}
