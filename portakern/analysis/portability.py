"""What a kernel uses outside the portable subset (DESIGN section 1), found at creation.

The portable subset is a contract: what the parser accepts runs on every target,
or the user hears at kernel creation which targets lack it. This module is one
visitor over a parsed :class:`~portakern.syntax.language.Module`; it returns facts
(:class:`Issue`), and :class:`~portakern.Kernel` turns them into
:class:`~portakern.errors.PortabilityWarning`\\ s. Each target's rendering is
scanned on its own, so code under ``{% if target == "opencl" %}`` counts only
for OpenCL.

What is reported, and for which targets:

* a call of ``printf``: Metal and the native C++ path (``CPU()``) have none;
* a word Metal (or OpenCL C) reserves, used as a name (``vertex``, ``thread``,
  ``local``, ...);
* a struct's member functions (OpenCL C has none), and the C++ constructs a target's
  language lacks (:attr:`~portakern.targets.TargetInfo.cxx_constructs`: overloads,
  default arguments, lambdas, ``constexpr``, templates); a ``namespace`` and explicit
  template arguments are refused on every target;
* what :mod:`portakern.target_facts` says a target lacks: a math function (Metal's
  ``ilogb``), a constant (``DBL_MAX`` on Metal, which has no double), ``@atomic_*`` on an
  element type (64-bit integers or double on Metal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import TargetRefusal
from ..syntax.cxx_constructs import cxx_uses, debug_conflicts, everywhere_refused
from ..syntax.expression_nodes import Binary, Decl, Expr, Name, Paren, Subscript, Unary
from ..syntax.function_values import check_function_values
from ..syntax.functions import functions_of
from ..syntax.language import KernelDef, Module, Token, significant
from ..syntax.pointer_checks import check_pointer_depth
from ..syntax.structs import struct_methods
from ..syntax.vectors import cast_literal
from ..target_facts import CONSTANTS, MATH_FUNCTIONS, facts
from ..targets import (
    DIALECT_WORDS,
    METAL_RESERVED_WORDS,
    OPENCL_RESERVED_WORDS,
    builtin_targets,
    target_info,
)
from .compiler_refusals import (
    METHOD_POINTER,
    OVERLOADED,
    TYPEDEF_POINTER,
    mixed_builtin_calls,
    pointer_typedefs,
    takes_pointer,
)
from .localmem_sizes import check_localmem_sizes

__all__ = ["Issue", "METAL_RESERVED_WORDS", "OPENCL_RESERVED_WORDS", "SCANNED_TARGETS",
           "scan", "merge", "refuse_methods", "refuse_cxx_constructs", "refuse_dialect_words"]

#: The built-in targets a kernel is scanned for (``c`` is CPU()'s native C++ path).
SCANNED_TARGETS = builtin_targets()


@dataclass(frozen=True)
class Issue:
    """One use of something outside the portable subset.

    ``key`` identifies the use across targets (kind, position), ``targets`` are
    those that lack it, ``message`` says what and how to avoid it (without the
    targets, which :func:`merge` adds).
    """

    key: tuple
    filename: str
    line: int
    col: int
    targets: tuple[str, ...]
    message: str

    def describe(self) -> str:
        names = ", ".join(target_info(t).title for t in self.targets)
        return (f"{self.filename}:{self.line}:{self.col}: {self.message} "
                f"(not portable to: {names})")


def scan(module: Module, kernel: KernelDef, target: str,
         tree_facts: Callable[[], Any] | None = None) -> list[Issue]:
    """The non-portable uses in one target's rendering that ``target`` itself lacks.

    ``tree_facts`` gives the body's :class:`~portakern.syntax.tree.BodyFacts` (whose typed
    tree the atomics are read from); it is asked only for a body with an atomic on a
    target that lacks some, and without it the body is parsed here.
    """
    filename = module.source_map.filename
    body = significant(kernel.body)
    helpers = significant(module.helpers)
    found: list[tuple[str, Token, str]] = []
    info = target_info(target)
    if not info.printf:
        found += [("printf", t, "printf is not in the portable subset; put it under "
                   "{% if target in (\"cuda\", \"opencl\") %}")
                  for t in _calls(body + helpers, "printf")]
    if not info.prints:
        found += [("print", t, "@print prints nothing there (Metal has no printf in compute "
                   "kernels); the kernel runs without the output")
                  for t in body if t.kind == "at" and t.text == "@print"]
    # Pointers are portable: portakern.lower.pointers infers their address spaces; a pointer
    # to a pointer is refused on every target.
    check_pointer_depth(kernel.body + module.helpers, filename)
    _refuse_everywhere(module, kernel)  # a namespace, sq<int>(2): before `sq` as a value
    # A helper's name as a value is a function pointer: OpenCL C and Metal have none.
    check_function_values(kernel.body, module.helpers,
                          (f.name.text for f in functions_of(module)),
                          (p.name for p in kernel.params), module.source_map)
    check_localmem_sizes(module, kernel)
    reserved = info.reserved_words
    if reserved:
        # The message does not name the target: merge() lists every target lacking it.
        found += [("reserved", t, f"{t.text!r} is a reserved word; rename it")
                  for t in _reserved_names(body + helpers, reserved)]
        found += [("reserved", Token("id", p.name, kernel.line, kernel.col),
                   f"parameter {p.name!r} is a reserved word; rename it")
                  for p in kernel.params if p.name in reserved]
        if kernel.name in reserved:
            found.append(("reserved", Token("id", kernel.name, kernel.line, kernel.col),
                          f"kernel name {kernel.name!r} is a reserved word; rename it"))
    if info.pointer_address_spaces:
        found += [("typedef-pointer", t, TYPEDEF_POINTER.format(name=t.text))
                  for t in pointer_typedefs(helpers + body)]
    if not info.methods:
        found += [("method", t, _method_message(struct, t))
                  for struct, t in struct_methods(module.helpers + kernel.body)]
    elif not info.method_pointers:
        code = significant(module.helpers + kernel.body)
        found += [("method-pointer", t, METHOD_POINTER.format(struct=struct, name=t.text))
                  for struct, t in struct_methods(module.helpers + kernel.body)
                  if takes_pointer(code, t)]
    found += [(f"cxx:{construct}", t, _cxx_message(construct, what))
              for construct, t, what in cxx_uses(module.helpers, kernel.body)
              if construct not in info.cxx_constructs]
    found += [("dialect", t, _dialect_message(t.text))
              for t in dialect_words(body, helpers) if t.text not in info.dialect_words]
    found += _facts_issues(module, kernel, body, helpers, target, tree_facts)
    if "overloads" not in info.cxx_constructs and any(
            t.text in OVERLOADED and n + 1 < len(body) and body[n + 1].is_punct("(")
            for n, t in enumerate(body)):
        found += mixed_builtin_calls(module, kernel, tree_facts)
    return [Issue((kind, tok.line, tok.col, tok.text), filename, tok.line, tok.col,
                  (target,), message) for kind, tok, message in found]


def _method_message(struct: str, t: Token) -> str:
    """What a member function ``t`` of ``struct`` is and what to write instead."""
    what, name = ("an operator", "op") if t.text == "operator" else (
        f"member function {t.text}()", t.text)
    return (f"{what} of struct {struct}: OpenCL C (C99) has no member functions; write "
            f"it as a helper function taking the struct, 'float {struct}_{name}(const "
            f"{struct}* self)' called as '{struct}_{name}(&v)'")


def refuse_methods(module: Module, kernel: KernelDef, target: str) -> None:
    """Refuse a struct with member functions in a rendering for ``target``, a target
    without :attr:`~portakern.targets.TargetInfo.methods` (OpenCL C), instead of its
    compiler's error.

    Raises
    ------
    KernelSyntaxError
        At the first member function, naming the target and the fix.
    """
    info = target_info(target)
    if info.methods:
        return
    for struct, t in struct_methods(module.helpers + kernel.body):
        raise module.source_map.error_at(
            f"{info.title} cannot build {_method_message(struct, t)}, or run this kernel on "
            f"a backend whose language has them (CPU()'s native path, CUDA, Metal)", t,
            TargetRefusal)


def _cxx_message(construct: str, what: str) -> str:
    """What a C++-only construct is and what to write instead (the targets aside)."""
    if construct == "overloads" and what == "operator":
        return ("an operator function: C (OpenCL C) has no operator overloading; write it as "
                "a named helper, 'V V_add(V a, V b)' called as 'V_add(a, b)'")
    if construct == "overloads":
        return (f"helper {what!r} is defined again (an overload): C (OpenCL C) has no "
                f"overloading; give each definition its own name ('{what}_f', '{what}_i'), "
                f"or one definition on a type variable of the kernel")
    if construct == "default_arguments":
        return (f"a default argument of helper {what!r}: C (OpenCL C) has none; pass the "
                f"value at each call")
    if construct == "lambdas":
        return ("a lambda expression: OpenCL C and the Metal Shading Language have none; "
                "write it as a helper function before the kernel, passing what it captures "
                "as parameters")
    if construct == "templates":
        return ("a template: C (OpenCL C) has none; write the helper with one of the "
                "kernel's type variables, 'T sq(T v)' (the kernel binds T), or one helper "
                "per type")
    return ("constexpr: C (OpenCL C) has none; write 'const' for a constant (or a #define), "
            "and drop it from a function")


def refuse_cxx_constructs(module: Module, kernel: KernelDef, target: str,
                          debug: bool = False) -> None:
    """Refuse a rendering for ``target`` that uses a C++ construct its language lacks
    (:attr:`~portakern.targets.TargetInfo.cxx_constructs`), instead of its compiler's
    error.

    Another dialect's own spelling is refused too (:func:`refuse_dialect_words`).
    In ``debug`` mode an overloaded helper taking a pointer, or one with a default
    argument, is refused on every target
    (:func:`~portakern.syntax.cxx_constructs.debug_conflicts`).

    Raises
    ------
    KernelSyntaxError
        At the first such construct, naming the target, the fix and the backends that
        have it.
    """
    info = target_info(target)
    if debug:
        for construct, t, what in debug_conflicts(module.helpers):
            kind = "an overload" if construct == "overloads" else "a default argument"
            raise module.source_map.error_at(
                f"debug mode cannot check helper {what!r}, which takes a pointer and has "
                f"{kind}: it passes hidden parameters (where each pointer points) after a "
                f"helper's own, at every call of its name; give each overload its own name, "
                f"pass every argument, or run this kernel without debug=True", t)
    for construct, t, what in cxx_uses(module.helpers, kernel.body):
        if construct in info.cxx_constructs:
            continue
        have = ", ".join(target_info(n).title for n in SCANNED_TARGETS
                         if construct in target_info(n).cxx_constructs)
        raise module.source_map.error_at(
            f"{info.title} cannot build {_cxx_message(construct, what)}, or run this kernel "
            f"on a backend whose language has it ({have})", t, TargetRefusal)
    refuse_dialect_words(module, kernel, target)


def dialect_words(body: list[Token], helpers: list[Token]) -> list[Token]:
    """The uses of one dialect's own spellings (:data:`~portakern.targets.DIALECT_WORDS`)
    in significant tokens: a function called, an object read with ``.``, a qualifier;
    never a member (``s.select``) nor a helper of the source's own of that name."""
    tokens = body + helpers
    own = _defined_functions(helpers)
    out = []
    for n, t in enumerate(tokens):
        hit = DIALECT_WORDS.get(t.text) if t.kind == "id" else None
        if hit is None or t.text in own:
            continue
        if n > 0 and (tokens[n - 1].is_punct(".") or tokens[n - 1].is_punct("->")):
            continue
        after = tokens[n + 1] if n + 1 < len(tokens) else None
        if hit[0] == "call" and not (after is not None and after.is_punct("(")) and not (
                t.text == "as_type" and after is not None and after.is_punct("<")):
            continue
        if hit[0] == "member" and not (after is not None and after.is_punct(".")):
            continue
        out.append(t)
    return out


