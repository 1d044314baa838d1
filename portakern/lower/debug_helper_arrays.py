"""Debug mode checks a helper parameter declared as an array of arrays (issue 28).

``const float b[][4]`` (or ``b[2][4]``: C ignores the first size, and so does the check) is
a pointer to rows of 4. The caller passes where it points as for any pointer parameter
(:mod:`.debug_helpers`): an offset and extent in elements, flat and row-major. A
multi-dimensional ``@localmem`` or private array passed whole (``cell(grid, r, c)``) is its
flat array (:mod:`.debug_rows`), with the initcheck's and racecheck's shadows for a
``@localmem`` one. :func:`check_array_params` then checks each ``b[r][c]`` in the helper:

* ``c`` against the inner size 4 (``checked_local``, a fault code of its own:
  ``-1 - (16 * (PARAM_FIRST + j) + d)`` for dimension ``d`` of the ``j``-th such parameter
  of the source's helpers, in the order :func:`helper_array_params` lists them, which the
  launcher names as the helper's parameter: :func:`portakern.launch.debug.check`);
* the flat element ``r * 4 + c`` against the argument's extent, as ``a[i]`` of a plain
  pointer parameter is, and as an access of that element for the initcheck and the
  racecheck (``helper_local``).

A row used as a pointer (``b[r]``, passed on or read through) is checked against the same
flat extent by :mod:`.debug_helper_rows`. A parameter with an inner size that is not a
constant, or that the helper moves (``b++``), is left as written.
"""

from __future__ import annotations

import re

from ..syntax.language import Token
from ..syntax.parts import Call, Gen
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from ..syntax.parts import split_top as _split_top

__all__ = ["PARAM_FIRST", "array_params", "base_name", "check_array_params", "grid_params",
           "helper_array_params", "moved"]

#: The array number of the first helper parameter of arrays in a fault code (past the
#: helpers' private arrays, :data:`.debug_helper_private.PRIVATE_FIRST`).
PARAM_FIRST = (1 << 26) + (1 << 25)

_BLANK = ("ws", "comment")
_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_SIZE_PUNCT = frozenset({"+", "-", "*", "/", "%", "(", ")", "<<", ">>"})
_MOVES = frozenset({"++", "--", "+=", "-=", "="})


def base_name(fn: str) -> str:
    """A helper's name without the suffix of its address-space copies (``dot_pk_gl``,
    :mod:`.pointers`), so every copy has the codes of the source's helper."""
    return re.sub(r"_pk_[gplc]+$", "", fn)


def _code(items: list) -> list:
    return [it for it in items if not (isinstance(it, Token) and it.kind in _BLANK)
            and not (isinstance(it, Gen) and not it.text.strip())]


def _macros(parts: list) -> set[str]:
    return {m.group(1) for t in parts if isinstance(t, Token) and t.kind == "pp"
            for m in [re.match(r"#\s*define\s+([A-Za-z_]\w*)(?!\()", t.text)] if m}


def array_params(inner: list, macros: set[str]) -> dict[str, list[list] | None]:
    """The parameters of a parameter list ``inner`` declared with two or more subscripts:
    ``{name: inner sizes}`` (part lists), or ``{name: None}`` where a size after the first
    is not a constant."""
    out: dict[str, list[list] | None] = {}
    for group in _split_top(inner, ","):
        sig = _code(group)
        first = next((k for k, t in enumerate(sig) if _is_tok(t, "[")), None)
        if first is None:
            continue
        names = [t for t in sig[:first] if isinstance(t, Token) and t.kind == "id"]
        sizes: list[list] = []
        m = first
        while m < len(sig) and _is_tok(sig[m], "["):
            close = _match_items(sig, m)
            sizes.append(sig[m + 1:close])
            m = close + 1
        if len(sizes) < 2 or not names:
            continue
        inner_sizes = sizes[1:]
        constant = all(size and all(
            (isinstance(s, Token) and s.kind == "num" and _NUMBER.fullmatch(s.text))
            or _is_tok(s, *_SIZE_PUNCT)
            or (isinstance(s, Token) and s.kind == "id" and s.text in macros)
            for s in size) for size in inner_sizes)
        out[names[-1].text] = [[Gen("("), *s, Gen(")")] for s in inner_sizes] \
            if constant else None
    return out


def helper_array_params(parts: list) -> list[tuple[str, str]]:
    """``(helper, parameter)`` of each checked array-of-arrays parameter of the helper
    functions in ``parts``, in source order, each once (the copies of a helper for other
    address spaces share its codes)."""
    from .debug_helper_parts import definitions

    macros = _macros(parts)
    out: list[tuple[str, str]] = []
    for name, open_at, close, brace in definitions(parts):
        if brace < 0:
            continue
        for p, dims in array_params(parts[open_at + 1:close], macros).items():
            key = (base_name(parts[name].text), p)
            if dims is not None and key not in out:
                out.append(key)
    return out


