"""Lower the ``@`` constructs once, above the backends.

The result of lowering is a list of *parts*: the user's own tokens, generated
text (:class:`Gen`), and calls of target primitives (:class:`Call`) such as
``global_id(0)`` or ``barrier()``. Every target template folder defines the same
primitive macros, so the index arithmetic, the bounds mask, the row-major axis
order and the barrier-convergent segmentation are written here exactly once.

Axis order: ndrange axis ``d`` of ``D`` maps to hardware axis ``D - 1 - d``, so
the last (fastest) NumPy axis runs along hardware x and accesses coalesce.

Implicit bounds: unless the kernel says ``@kernel(unsafe_indices)``, work-items
outside the ndrange do nothing. A kernel without ``@synchronize`` is wrapped in
one ``if (pk_active)``. A kernel with barriers is cut at each barrier, each
segment between barriers is wrapped on its own, and declarations made in a
segment are hoisted above its ``if`` so that later segments still see them; this
keeps every barrier reached by every work-item of the group (the approach of
KernelAbstractions 0.9.34 and later). Control flow around a barrier is group-uniform:
the statements that set a loop's condition, and the ``@uniform`` declarations, are
found by :mod:`portakern.convergence` and stay outside the mask (per-item control
around a barrier is a ``KernelSyntaxError`` there).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .convergence import analyse
from .errors import CompilationError, NDRangeError
from .language import (
    KERNEL_CONSTRUCTS,
    KernelDef,
    Module,
    Param,
    SourceMap,
    Token,
    declared_workgroup,
    match_bracket,
    next_significant,
    significant,
    unknown_construct_message,
)
from .parts import BARRIER as _BARRIER
from .parts import GROUPREDUCE as _GROUPREDUCE
from .parts import Call, Gen, UniformMark, code, if_branches, is_barrier
from .parts import declarator_name as _declarator_name
from .parts import index_of as _index_of
from .parts import is_tok as _is_tok
from .parts import match_items as _match_items
from .parts import split_after as _split_after
from .parts import split_gen as _split_gen
from .parts import split_statements as _split_statements
from .parts import split_top as _split_top
from .types import KNOWN_TYPES

__all__ = ["Gen", "Call", "LoweredKernel", "lower_kernel", "lower_helpers", "KERNEL_CONSTRUCTS",
           "needs_lockstep",
           "infer_ndim", "DEBUG_RECORD", "check_subscripts", "localmem_names"]


ATOMIC_OPS = ("add", "sub", "min", "max", "xchg", "cas", "and", "or", "xor")

_LOCALES = ("Global", "Local", "Group")
_KINDS = ("Linear", "NTuple")
_KEYWORDS = frozenset({
    "return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
    "continue", "goto", "sizeof",
})
_DECL_WORDS = frozenset({"const", "volatile", "unsigned", "signed", "struct", "auto", "static"})


_LOCKSTEP = frozenset({"@synchronize", "@localmem", "@groupreduce"})
#: The operators of ``@groupreduce(op, value)``.
GROUPREDUCE_OPS = ("add", "min", "max")
_JUMPS = frozenset({"return", "break", "continue", "goto"})


class NotLockstep(CompilationError):
    """A kernel the lockstep lowering cannot express; its launcher runs it elsewhere."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass
class LoweredKernel:
    """A kernel ready for any target's template."""

    name: str
    params: list
    type_vars: tuple[str, ...]
    ndim: int
    unsafe_indices: bool
    localmem: list[list] = field(default_factory=list)
    body: list = field(default_factory=list)
    masked: bool = True
    line: int = 0  # the user's line of the @kernel signature
    #: Lowered for a target that runs a group's work-items in loops (see lower_kernel).
    lockstep: bool = False
    #: Debug mode (see lower_kernel): ``params`` ends with the hidden record
    #: :data:`DEBUG_RECORD`, and :attr:`checked` is what renders instead of ``body``.
    debug: bool = False
    #: ``body`` with every subscript of an array parameter bounds-checked (debug mode).
    #: ``body`` itself stays as written, so analyses of it (MLX's write-back modes)
    #: see the same accesses in both modes.
    checked: list = field(default_factory=list)
    #: ``@kernel(workgroupsize=...)`` for this ndrange rank, in ndrange order (the
    #: templates render it in hardware order: x is the last axis), or None.
    workgroupsize: tuple[int, ...] | None = None
    #: False for ``@kernel(contract=false)``: the templates turn FMA contraction off.
    contract: bool = True

    @property
    def workgroup_items(self) -> int:
        """Work-items per group of the declared workgroup size (0 if none is declared)."""
        return math.prod(self.workgroupsize) if self.workgroupsize is not None else 0

    @property
    def rendered_body(self) -> list:
        """The parts the target template renders."""
        return self.checked if self.debug else self.body


def infer_ndim(kernel: KernelDef) -> int:
    """The ndrange rank a kernel's NTuple unpacking implies (1 if it has none)."""
    best = 0
    sig = significant(kernel.body)
    for i, t in enumerate(sig):
        if t.kind == "at" and t.text == "@index":
            j = i + 1
            args = []
            while j < len(sig) and not sig[j].is_punct(")"):
                if sig[j].kind == "id":
                    args.append(sig[j].text)
                j += 1
            if "NTuple" in args:
                names = _lookback_names(sig[:i])
                best = max(best, min(len(names), 3))
        if t.kind == "at" and t.text in ("@ndrange", "@groupsize"):
            if i + 2 < len(sig) and sig[i + 2].kind == "num":
                try:
                    best = max(best, min(int(sig[i + 2].text) + 1, 3))
                except ValueError:
                    pass
    if isinstance(kernel.workgroupsize, tuple):
        best = best or len(kernel.workgroupsize)
    return best or 1