def _dialect_message(word: str) -> str:
    """What a dialect's own spelling is and the portable one (the targets aside)."""
    have = ", ".join(target_info(n).title for n in SCANNED_TARGETS
                     if word in target_info(n).dialect_words)
    return f"{word!r} is {have}'s own spelling; {DIALECT_WORDS[word][1]}"


def refuse_dialect_words(module: Module, kernel: KernelDef, target: str) -> None:
    """Refuse a rendering for ``target`` that uses another dialect's own spelling
    (CUDA's ``threadIdx``, OpenCL's ``barrier``, ...), instead of its compiler's error.

    Raises
    ------
    KernelSyntaxError
        At the first such word, naming the target, the portable spelling and the
        backends whose language has it.
    """
    info = target_info(target)
    for t in dialect_words(significant(kernel.body), significant(module.helpers)):
        if t.text in info.dialect_words:
            continue
        have = ", ".join(target_info(n).title for n in SCANNED_TARGETS
                         if t.text in target_info(n).dialect_words)
        raise module.source_map.error_at(
            f"{info.title} cannot build {t.text!r}, {have}'s own spelling; "
            f"{DIALECT_WORDS[t.text][1]}, which every target builds (or put it under "
            f"{{% if target == ... %}} for {have})", t, TargetRefusal)


