"""Complex numbers where the dialect has no operator overloading (OpenCL C).

``cfloat`` and ``cdouble`` are a struct ``{re, im}`` on every target (docs/language.md,
"Complex numbers"). The C++ dialects (the native path, CUDA, Metal) overload the operators
and the complex functions for it in their prelude (``templates/c/complex.j2``), so the source
is written as it stands. OpenCL C cannot, so :func:`complex_calls` rewrites the kernel body
on the typed tree (:mod:`portakern.analysis.expression_types`), before the lowering, with the
types each expression has under the variant's bindings (``T`` bound to ``cfloat``):

* ``a + b``, ``a - b``, ``a * b``, ``a / b``, ``a == b``, ``a != b`` with a complex operand
  become ``pk_<C>_add(a, b)``... (``<C>`` the result's complex type), a real operand
  converted (``pk_cfloat_make((float)(x), 0)``), a ``cfloat`` widened to ``cdouble``
  (``pk_cdouble_of(z)``); ``-z`` becomes ``pk_<C>_neg(z)``;
* ``z op= v`` becomes ``z = pk_<C>_op(z, v)`` (``z`` must have no side effects: it is
  written twice); ``z = x`` and ``cfloat z = x`` with a real ``x`` convert it;
* ``cfloat(re, im)`` and ``(cfloat)x`` become ``pk_cfloat_make`` (on Metal too, whose
  struct has no constructors: :attr:`portakern.targets.TargetInfo.constructors`; only these
  and the conversions are rewritten there);
  ``real imag conj abs arg exp log sqrt pow`` of a complex argument and ``polar(r, t)``
  become ``pk_<C>_<name>``.

On Metal (operators, but no constructors) only ``cfloat(re, im)``, the casts and the
conversions are rewritten, and complex elements and named values are read through their
address (``pk_cfloat_ld(&x[i])``: a struct in device or constant memory is not copied into a
by-value parameter there).

``z.re`` and ``z.im`` are the struct's fields on every target, so they stay as written, and
``@atomic_add(&y[i].re, v)`` is an atomic on a ``float``.

:func:`complex_helpers` does the same to the module's helper functions: each body is typed
with its parameters' declared types and the kernel's bindings (``T twice(T z)`` with ``T``
bound to ``cfloat``), and ``return x;`` with a real ``x`` in a helper returning a complex
type converts it. On both targets a helper call's real argument for a complex parameter
(``twice(1.0f)``) is converted too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..analysis.c_types import COMPLEX, COMPLEX_FUNCS, COMPLEX_REAL_FUNCS, CType, scalar
from ..analysis.expression_types import typed_body
from ..errors import KernelTypeError
from ..syntax.expressions import (
    Assign,
    Binary,
    Call,
    Cast,
    Declarator,
    Expr,
    InitList,
    Member,
    Name,
    Subscript,
    TypeName,
    Unary,
    children,
    walk,
)
from ..syntax.functions import FunctionDef, functions_of
from ..syntax.language import KernelDef, Module, Param
from ..syntax.tokens import Token, significant, split_commas
from ..syntax.tree import Jump

__all__ = ["complex_calls", "complex_helpers", "complex_rewrite"]

_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "==": "eq", "!=": "ne"}
_SIDE_EFFECTS = ("++", "--")


def _mentions_complex(kdef: KernelDef, binding: Mapping[str, Any]) -> bool:
    if any(str(v) in COMPLEX for v in binding.values()):
        return True
    return any(t.kind == "id" and t.text in COMPLEX for t in kdef.body) or any(
        p.type in COMPLEX for p in kdef.params)


def complex_rewrite(facts: Any, module: Module, kdef: KernelDef, binding: Mapping[str, Any],
                    target: Any) -> tuple[Module, KernelDef]:
    """The module and the kernel with their complex arithmetic rewritten for ``target``:
    :func:`complex_helpers` and :func:`complex_calls`."""
    kdef = complex_calls(facts, module, kdef, binding, target)
    return complex_helpers(module, kdef, binding, target), kdef


def complex_calls(facts: Any, module: Module, kdef: KernelDef, binding: Mapping[str, Any],
                  target: Any) -> KernelDef:
    """``kdef`` with its complex operators rewritten into calls where the target (a
    :class:`~portakern.targets.TargetInfo`) has no :attr:`~portakern.targets.TargetInfo.operators`;
    ``kdef`` itself where it has them or the kernel uses no complex type. A ``cdouble`` on a
    target without ``double`` (Metal) is a :class:`~portakern.errors.KernelTypeError`."""
    _check_double(kdef, binding, target)
    if target.operators and target.constructors or not _mentions_complex(kdef, binding):
        return kdef
    from dataclasses import replace

    typed = typed_body(facts, module, kdef, dict(binding))
    body = list(kdef.body)
    params = _helper_params(module, kdef, binding)
    return replace(kdef, body=_Rewriter(typed, body, module, target.operators,
                                        params=params).run())


#: Words of a helper parameter's declaration that are not its type.
_QUALIFIERS = frozenset({"const", "volatile", "restrict", "__restrict", "__restrict__",
                         "struct", "global", "__global", "local", "__local", "constant",
                         "__constant", "private", "__private", "device", "threadgroup",
                         "thread", "register"})


def _params_of(f: FunctionDef) -> list[Param]:
    """A helper's parameters as :class:`Param` (``T* a``, ``const cfloat& z``, ``float v[4]``);
    a parameter that is not ``words name`` is left out (its uses stay untyped)."""
    out: list[Param] = []
    groups = split_commas(significant(list(f.params)))
    if groups == [[]] or len(groups) == 1 and [t.text for t in groups[0]] == ["void"]:
        return out
    for n, group in enumerate(groups):
        head = group
        dims = next((k for k, t in enumerate(group) if t.is_punct("[")), None)
        if dims is not None:
            head = group[:dims]
        ids = [t for t in head if t.kind == "id"]
        if len(ids) < 2 or head[-1].kind != "id":
            continue
        words = [t.text for t in ids[:-1] if t.text not in _QUALIFIERS]
        pointer = dims is not None or any(t.is_punct("*") for t in head)
        if not words:
            continue
        out.append(Param(ids[-1].text, " ".join(words), pointer,
                         any(t.text == "const" for t in ids), n, ids[-1].line))
    return out


def _helper_params(module: Module, kdef: KernelDef,
                   binding: Mapping[str, Any]) -> dict[str, list[tuple[CType, bool]]]:
    """Each helper's parameters by name (a helper defined twice, overloaded: left out):
    their types under the kernel's bindings, and whether each is a reference (``cfloat& z``),
    for converting a real argument to a complex parameter and passing places as they are."""
    out: dict[str, list[tuple[CType, bool]]] = {}
    seen: set[str] = set()
    for f in functions_of(module):
        name = f.name.text
        if name in seen:
            out.pop(name, None)
            continue
        seen.add(name)
        params = _params_of(f)
        groups = split_commas(significant(list(f.params)))
        if len(params) != len(groups):
            continue
        types = [(_param_type(kdef, binding, p), any(t.is_punct("&") for t in g))
                 for p, g in zip(params, groups, strict=True)]
        if any(t.complex for t, _ in types):
            out[name] = types
    return out


def _param_type(kdef: KernelDef, binding: Mapping[str, Any], p: Param) -> CType:
    from ..analysis.c_types import bound_name, pointer_to

    bound = binding.get(p.type) if p.type in kdef.type_vars else None
    t = scalar(bound_name(bound) if bound is not None else p.type)
    return pointer_to(t, p.const) if p.pointer else t


def _as_kernel(f: FunctionDef, params: list[Param], kdef: KernelDef) -> KernelDef:
    """A helper as a :class:`KernelDef`, so the typed tree reads its body."""
    return KernelDef(f.name.text, params, list(f.body), False, f.name.line, kdef.type_vars,
                     f.name.col, structs=kdef.structs)


def _mentions(tokens: Any, kdef: KernelDef, binding: Mapping[str, Any]) -> bool:
    from ..analysis.c_types import bound_name

    complex_vars = {k for k, v in binding.items() if bound_name(v) in COMPLEX}
    return any(t.kind == "id" and (t.text in COMPLEX or t.text in complex_vars)
               for t in tokens)


def complex_helpers(module: Module, kdef: KernelDef, binding: Mapping[str, Any],
                    target: Any) -> Module:
    """``module`` with the complex arithmetic of its helper functions rewritten as
    :func:`complex_calls` rewrites the kernel body (``module`` itself where the target
    needs no rewrite or no helper names a complex type or a type variable bound to one).

    Each helper body is typed with its parameters' declared types and the kernel's
    bindings; ``return x;`` converts a real ``x`` where the helper returns a complex type.
    A ``cdouble`` in a helper on a target without ``double`` is a
    :class:`~portakern.errors.KernelTypeError` naming the helper.
    """
    from dataclasses import replace

    from ..analysis.expression_types import TypedBody
    from ..syntax.tree import parse_body

    if target.operators and target.constructors and target.double:
        return module
    helpers = module.helpers
    found = [f for f in functions_of(module)
             if _mentions(helpers[f.start:f.end + 1], kdef, binding)]
    if not target.double:
        from ..analysis.c_types import bound_name

        doubles = {"cdouble"} | {k for k, v in binding.items() if bound_name(v) == "cdouble"}
        for f in found:
            words = [t for t in helpers[f.start:f.end + 1] if t.kind == "id"
                     and t.text in doubles]
            if words:
                raise KernelTypeError(
                    f"helper {f.name.text}() (line {words[0].line}) uses cdouble "
                    f"(complex128), but {target.title} has no float64; use cfloat "
                    f"(complex64) there, or another target")
    if target.operators and target.constructors or not found:
        return module
    params = _helper_params(module, kdef, binding)
    bodies = []
    for f in found:  # in source order: the first refusal is the first in the source
        fake = _as_kernel(f, _params_of(f), kdef)
        returns = _return_type(module, f, fake, binding)
        typed = TypedBody(parse_body(fake.body, module.source_map), module, fake, binding)
        bodies.append((f, _Rewriter(typed, list(fake.body), module, target.operators,
                                    params=params, returns=returns).run()))
    out = list(helpers)
    for f, body in reversed(bodies):
        out[f.brace + 1:f.end] = body
    return replace(module, helpers=out)


def _return_type(module: Module, f: FunctionDef, fake: KernelDef,
                 binding: Mapping[str, Any]) -> CType | None:
    words = [t.text for t in f.returns(module.helpers) if t.kind == "id"
             and t.text not in _QUALIFIERS and t.text not in ("static", "inline")]
    if len(words) != 1 or any(t.is_punct("*") or t.is_punct("&")
                              for t in f.returns(module.helpers)):
        return None
    t = _param_type(fake, binding, Param("", words[0], False, False, 0))
    return t if t.complex else None


def _check_double(kdef: KernelDef, binding: Mapping[str, Any], target: Any) -> None:
    if target.double:
        return
    used = [p.name for p in kdef.params if binding.get(p.type, p.type) == "cdouble"]
    if used or any(t.kind == "id" and t.text == "cdouble" for t in kdef.body):
        what = f"parameter {used[0]!r} is" if used else "the body uses"
        raise KernelTypeError(
            f"kernel {kdef.name!r}: {what} cdouble (complex128), but {target.title} has no "
            f"float64; use cfloat (complex64) there, or another target")


class _Rewriter:
    def __init__(self, typed: Any, body: list, module: Module, operators: bool, *,
                 params: Mapping[str, list[tuple[CType, bool]]] | None = None,
                 returns: CType | None = None) -> None:
        #: Helper name -> its parameters' types, and whether each is a reference (a real
        #: argument to a complex parameter converts; one for a reference is a place).
        self.params = dict(params or {})
        #: A helper's complex return type (``return x;`` with a real ``x`` converts).
        self.returns = returns
        #: With operators (Metal), only constructors, conversions and element reads are
        #: rewritten.
        self.operators = operators
        #: Subscripts used as places (assigned, ``&y[i]``, ``y[i].re``), never rewritten.
        self.places: set[int] = set()
        self.typed = typed
        self.body = body
        self.module = module
        self.pos = {id(t): i for i, t in enumerate(body)}

    def type_of(self, node: Expr) -> CType:
        return self.typed.type_of(node)

    def run(self) -> list:
        roots = [tree for runs in self.typed.trees.values() for _, tree in runs
                 if tree is not None]
        for root in roots:
            for n in walk(root):
                place = n.target if isinstance(n, Assign) else n.operand if isinstance(
                    n, Unary) and n.op in ("&", "++", "--") else n.base if isinstance(
                    n, Member) else None
                if place is not None:
                    self.places.add(id(place))
                if isinstance(n, Call) and isinstance(n.func, Name) and n.func.name in \
                        self.params and len(n.args) == len(self.params[n.func.name]):
                    self.places.update(id(a) for a, (_, ref) in zip(
                        n.args, self.params[n.func.name], strict=True) if ref)
        if not self.operators:
            self._refuse_macros(roots)
        returned = {id(tree) for node, runs in self.typed.trees.items()
                    if isinstance(node, Jump) and node.word == "return"
                    for _, tree in runs if tree is not None}
        spans = []
        for root in roots:
            converts = self.returns is not None and id(root) in returned and self.widens(
                root, self.returns)
            if not converts and not self.needs(root):
                continue
            span = self.span(root)
            if span is None:
                raise self.module.source_map.error_at(
                    "complex arithmetic here cannot be rewritten for OpenCL C (no operator "
                    "overloading); write it out with typed locals (cfloat v = ...;)", root.first)
            spans.append((span, self.conv(root, self.returns) if converts  # type: ignore[arg-type]
                          else self.emit(root)))
        out = list(self.body)
        for (start, end), tokens in sorted(spans, key=lambda s: -s[0][0]):
            out[start:end + 1] = tokens
        return out

    def _refuse_macros(self, roots: list) -> None:
        """A function-like macro given a complex value computes inside the macro, where
        nothing can be rewritten (OpenCL C)."""
        from ..syntax.macros import macros_in

        macros = {m.name for m in macros_in(self.module.helpers)
                  if not m.undef and m.params is not None}
        for root in roots:
            for n in walk(root):
                if isinstance(n, Call) and isinstance(n.func, Name) and n.func.name in macros \
                        and any(self.type_of(a).complex for a in n.args):
                    name = n.func.name
                    raise self.module.source_map.error_at(
                        f"the macro {name}() is given a complex value: OpenCL C has no "
                        f"operator overloading and the arithmetic inside a macro cannot be "
                        f"rewritten into calls; write {name} as a helper function "
                        f"(cfloat {name.lower()}(cfloat a) {{ return ...; }})", n.first)

    def span(self, node: Expr) -> tuple[int, int] | None:
        a, b = self.pos.get(id(node.first)), self.pos.get(id(node.last))
        return None if a is None or b is None or b < a else (a, b)

    # -- what is rewritten -------------------------------------------------------------
    def own(self, node: Expr) -> bool:
        """Whether ``node`` itself is rewritten (not only inside)."""
        t = self.type_of(node)
        if self.operators and isinstance(node, Subscript):
            # Metal: a complex element of device or threadgroup memory (and below, a named
            # value: a constant scalar, a const local) is read through its address
            # (pk_cfloat_ld): clang's Metal check refuses to copy such a struct into a
            # by-value parameter.
            return t.complex and id(node) not in self.places
        if self.operators and isinstance(node, Name):  # a constant T& scalar, a const local
            return t.complex and node in self.typed.resolved and id(node) not in self.places
        if isinstance(node, Call) and isinstance(node.func, Name) \
                and node.func.name in self.params:
            return self._helper_args(node) is not None
        if self.operators and not (isinstance(node, (Cast, Declarator)) or isinstance(
                node, Assign) and node.op == "=" or isinstance(node, Call) and isinstance(
                node.func, TypeName)):
            return False
        if isinstance(node, Binary) and node.op in _OPS:
            return any(self.type_of(c).complex for c in (node.left, node.right) if c)
        if isinstance(node, Unary):
            return node.op == "-" and t.complex
        if isinstance(node, Assign):
            target = self.type_of(node.target) if node.target else t
            return target.complex and (node.op != "=" or self.widens(node.value, target))
        if isinstance(node, Declarator):
            return t.complex and node.init is not None and not isinstance(node.init, InitList) \
                and self.widens(node.init, t)
        if isinstance(node, Call):
            if isinstance(node.func, TypeName):
                return t.complex
            if isinstance(node.func, Name):
                name = node.func.name
                return name == "polar" and t.complex or (
                    name in COMPLEX_FUNCS | COMPLEX_REAL_FUNCS
                    and any(self.type_of(a).complex for a in node.args))
        if isinstance(node, Cast):
            return t.complex
        return False

    def _helper_args(self, node: Call) -> list[CType | None] | None:
        """Per argument of a helper call, the complex type it converts to (None: as it is);
        None if no argument converts."""
        types = self.params[node.func.name]  # type: ignore[union-attr]
        if len(types) != len(node.args):
            return None
        want = [t if t.complex and not ref and self.widens(a, t) else None
                for a, (t, ref) in zip(node.args, types, strict=True)]
        return want if any(w is not None for w in want) else None

    def widens(self, node: Expr, want: CType) -> bool:
        """Whether ``node`` is a real number or another complex type than ``want`` (a value
        of a type the typed tree does not know, assigned or declared, stays as written: it
        is taken to be of the declared type)."""
        t = self.type_of(node)
        return (t.arithmetic or t.complex) and t.name != want.name

    def needs(self, node: Expr) -> bool:
        return any(self.own(n) for n in walk(node))

    # -- writing -----------------------------------------------------------------------
    def copy(self, node: Expr) -> list:
        """``node``'s tokens, with its rewritten descendants rewritten."""
        span = self.span(node)
        if span is None:
            raise self.module.source_map.error_at(
                "complex arithmetic here cannot be rewritten for OpenCL C", node.first)
        if not self.needs(node):
            return self.body[span[0]:span[1] + 1]
        out, at = [], span[0]
        kids = sorted((c for c in children(node) if self.span(c) is not None),
                      key=lambda c: self.span(c)[0])  # type: ignore[index]
        for kid in kids:
            a, b = self.span(kid)  # type: ignore[misc]
            out += self.body[at:a]
            out += self.emit(kid)
            at = b + 1
        return out + self.body[at:span[1] + 1]

    def emit(self, node: Expr) -> list:
        if not self.own(node):
            return self.copy(node)
        at = node.first
        t = self.type_of(node)
        if isinstance(node, Binary):
            common = t if t.complex else self._common(node.left, node.right)
            return self.call(at, f"pk_{common.name}_{_OPS[node.op]}",
                             [self.conv(node.left, common), self.conv(node.right, common)])
        if isinstance(node, Unary):
            return self.call(at, f"pk_{t.name}_neg", [self.emit(node.operand)])  # type: ignore[arg-type]
        if isinstance(node, Assign):
            target = self.type_of(node.target)  # type: ignore[arg-type]
            left = self.emit(node.target)  # type: ignore[arg-type]
            value = self.conv(node.value, target)
            if node.op != "=":
                if any(isinstance(n, Unary) and n.op in _SIDE_EFFECTS or isinstance(n, (
                        Assign, Call)) for n in walk(node.target)):  # type: ignore[arg-type]
                    raise self.module.source_map.error_at(
                        f"'{node.op}' on a complex value whose address has side effects: "
                        "OpenCL C writes it as 'z = z op v'; compute the address first",
                        node.first)
                value = self.call(at, f"pk_{target.name}_{_OPS[node.op[:-1]]}",
                                  [left, value])
            return [*left, _tok(at, "ws", " "), _tok(at, "punct", "="), _tok(at, "ws", " "),
                    *value]
        if isinstance(node, Declarator):
            span = self.span(node)
            init = self.span(node.init)  # type: ignore[arg-type]
            assert span is not None and init is not None
            return self.body[span[0]:init[0]] + self.conv(node.init, t) + \
                self.body[init[1] + 1:span[1] + 1]
        if isinstance(node, Cast):
            return self.conv(node.operand, t)
        if isinstance(node, (Subscript, Name)):
            return self.call(at, f"pk_{t.name}_ld", [[_tok(at, "punct", "&"), _tok(
                at, "punct", "("), *self.copy(node), _tok(at, "punct", ")")]])
        assert isinstance(node, Call)
        if isinstance(node.func, TypeName):
            if len(node.args) == 1:
                return self.conv(node.args[0], t)
            return self.call(at, f"pk_{t.name}_make",
                             [self.cast(a, t.element) for a in node.args])
        name = node.func.name  # type: ignore[union-attr]
        if name in self.params:
            want = self._helper_args(node)
            assert want is not None
            return self.call(at, name, [self.emit(a) if w is None else self.conv(a, w)
                                        for a, w in zip(node.args, want, strict=True)])
        if name == "polar":
            return self.call(at, f"pk_{t.name}_polar",
                             [self.cast(a, t.element) for a in node.args])
        common = t if t.complex else next(self.type_of(a) for a in node.args
                                          if self.type_of(a).complex)
        return self.call(at, f"pk_{common.name}_{name}",
                         [self.conv(a, common) for a in node.args])

    def _common(self, a: Expr | None, b: Expr | None) -> CType:
        ta, tb = self.type_of(a), self.type_of(b)  # type: ignore[arg-type]
        if ta.complex and tb.complex:
            return ta if ta.name == "cdouble" else tb
        return ta if ta.complex else tb

    def conv(self, node: Expr | None, want: CType) -> list:
        """``node`` as a value of complex type ``want``."""
        assert node is not None
        t = self.type_of(node)
        if not (t.arithmetic or t.complex):
            span = self.span(node)
            text = "".join(tok.text for tok in self.body[span[0]:span[1] + 1]) if span else ""
            raise self.module.source_map.error_at(
                f"complex arithmetic on {text.strip()!r}, whose type portakern cannot tell "
                f"(a macro's or an unknown function's value), cannot be rewritten for "
                f"{'Metal' if self.operators else 'OpenCL C'} (no "
                f"{'constructors' if self.operators else 'operator overloading'}); "
                f"give it a typed local first ('float v = {text.strip()};' for a real value, "
                f"'{want.name} v = ...;' for a complex one) and use v", node.first)
        inner = self.emit(node)
        if t.name == want.name:
            return inner
        if t.complex:  # cfloat -> cdouble (or cdouble -> cfloat, explicitly asked)
            if want.name == "cdouble":
                return self.call(node.first, "pk_cdouble_of", [inner])
            return self.call(node.first, "pk_cfloat_make",
                             [self.cast_tokens(node.first, self.call(node.first, "", [[
                                 *inner, _tok(node.first, "punct", ".re")]]), want.element),
                              self.cast_tokens(node.first, self.call(node.first, "", [[
                                  *inner, _tok(node.first, "punct", ".im")]]), want.element)])
        return self.call(node.first, f"pk_{want.name}_make",
                         [self.cast_tokens(node.first, inner, want.element),
                          [_tok(node.first, "num", "0")]])

    def cast(self, node: Expr, element: CType | None) -> list:
        return self.cast_tokens(node.first, self.emit(node), element)

    def cast_tokens(self, at: Token, inner: list, element: CType | None) -> list:
        name = (element or scalar("float")).name
        return [_tok(at, "punct", "("), _tok(at, "id", name), _tok(at, "punct", ")"),
                _tok(at, "punct", "("), *inner, _tok(at, "punct", ")")]

    def call(self, at: Token, name: str, args: list[list]) -> list:
        out = [_tok(at, "id", name)] if name else []
        out.append(_tok(at, "punct", "("))
        for n, a in enumerate(args):
            if n:
                out += [_tok(at, "punct", ","), _tok(at, "ws", " ")]
            out += a
        return [*out, _tok(at, "punct", ")")]


def _tok(at: Token, kind: str, text: str) -> Token:
    return Token(kind, text, at.line, at.col)