def _lookback_names(sig: list[Token]) -> list[str]:
    # ... auto [ a , b ] =  (sig ends just before @index)
    if len(sig) < 4 or not sig[-1].is_punct("="):
        return []
    k = len(sig) - 2
    if not sig[k].is_punct("]"):
        return []
    names = []
    k -= 1
    while k >= 0 and not sig[k].is_punct("["):
        if sig[k].kind == "id":
            names.append(sig[k].text)
        k -= 1
    return names[::-1]


class _Lowerer:
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
                           | _DECL_WORDS)
        #: The group-uniform statements, by ``id`` of their first part (see analyse).
        self.uniform: frozenset[int] = frozenset()
        #: ``@kernel(workgroupsize=...)`` for this rank (ndrange order), or None.
        self.declared = declared_workgroup(kernel, ndim)
        #: The conditions of the group-uniform ``if`` branches being lowered (see
        #: :meth:`if_statement`): each masked run and group-level statement is guarded.
        self.predicates: list[str] = []
        self.n_if = 0

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
            if t.kind != "at":
                if t.is_punct("("):
                    parens.append(t)
                elif t.is_punct(")") and parens:
                    parens.pop()
                out.append(t)
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

    def do_index(self, toks: list[Token], i: int, out: list) -> int:
        t = toks[i]
        args, close = self.args_of(toks, i)
        if len(args) != 2 or any(len(a) != 1 for a in args):
            raise self.smap.error_at(
                "@index takes two words: @index(Global|Local|Group, Linear|NTuple)", t)
        locale, kind = args[0][0], args[1][0]
        if locale.text not in _LOCALES:
            raise self.smap.error_at(
                f"unknown index locale {locale.text!r}; use Global, Local or Group", locale)
        if kind.text not in _KINDS:
            hint = " (portakern calls the tuple form NTuple)" if kind.text == "Cartesian" else ""
            raise self.smap.error_at(
                f"unknown index kind {kind.text!r}; use Linear or NTuple{hint}", kind)
        idx, sizes = self.index_parts(locale.text, t.line, t.col)
        if kind.text == "Linear":
            out += self.linear(idx, sizes)
            return close + 1
        # NTuple: rewrite the structured binding `auto [i, j] = ` already emitted.
        sig_positions = [n for n, it in enumerate(out)
                         if not (isinstance(it, Token) and it.kind in ("ws", "comment"))]
        sig = [out[n] for n in sig_positions]
        names: list[Token] = []
        ok = len(sig) >= 4 and isinstance(sig[-1], Token) and sig[-1].is_punct("=")
        if ok and isinstance(sig[-2], Token) and sig[-2].is_punct("]"):
            k = len(sig) - 3
            while k >= 0 and isinstance(sig[k], Token) and not sig[k].is_punct("["):
                if sig[k].kind == "id":
                    names.append(sig[k])
                elif not sig[k].is_punct(","):
                    ok = False
                k -= 1
            names.reverse()
            ok = ok and k >= 1 and isinstance(sig[k - 1], Token) and sig[k - 1].text == "auto"
        else:
            ok = False
        if not ok or not names:
            raise self.smap.error_at(
                f"@index({locale.text}, NTuple) must be unpacked: "
                f"'auto [i, j] = @index({locale.text}, NTuple);'", t)
        if len(names) > 3:
            raise self.smap.error_at(
                f"@index({locale.text}, NTuple) unpacks {len(names)} indices, but an ndrange "
                f"has at most 3 axes", t)
        if len(names) != self.ndim:
            raise NDRangeError(
                f"kernel {self.k.name!r} unpacks {len(names)} indices from "
                f"@index({locale.text}, NTuple) on line {t.line}, but the ndrange has "
                f"{self.ndim} ax{'is' if self.ndim == 1 else 'es'}")
        auto_tok = sig[k - 1]
        del out[sig_positions[k - 1]:]
        out.append(Token("id", "long", auto_tok.line, auto_tok.col))
        for d, nm in enumerate(names):
            out += [Gen(", " if d else " "), nm, Gen(" = "), idx[d]]
        return close + 1

    def do_size(self, name: str, args: list[list[Token]], t: Token) -> list:
        prim = "ndrange" if name == "@ndrange" else "local_size"
        if not args:
            if prim == "ndrange":
                sizes = [Call("ndrange", (d,), t.line) for d in range(self.ndim)]
            elif self.declared is not None:
                return [Gen(str(math.prod(self.declared)))]
            else:
                sizes = self.per_axis("local_size", t.line)
            return self.product(sizes)
        if len(args) != 1 or len(args[0]) != 1 or args[0][0].kind != "num" \
                or not args[0][0].text.isdigit():
            raise self.smap.error_at(f"{name}(d) takes one integer axis, e.g. {name}(0)", t)
        d = int(args[0][0].text)
        if d > 2:
            raise self.smap.error_at(
                f"{name}({d}) names axis {d}, but an ndrange has at most 3 axes (0, 1, 2)",
                args[0][0])
        if d >= self.ndim:
            raise NDRangeError(
                f"kernel {self.k.name!r} asks for {name}({d}) on line {t.line}, but the "
                f"ndrange has {self.ndim} ax{'is' if self.ndim == 1 else 'es'}")
        if prim == "ndrange":
            return [Call("ndrange", (d,), t.line)]
        if self.declared is not None:
            # @kernel(workgroupsize=...): a compile-time constant (the launch enforces it).
            return [Gen(str(self.declared[d]))]
        return [Call("local_size", (self.hw(d),), t.line)]

    def do_localmem(self, toks: list[Token], i: int) -> int:
        t = toks[i]
        j = i + 1
        while j < len(toks) and not toks[j].is_punct(";"):
            j += 1
        if j >= len(toks):
            raise self.smap.error_at("expected ';' after the @localmem declaration", t)
        decl = self.constant_groupsizes(significant(toks[i + 1:j]))
        first_bracket = next((n for n, s in enumerate(decl) if s.is_punct("[")), None)
        if first_bracket is None and len(decl) >= 2 and all(s.kind == "id" for s in decl):
            first_bracket = len(decl)  # a scalar, '@localmem T x;': one element
        if first_bracket is None or first_bracket < 2:
            raise self.smap.error_at(
                "@localmem needs a type, a name and a size: '@localmem T tile[16][16];', or "
                "a type and a name for one element: '@localmem T x;' (workgroup memory takes "
                "no initializer: set it, then @synchronize())", t)
        type_toks = decl[:first_bracket - 1]
        name_tok = decl[first_bracket - 1]
        if name_tok.kind != "id" or any(s.kind != "id" for s in type_toks):
            raise self.smap.error_at(
                "@localmem needs a type, a name and a size: '@localmem T tile[16][16];'", t)
        dims: list[list[Token]] = []
        n = first_bracket
        while n < len(decl):
            if not decl[n].is_punct("["):
                raise self.smap.error_at(f"unexpected '{decl[n].text}' in @localmem", decl[n])
            close = n + 1
            depth = 1
            while close < len(decl) and depth:
                if decl[close].is_punct("["):
                    depth += 1
                elif decl[close].is_punct("]"):
                    depth -= 1
                close += 1
            dims.append(decl[n + 1:close - 1])
            n = close
        for dim in dims:
            if not dim:
                raise self.smap.error_at("@localmem sizes cannot be empty", name_tok)
            for s in dim:
                if s.kind == "num" and re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", s.text):
                    continue
                if s.kind == "punct" and s.text in "+-*/%()<<>>":
                    continue
                if s.kind == "id" and s.text in self.macros:
                    continue
                raise self.smap.error_at(
                    f"@localmem size must be a compile-time constant, and {s.text!r} is not; "
                    f"use a literal, a #define, or a Jinja constant such as {{{{ TILE }}}}", s)
        dim_parts: list = []
        for dim in dims:
            dim_parts.append([Gen("[")] + _spaced(dim) + [Gen("]")])
        self.local_dims[name_tok.text] = [[Gen("(")] + _spaced(dim) + [Gen(")")]
                                          for dim in dims]
        self.localmem.append([Call("localmem", (list(type_toks), name_tok.text,
                                                [p for d in dim_parts for p in d]), t.line)])
        return j + 1

    def do_groups(self, args: list[list[Token]], t: Token) -> list:
        """``@groups(d)``: the number of workgroups along axis ``d``; ``@groups()``: in all."""
        if not args:
            return self.product(self.per_axis("num_groups", t.line))
        if len(args) != 1 or len(args[0]) != 1 or args[0][0].kind != "num" \
                or not args[0][0].text.isdigit():
            raise self.smap.error_at("@groups(d) takes one integer axis, e.g. @groups(0), or "
                                     "none: @groups() is the number of groups in all", t)
        d = int(args[0][0].text)
        if d > 2:
            raise self.smap.error_at(
                f"@groups({d}) names axis {d}, but an ndrange has at most 3 axes (0, 1, 2)",
                args[0][0])
        if d >= self.ndim:
            raise NDRangeError(
                f"kernel {self.k.name!r} asks for @groups({d}) on line {t.line}, but the "
                f"ndrange has {self.ndim} ax{'is' if self.ndim == 1 else 'es'}")
        return [Call("num_groups", (self.hw(d),), t.line)]

    def do_print(self, toks: list[Token], i: int, out: list) -> int:
        """``@print("format", args...)`` -> the target's ``print`` primitive (printf)."""
        t = toks[i]
        j = next_significant(toks, i + 1)
        if j >= len(toks) or not toks[j].is_punct("("):
            raise self.smap.error_at(
                'expected \'(\' after @print: \'@print("i=%ld\\n", i);\'', t)
        close = match_bracket(toks, j, self.smap)
        inner = toks[j + 1:close]
        sig = significant(inner)
        if not sig or sig[0].kind != "str" or not sig[0].text.startswith('"'):
            raise self.smap.error_at(
                '@print takes a format string literal first, then its values: '
                '\'@print("i=%ld x=%f\\n", i, x[i]);\'', sig[0] if sig else t)
        k = next_significant(toks, close + 1)
        before = i - 1
        while before >= 0 and toks[before].kind in ("ws", "comment"):
            before -= 1
        starts = before < 0 or toks[before].text in (";", "{", "}", ")", ":", "else")
        if k >= len(toks) or not toks[k].is_punct(";") or not starts:
            raise self.smap.error_at(
                "@print(...) is a statement of its own (it has no value): "
                "'@print(\"...\", ...);'", t)
        out.append(Call("print", (self.lower_tokens(inner),), t.line, t.col))
        return close + 1

    def constant_groupsizes(self, decl: list[Token]) -> list[Token]:
        """``@groupsize(d)`` / ``@groupsize()`` in a ``@localmem`` size -> the declared size."""
        out: list[Token] = []
        n = 0
        while n < len(decl):
            t = decl[n]
            if not (t.kind == "at" and t.text == "@groupsize"):
                out.append(t)
                n += 1
                continue
            if self.declared is None:
                raise self.smap.error_at(
                    f"@groupsize in a @localmem size needs a declared workgroup size: write "
                    f"'@kernel(workgroupsize=...) void {self.k.name}(...)' so the size is a "
                    f"compile-time constant", t)
            close = n + 1
            if close < len(decl) and decl[close].is_punct("("):
                while close < len(decl) and not decl[close].is_punct(")"):
                    close += 1
            if close >= len(decl):
                raise self.smap.error_at("expected '(' after @groupsize", t)
            inner = [Token(s.kind, s.text, s.line, s.col) for s in decl[n + 2:close]]
            value = self.do_size("@groupsize", [inner] if inner else [], t)
            text = "".join(v.text for v in value)
            out.append(Token("num", text, t.line, t.col))
            n = close + 1
        return out

    def do_groupreduce(self, toks: list[Token], i: int, out: list) -> int:
        """``[const] T name = @groupreduce(op, value);`` -> one ``groupreduce`` primitive.

        A collective: every work-item of the group reaches it (it counts as a barrier
        for the convergence rule), work-items outside the ndrange contribute the
        identity of ``op`` without evaluating ``value``, and every work-item gets the
        result. The primitive's arguments are the operator, the type (``const``
        dropped), the name, the lowered value, whether the bounds mask is on, and the
        name of the hidden workgroup buffer the GPU dialects combine in.
        """
        t = toks[i]
        form = ("@groupreduce(op, value) must initialise a declaration of its own: "
                "'const T total = @groupreduce(add, x[i]);' with op add, min or max")
        start = len(out)
        while start > 0:
            it = out[start - 1]
            if isinstance(it, UniformMark) or _is_tok(it, ";", "{", "}") or (
                    isinstance(it, Token) and it.kind == "pp"):
                break
            start -= 1
        if start > 0 and isinstance(out[start - 1], UniformMark):
            del out[start - 1]  # the result is group-uniform anyway
            start -= 1
        sig = code(out[start:])
        words = [it for it in sig[:-2] if not _is_tok(it, "const", "volatile")]
        if (len(sig) < 3 or not _is_tok(sig[-1], "=") or not isinstance(sig[-2], Token)
                or sig[-2].kind != "id" or not words
                or not all(isinstance(w, Token) and w.kind == "id" for w in words)):
            raise self.smap.error_at(form, t)
        if any(w.text == "auto" for w in words):
            raise self.smap.error_at(
                "@groupreduce needs the result's type (its workgroup buffer has that type): "
                "write 'const T total = @groupreduce(add, x[i]);' instead of 'auto'", words[0])
        j = next_significant(toks, i + 1)
        if j >= len(toks) or not toks[j].is_punct("("):
            raise self.smap.error_at(form, t)
        close = match_bracket(toks, j, self.smap)
        args = _split_top(toks[j + 1:close], ",")
        op = significant(args[0]) if args else []
        if len(args) != 2 or len(op) != 1 or op[0].text not in GROUPREDUCE_OPS:
            raise self.smap.error_at(
                "@groupreduce takes an operator and a value: @groupreduce(add|min|max, value)",
                op[0] if len(op) == 1 and op[0].text not in GROUPREDUCE_OPS else t)
        if not significant(args[1]):
            raise self.smap.error_at("@groupreduce(op, value) needs a value", t)
        k = next_significant(toks, close + 1)
        if k >= len(toks) or not toks[k].is_punct(";"):
            raise self.smap.error_at(form, t)
        value = self.lower_tokens(args[1])
        type_parts = _spaced(words)
        buf = f"pk_gr{sum(1 for d in self.localmem if d and d[0].macro == 'groupreduce_buffer')}"
        self.localmem.append([Call("groupreduce_buffer", (type_parts, buf), t.line, t.col)])
        at = next(n for n, it in enumerate(out) if it is sig[0])
        del out[at:]
        out.append(Call(_GROUPREDUCE, (op[0].text, type_parts, sig[-2].text, value,
                                       not self.k.unsafe_indices, buf), t.line, t.col))
        return k

    def collective(self, stmt: list) -> list:
        """A ``@groupreduce`` statement: the target's primitive does the whole collective."""
        return stmt

    # -- masking ------------------------------------------------------------------
    def mask(self, items: list) -> tuple[list, bool]:
        if self.k.unsafe_indices:
            self.analyse(items)
            return [it for it in items if not isinstance(it, UniformMark)], False
        if not any(is_barrier(it) for it in items):
            self.analyse(items)
            body = [Gen("if (pk_active) {")]
            body += [it for it in items if not isinstance(it, UniformMark)]
            return body + [Gen("}")], True
        self.check_returns(items)
        self.analyse(items)
        return self.block(items), True

    def analyse(self, items: list) -> None:
        """Find the group-uniform statements (:mod:`portakern.convergence`).

        Control flow around a barrier must be the same for every work-item of the
        group: the statements that set what it depends on, and the ``@uniform``
        declarations, run for every work-item, in the ndrange or not (:meth:`block`
        places them outside the mask; the lockstep lowering, once per group).
        """
        if any(is_barrier(it) or isinstance(it, UniformMark) for it in items):
            self.uniform = analyse(items, self.smap, self.is_declaration)

    def check_returns(self, items: list) -> None:
        last_barrier = max(n for n, it in enumerate(items) if is_barrier(it))
        for it in items[:last_barrier]:
            if isinstance(it, Token) and it.kind == "id" and it.text == "return":
                raise self.smap.error_at(
                    "'return' before @synchronize cannot be convergent: the work-items that "
                    "return never reach the barrier; restructure the kernel so every "
                    "work-item reaches each @synchronize", it)

    def block(self, items: list) -> list:
        out: list = []
        run: list[list] = []
        for stmt in _split_statements(items):
            sig = code(stmt)  # a '#pragma unroll' before a loop is not its first word
            if not sig:
                (run[-1].extend(stmt) if run else out.extend(stmt))
                continue
            first = sig[0]
            has_barrier = any(is_barrier(it) for it in stmt)
            if isinstance(first, Call) and first.macro == _GROUPREDUCE:
                out += self.flush(run)
                out += self.collective(stmt)
            elif isinstance(first, Call) and first.macro == _BARRIER:
                out += self.flush(run)
                out += stmt
            elif has_barrier:
                out += self.flush(run)
                try:
                    out += self.compound(stmt, sig)
                except ValueError:  # a 'for' without '(', a 'do' without '{' ...
                    bad = sig[0] if isinstance(sig[0], Token) else None
                    raise self.smap.error_at(
                        "malformed statement around @synchronize: expected 'for (...) {...}', "
                        "'while (...) {...}', 'do {...} while (...);' or a '{...}' block",
                        bad or Token("at", "@synchronize", 1, 1)) from None
            elif isinstance(first, UniformMark) or id(first) in self.uniform:
                # Group-uniform (see analyse): every work-item runs it, unmasked.
                out += self.flush(run)
                self.group_level(stmt)
                plain = [it for it in stmt if not isinstance(it, UniformMark)]
                if self.predicates and not self.is_declaration(code(plain)):
                    # In a predicated branch (if_statement): only where it is taken. A
                    # declaration stays visible to what follows: every item evaluates
                    # its group-uniform initializer.
                    plain = ([Gen(f"if ({' && '.join(self.predicates)}) {{")] + plain
                             + [Gen("}")])
                out += plain
            else:
                run.append(stmt)
        out += self.flush(run)
        return out

    def group_level(self, items: list) -> None:
        """Code every work-item runs alike (``@uniform``, a loop around a barrier)."""

    def atomic_function(self, toks: list[Token], i: int, op: str) -> str:
        """The prelude function an ``@atomic_<op>`` at ``toks[i]`` calls."""
        return f"pk_atomic_{op}"

    def compound(self, stmt: list, sig: list) -> list:
        first = sig[0]
        barrier = next(it for it in stmt if is_barrier(it))
        if isinstance(first, Token) and first.kind == "id" and first.text in ("for", "while"):
            stmt = self.predicated_header(stmt, first)
            start = stmt.index(first)
            popen = _index_of(stmt, start, "(")
            pclose = _match_items(stmt, popen)
            self.group_level(stmt[:pclose + 1])
            rest = stmt[pclose + 1:]
            rsig = [n for n, it in enumerate(rest)
                    if not (isinstance(it, Token) and it.kind in ("ws", "comment"))]
            if rsig and isinstance(rest[rsig[0]], Token) and rest[rsig[0]].is_punct("{"):
                bopen = rsig[0]
                bclose = _match_items(rest, bopen)
                return (stmt[:pclose + 1] + rest[:bopen + 1]
                        + self.block(rest[bopen + 1:bclose]) + rest[bclose:])
            return stmt[:pclose + 1] + [Gen(" {")] + self.block(rest) + [Gen("}")]
        if isinstance(first, Token) and first.kind == "id" and first.text == "do":
            stmt = self.predicated_header(stmt, first)
            start = stmt.index(first)
            bopen = _index_of(stmt, start, "{")
            bclose = _match_items(stmt, bopen)
            self.group_level(stmt[bclose:])
            return stmt[:bopen + 1] + self.block(stmt[bopen + 1:bclose]) + stmt[bclose:]
        if isinstance(first, Token) and first.is_punct("{"):
            bopen = stmt.index(first)
            bclose = _match_items(stmt, bopen)
            return stmt[:bopen + 1] + self.block(stmt[bopen + 1:bclose]) + stmt[bclose:]
        if isinstance(first, Token) and first.kind == "id" and first.text == "if":
            return self.if_statement(stmt, first)
        what = "@groupreduce" if barrier.macro == _GROUPREDUCE else "@synchronize"
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

    def if_statement(self, stmt: list, first: Token) -> list:
        """An ``if`` around a barrier, as straight-line code with every barrier kept.

        The convergence analysis checked that its condition is group-uniform. Every
        work-item evaluates it once, into ``pk_if<n>``; each branch is lowered as a
        block whose masked runs and group-level statements are guarded by it (the
        ``else`` branch by its negation), while the barriers stay outside every
        ``if``: all work-items pass every barrier of both branches. So no target
        sees a barrier under a condition (PoCL mis-compiles masked stores after
        one), at the cost of the barriers of the branch not taken.
        """
        start = stmt.index(first)
        popen = _index_of(stmt, start, "(")
        pclose = _match_items(stmt, popen)
        self.group_level(stmt[:pclose + 1])
        then, orelse = if_branches(stmt[pclose + 1:])
        name = f"pk_if{self.n_if}"
        self.n_if += 1
        outer = " && ".join(self.predicates)
        out = stmt[:start] + [Gen(f"const bool {name} = {outer + ' && ' if outer else ''}(")]
        out += stmt[popen + 1:pclose] + [Gen(");")]
        # Each branch keeps a scope of its own (a '{}' block: no condition around it).
        self.predicates.append(name)
        try:
            out += [Gen(" {")] + self.block(then) + [Gen("}")]
        finally:
            self.predicates.pop()
        if orelse is not None:
            self.predicates.append(f"!{name}")
            try:
                out += [Gen(" {")] + self.block(orelse) + [Gen("}")]
            finally:
                self.predicates.pop()
        return out

    def predicated_header(self, stmt: list, first: Token) -> list:
        """A loop inside a predicated branch (:meth:`if_statement`) runs only when taken."""
        if not self.predicates:
            return stmt
        pred = " && ".join(self.predicates)
        if first.text == "do":
            close = max(n for n, it in enumerate(stmt) if _is_tok(it, ")"))
            popen = next(n for n in range(close, -1, -1) if _is_tok(stmt[n], "("))
            return (stmt[:popen + 1] + [Gen(f"{pred} && (")] + stmt[popen + 1:close]
                    + [Gen(")")] + stmt[close:])
        start = stmt.index(first)
        popen = _index_of(stmt, start, "(")
        pclose = _match_items(stmt, popen)
        header = stmt[popen + 1:pclose]
        if first.text == "while":
            return (stmt[:popen + 1] + [Gen(f"{pred} && (")] + header + [Gen(")")]
                    + stmt[pclose:])
        semis = [n for n, it in enumerate(header) if _is_tok(it, ";")]
        a, b = semis[0], semis[1]
        cond = header[a + 1:b]
        if not code(cond):
            cond = [Gen("true")]
        new_header = header[:a + 1] + [Gen(f" {pred} && (")] + cond + [Gen(")")] + header[b:]
        return stmt[:popen + 1] + new_header + stmt[pclose:]

    def split_run(self, run: list[list]) -> tuple[list, list]:
        """A run's declarations to hoist (through :meth:`hoist`), and its statements."""
        hoisted: list = []
        inner: list = []
        for stmt in run:
            decl = self.split_declaration(stmt)
            if decl is None:
                inner += stmt
            else:
                h, body = decl
                hoisted += self.hoist(h)
                inner += body
        run.clear()
        return hoisted, inner

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
            if eq is None or has_dims:
                if eq is not None and not self.is_constant(decl[eq + 1:]):
                    # Hoisted whole, the initializer would run before the statements
                    # above it (reading unassigned variables) and for out-of-range items.
                    name = _declarator_name(target)
                    raise self.smap.error_at(
                        "in a kernel with @synchronize, an array cannot be initialised with "
                        "non-constant values (its declaration is hoisted out of the bounds "
                        "check); declare it without an initializer and assign its elements, "
                        "or use @kernel(unsafe_indices)",
                        target[name] if name is not None else sig[0])
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
        if t0.text in _KEYWORDS:
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