def _refuse_everywhere(module: Module, kernel: KernelDef) -> None:
    """What no target builds right: OpenCL's vector literal ``(float4)(a, b, c, d)`` (the
    comma operator in C++: Metal built it, with every component ``d``), a lambda in a
    kernel with ``@synchronize``, a
    ``namespace`` (portakern reads top-level helpers only: a function in a namespace gets
    no address spaces on Metal, and debug mode does not check it), and a helper called
    with explicit template arguments (debug mode's call rewriting does not see it)."""
    body = significant(kernel.body)
    if any(t.kind == "at" and t.text == "@synchronize" for t in body):
        for t in cxx_uses([], kernel.body):
            if t[0] == "lambdas":
                raise module.source_map.error_at(
                    "a lambda in a kernel with @synchronize: the barrier checks read its "
                    "'return' as the kernel's, and its declaration is hoisted out of the "
                    "bounds check with no type to write; write it as a helper function "
                    "before the kernel, passing what it captures as parameters", t[1])
    literal = cast_literal(significant(module.helpers) + body)
    if literal is not None:
        t, values = literal
        shown = ", ".join(f"v{k}" for k in range(values))
        raise module.source_map.error_at(
            f"({t.text})({shown}) is OpenCL C's vector literal: in C++ (CUDA, Metal, the native "
            f"path) the list is the comma operator, and every component gets v{values - 1}; "
            f"write the constructor, {t.text}({shown}), which every target builds", t)
    names = frozenset(f.name.text for f in functions_of(module))
    hit = everywhere_refused(module.helpers + kernel.body, names)
    if hit is None:
        return
    what, t = hit
    if what == "template arguments":
        fix = (f"a call of helper {t.text!r} with explicit template arguments: let the call "
               f"deduce them from its arguments (cast one, '{t.text}((int)v)')")
    else:
        name = next((u.text for u in significant(module.helpers + kernel.body)
                     if u.kind == "id" and u.line == t.line and u.col > t.col), "ns")
        fix = (f"a namespace: portakern reads helper functions at the top level only (Metal "
               f"needs their pointers' address spaces, debug mode checks their subscripts); "
               f"drop the namespace and prefix the names instead, '{name}_sq' for "
               f"'{name}::sq'")
    raise module.source_map.error_at(f"{fix}; refused on every target", t)


