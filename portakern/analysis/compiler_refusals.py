"""Uses a target's compiler refuses that the portability scan (:mod:`.portability`) warns
about ahead of it: pointers typedef'd (OpenCL C and Metal need an address space on each
pointer), struct methods taking pointers (Metal: ``thread`` pointers only), and builtins
that C without overloading (OpenCL C) has for one type at a time (``abs`` of a float,
``min`` of an ``int`` and a ``long``), the last read off the typed tree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..syntax.expression_nodes import Call as CallNode
from ..syntax.expression_nodes import Name
from ..syntax.language import KernelDef, Module, Token

__all__ = ["METHOD_POINTER", "OVERLOADED", "TYPEDEF_POINTER", "mixed_builtin_calls",
           "pointer_typedefs", "takes_pointer"]


TYPEDEF_POINTER = ("typedef {name} names a pointer type: OpenCL C and Metal give each "
                    "pointer an address space, which portakern infers where a pointer is "
                    "declared, not through a typedef; declare the pointers with '*' "
                    "(const float* p) instead of {name}")


def pointer_typedefs(code: list[Token]) -> list[Token]:
    """The names that ``typedef T* name;`` declares (not a function pointer's)."""
    out = []
    for n, t in enumerate(code):
        if t.kind != "id" or t.text != "typedef":
            continue
        end = next((k for k in range(n + 1, len(code)) if code[k].is_punct(";")), len(code))
        words = code[n + 1:end]
        if any(w.is_punct("(") or w.is_punct("{") for w in words):
            continue  # a function pointer, a struct: not this
        if any(w.is_punct("*") for w in words) and words and words[-1].kind == "id":
            out.append(words[-1])
    return out


METHOD_POINTER = ("member function {name}() of struct {struct} takes a pointer: Metal gives "
                   "a method's pointer parameters the thread address space (portakern infers "
                   "address spaces for helper functions only), so an array parameter's or "
                   "@localmem pointer cannot be passed to it; write it as a helper function "
                   "taking the struct, '{name}({struct}& self, const float* v)'")


def takes_pointer(code: list[Token], name: Token) -> bool:
    """Whether the member function named by ``name`` (a token of ``code``) declares a
    pointer or array parameter."""
    at = next((k for k, t in enumerate(code) if t is name), -1)
    if at < 0 or at + 1 >= len(code) or not code[at + 1].is_punct("("):
        return False
    depth = 0
    for t in code[at + 1:]:
        depth += t.is_punct("(") - t.is_punct(")")
        if depth == 0:
            return False
        if depth == 1 and (t.is_punct("*") or t.is_punct("[")):
            return True
    return False


#: The builtins C without overloading (OpenCL C) has for one type at a time.
OVERLOADED = frozenset({"abs", "min", "max", "clamp"})


def mixed_builtin_calls(module: Module, kernel: KernelDef,
                         tree_facts: Callable[[], Any] | None) -> list[tuple[str, Token, str]]:
    """``abs()`` of a float and ``min``/``max``/``clamp`` of scalars of different types in
    the body, read off the typed tree: OpenCL C's compiler calls them ambiguous."""
    from ..syntax.tree import body_facts, parse_body
    from .expression_types import typed_body

    got = tree_facts() if tree_facts is not None else body_facts(
        parse_body(kernel.body, module.source_map))
    typed = typed_body(got, module, kernel)
    found: list[tuple[str, Token, str]] = []
    for node in typed.expressions():
        if not (isinstance(node, CallNode) and isinstance(node.func, Name)
                and node.func.name in OVERLOADED and node.func.name not in typed.functions):
            continue
        kinds = [typed.type_of(a) for a in node.args]
        if any(k.kind not in ("int", "float") for k in kinds):
            continue  # a vector, a type variable, a struct: left to the compiler
        name, where = node.func.name, node.first
        if name == "abs" and len(kinds) == 1 and kinds[0].kind == "float":
            found.append(("overload", where, f"abs() of a {kinds[0].name}: OpenCL C's abs() "
                                             f"takes integers only; write fabs(), which "
                                             f"every target has"))
        elif name != "abs" and len({k.name for k in kinds}) > 1:
            spelled = " and ".join(dict.fromkeys(k.name for k in kinds))
            widest = max(kinds, key=lambda k: (k.kind == "float", k.width)).name
            found.append(("overload", where, f"{name}() of {spelled}: OpenCL C has no {name}() "
                                             f"of mixed types (its compiler calls the call "
                                             f"ambiguous); cast the arguments to one type, "
                                             f"{name}(({widest})a, ({widest})b)"))
    return found
