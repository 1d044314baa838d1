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
* a pointer variable (``const float* row = x + i * n;``) or a helper function's
  pointer parameter: Metal and OpenCL C need an address space on every pointer,
  which portakern does not infer yet;
* a word Metal (or OpenCL C) reserves, used as a name (``vertex``, ``thread``,
  ``local``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from .language import KernelDef, Module, Token, significant
from .targets import (
    METAL_RESERVED_WORDS,
    OPENCL_RESERVED_WORDS,
    builtin_targets,
    target_info,
)
from .types import KNOWN_TYPES

__all__ = ["Issue", "METAL_RESERVED_WORDS", "OPENCL_RESERVED_WORDS", "SCANNED_TARGETS",
           "scan", "merge"]

#: The built-in targets a kernel is scanned for (``c`` is CPU()'s native C++ path).
SCANNED_TARGETS = builtin_targets()

#: Address-space words a target escape may write before a pointer's type.
_ADDRESS_SPACES = frozenset({"device", "threadgroup", "thread", "constant", "__global",
                             "__local", "__private", "__constant", "global", "local",
                             "private"})
_DECL_QUALIFIERS = frozenset({"const", "volatile", "static", "inline", "restrict",
                              "__restrict__", "unsigned", "signed"})


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
    type_words = KNOWN_TYPES | set(kernel.type_vars) | set(module.type_names)
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
    if info.pointer_address_spaces:
        found += _pointer_declarations(helpers, type_words, helper=True)
        found += _pointer_declarations(body, type_words, helper=False)
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


def _pointer_declarations(tokens: list[Token], type_words: set[str] | frozenset[str],
                          *, helper: bool) -> list[tuple[str, Token, str]]:
    """``T* name`` declarations (``TYPE [const] * [const] NAME`` then ``= ; , ) [``)."""
    found = []
    depth = 0
    params_depth: int | None = None  # depth inside a helper's parameter list
    for n, t in enumerate(tokens):
        if t.kind == "punct" and t.text in "([{":
            if (helper and t.text == "(" and depth == 0 and n
                    and tokens[n - 1].kind == "id"):
                params_depth = depth + 1
            depth += 1
            continue
        if t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if params_depth is not None and depth < params_depth:
                params_depth = None
            continue
        if t.kind != "id" or t.text not in type_words:
            continue
        k = n - 1
        while k >= 0 and tokens[k].kind == "id" and tokens[k].text in _DECL_QUALIFIERS:
            k -= 1
        if k >= 0 and tokens[k].kind == "id" and tokens[k].text in _ADDRESS_SPACES:
            continue  # a target escape spelled the address space out
        j = n + 1
        while j < len(tokens) and tokens[j].kind == "id" and tokens[j].text in _DECL_QUALIFIERS:
            j += 1
        if j >= len(tokens) or not tokens[j].is_punct("*"):
            continue
        j += 1
        while j < len(tokens) and tokens[j].kind == "id" and tokens[j].text in _DECL_QUALIFIERS:
            j += 1
        if j + 1 >= len(tokens) or tokens[j].kind != "id":
            continue
        if tokens[j + 1].kind != "punct" or tokens[j + 1].text not in ("=", ";", ",", ")", "["):
            continue
        name = tokens[j]
        if params_depth is not None and depth == params_depth:
            found.append(("pointer", name,
                          f"helper parameter {name.text!r} is a pointer: Metal and OpenCL "
                          f"need an address space on it, which portakern does not infer "
                          f"yet; pass the elements (or an index and compute in the "
                          f"kernel), or make the helper a #define macro"))
        else:
            found.append(("pointer", name,
                          f"pointer variable {name.text!r} has no address space: Metal and "
                          f"OpenCL need one, which portakern does not infer yet; index "
                          f"the array itself (x[i * n + k]) instead"))
    return found