def _print_arguments(tokens: list[Token]) -> set[int]:
    """The indices of the tokens inside each ``@print(...)``'s parentheses."""
    inside: set[int] = set()
    for n, t in enumerate(tokens):
        if t.kind == "at" and t.text == "@print" and n + 1 < len(tokens) \
                and tokens[n + 1].is_punct("("):
            depth = 0
            for k in range(n + 1, len(tokens)):
                depth += tokens[k].is_punct("(") - tokens[k].is_punct(")")
                inside.add(k)
                if depth == 0:
                    break
    return inside


_NO_DOUBLE = ("there is no double there (the Metal Shading Language has no 64-bit float); "
              "use float, or launch with pk.Metal(float64=\"cast\"), which computes every "
              "double in float32")


def _facts_issues(module: Module, kernel: KernelDef, body: list[Token], helpers: list[Token],
                  target: str, tree_facts: Callable[[], Any] | None,
                  ) -> list[tuple[str, Token, str]]:
    """Uses of what the table of target facts says ``target`` lacks."""
    known = facts(target)
    if not known.lacks_anything:
        return []
    tokens = body + helpers
    own = _defined_functions(helpers)
    found: list[tuple[str, Token, str]] = []
    printed = _print_arguments(tokens)  # (double)x in @print: printf's habit; Metal drops it
    for n, t in enumerate(tokens):
        if t.kind != "id":
            continue
        calls = n + 1 < len(tokens) and tokens[n + 1].is_punct("(")
        after_member = n > 0 and (tokens[n - 1].is_punct(".") or tokens[n - 1].is_punct("->"))
        if (calls and not after_member and t.text in MATH_FUNCTIONS and t.text not in own
                and known.lacks_function(t.text)):
            found.append(("math", t, f"{t.text}() is not in the target's math library in C's "
                                     f"form, and portakern's prelude does not provide it; write "
                                     f"it as a helper function"))
        elif t.text in CONSTANTS and not calls and not known.has_constant(t.text):
            found.append(("constant", t, f"{t.text} is a double limit, and there is no double "
                                         f"there; use the FLT_* limits"))
        elif t.text == "double" and not known.double and not after_member \
                and n not in printed and not any(kind == "double" for kind, _, _ in found):
            found.append(("double", t, f"a double: {_NO_DOUBLE}"))  # the first one only
    doubles = [p.name for p in kernel.params if p.type == "double"]
    if doubles and not known.double:
        names = ", ".join(repr(n) for n in doubles)
        found.append(("double", Token("id", doubles[0], kernel.line, kernel.col),
                      f"parameter{'s' if len(doubles) > 1 else ''} {names} "
                      f"{'are' if len(doubles) > 1 else 'is'} double: {_NO_DOUBLE}"))
    if not any(t.kind == "at" and t.text.startswith("@atomic_") for t in tokens):
        return found
    typed = _typed_atomics(module, kernel, tree_facts)
    for n, t in enumerate(tokens):
        if t.kind != "at" or not t.text.startswith("@atomic_"):
            continue
        hit = typed.get((t.line, t.col, t.text))
        ctype = hit[0] if hit is not None else _atomic_element_type(tokens, n, kernel)
        if ctype is not None and known.atomic_lacks(hit[1] if hit is not None else ctype):
            op = t.text[1:]
            found.append(("atomic", t, f"@{op} on {ctype} elements: there are no atomics on "
                                       f"{ctype} there (32-bit int, uint and float only); use "
                                       f"an int, uint or float array, or run this kernel on "
                                       f"another backend"))
    return found


