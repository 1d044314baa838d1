"""One kernel of a multi-kernel source, without the Jinja constants of the others.

``pk.kernel.from_file("ops.pk", name="scale", FACTOR=2)`` must not need the
constants that only the file's other kernels use. :meth:`KernelTemplate.render
<portakern.render.emit.KernelTemplate.render>` first renders the whole source; when a
constant is undefined and a kernel was named, it renders again the source with
every *other* ``@kernel`` blanked out (:func:`only_kernel`): the helpers, the
``#define``\\ s and the chosen kernel stay, so a constant that the chosen kernel or a
helper uses is still an error naming it.

The cut is made on the source text before Jinja runs, so it is careful: a kernel is
blanked only when its name is spelled out (not made by Jinja) and differs from the
chosen one; everything else, blanks of spaces and line ends included, stays where it
was, so line numbers still hold. A kernel generated inside a ``{% for %}`` keeps its
loop; a cut that leaves the template malformed is not used.
"""

from __future__ import annotations

import re

__all__ = ["kernel_names", "only_kernel"]

_SKIP_RE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
                      r"|\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*$")


def _code_mask(source: str) -> list[bool]:
    """For each character: True where it is code (not a comment, string or Jinja tag)."""
    mask = [True] * len(source)
    for m in _SKIP_RE.finditer(source):
        for k in range(m.start(), m.end()):
            mask[k] = False
    return mask


def _kernel_spans(source: str) -> list[tuple[int, int, str | None]]:
    """``(start, end, name)`` of each top-level ``@kernel`` definition in the raw text.

    ``name`` is None where Jinja makes part of it (``tree_{{ op }}``).
    """
    mask = _code_mask(source)
    spans: list[tuple[int, int, str | None]] = []
    depth = 0
    k = 0
    while k < len(source):
        c = source[k]
        if not mask[k]:
            k += 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and source.startswith("@kernel", k) and not (
                k + 7 < len(source) and (source[k + 7].isalnum() or source[k + 7] == "_")):
            body = next((j for j in range(k, len(source)) if mask[j] and source[j] == "{"), None)
            if body is None:
                return spans
            end = _closing(source, mask, body)
            if end is None:
                return spans
            name = _name_before(source, mask, k, body)
            spans.append((k, end + 1, name))
            k = end + 1
            continue
        k += 1
    return spans


def _closing(source: str, mask: list[bool], open_at: int) -> int | None:
    depth = 0
    for j in range(open_at, len(source)):
        if not mask[j]:
            continue
        if source[j] == "{":
            depth += 1
        elif source[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _name_before(source: str, mask: list[bool], start: int, body: int) -> str | None:
    """The function name before the parameter list (None if Jinja makes part of it)."""
    # The parameter list is the last top-level '(' before the body.
    depth = 0
    last_open = None
    for j in range(start, body):
        if not mask[j]:
            continue
        if source[j] == "(":
            if depth == 0:
                last_open = j
            depth += 1
        elif source[j] == ")":
            depth -= 1
    if last_open is None:
        return None
    before = source[start:last_open]
    m = _NAME_RE.search(before)
    if m is None:
        return None
    if not all(mask[start + m.start():start + m.end()]):
        return None
    # A name glued to a Jinja tag (tree_{{ op }}) is not spelled out.
    ahead = start + m.start() - 1
    if ahead >= start and not mask[ahead] and not source[ahead].isspace():
        return None
    return m.group(1)


def kernel_names(source: str) -> list[str | None]:
    """The names of the top-level ``@kernel``\\ s in the raw text (None where Jinja makes one)."""
    return [name for _, _, name in _kernel_spans(source)]


def only_kernel(source: str, name: str) -> str | None:
    """``source`` with every spelled-out ``@kernel`` other than ``name`` blanked.

    None when nothing would change.
    """
    spans = _kernel_spans(source)
    out = source
    changed = False
    for start, end, n in spans:
        if n is None or n == name:
            continue
        out = out[:start] + re.sub(r"[^\n]", " ", out[start:end]) + out[end:]
        changed = True
    return out if changed else None