def grid_params(parts: list, inner: list, body: list, fn: str,
                params: list[tuple[str, bool]], order: list[tuple[str, str]]
                ) -> tuple[dict[str, tuple[int, list[list], int]], dict[str, tuple | None]]:
    """For the helper ``fn`` (parameter list ``inner``, ``body``): the array-of-arrays
    parameters it checks, ``{name: (position, inner sizes, code)}``, and every parameter
    declared so, ``{name: its place to pass on, or None}`` (those are never checked as a
    pointer ``a[i]``); ``order`` is :func:`helper_array_params` of the whole helper code."""
    grids: dict[str, tuple[int, list[list], int]] = {}
    whole: dict[str, tuple | None] = {}
    position = {p: k for k, (p, _) in enumerate(params)}
    for name, dims in array_params(inner, _macros(parts)).items():
        k = position.get(name)
        if dims is None or k is None or moved(body, name) \
                or (base_name(fn), name) not in order:
            whole[name] = None
            continue
        code = -1 - 16 * (PARAM_FIRST + order.index((base_name(fn), name)))
        grids[name] = (k, dims, code)
        whole[name] = (f"pk_dbg_{k}_o", f"pk_dbg_{k}_n", f"pk_dbg_{k}_c",
                       (Gen(f"pk_dbg_{k}_w, pk_dbg_{k}_r"),))
    return grids, whole


def moved(body: list, name: str) -> bool:
    """Whether the helper's ``body`` moves or reassigns the parameter ``name``."""
    sig = _code(body)
    for k, t in enumerate(sig):
        if isinstance(t, Token) and t.kind == "id" and t.text == name \
                and not (k and _is_tok(sig[k - 1], ".", "->", "::")):
            if (k + 1 < len(sig) and _is_tok(sig[k + 1], *_MOVES)) \
                    or (k and _is_tok(sig[k - 1], "++", "--")):
                return True
    return False


def check_array_params(body: list, params: dict[str, tuple[int, list[list], int]],
                       line_ids: list[list]) -> list:
    """The helper ``body`` with each full subscript ``b[r][c]`` of a parameter in
    ``params`` (``{name: (position, inner sizes, fault code of dimension 0)}``) checked
    and tracked; ``line_ids`` are the caller's work-item parts."""
    if not params:
        return body
    from .debug_helper_parts import access_kind_of

    out: list = []
    n = 0
    while n < len(body):
        it = body[n]
        prev = next((o for o in reversed(_code(out))), None)
        if isinstance(it, Token) and it.kind == "id" and it.text in params \
                and not _is_tok(prev, ".", "->", "::"):
            k, dims, code = params[it.text]
            subs: list[list] = []
            m = n + 1
            close = n
            while len(subs) <= len(dims):
                j = m
                while j < len(body) and isinstance(body[j], Token) and body[j].kind in _BLANK:
                    j += 1
                if j >= len(body) or not _is_tok(body[j], "["):
                    break
                close = _match_items(body, j)
                subs.append(check_array_params(body[j + 1:close], params, line_ids))
                m = close + 1
            if len(subs) == len(dims) + 1:
                out.append(_access(it, k, dims, code, subs, line_ids,
                                   access_kind_of(out, body, close)))
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def _access(at: Token, k: int, dims: list[list], code: int, subs: list[list],
            ids: list[list], kind: int) -> Call:
    """``helper_local`` of the element ``b[s0][s1]..`` of parameter ``b`` (position ``k``)."""
    flat: list = [Gen("("), *subs[0], Gen(")")]
    for size in dims:
        flat += [Gen(" * "), *size]
    for d in range(1, len(subs)):
        check = Call("checked_local", (subs[d], dims[d - 1], code - d, at.line, *ids), at.line)
        flat += [Gen(" + (pk_dbg ? "), check, Gen(" : ("), *subs[d], Gen("))")]
        for size in dims[d:]:
            flat += [Gen(" * "), *size]
    first = f"(&{at.text}{'[0]' * len(subs)})"
    off, extent, fault = f"pk_dbg_{k}_o", f"pk_dbg_{k}_n", f"pk_dbg_{k}_c"
    index = [Gen(f"{off} + ("), *flat, Gen(")")]
    access = [Gen(f"{first}[{extent} < 0 ? ("), *flat, Gen(") : "),
              Call("checked_local", (index, extent, fault, at.line, *ids), at.line),
              Gen(f" - {off}]")]
    return Call("helper_local", (kind, access, f"({first} - ({off}))", k, at.line), at.line)
