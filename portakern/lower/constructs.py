"""Lowering of the ``@`` constructs that stand for values and declarations.

``@index``, ``@groupsize``/``@ndrange``, ``@groups``, ``@localmem``, ``@print`` and
``@groupreduce`` each become target primitives (:class:`~portakern.syntax.parts.Call`) and
generated text here. :class:`ConstructLowering` is the half of the lowerer
(:class:`portakern.lower.lowerer.Lowerer`) that handles them; the statement-level half
(masks, barriers, hoisting) lives in :mod:`portakern.lower.lowerer`.
"""

from __future__ import annotations

import math
import re
from functools import cached_property
from typing import Any

from ..analysis.localmem_sizes import size_message
from ..errors import NDRangeError
from ..syntax.language import (
    KernelDef,
    Module,
    Token,
    match_bracket,
    next_significant,
    significant,
)
from ..syntax.parts import GROUPREDUCE as _GROUPREDUCE
from ..syntax.parts import Call, Gen, UniformMark, code
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import split_top as _split_top
from .subscripts import lower_nd, lower_size

__all__ = ["ConstructLowering", "GROUPREDUCE_OPS", "spaced"]

_LOCALES = ("Global", "Local", "Group")
_KINDS = ("Linear", "NTuple")
#: The operators of ``@groupreduce(op, value)``.
GROUPREDUCE_OPS = ("add", "min", "max")


class ConstructLowering:
    """The ``@`` construct handlers of :class:`portakern.lower.lowerer.Lowerer` (a mixin).

    The methods read the lowerer's state (``kernel``, ``ndim``, ``source_map``,
    ``localmem``, ``declared``...), which :class:`~portakern.lower.lowerer.Lowerer` sets up.
    """

    # State the statement-level lowerer provides (see Lowerer.__init__).
    kernel: KernelDef
    module: Module
    ndim: int
    localmem: Any
    declared: Any
    local_dims: Any
    sm: Any

    @cached_property
    def nd(self) -> dict[str, Any]:
        """The N-d array parameters (``T x[:, :]``), by name."""
        return {p.name: p for p in self.k.params if p.axes}

    def do_nd(self, toks: list[Token], i: int, out: list) -> int:
        """``x[i, j]`` on an N-d array parameter, ``@size(x, d)``, ``@length(x)``."""
        if toks[i].kind == "at":
            parts, i = lower_size(self, toks, i)
            out += parts
            return i
        return lower_nd(self, toks, i, out)

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
        scalars = {p.name: k for k, p in enumerate(self.k.params)
                   if not p.pointer and not p.axes}
        launch_sized: list[Token] = []  # what a size reads that only the launch knows
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
                if s.kind == "at" and s.text == "@groupsize" or s.kind == "id" \
                        and s.text in scalars:
                    launch_sized.append(s)
                    continue
                raise self.smap.error_at(size_message(s.text), s)
        if launch_sized:
            if len(dims) != 1:
                s = launch_sized[0]
                raise self.smap.error_at(
                    f"@localmem {name_tok.text!r} has a size read at launch ({s.text!r}): "
                    f"only a one-dimensional array may be sized at launch "
                    f"('@localmem T buf[rows * cols];'); give the other sizes as constants, "
                    f"or declare a workgroup size, '@kernel(workgroupsize=...)' (or give the "
                    f"launcher one, 'kernel(backend, workgroupsize=...)')", s)
            count, expr = self._launch_size(dims[0], scalars)
            self.local_dims[name_tok.text] = [[Gen("(")] + count + [Gen(")")]]
            # Where the array starts in the launch's one buffer of workgroup memory (CUDA's
            # dynamic shared memory, OpenCL's __local argument): after the arrays before
            # it, each rounded up to 16 bytes.
            offset: list = [Gen("0")]
            for before in self.localmem:
                if before and isinstance(before[0], Call) and before[0].macro == "localmem_sized":
                    b_type, _, b_count, _, b_offset = before[0].args
                    offset = [Gen("("), *b_offset, Gen(" + ((size_t)("), *b_count,
                              Gen(") * sizeof("), *spaced(b_type), Gen(") + 15) / 16 * 16)")]
            self.localmem.append([Call("localmem_sized", (
                list(type_toks), name_tok.text, count, expr, offset), t.line)])
            return j + 1
        dim_parts: list = []
        for dim in dims:
            dim_parts.append([Gen("[")] + spaced(dim) + [Gen("]")])
        self.local_dims[name_tok.text] = [[Gen("(")] + spaced(dim) + [Gen(")")]
                                          for dim in dims]
        self.localmem.append([Call("localmem", (list(type_toks), name_tok.text,
                                                [p for d in dim_parts for p in d]), t.line)])
        return j + 1

    def _launch_size(self, dim: list[Token], scalars: dict[str, int]) -> tuple[list, str]:
        """A size read at launch: its C parts, and the same as a Python expression of
        ``a`` (the launch arguments) and ``g`` (the workgroup size, hardware order) that
        the backends evaluate before launch (:mod:`portakern.backends.local_sizes`)."""
        parts: list = []
        expr: list[str] = []
        n = 0
        while n < len(dim):
            s = dim[n]
            if s.kind == "at":  # @groupsize(d) or @groupsize(), not declared
                close = n + 1
                while close < len(dim) and not dim[close].is_punct(")"):
                    close += 1
                inner = [Token(x.kind, x.text, x.line, x.col) for x in dim[n + 2:close]]
                parts += [Gen("(")] + self.do_size("@groupsize", [inner] if inner else [], s) \
                    + [Gen(")")]
                axes = [self.hw(int(inner[0].text))] if inner else \
                    [self.hw(d) for d in range(self.ndim)]
                expr.append("(" + " * ".join(f"g[{a}]" for a in axes or [0]) + ")")
                n = close + 1
                continue
            parts.append(s)
            if s.kind == "id" and s.text in scalars:
                expr.append(f"int(a[{scalars[s.text]}])")
            elif s.kind == "id":
                raise self.smap.error_at(
                    f"@localmem size read at launch cannot use the #define {s.text!r}: the "
                    f"launch computes it; use a Jinja constant ({{{{ {s.text} }}}}) or a "
                    f"literal", s)
            elif s.kind == "num":
                expr.append(str(int(s.text.rstrip("uUlL"), 0)))
            else:
                expr.append("//" if s.text == "/" else s.text)
            n += 1
        return spaced(parts), " ".join(expr)

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
        """``@groupsize(d)`` / ``@groupsize()`` in a ``@localmem`` size -> the declared size
        (without one, the size is read at launch: :meth:`do_localmem`)."""
        out: list[Token] = []
        n = 0
        while n < len(decl):
            t = decl[n]
            if not (t.kind == "at" and t.text == "@groupsize"):
                out.append(t)
                n += 1
                continue
            if self.declared is None:
                out.append(t)  # a size read at launch (do_localmem)
                n += 1
                continue
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
        type_parts = spaced(words)
        buf = f"pk_gr{sum(1 for d in self.localmem if d and d[0].macro == 'groupreduce_buffer')}"
        self.localmem.append([Call("groupreduce_buffer", (type_parts, buf), t.line, t.col)])
        at = next(n for n, it in enumerate(out) if it is sig[0])
        del out[at:]
        out.append(Call(_GROUPREDUCE, (op[0].text, type_parts, sig[-2].text, value,
                                       not self.k.unsafe_indices, buf), t.line, t.col))
        return k


def spaced(tokens: list[Token]) -> list:
    out: list = []
    for n, t in enumerate(tokens):
        if n:
            out.append(Gen(" "))
        out.append(t)
    return out
