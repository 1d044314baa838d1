"""``@atomic_*`` read off the typed tree: what each updates, refused where it cannot run.

Two checks, each at the user's line, before any target compiler sees the kernel:

* at ``pk.kernel()``, :func:`check_atomic_pointers`: an atomic takes the address of what
  it updates (``@atomic_add(&total[0], v)``, ``@atomic_add(bins + k, 1)``); a value in
  that place (``@atomic_add(total[0], v)``) was "no matching function for call to
  'pk_atomic_add'" from every compiler;
* when a variant renders, :func:`check_atomic_types`: an atomic on an element type the
  target has no atomics for, once the type variables are bound (``T* total`` launched
  with int64 arrays on Metal), is a :class:`~portakern.errors.KernelTypeError` naming the
  target, the operation and the type. A type declared in the source is a
  :class:`~portakern.errors.PortabilityWarning` at ``pk.kernel()`` already
  (:mod:`portakern.analysis.portability`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..errors import KernelTypeError
from ..syntax.expression_nodes import Construct, Expr, tokens_in
from ..syntax.language import KernelDef, Module
from ..target_facts import facts as target_facts
from .c_types import CType
from .expression_types import TypedBody, typed_body

__all__ = ["atomic_uses", "check_atomic_pointers", "check_atomic_types"]


def _has_atomics(kdef: KernelDef) -> bool:
    return any(t.kind == "at" and t.text.startswith("@atomic_") for t in kdef.body)


def atomic_uses(typed: TypedBody) -> Iterator[tuple[Construct, Expr, CType]]:
    """Each ``@atomic_*`` of the body: the construct, its first argument and that type."""
    for node in typed.expressions():
        if isinstance(node, Construct) and node.name.startswith("@atomic_") and node.args:
            yield node, node.args[0], typed.type_of(node.args[0])


def _text(node: Expr) -> str:
    tokens = sorted(tokens_in(node), key=lambda t: (t.line, t.col))
    return "".join(t.text for t in tokens)


def check_atomic_pointers(facts: Callable[[], Any], module: Module, kdef: KernelDef) -> None:
    """Refuse an ``@atomic_*`` whose first argument is a value, not an address.

    ``facts`` gives the body's :class:`~portakern.syntax.tree.BodyFacts`; it is asked only
    when the body has an atomic (creating a kernel parses no statement tree otherwise).

    Raises
    ------
    KernelSyntaxError
        At the argument, with the spelling that takes its address.
    """
    if not _has_atomics(kdef):
        return
    for node, arg, ctype in atomic_uses(typed_body(facts(), module, kdef)):
        if ctype.kind in ("int", "float", "bool", "vector", "struct", "typevar"):
            text = _text(arg)
            raise module.source_map.error_at(
                f"{node.name} takes the address of the value it updates, got {text!r} (of type "
                f"{ctype}); write {node.name}(&{text}, ...)", arg.first)


def check_atomic_types(facts: Any, module: Module, kdef: KernelDef, target: str,
                       binding: Mapping[str, str]) -> None:
    """Refuse an ``@atomic_*`` on an element type ``target`` has no atomics for, with the
    type variables bound (``binding``).

    Raises
    ------
    KernelTypeError
        Naming the target, the operation, the element type and the line.
    """
    if not _has_atomics(kdef) or not any(tv in binding for tv in kdef.type_vars):
        return
    known = target_facts(target)
    for node, arg, ctype in atomic_uses(typed_body(facts, module, kdef, binding)):
        element = ctype.element if ctype.kind in ("pointer", "array") else None
        if element is None or element.kind not in ("int", "float"):
            continue
        if known.atomic_lacks(element.name):
            raise KernelTypeError(
                f"{module.source_map.filename}:{arg.first.line}:{node.first.col}: {target} "
                f"has no atomics on "
                f"{element.name} ({node.name} on {_text(arg)}, with "
                f"{', '.join(f'{k}={v}' for k, v in sorted(binding.items()))}); use an int, "
                f"uint or float array there, or another backend")