def _typed_atomics(module: Module, kernel: KernelDef, tree_facts: Callable[[], Any] | None,
                   ) -> dict[tuple[int, int, str], tuple[str, str] | None]:
    """Each ``@atomic_*`` of the body, read off the typed tree
    (:func:`portakern.analysis.atomic_checks.atomic_uses`): its position -> (the element type
    as declared, its :class:`~portakern.analysis.c_types.CType` name), or None where the
    element is not a concrete scalar (a type variable, a struct)."""
    from ..syntax.tree import body_facts, parse_body
    from .atomic_checks import atomic_uses
    from .expression_types import typed_body

    got = tree_facts() if tree_facts is not None else body_facts(
        parse_body(kernel.body, module.source_map))
    typed = typed_body(got, module, kernel)
    out: dict[tuple[int, int, str], tuple[str, str] | None] = {}
    for node, arg, ctype in atomic_uses(typed):
        element = ctype.element if ctype.kind in ("pointer", "array") else None
        key = (node.first.line, node.first.col, node.name)
        if element is None or element.kind not in ("int", "float"):
            out[key] = None
        else:
            out[key] = (_declared_spelling(arg, typed) or element.name, element.name)
    return out


def _declared_spelling(arg: Expr, typed: Any) -> str | None:
    """The element type of the array ``arg`` points into, as its declaration spells it
    (``int64_t`` where the typed tree says ``long``), or None."""
    node: Expr | None = arg
    while node is not None and not isinstance(node, Name):
        if isinstance(node, Unary) and node.op == "&":
            node = node.operand
        elif isinstance(node, Paren):
            node = node.inner
        elif isinstance(node, Subscript):
            node = node.base
        elif isinstance(node, Binary) and node.op in ("+", "-"):
            left = typed.type_of(node.left) if node.left is not None else None
            node = node.left if left is not None and left.kind in ("pointer", "array") \
                else node.right
        else:
            return None
    symbol = typed.resolved.get(node) if node is not None else None
    if symbol is None:
        return None
    if symbol.kind == "param":
        param = next((p for p in typed.kdef.params if p.name == symbol.name), None)
        return param.type if param is not None else None
    for decl in typed.expressions():
        if isinstance(decl, Decl) and decl.type is not None \
                and any(d is symbol.node for d in decl.declarators):
            return " ".join(decl.type.words) or None
    return None