class _LockstepLowerer(_Lowerer):
    """Lowers a barrier kernel into work-item loops (see :func:`lower_kernel`)."""

    def __init__(self, kernel: KernelDef, module: Module, ndim: int) -> None:
        super().__init__(kernel, module, ndim)
        self.scopes: list[list[str]] = []

    def if_statement(self, stmt: list, first: Token) -> list:
        # The condition runs once per group, outside the work-item loops (it is
        # group-uniform), and each branch is a block of its own, cut at its barriers.
        start = stmt.index(first)
        popen = _index_of(stmt, start, "(")
        pclose = _match_items(stmt, popen)
        self.group_level(stmt[:pclose + 1])
        then, orelse = if_branches(stmt[pclose + 1:])
        out = stmt[:pclose + 1] + [Gen(" {")] + self.block(then) + [Gen("}")]
        if orelse is not None:
            out += [Gen(" else {")] + self.block(orelse) + [Gen("}")]
        return out

    def mask(self, items: list) -> tuple[list, bool]:
        # Every kernel goes through block(): even without a barrier (@localmem only) or
        # with unsafe_indices, its statements must run inside a work-item loop.
        self.masked = not self.k.unsafe_indices
        self.analyse(items)
        return self.block(items), self.masked

    def block(self, items: list) -> list:
        self.scopes.append([])
        try:
            return super().block(items)
        finally:
            self.scopes.pop()

    def flush(self, run: list[list]) -> list:
        if not run:
            return []
        hoisted, inner = self.split_run(run)
        begin: list = [Call("items_begin", (self.ndim,))]
        if self.masked:
            begin += [Gen("const bool pk_active = ")] + self.active() + [Gen(";")]
        for scope in self.scopes:
            for name in scope:
                begin.append(Gen(f" auto& {name} = pk_priv_{name}[pk_lid];"))
        if self.masked:
            inner = [Gen("if (pk_active) {")] + inner + [Gen("}")]
        return hoisted + begin + inner + [Call("items_end", ())]

    def collective(self, stmt: list) -> list:
        """``T name = @groupreduce(op, value);`` as one SIMD reduction loop over the items.

        The result is one value for the group (declared outside the work-item loops);
        the loop visits only the items inside the ndrange (each axis's bound clipped),
        so the masked items contribute nothing and the loop needs no mask; the
        ``omp simd reduction`` clause lets the compiler keep vector partial results.
        """
        call = next(it for it in stmt if isinstance(it, Call) and it.macro == _GROUPREDUCE)
        op, type_parts, name, value, masked, _ = call.args
        lead = stmt[:next(n for n, it in enumerate(stmt) if it is call)]
        out: list = [*lead, *type_parts, Gen(f" {name}; {{ "), *type_parts,
                     Gen(f" pk_r = PK_GR_ID_{op}("), *type_parts, Gen(");"),
                     Call("items_reduce_begin", (self.ndim, op, masked), call.line)]
        for scope in self.scopes:
            for nm in scope:
                out.append(Gen(f" auto& {nm} = pk_priv_{nm}[pk_lid];"))
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
        return f"pk_atomic_{op}"

    def group_level(self, items: list) -> None:
        # Here the code runs once per group, outside the work-item loops: it cannot
        # read or write a variable that has one value per work-item.
        names = {n for scope in self.scopes for n in scope}
        for it in items:
            if isinstance(it, Token) and it.kind == "id" and it.text in names:
                raise NotLockstep(
                    f"kernel {self.k.name!r}: {it.text!r} (line {it.line}) has a value per "
                    f"work-item, but the code around @synchronize that reads it runs once "
                    f"per group when work-items run in lockstep loops; mark a group-wide "
                    f"value @uniform")

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
        end = max(n for n, it in enumerate(stmt) if _is_tok(it, ";"))
        hoisted: list = list(stmt[:start])
        masked: list = []
        for chunk in _split_gen(stmt[start + 1:end], ", "):
            eq = next(n for n, it in enumerate(chunk) if isinstance(it, Gen) and it.text == " = ")
            name = next(it for it in chunk[:eq] if isinstance(it, Token) and it.kind == "id")
            hoisted += [type_tok, Gen(" "), name, Gen(";")]
            masked += [name, Gen(" = ")] + chunk[eq + 1:] + [Gen(";")]
        return hoisted, masked

    def hoist(self, declarations: list) -> list:
        """``T a; T x[3];`` -> ``T pk_priv_a[pk_items]; T pk_priv_x[pk_items][3];``."""
        out: list = []
        for decl in _split_after(declarations, ";"):
            at = _declarator_name(decl)
            if at is None or not isinstance(decl[at], Token):
                out += decl  # blanks and comments
                continue
            name = decl[at].text
            if any(_is_tok(it, "=") for it in decl):
                # A variable-length array (one element per item) cannot be initialised.
                raise NotLockstep(
                    f"kernel {self.k.name!r}: the array {name!r} (line {decl[at].line}) has "
                    f"an initializer and lives across @synchronize")
            self.scopes[-1].append(name)
            out += decl[:at] + [Gen(f"pk_priv_{name}[pk_items]")] + decl[at + 1:]
        return out


