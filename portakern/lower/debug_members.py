"""Debug mode checks the member arrays of struct variables (issue 28, docs/debugging.md
"Member arrays").

A struct the source declares at top level with a member array of constant size (``struct
Acc { float bins[4]; };``, :func:`.debug_methods.struct_scan`) gives each variable of that
type declared once in a function, ``Acc s;``, ``Acc& r = s;``, ``const Acc& o`` (a
parameter) or ``Acc* p = &s;``, a **member path**: ``s.bins``, ``r.bins``, ``o.bins`` and
``p->bins``. Debug mode checks each subscript ``s.bins[k]`` against the member's extent
(:func:`.debug_views.check_private` takes the paths as it takes private arrays: the
kernel body's continue the kernel's private arrays, a helper's or a method's are in the
helpers' range), so the extent is the struct definition's whatever object the variable
names. A variable declared more than once, an array of structs (``Acc t[4]; t[i].bins[k]``)
and a struct nested in another are left unchecked.
"""

from __future__ import annotations

from ..syntax.language import Token

__all__ = ["member_paths", "struct_variables"]

#: Parts that may come before a declaration's type.
_BEFORE = frozenset({";", "{", "}", "(", ",", ")"})
#: Words that may come before a declaration's type (address spaces as the targets spell
#: them: the rendered helper and the source must list the same paths).
_QUALIFIERS = frozenset({"const", "struct", "class", "static", "thread", "device",
                         "constant", "threadgroup", "__private", "__global", "__local",
                         "__constant", "private", "global", "local", "__restrict__",
                         "volatile"})
#: Parts that may follow a declared variable's name (not ``[``: an array of structs).
_AFTER = frozenset({";", "=", ",", ")", "{", "("})


def struct_variables(sig: list[Token], structs: set[str]) -> dict[str, tuple[str, str]]:
    """``{variable: (struct, "." or "->")}`` of the variables of the struct types
    ``structs`` that the significant tokens ``sig`` (a parameter list, a body, or both)
    declare exactly once: ``S v``, ``S& v``, ``const S& v``, ``S* v``."""
    found: dict[str, tuple[str, str]] = {}
    counts: dict[str, int] = {}
    for j, t in enumerate(sig):
        if t.kind != "id" or t.text not in structs:
            continue
        k = j - 1
        while k >= 0 and sig[k].text.strip() in _QUALIFIERS:  # "thread " is one part
            k -= 1
        if k >= 0 and not (sig[k].kind == "punct" and sig[k].text in _BEFORE):
            continue
        m, op = j + 1, "."
        while m < len(sig) and (sig[m].is_punct("&") or sig[m].is_punct("*")
                                or sig[m].is_punct("&&") or sig[m].text == "const"):
            op = "->" if sig[m].is_punct("*") else op
            m += 1
        if m + 1 < len(sig) and sig[m].kind == "id" and sig[m + 1].kind == "punct" \
                and sig[m + 1].text in _AFTER:
            if sum(1 for x in sig[j + 1:m] if x.is_punct("*")) > 1:
                continue  # S** v: not one object's member
            counts[sig[m].text] = counts.get(sig[m].text, 0) + 1
            found[sig[m].text] = (t.text, op)
    for j, t in enumerate(sig):  # the same name declared with another type too
        if t.kind == "id" and t.text in found and j and sig[j - 1].kind == "id" \
                and sig[j - 1].text not in structs and sig[j - 1].text not in (
                    "return", "case", "else", "do", "sizeof", "const"):
            counts[t.text] = counts.get(t.text, 0) + 1
    return {v: s for v, s in found.items() if counts.get(v) == 1 and v not in structs}


def member_paths(tokens: list, arrays: dict[str, dict[str, list[list]]],
                 taken: set[str] = frozenset()) -> dict[str, list[list]]:
    """``{"s.bins": sizes, "p->bins": sizes}``: the member paths of the struct variables
    that ``tokens`` declare (``arrays``: each struct's member arrays, from
    :func:`.debug_methods.struct_scan`), none of them named in ``taken``."""
    with_arrays = {s for s, members in arrays.items() if members}
    if not with_arrays:
        return {}
    sig = [t for t in tokens if type(t) is Token and t.kind not in ("ws", "comment", "pp")]
    out: dict[str, list[list]] = {}
    for var, (struct, op) in struct_variables(sig, with_arrays).items():
        if var not in taken:
            for member, dims in arrays[struct].items():
                out[f"{var}{op}{member}"] = dims
    return out


def function_members(parts: list, spans: list[tuple[str, int, int]],
                     arrays: dict[str, dict[str, list[list]]]
                     ) -> list[tuple[str, str, list[list]]]:
    """``(function, path, sizes)`` of the member paths each function of the helper code
    ``parts`` declares, ``spans`` giving its name and where its parameter list opens and
    its body closes (``parts[open:end + 1]``); a name listed twice (a helper's copies for
    other address spaces, :func:`.debug_helper_arrays.base_name`) is listed once."""
    out: list[tuple[str, str, list[list]]] = []
    for fn, open_at, end in spans:
        for path, dims in member_paths(parts[open_at:end + 1], arrays).items():
            if not any(f == fn and p == path for f, p, _ in out):
                out.append((fn, path, dims))
    return out
