"""What a kernel uses outside the portable subset (DESIGN section 1), found at creation.

The portable subset is a contract: what the parser accepts runs on every target,
or the user hears at kernel creation which targets lack it. This module is one
visitor over a parsed :class:`~portakern.language.Module`; it returns facts
(:class:`Issue`), and :class:`~portakern.Kernel` turns them into
:class:`~portakern.errors.PortabilityWarning`\\ s. Each target's rendering is
scanned on its own, so code under ``{% if target == "opencl" %}`` counts only
for OpenCL.

What is reported, and for which targets:

* a call of ``printf``: Metal and the native C++ path (``CPU()``) have none;
* a word Metal (or OpenCL C) reserves, used as a name (``vertex``, ``thread``,
  ``local``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from .language import KernelDef, Module, Token, significant
from .pointer_checks import check_pointer_depth
from .targets import (
    METAL_RESERVED_WORDS,
    OPENCL_RESERVED_WORDS,
    builtin_targets,
    target_info,
)

__all__ = ["Issue", "METAL_RESERVED_WORDS", "OPENCL_RESERVED_WORDS", "SCANNED_TARGETS",
           "scan", "merge"]

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


def scan(module: Module, kernel: KernelDef, target: str) -> list[Issue]:
    """The non-portable uses in one target's rendering that ``target`` itself lacks."""
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
    # Pointers are portable: portakern.pointers infers their address spaces; a pointer
    # to a pointer is refused on every target.
    check_pointer_depth(kernel.body + module.helpers, filename)
    reserved = info.reserved_words
    if reserved:
        # The message does not name the target: merge() lists every target lacking it.
        found += [("reserved", t, f"{t.text!r} is a reserved word; rename it")
                  for t in _reserved_names(body + helpers, reserved)]
        found += [("reserved", Token("id", p.name, kernel.line, kernel.col),
                   f"parameter {p.name!r} is a reserved word; rename it")
                  for p in kernel.params if p.name in reserved]
    return [Issue((kind, tok.line, tok.col, tok.text), filename, tok.line, tok.col,
                  (target,), message) for kind, tok, message in found]


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
