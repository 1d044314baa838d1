"""The lockstep lowering: a kernel with barriers as loops over a group's work-items.

On a target whose ``macros.j2`` sets ``lockstep = true`` (the ``c`` target of CPU()'s
native path) one thread runs a whole workgroup. :func:`portakern.lower.lowering.lower_kernel`
cuts the body at each barrier into *runs*; this module's :class:`LockstepLowerer`
turns each run into one loop over the group's work-items (``items_begin`` /
``items_end``) and decides where each variable declared in a run lives:

* **loop-local**: named only inside the run that declares it (``bin`` in the
  histogram): its declaration stays in the loop body, as written, so the compiler
  keeps it in a register;
* **recomputed**: initialised from the work-item's indices, the ndrange, scalar
  parameters, literals and other recomputed variables, and never assigned again
  (``row``, ``li``, ``M`` in matmul_tiled): its declaration is repeated at the top
  of every later loop, so a subscript such as ``ta[li][k]`` stays an affine function
  of the loop counters (a broadcast and a contiguous load, not a gather);
* **per item**: everything else (an accumulator): one element per work-item,
  ``pk_priv_<name>[pk_items]``, bound by reference in every later loop.

A loop visits only the work-items inside the ndrange (each axis's bound clipped,
as a masked item of a run does nothing), so no loop carries a mask; and unless the
run uses atomics, ``@print``, a jump or debug checks (in debug mode, a run whose
checks allow it still does: :func:`portakern.lower.initcheck.fast_runs`), its innermost
loop carries ``#pragma omp simd``: the work-items of one run are independent between barriers
(a race between them is undefined on every target), so the compiler may vectorise
across them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from ..errors import locate
from ..syntax.language import KernelDef, Module, Token, next_significant
from ..syntax.parts import (
    GROUPREDUCE,
    SUBGROUP,
    Call,
    Gen,
    code,
    declarator_name,
    is_tok,
    match_items,
    split_after,
    split_gen,
    walk_parts,
)
from ..syntax.tree import If, Node, parse_body
from . import subgroups
from .initcheck import DEBUG_SIMD
from .lowerer import Lowerer, NotLockstep
from .private_atomics import private_targets

__all__ = ["LockstepLowerer"]

#: Index primitives whose value a recomputed variable may be built from.
_PURE_CALLS = frozenset({"global_id", "local_id", "group_id", "local_size", "num_groups",
                         "ndrange"})
#: Punctuation a recomputed initializer may not contain: assignments, subscripts (a
#: load may fault for an item the original read only when active), division (by zero).
_IMPURE_PUNCT = frozenset({"=", "++", "--", "[", "/", "%", ",", "{", "?"})
#: Words that make a run unfit for ``omp simd`` (a jump out of the loop, ordered output).
_NOT_SIMD_WORDS = frozenset({"return", "goto", "printf"})
#: Punctuation a work-item limit may contain (see LockstepLowerer.uniform_bound).
_BOUND_PUNCT = frozenset({"+", "-", "*", "(", ")", "<<", ">>"})
_COMPOUND = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"})
_GEN_PURE = re.compile(r"[\s()*+\-0-9]*\Z")


def _words(parts: list) -> Iterator[str]:
    """Every identifier in ``parts``, inside primitive calls' arguments too."""
    for it in parts:
        if isinstance(it, Token):
            if it.kind == "id":
                yield it.text
        elif isinstance(it, Call):
            for a in it.args:
                if isinstance(a, list):
                    yield from _words(a)
        elif isinstance(it, Gen):
            yield from re.findall(r"[A-Za-z_]\w*", it.text)


def _assigned(parts: list) -> Counter[str]:
    """How often each name is assigned, incremented or has its address taken in ``parts``."""
    toks = [t for t in _tokens(parts) if t.kind not in ("ws", "comment")]
    out: Counter[str] = Counter()
    for n, t in enumerate(toks):
        if t.kind != "id":
            continue
        nxt = toks[n + 1].text if n + 1 < len(toks) else ""
        after = toks[n + 2].text if n + 2 < len(toks) else ""
        prev = toks[n - 1].text if n else ""
        if (nxt == "=" or nxt in ("++", "--") or prev in ("++", "--", "&")
                or nxt in _COMPOUND and after == "="):
            out[t.text] += 1
    return out