def _spaced(tokens: list[Token]) -> list:
    out: list = []
    for n, t in enumerate(tokens):
        if n:
            out.append(Gen(" "))
        out.append(t)
    return out


def _defined_macros(helpers: list[Token]) -> set[str]:
    names = set()
    for t in helpers:
        if t.kind == "pp":
            m = re.match(r"#\s*define\s+([A-Za-z_]\w*)(?!\()", t.text)
            if m:
                names.add(m.group(1))
    return names


def needs_lockstep(kernel: KernelDef) -> bool:
    """Whether the work-items of a group must run in step: ``@synchronize`` or ``@localmem``."""
    return any(t.kind == "at" and t.text in _LOCKSTEP for t in kernel.body)


def lower_kernel(kernel: KernelDef, module: Module, ndim: int, *,
                 lockstep: bool = False, debug: bool = False) -> LoweredKernel:
    """Lower one kernel for an ndrange of ``ndim`` axes.

    ``lockstep`` lowers a kernel with ``@synchronize`` or ``@localmem`` for a target
    that runs each workgroup's work-items one after another (one whose ``macros.j2``
    sets ``lockstep = true``: the ``c`` target of CPU()'s native path), the way
    KernelAbstractions' CPU backend does: the body is cut at each barrier into runs,
    each run becomes a loop over the group's work-items (``items_begin``/``items_end``
    macros), a barrier is the end of one loop and the start of the next, and a
    variable declared in a run lives on as one element per work-item
    (``pk_priv_<name>[pk_items]``, bound by reference in every later loop). A loop
    around ``@synchronize`` runs once per group, and so do the group-uniform
    statements that update what it depends on (:mod:`portakern.convergence`; on
    other targets every work-item runs them, unmasked). The caller checks first that
    no jump leaves a work-item loop (:attr:`portakern.tree.BodyFacts.lockstep_blocker`).

    ``debug`` adds the hidden parameter :data:`DEBUG_RECORD` and bounds-checks every
    subscript of an array parameter (:func:`check_subscripts`); the analyses above
    run on the same parts as without it.
    """
    if isinstance(ndim, bool) or not isinstance(ndim, int) or not 0 <= ndim <= 3:
        raise NDRangeError(f"kernel {kernel.name!r}: the ndrange rank must be 0, 1, 2 or 3, "
                           f"got {ndim!r}")
    lw = (_LockstepLowerer if lockstep else _Lowerer)(kernel, module, ndim)
    items = lw.lower_tokens(kernel.body)
    try:
        body, masked = lw.mask(items)
    except RecursionError:
        raise module.source_map.error_at(
            f"kernel {kernel.name!r} nests blocks around @synchronize too deeply to lower",
            Token("at", "@kernel", kernel.line, kernel.col)) from None
    if masked and not lockstep:
        body = [Gen("const bool pk_active = ")] + lw.active() + [Gen(";\n")] + body
    params = kernel.params
    checked: list = []
    if debug:
        params = [*params, Param(DEBUG_RECORD, "long", True, False, len(params))]
        arrays = {p.name for p in kernel.params if p.pointer}
        checked = check_subscripts(body, arrays, ndim, inside_item=not lockstep,
                                   local=lw.local_dims)
    return LoweredKernel(kernel.name, params, kernel.type_vars, ndim,
                         kernel.unsafe_indices, lw.localmem, body, masked, kernel.line,
                         lockstep, debug, checked, workgroupsize=lw.declared,
                         contract=kernel.contract)


