"""Pointer declarations checked and rewritten on the kernel's tokens, before lowering.

Split from :mod:`portakern.pointers` (which places the address spaces, and
re-exports these names): :func:`check_pointer_depth` refuses pointers to pointers on
every target, and :func:`references_as_pointers` turns the reference variables of a
kernel's body into pointers for the native path's lockstep lowering. The words a
declaration may start with (:data:`QUALIFIERS`) and those that never name a type
(:data:`KEYWORDS`) are shared with the address-space pass.
"""

from __future__ import annotations

import dataclasses

from .errors import KernelSyntaxError
from .language import KernelDef, Token

__all__ = ["KEYWORDS", "QUALIFIERS", "check_pointer_depth", "references_as_pointers"]

#: Words that may come before (or between) a declaration's type and its ``*``/``&``.
QUALIFIERS = frozenset({"const", "volatile", "restrict", "unsigned", "signed", "struct"})
#: Words that start a statement but never a declaration.
KEYWORDS = frozenset({
    "return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
    "continue", "goto", "sizeof", "typedef",
})


def check_pointer_depth(tokens: list[Token], filename: str) -> None:
    """Refuse a pointer to a pointer (``T** p``, ``T*& r``) in a declaration.

    Declarations are looked for where one may start: a statement (after ``;``, ``{``,
    ``}``) or a parameter of a function defined at the top level.
    """
    sig = [t for t in tokens if t.kind not in ("ws", "comment", "pp")]
    starts = {0}
    depth = 0
    params: int | None = None  # the depth inside a top-level parameter list
    for n, t in enumerate(sig):
        if t.kind != "punct":
            continue
        if t.text in "([{":
            if t.text == "(" and depth == 0 and n and sig[n - 1].kind == "id" \
                    and sig[n - 1].text not in KEYWORDS:
                params = 1
                starts.add(n + 1)
            depth += 1
        elif t.text in ")]}":
            depth -= 1
            if params is not None and depth < params:
                params = None
        if t.text in (";", "{", "}") or (t.text == "," and params == depth):
            starts.add(n + 1)
    for n in sorted(starts):
        k = n
        while k < len(sig) and sig[k].kind == "id" and sig[k].text in QUALIFIERS:
            k += 1
        if k >= len(sig) or sig[k].kind != "id" or sig[k].text in KEYWORDS:
            continue
        k += 1
        while k < len(sig) and sig[k].kind == "id" and sig[k].text in QUALIFIERS:
            k += 1
        marks = []
        while k < len(sig) and sig[k].kind == "punct" and sig[k].text in ("*", "&", "&&"):
            marks.append(sig[k].text)
            k += 1
            while k < len(sig) and sig[k].kind == "id" and sig[k].text in QUALIFIERS:
                k += 1
        if len(marks) < 2 and marks != ["&&"]:
            continue
        if k + 1 >= len(sig) or sig[k].kind != "id" or not (
                sig[k + 1].kind == "punct" and sig[k + 1].text in ("=", ";", ",", ")", "[")):
            continue
        raise KernelSyntaxError(
            f"{sig[k].text!r} is a pointer to a pointer (or a reference to one), which "
            f"portakern does not support: address spaces are inferred one level deep; "
            f"index the array itself", filename, sig[k].line, sig[k].col)


def references_as_pointers(kernel: KernelDef) -> KernelDef:
    """``kernel`` with each reference variable ``T& r = x[i];`` of its body a pointer.

    For the native path's lockstep lowering (:func:`portakern.lower.lower_kernel`),
    which keeps a variable that lives across ``@synchronize`` as one element per
    work-item (``pk_priv_r[pk_items]``): C++ has no arrays of references, so the
    declaration becomes ``T* r = &(x[i]);`` and each later use of ``r`` ``(*r)``.
    """
    toks = kernel.body
    code = [n for n, t in enumerate(toks) if t.kind not in ("ws", "comment", "pp")]
    names: set[str] = set()
    edits: dict[int, list[Token]] = {}  # token index -> its replacement
    skip: set[int] = set()
    for c in range(len(code)):
        prev = toks[code[c - 1]] if c else None
        if prev is not None and not (prev.kind == "punct" and prev.text in ";{}"):
            continue
        k = c
        while k < len(code) and toks[code[k]].kind == "id" and toks[code[k]].text in QUALIFIERS:
            k += 1
        if k + 3 >= len(code) or toks[code[k]].kind != "id" or toks[code[k]].text in KEYWORDS:
            continue
        amp, name, eq = (toks[code[k + 1]], toks[code[k + 2]], toks[code[k + 3]])
        if not (amp.is_punct("&") and name.kind == "id" and eq.is_punct("=")):
            continue
        end = k + 4
        depth = 0
        while end < len(code) and not (depth == 0 and toks[code[end]].is_punct(";")):
            t = toks[code[end]]
            if t.kind == "punct" and t.text in "([{":
                depth += 1
            elif t.kind == "punct" and t.text in ")]}":
                depth -= 1
            end += 1
        if end >= len(code) or end == k + 4:
            continue
        names.add(name.text)
        skip.add(code[k + 2])
        edits[code[k + 1]] = [Token("punct", "*", amp.line, amp.col)]
        first = toks[code[k + 4]]
        edits[code[k + 4]] = [Token("punct", "&", first.line, first.col),
                              Token("punct", "(", first.line, first.col), first]
        semi = toks[code[end]]
        edits[code[end]] = [Token("punct", ")", semi.line, semi.col), semi]
    if not names:
        return kernel
    out: list[Token] = []
    for n, t in enumerate(toks):
        if n in edits:
            out += edits[n]
        elif t.kind == "id" and t.text in names and n not in skip and not (
                out and any(o.kind == "punct" and o.text in (".", "->")
                            for o in [_last_code(out)] if o is not None)):
            out += [Token("punct", "(", t.line, t.col), Token("punct", "*", t.line, t.col), t,
                    Token("punct", ")", t.line, t.col)]
        else:
            out.append(t)
    return dataclasses.replace(kernel, body=out)


def _last_code(tokens: list[Token]) -> Token | None:
    for t in reversed(tokens):
        if t.kind not in ("ws", "comment", "pp"):
            return t
    return None