def _spaced(tokens: list) -> list:
    """Declaration words (``const long j``) with a space between each two."""
    out: list = []
    for it in tokens:
        out += [Gen(" "), it] if out else [it]
    return out


def _tokens(parts: list) -> Iterator[Token]:
    for it in parts:
        if isinstance(it, Token):
            yield it
        elif isinstance(it, Call):
            for a in it.args:
                if isinstance(a, list):
                    yield from _tokens(a)


class LockstepLowerer(Lowerer):
    """Lowers a barrier kernel into work-item loops (see the module docstring)."""

    def __init__(self, kernel: KernelDef, module: Module, ndim: int, *,
                 debug: bool = False) -> None:
        super().__init__(kernel, module, ndim)
        #: Per open block: the variables that live as per-item arrays (``pk_priv_<name>``).
        self.scopes: list[list[str]] = []
        #: Per open block: the recomputed declarations (parts, names declared), repeated
        #: at the top of every later loop.
        self.recomputes: list[list[tuple[list, list[str]]]] = []
        #: Debug checks keep the loops scalar: faults are found in work-item order.
        self.debug = debug
        self.counts: Counter[str] = Counter()
        self.assigned: Counter[str] = Counter()
        #: The scalar parameters (a local of the same name, which would shadow one, is
        #: assigned: :meth:`mask` drops those).
        self.params = {p.name for p in kernel.params if not p.pointer}
        self.pending: list[tuple[list, list[str]]] = []
        #: How often each name occurs in the run being split (set by split_run).
        self.here: Counter[str] = Counter()
        #: The arrays whose atomics add into thread-private sums (none in debug mode).
        self.private = {} if debug else dict(private_targets(kernel))

    # -- structure --------------------------------------------------------------------
    def if_statement(self, node: If) -> list:
        # The condition runs once per group, outside the work-item loops (it is
        # group-uniform), and each branch is a block of its own, cut at its barriers.
        lead = node.tokens[:node.paren[1] + 1]
        self.group_level(lead)
        out = lead + [Gen(" {")] + self.branch(node.then) + [Gen("}")]
        if node.orelse is not None:
            out += [Gen(" else {")] + self.block([node.orelse], []) + [Gen("}")]
        return out

    def hoist_sizes(self, header: list) -> tuple[list, list]:
        # The group sizes are variables of the work-item loops here (pk_ls0...).
        return [], header

    def mask(self, items: list) -> tuple[list, bool]:
        # Every kernel goes through block(): even without a barrier (@localmem only) or
        # with unsafe_indices, its statements must run inside a work-item loop.
        self.masked = not self.k.unsafe_indices
        root = parse_body(items, self.smap)
        self.analyse(root)
        self.counts = Counter(_words(items))
        self.assigned = _assigned(items)
        self.params = {n for n in self.params if not self.assigned[n]}
        return self.block(root.body, root.around()[1]), self.masked

    def block(self, stmts: list[Node], tail: list) -> list:
        self.scopes.append([])
        self.recomputes.append([])
        try:
            return super().block(stmts, tail)
        finally:
            self.scopes.pop()
            self.recomputes.pop()

    def recomputed_names(self) -> set[str]:
        return {n for scope in self.recomputes for _, names in scope for n in names}

    def bindings(self) -> list:
        """The top of a work-item loop: every earlier run's variables, for this item.

        The recomputed declarations come first (they read only indices, parameters
        and each other), then a reference to each per-item array's element.
        """
        out: list = []
        for scope in self.recomputes:
            for parts, _ in scope:
                out += [Gen(" "), *parts]
        for scope in self.scopes:
            out += [Gen(f" auto& {nm} = pk_priv_{nm}[pk_lid];") for nm in scope]
        return out

    def flush(self, run: list[list]) -> list:
        if not run:
            return []
        at = self.strided_at(run)
        if at is not None:
            # The statements before the strided loop run as a loop of their own; the
            # loop's work-items then run interchanged (see strided_loop).
            head, loop = run[:at], run[at:]
            run.clear()  # as split_run does: the caller reuses the list for the next run
            return self.flush(head) + self.flush_run(loop, True)
        return self.flush_run(run, False)

    def flush_run(self, run: list[list], strided: bool) -> list:
        self.pending: list[tuple[list, list[str]]] = []
        stmts = [stmt for stmt in run if code(stmt)]
        hoisted, inner = self.split_run(run)
        limit = self.item_limit(stmts)
        simd: bool | str = self.simd_safe(inner)
        if simd and self.debug:  # decided once the checks are in (initcheck.fast_runs)
            simd = DEBUG_SIMD
        # A run on @localmem and per-item values only (it names no array parameter), where
        # a declared workgroup size fixes the number of rows: the row loop is unrolled in
        # full, so what every row reads alike (tb[k][lj] in matmul_tiled) is loaded once,
        # into registers, for all of them. A run that touches arrays is bound by memory
        # and keeps one row at a time (unrolled, it measured slower).
        rows = self.declared[-2] if self.declared is not None and self.ndim >= 2 else 0
        arrays = {p.name for p in self.k.params if p.pointer}
        unroll = rows if simd and not self.masked and 1 < rows <= 16 \
            and not arrays & set(_words(inner)) else 0
        # A declared row of a multiple of 16 items is vectorised 16 items at a time: g++
        # picks 32-byte vectors on AVX-512 hosts it tunes for 256 bits (Sapphire Rapids),
        # which made the tiled matmul's tile loop 1.4x slower than 64-byte ones.
        width = self.declared[-1] if self.declared is not None and self.ndim else 0
        simdlen = 16 if simd is True and width and width % 16 == 0 else 0
        if strided:
            var, init, upto, step, body = self.strided_loop(code(inner))
            # The body as written (blanks and comments too) after the header's ')'.
            end = next(n for n in range(len(inner) - 1, -1, -1) if inner[n] is body[0])
            body = inner[end:]
            out = [*hoisted, Call("items_begin", (self.ndim, self.masked, simd, limit, unroll,
                                                   upto, step, simdlen)),
                   *self.bindings(), Gen(" "), *var, Gen(" = pk_b + ("), *init, Gen(");"),
                   *body, Call("items_end", (1,))]
        else:
            out = [*hoisted, Call("items_begin", (self.ndim, self.masked, simd, limit,
                                                   unroll, "", "", simdlen)),
                   *self.bindings(), *inner, Call("items_end", ())]
        self.recomputes[-1] += self.pending
        return out

    def strided_at(self, run: list[list]) -> int | None:
        """Where a run ends in a strided loop that its work-items may run interchanged.

        ``for (long j = lid; j < n; j += S) {...}`` (``lid`` the item's local index, ``n``
        and ``S`` group-uniform: literals, macros, scalar parameters, ``@groupsize()``)
        as the run's last statement: item ``l`` visits ``j = l, l + S, ...``. Run as
        written, each item's loop strides through memory alone, and the compiler cannot
        vectorise across items whose trip counts differ ("control flow in loop"). Run
        interchanged, one outer loop steps a base ``pk_b`` by ``S`` and the SIMD loop over
        the items handles ``j = pk_b + l`` for every item with ``j < n``: each item still
        visits its ``j`` in order, the items of one step are independent (as between any
        barriers), and consecutive items touch consecutive elements. Not in debug mode, a
        run that is not SIMD-safe, a body with ``break``, or one that assigns ``j``; nor
        where an array declared before the loop is named in it (it would have to become
        a per-item array with an initializer).
        """
        if self.debug or self.ndim != 1:
            return None
        last = next((n for n in range(len(run) - 1, -1, -1) if code(run[n])), None)
        if last is None:
            return None
        # The run's own declarations may name the local index (const long l = lid;).
        self.pending = [(stmt, self.declared_in(stmt)) for stmt in run[:last] if code(stmt)]
        try:
            if self.strided_loop(code(run[last])) is None or not self.simd_safe(run[last]):
                return None
        finally:
            self.pending = []
        named = set(_words(run[last]))
        for stmt in run[:last]:
            split = self.split_declaration(stmt) if code(stmt) else None
            if split is not None and named & set(self.declared_in(stmt)) \
                    and any(is_tok(it, "[") for it in split[0]):
                return None
        return last

    def strided_loop(self, sig: list) -> tuple[list, list, list, list, list] | None:
        """``for (T j = lid; j < n; j += S) body`` as (``T j``, ``lid``, n, S, body)."""
        if len(sig) < 2 or not is_tok(sig[0], "for") or not is_tok(sig[1], "("):
            return None
        close = match_items(sig, 1)
        header, body = sig[2:close], sig[close + 1:]
        semis = [n for n, it in enumerate(header) if is_tok(it, ";")]
        if len(semis) != 2:
            return None
        init, cond, incr = (header[:semis[0]], header[semis[0] + 1:semis[1]],
                            header[semis[1] + 1:])
        eq = next((n for n, it in enumerate(init) if is_tok(it, "=")), None)
        if eq is None or eq < 2 or not all(
                isinstance(it, Token) and it.kind == "id" for it in init[:eq]):
            return None
        var = init[eq - 1].text
        if not self.is_local_id(init[eq + 1:]) or len(cond) < 3 \
                or not (is_tok(cond[0], var) and is_tok(cond[1], "<")):
            return None
        upto = self.uniform_bound(cond[2:])
        if len(incr) < 4 or not (is_tok(incr[0], var) and is_tok(incr[1], "+")
                                 and is_tok(incr[2], "=")):
            return None
        rest = incr[3:]
        sizes = [it for it in rest if isinstance(it, Call)]
        if sizes and len(rest) == 1 and sizes[0].macro == "local_size" \
                and sizes[0].args[:1] == (0,):
            step = [Gen("(long long)("), *rest, Gen(")")]
        else:
            step = self.uniform_bound(rest)
        if not upto or not step or _assigned(body)[var] or "break" in _words(body):
            return None
        return _spaced(init[:eq]), init[eq + 1:], upto, step, body

    def item_limit(self, stmts: list[list]) -> list:
        """A bound on the items that do anything in a run of one strided loop, or ``[]``.

        ``for (long b = lid; b < 256; b += count) {...}`` (``lid`` the item's local
        index, the bound made of literals, macros and scalar parameters) does nothing
        for an item whose ``lid`` is 256 or more: the work-item loop stops there
        instead of visiting every item of the group to test the condition once.
        """
        fresh = {n for _, names in self.pending for n in names}
        stmts = [stmt for stmt in stmts  # after split_run: the recomputed declarations
                 if not (set(self.declared_in(stmt)) <= fresh and self.declared_in(stmt))]
        if self.ndim != 1 or len(stmts) != 1:
            return []
        sig = code(stmts[0])
        if len(sig) < 2 or not is_tok(sig[1], "("):
            return []
        if is_tok(sig[0], "if"):
            return self.if_limit(sig)
        if not is_tok(sig[0], "for"):
            return []
        header = sig[2:match_items(sig, 1)]
        semis = [n for n, it in enumerate(header) if is_tok(it, ";")]
        if len(semis) != 2:
            return []
        init, cond = header[:semis[0]], header[semis[0] + 1:semis[1]]
        eq = next((n for n, it in enumerate(init) if is_tok(it, "=")), None)
        if eq is None or eq < 2 or not all(
                isinstance(it, Token) and it.kind == "id" for it in init[:eq]):
            return []  # not a declaration: 'for (b = lid; ...)' assigns even if it never runs
        var = init[eq - 1].text
        if not self.is_local_id(init[eq + 1:]) or len(cond) < 3 \
                or not (is_tok(cond[0], var) and is_tok(cond[1], "<")):
            return []
        return self.uniform_bound(cond[2:])

    def if_limit(self, sig: list) -> list:
        """``if (lid == 0) {...}`` or ``if (lid < U) {...}`` without ``else``: 1, or U."""
        close = match_items(sig, 1)
        if close + 1 < len(sig) and any(is_tok(it, "else") for it in sig[close + 1:]):
            return []
        cond = sig[2:close]
        op = next((n for n, it in enumerate(cond) if is_tok(it, "==", "<")), None)
        if op is None or not self.is_local_id(cond[:op]):
            return []
        if is_tok(cond[op], "=="):
            zero = cond[op + 1:]
            return [Gen("1")] if len(zero) == 1 and getattr(zero[0], "text", "") == "0" else []
        return self.uniform_bound(cond[op + 1:])

    def uniform_bound(self, bound: list) -> list:
        """``bound`` as a group-level expression, or ``[]`` if it may differ per item."""
        known = self.params | self.macros
        for it in bound:
            # Only operators that bind tighter than '<' (and no division): the bound is
            # the whole right operand, 'lid < n == 1' is '(lid < n) == 1'.
            if not isinstance(it, Token) or it.kind == "id" and it.text not in known \
                    or it.kind not in ("id", "num", "punct") \
                    or it.kind == "punct" and it.text not in _BOUND_PUNCT:
                return []
        return [Gen("(long long)("), *bound, Gen(")")] if bound else []

    def is_local_id(self, parts: list) -> bool:
        """Whether ``parts`` is the item's linear local index (in a 1-D ndrange)."""
        inner = [it for it in parts if not (isinstance(it, Gen) and it.text.strip() in "()")
                 and not is_tok(it, "(", ")")]
        if len(inner) != 1:
            return False
        it = inner[0]
        if isinstance(it, Call):
            return it.macro == "local_id" and it.args == (0,)
        if isinstance(it, Token) and it.kind == "id":
            for scope in [*self.recomputes, self.pending]:
                for decl, names in scope:
                    if names == [it.text]:
                        sig = code(decl)
                        eq = next((n for n, p in enumerate(sig) if is_tok(p, "=")), None)
                        return eq is not None and self.is_local_id(sig[eq + 1:-1])
        return False

    def simd_safe(self, inner: list) -> bool:
        """Whether a run's work-items may run as SIMD lanes (no order between them)."""
        for w in _words(inner):
            if w in _NOT_SIMD_WORDS or w.startswith(("pk_atomic_", "pk_local_atomic_", "pk_pv_")):
                return False
        return not any(isinstance(it, Call) and it.macro in ("print", "checked")
                       for it in walk_parts(inner))

    def collective(self, stmt: list) -> list:
        """``T name = @groupreduce(op, value);`` as one SIMD reduction loop over the items.

        The result is one value for the group (declared outside the work-item loops);
        the loop visits only the items inside the ndrange (each axis's bound clipped),
        so the masked items contribute nothing and the loop needs no mask; the
        ``omp simd reduction`` clause lets the compiler keep vector partial results.
        """
        call = next(it for it in stmt if isinstance(it, Call)
                    and it.macro in (GROUPREDUCE, SUBGROUP))
        if call.macro == SUBGROUP:
            return subgroups.lockstep(self, stmt, call)
        op, type_parts, name, value, masked, _ = call.args
        lead = stmt[:next(n for n, it in enumerate(stmt) if it is call)]
        out: list = [*lead, *type_parts, Gen(f" {name}; {{ "), *type_parts,
                     Gen(f" pk_r = PK_GR_ID_{op}("), *type_parts, Gen(");"),
                     Call("items_reduce_begin", (self.ndim, op, masked), call.line)]
        out += self.bindings()
        out += [Gen(f" pk_r = PK_GR_OP_{op}(pk_r, ("), *type_parts, Gen(")("), *value,
                Gen("));"), Call("items_reduce_end", ()), Gen(f" {name} = pk_r; }}")]
        return out

    def atomic_function(self, toks: list[Token], i: int, op: str) -> str:
        # A group's work-items run one after another on one thread: an atomic on
        # @localmem (``@atomic_add(&buf[k], v)``) needs no atomic instruction.
        j = next_significant(toks, i + 1)
        if j < len(toks) and toks[j].is_punct("("):
            j = next_significant(toks, j + 1)
            if j < len(toks) and toks[j].is_punct("&"):
                j = next_significant(toks, j + 1)
            local = {decl[0].args[1] for decl in self.localmem if decl}
            if j < len(toks) and toks[j].kind == "id" and toks[j].text in local:
                return f"pk_local_atomic_{op}"
            # A thread-private sum (lower/private_atomics.py; c/module.j2 declares it).
            if j < len(toks) and toks[j].kind == "id" and toks[j].text in self.private:
                return f"pk_pv_{toks[j].text}.{op}"
        return f"pk_atomic_{op}"

    def group_level(self, items: list) -> None:
        # Here the code runs once per group, outside the work-item loops: it cannot
        # read or write a variable that has one value per work-item.
        names = {nm for scope in self.scopes for nm in scope} | self.recomputed_names()
        for it in items:
            if isinstance(it, Token) and it.kind == "id" and it.text in names \
                    and it.text not in self.type_words:
                raise self.refused(
                    f"kernel {self.k.name!r}: {it.text!r} (line {it.line}) has a value per "
                    f"work-item, but the code around @synchronize that reads it runs once "
                    f"per group when work-items run in lockstep loops; mark a group-wide "
                    f"value @uniform", it.line)

    def refused(self, message: str, line: int) -> NotLockstep:
        """A :class:`NotLockstep` pointed at the user's ``line`` (file, line and text)."""
        smap = self.smap
        text = next((smap.lines()[n] for n, user in enumerate(smap.line_of) if user == line),
                    None)
        return locate(NotLockstep(message), smap.filename, line, text,
                      f"in kernel {self.k.name!r}")

    # -- where a run's declarations live ----------------------------------------------
    def split_run(self, run: list[list]) -> tuple[list, list]:
        # How often each name occurs in this run, and where, for stays_in_run.
        self.here = Counter(w for stmt in run for w in _words(stmt))
        self.run_tokens = [t for stmt in run for t in _tokens(stmt)
                           if t.kind not in ("ws", "comment")]
        return super().split_run(run)

    def stays_in_run(self, stmt: list) -> bool:
        names = self.declared_in(stmt)
        if names and all(self.here[n] == self.counts[n] for n in names) \
                and not self.pointed_into(self.arrays_in(stmt)):
            return True  # loop-local: nothing outside this run names it
        if names and self.recomputable(stmt, names):
            self.pending.append((self.recomputed(stmt), names))
            return True  # declared here; repeated in every later loop
        return False

    def arrays_in(self, stmt: list) -> list[str]:
        """The names a declaration statement declares as arrays (``float acc[4]``)."""
        split = self.split_declaration(stmt)
        out = []
        for decl in split_after(split[0], ";") if split is not None else []:
            at = declarator_name(decl)
            if at is not None and isinstance(decl[at], Token) and is_tok(
                    next(iter(code(decl[at + 1:])), None), "["):
                out.append(decl[at].text)
        return out

    def pointed_into(self, names: list[str]) -> bool:
        """Whether this run uses one of ``names`` other than as ``name[...]``: a pointer may
        then hold its address (``float* p = acc + 1;``) and outlive the run, so the array
        must live on as a per-item array like the pointer."""
        toks = self.run_tokens if names else []
        rank: dict[str, int] = {}  # acc[1] of float acc[2][4] is a row: a pointer
        for n, t in enumerate(toks):
            if t.kind == "id" and t.text in names:
                k, subscripts = n + 1, 0
                while k < len(toks) and toks[k].is_punct("["):
                    k, subscripts = match_items(toks, k) + 1, subscripts + 1
                if n > 0 and toks[n - 1].kind == "id":  # ``float acc[4]``: declared
                    rank[t.text] = subscripts
                elif subscripts < rank.get(t.text, 1) or n and toks[n - 1].text == "&":
                    return True
        return False

    def declared_in(self, stmt: list) -> list[str]:
        """The names a declaration statement declares (``[]`` if it cannot tell)."""
        split = self.split_declaration(stmt)
        if split is None:
            return []
        names = []
        for decl in split_after(split[0], ";"):
            at = declarator_name(decl)
            if at is not None and isinstance(decl[at], Token):
                names.append(decl[at].text)
        return names

    def recomputable(self, stmt: list, names: list[str]) -> bool:
        """A declaration of scalars from indices, the ndrange and scalar parameters only."""
        own = _assigned(stmt)  # the initialisation itself
        if any(self.assigned[n] > own[n] for n in names):
            return False
        sig = code(stmt)
        at = next((k for k, it in enumerate(sig) if is_tok(it, "=")
                   or isinstance(it, Gen) and it.text == " = "), None)
        if at is None or any(is_tok(it, "[") for it in sig[:at]):
            return False
        known = (self.params | self.type_words | self.macros | self.recomputed_names()
                 | set(names) | {"sizeof", "min", "max"})
        for it in sig:
            if isinstance(it, Token):
                if it.kind == "id" and it.text not in known:
                    return False
                if it.kind in ("str", "at", "pp") or it.kind == "punct" and (
                        it.text in _IMPURE_PUNCT and it is not sig[at]
                        and not (it.text == "," and self.generated(stmt))):
                    return False
            elif isinstance(it, Call):
                if it.macro not in _PURE_CALLS:
                    return False
            elif isinstance(it, Gen) and not (
                    it.text in (" = ", ", ", ";") or _GEN_PURE.match(it.text)):
                return False
        return len([it for it in sig if is_tok(it, "=")]) <= 1 or self.generated(stmt)

    def generated(self, stmt: list) -> bool:
        return any(isinstance(it, Gen) and it.text == " = " for it in stmt)

    def recomputed(self, stmt: list) -> list:
        """The declaration as repeated in a later loop: as written, without comments."""
        sig = code(stmt)
        first = next(n for n, it in enumerate(stmt) if it is sig[0])
        last = max(n for n, it in enumerate(stmt) if it is sig[-1])
        return [it for it in stmt[first:last + 1]
                if not (isinstance(it, Token) and it.kind == "comment")]

    def split_declaration(self, stmt: list) -> tuple[list, list] | None:
        if any(isinstance(it, Gen) and it.text == " = " for it in stmt):
            return self.split_generated(stmt)
        return super().split_declaration(stmt)

    def split_generated(self, stmt: list) -> tuple[list, list]:
        """``long i = X, j = Y;`` (an NTuple unpacking) -> ``long i; long j;`` + ``i = X; j = Y;``.

        The values are per work-item, so they are assigned in the work-item loop;
        the base class hoists the whole declaration, which is right where every
        item runs it at the same place, not here.
        """
        first = code(stmt)[0]
        start = next(n for n, it in enumerate(stmt) if it is first)
        type_tok = stmt[start]
        end = max(n for n, it in enumerate(stmt) if is_tok(it, ";"))
        hoisted: list = list(stmt[:start])
        masked: list = []
        for chunk in split_gen(stmt[start + 1:end], ", "):
            eq = next(n for n, it in enumerate(chunk) if isinstance(it, Gen) and it.text == " = ")
            name = next(it for it in chunk[:eq] if isinstance(it, Token) and it.kind == "id")
            hoisted += [type_tok, Gen(" "), name, Gen(";")]
            masked += [name, Gen(" = ")] + chunk[eq + 1:] + [Gen(";")]
        return hoisted, masked

    def hoist(self, declarations: list) -> list:
        """``T a; T x[3];`` -> ``T pk_priv_a[pk_items]; T pk_priv_x[pk_items][3];``."""
        out: list = []
        for decl in split_after(declarations, ";"):
            at = declarator_name(decl)
            if at is None or not isinstance(decl[at], Token) or decl[at].text in self.type_words:
                out += decl  # blanks and comments (or no name: the compiler says what)
                continue
            name = decl[at].text
            if any(is_tok(it, "=") for it in decl):
                # A variable-length array (one element per item) cannot be initialised.
                raise self.refused(
                    f"kernel {self.k.name!r}: the array {name!r} (line {decl[at].line}) has "
                    f"an initializer and lives across @synchronize", decl[at].line)
            self.scopes[-1].append(name)
            out += decl[:at] + [Gen(f"pk_priv_{name}[pk_items]")] + decl[at + 1:]
        return out