#: The hidden last parameter of a debug-mode kernel: an int64 array holding the fault
#: record, a spare slot and each array parameter's extent (layout in portakern.debug).
DEBUG_RECORD = "pk_dbg"


def check_subscripts(parts: list, arrays: set[str], ndim: int, *,
                     inside_item: bool = True, local: dict[str, list[list]] | None = None,
                     ) -> list:
    """``parts`` with each ``p[expr]`` of an array parameter ``p`` bounds-checked.

    ``p[expr]`` becomes a ``checked(p, expr, line, g0, g1, g2)`` primitive (the
    target's accessor returns the element's address, or a spare slot after
    recording the fault); ``g0..g2`` are the work-item's global index per ndrange
    axis. ``inside_item`` says whether the parts start inside a work-item: in a
    lockstep lowering, code outside ``items_begin``/``items_end`` runs once per
    group and has no work-item (it reports -1). Pointer arithmetic (``*(p + i)``)
    and a member named like a parameter (``s.p[i]``) are left as written.

    ``local`` maps each ``@localmem`` array to its sizes: each subscript ``[e]`` of
    dimension ``d`` becomes ``[checked_local(e, size, code, line, g0, g1, g2)]``,
    which records a fault and gives index 0 (an element of the array) when ``e`` is
    out of range; ``code`` is ``-1 - (16 * k + d)`` for the ``k``-th array.
    """
    local = local or {}
    names = list(local)
    out: list = []
    depth = 0 if inside_item else -1  # >= 0: inside a work-item loop
    n = 0
    while n < len(parts):
        it = parts[n]
        if isinstance(it, Call) and it.macro == "items_begin":
            depth += 1
        elif isinstance(it, Call) and it.macro == "items_end":
            depth -= 1
        if isinstance(it, Token) and it.kind == "id" and it.text in local:
            n = _check_local(parts, n, out, local[it.text], -1 - 16 * names.index(it.text),
                             _item_ids(ndim, it.line, depth >= 0),
                             lambda inner, inside=depth >= 0: check_subscripts(
                                 inner, arrays, ndim, inside_item=inside, local=local))
            continue
        if isinstance(it, Token) and it.kind == "id" and it.text in arrays:
            prev = next((o for o in reversed(out)
                         if not (isinstance(o, Token) and o.kind in ("ws", "comment"))), None)
            j = n + 1
            while j < len(parts) and isinstance(parts[j], Token) \
                    and parts[j].kind in ("ws", "comment"):
                j += 1
            if j < len(parts) and _is_tok(parts[j], "[") and not _is_tok(prev, ".", "->"):
                close = _match_items(parts, j)
                inner = check_subscripts(parts[j + 1:close], arrays, ndim,
                                         inside_item=depth >= 0, local=local)
                ids = _item_ids(ndim, it.line, depth >= 0)
                out.append(Call("checked", (it.text, inner, it.line, *ids), it.line, it.col))
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def localmem_names(kernel: KernelDef) -> list[str]:
    """The kernel's ``@localmem`` arrays, in the order lowering meets them."""
    names = []
    sig = significant(kernel.body)
    for i, t in enumerate(sig):
        if t.kind == "at" and t.text == "@localmem":
            bracket = next((j for j in range(i + 1, len(sig)) if sig[j].is_punct("[")), None)
            if bracket is not None:
                names.append(sig[bracket - 1].text)
    return names