def _defined_functions(helpers: list[Token]) -> frozenset[str]:
    # `type name(` in the helpers: the user's own function of that name.
    return frozenset(t.text for n, t in enumerate(helpers)
                     if t.kind == "id" and 0 < n < len(helpers) - 1
                     and helpers[n + 1].is_punct("(")
                     and ((helpers[n - 1].kind == "id"
                           and helpers[n - 1].text not in ("return", "else", "do", "case"))
                          or helpers[n - 1].is_punct("*")))


#: Words that make up a scalar C type, for the element type of an atomic's pointer.
_TYPE_WORDS = frozenset("""
    char short int long float double half unsigned signed bool uchar ushort uint ulong
    int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t size_t
""".split())


def _atomic_element_type(tokens: list[Token], at: int, kernel: KernelDef) -> str | None:
    """The declared element type of the array an ``@atomic_*`` at ``tokens[at]`` updates
    (``@atomic_add(&a[i], v)``, ``@atomic_add(a + i, v)``), or None where it is not a
    concrete type declared in view (a type variable, a pointer from elsewhere).

    Read off the tokens, for the atomics the typed tree does not hold: those inside
    helper functions (helper bodies are not typed) and those in a statement the
    expression parser does not read. Every other atomic's type comes from the typed
    tree (:func:`_typed_atomics`)."""
    n = at + 1
    if n >= len(tokens) or not tokens[n].is_punct("("):
        return None
    n += 1
    while n < len(tokens) and (tokens[n].is_punct("&") or tokens[n].is_punct("(")):
        n += 1
    if n >= len(tokens) or tokens[n].kind != "id":
        return None
    name = tokens[n].text
    for p in kernel.params:
        if p.name == name:
            words = p.type.split()
            return p.type if words and all(w in _TYPE_WORDS for w in words) else None
    # A declaration in view: `long* p`, `@localmem long acc[4]`, `thread long x`.
    for k, t in enumerate(tokens):
        if t.kind != "id" or t.text != name or k == 0:
            continue
        j = k - 1
        while j >= 0 and (tokens[j].is_punct("*") or tokens[j].text in ("const", "volatile")):
            j -= 1
        words: list[str] = []
        while j >= 0 and tokens[j].kind == "id" and tokens[j].text in _TYPE_WORDS:
            words.insert(0, tokens[j].text)
            j -= 1
        if words:
            return " ".join(words)
    return None


def merge(issues: list[Issue]) -> list[Issue]:
    """One issue per use, naming every target that lacks it, in source order."""
    by_key: dict[tuple, Issue] = {}
    for issue in issues:
        seen = by_key.get(issue.key)
        if seen is None:
            by_key[issue.key] = issue
        elif issue.targets[0] not in seen.targets:
            by_key[issue.key] = Issue(seen.key, seen.filename, seen.line, seen.col,
                                      seen.targets + issue.targets, seen.message)
    order = {t: n for n, t in enumerate(SCANNED_TARGETS)}
    merged = [Issue(i.key, i.filename, i.line, i.col,
                    tuple(sorted(i.targets, key=lambda t: order.get(t, len(order)))),
                    i.message) for i in by_key.values()]
    return sorted(merged, key=lambda i: (i.line, i.col, i.key))


def _calls(tokens: list[Token], name: str) -> list[Token]:
    return [t for n, t in enumerate(tokens)
            if t.kind == "id" and t.text == name and n + 1 < len(tokens)
            and tokens[n + 1].is_punct("(")]


def _reserved_names(tokens: list[Token], reserved: frozenset[str]) -> list[Token]:
    # A reserved word followed by a name is a qualifier a target escape wrote
    # (`device float* p`); followed by anything else it is used as a name.
    out = []
    for n, t in enumerate(tokens):
        if t.kind != "id" or t.text not in reserved:
            continue
        after = tokens[n + 1] if n + 1 < len(tokens) else None
        if after is not None and after.kind == "id":
            continue
        out.append(t)
    return out