def _item_ids(ndim: int, line: int, inside: bool) -> list[list]:
    """The work-item's global index per ndrange axis (three part lists), or -1s outside one."""
    if not inside:
        return [[Gen("-1")]] * 3
    ids: list[list] = [[Call("global_id", (ndim - 1 - d,), line)] for d in range(ndim)]
    return ids + [[Gen("0")]] * (3 - ndim)


def _check_local(parts: list, n: int, out: list, dims: list[list], code: int,
                 ids: list[list], inner_of: Callable[[list], list]) -> int:
    """Append ``parts[n]`` (a @localmem array) and its checked subscripts; return the next index."""
    name = parts[n]
    out.append(name)
    n += 1
    for d, size in enumerate(dims):
        j = n
        while j < len(parts) and isinstance(parts[j], Token) \
                and parts[j].kind in ("ws", "comment"):
            j += 1
        if j >= len(parts) or not _is_tok(parts[j], "["):
            break
        close = _match_items(parts, j)
        inner = inner_of(parts[j + 1:close])
        out += parts[n:j + 1]
        out.append(Call("checked_local", (inner, size, code - d, name.line, *ids), name.line))
        out.append(parts[close])
        n = close + 1
    return n


def lower_helpers(helpers: list[Token]) -> list:
    """Lower the helper code: atomics, and a target prefix before each function.

    CUDA needs ``__device__`` on every helper function (definitions and
    prototypes); other targets render the ``function_prefix`` macro as nothing.
    """
    out: list = []
    depth = 0
    decl_start = 0  # index in `out` where the current top-level declaration begins
    for n, t in enumerate(helpers):
        if t.kind == "at" and t.text.startswith("@atomic_") and t.text[8:] in ATOMIC_OPS:
            out.append(Gen(f"pk_atomic_{t.text[8:]}"))
            continue
        if depth == 0 and t.kind not in ("ws", "comment", "pp") and decl_start is None:
            decl_start = len(out)
        out.append(t)
        if t.kind == "pp":
            decl_start = None
        elif t.kind == "punct" and t.text in "([{":
            if (t.text == "(" and depth == 0 and decl_start is not None
                    and _is_function_declaration(helpers, n)):
                if decl_start >= 0:
                    out[decl_start:] = _without_specifiers(out[decl_start:])
                out.insert(decl_start, Call("function_prefix", (), t.line))
                decl_start = -1  # prefixed; don't prefix this declaration again
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0 and t.text == "}" and _ends_declaration(helpers, n):
                decl_start = None
        elif t.kind == "punct" and t.text == ";" and depth == 0:
            decl_start = None
    return out


#: What the user may write before a helper function; the target's ``function_prefix``
#: says it instead (C++: ``static inline``, CUDA: ``__device__``), so it is never doubled.
_FUNCTION_SPECIFIERS = frozenset({"static", "inline"})


def _without_specifiers(decl: list) -> list:
    """A helper's declaration without ``static``/``inline`` (and the blank after each)."""
    out: list = []
    skip_blank = False
    for it in decl:
        if isinstance(it, Token) and it.kind == "id" and it.text in _FUNCTION_SPECIFIERS:
            skip_blank = True
            continue
        if skip_blank and isinstance(it, Token) and it.kind == "ws" and "\n" not in it.text:
            skip_blank = False
            continue
        skip_blank = False
        out.append(it)
    return out


def _ends_declaration(helpers: list[Token], n: int) -> bool:
    """A '}' at depth 0 ends a function body unless ';' or a declarator follows (struct)."""
    k = next_significant(helpers, n + 1)
    return k >= len(helpers) or helpers[k].kind == "pp" or not (
        helpers[k].is_punct(";") or helpers[k].kind == "id" and helpers[k].text != "static"
        and helpers[k].text != "inline" and _followed_by_semicolon(helpers, k))


def _followed_by_semicolon(helpers: list[Token], k: int) -> bool:
    j = next_significant(helpers, k + 1)
    return j < len(helpers) and helpers[j].text in (";", ",", "=")


def _is_function_declaration(helpers: list[Token], n: int) -> bool:
    """Is ``helpers[n]`` (a '(' at depth 0) the parameter list of a function?"""
    prev = n - 1
    while prev >= 0 and helpers[prev].kind in ("ws", "comment"):
        prev -= 1
    if prev < 0 or helpers[prev].kind != "id" or helpers[prev].text in _KEYWORDS:
        return False
    depth = 0
    for k in range(n, len(helpers)):
        t = helpers[k]
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0:
                j = next_significant(helpers, k + 1)
                return j < len(helpers) and (helpers[j].is_punct("{") or helpers[j].is_punct(";"))
    return False
