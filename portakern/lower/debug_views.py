"""Debug mode's checks beyond array-parameter subscripts: pointer views, ``*(p + i)`` and
private arrays (issue 28; the subscripts themselves: :mod:`.subscripts`).

Two passes around :func:`~portakern.lower.subscripts.check_subscripts`:

* :func:`rewrite_views`, before it: an access through a pointer view of an array
  parameter (``const T* row = x + i * n; row[j]``) becomes the subscript of the array
  it points into, ``x[(row - x) + (j)]``, which that pass then checks against ``x``'s
  extent like any other; pointer arithmetic on an array or a view, ``*(p + i)``, ``*(p - i)`` and
  ``*p``, is ``p[i]``, ``p[-(i)]`` and ``p[0]`` first. A view counts only where the kernel declares
  it once, from the array (``x``, ``x + e``, ``x - e``, ``&x[e]``) and never assigns it
  another value (``++``, ``+=`` keep it in the same array; ``row - x`` stays exact).
  A view of a one-dimensional ``@localmem`` or private array (``float* row = tile + k;``)
  becomes ``tile[(row - tile) + (j)]`` the same way, which the ``@localmem`` and private
  checks (and the initcheck and racecheck) then see as a subscript of ``tile``. A view
  of a row of a multi-dimensional one (``float* row = grid[r];``) is found here too and
  spelled as a flat subscript by :mod:`.debug_rows`.
* :func:`check_private`, after it: each subscript of a private array (``@private T
  a[4]`` or a plain ``T a[4]`` declared once in the kernel body, with constant sizes)
  is checked one dimension at a time like a ``@localmem`` array's
  (``checked_local``): an index out of range records the fault and gives 0. The fault
  code of the ``m``-th private array continues the ``@localmem`` ones.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..syntax.language import KernelDef, Module, Token, significant
from ..syntax.parts import Call, Gen, is_unary, item_step
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items

__all__ = ["declares", "additive", "after_header", "check_private", "debug_targets", "last_code",
           "one_term", "private_arrays", "rewrite_views", "skip_blank", "views", "views_of"]

#: Words before ``name[`` that make it a use, not a declaration.
_USE_WORDS = frozenset({"return", "case", "else", "do", "sizeof", "throw"})
#: At the top level of ``*(p + rest)``: ``rest`` is not one additive operand list.
_LOOSER = frozenset({"<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&", "|", "^", "&&", "||",
                     "?", ":", "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=",
                     ">>=", ","})
_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_SIZE_PUNCT = frozenset({"+", "-", "*", "/", "%", "(", ")", "<<", ">>"})


def _decl_counts(sig: list[Token]) -> dict[str, int]:
    """How often each name is declared (after a type word, ``*`` or ``&``) in ``sig``."""
    counts: dict[str, int] = {}
    for j, t in enumerate(sig):
        if t.kind != "id" or j == 0:
            continue
        prev = sig[j - 1]
        nxt = sig[j + 1] if j + 1 < len(sig) else None
        declared = (prev.kind == "id" and prev.text not in _USE_WORDS) or (
            prev.is_punct("*") and j >= 2 and sig[j - 2].kind == "id"
            and sig[j - 2].text not in _USE_WORDS)
        if declared and nxt is not None and nxt.kind == "punct" \
                and nxt.text in ("=", ";", "[", ",", ")"):
            counts[t.text] = counts.get(t.text, 0) + 1
    return counts


def views(kernel: KernelDef, arrays: set[str], taken: set[str]) -> dict[str, str]:
    """Pointer variables of the kernel that view an array parameter: ``{view: array}``.

    ``taken`` holds names that are something else (parameters, ``@localmem`` arrays).
    """
    return views_of(significant(kernel.body), arrays, taken)


def views_of(sig: list[Token], arrays: set[str], taken: set[str],
             rows: dict[str, int] | None = None) -> dict[str, str]:
    """The views in the code ``sig`` (its significant tokens): ``{view: array}``. A view
    declared from an earlier view (``const float* q = row + 1;``) views its array.
    ``rows`` maps multi-dimensional arrays to their number of dimensions: a view of one
    points into a row (``grid[r]``, ``grid[r] + e``, ``&grid[r][c]``, :mod:`.debug_rows`)."""
    rows = rows or {}
    counts = _decl_counts(sig)
    found: dict[str, str] = {}
    for j, t in enumerate(sig):
        if t.kind != "id" or j < 2 or j + 2 >= len(sig) or not sig[j - 1].is_punct("*") \
                or sig[j - 2].kind != "id" or not sig[j + 1].is_punct("="):
            continue
        init = sig[j + 2:]
        origin = None
        if init[0].kind == "id" and (init[0].text in arrays or init[0].text in found) \
                and len(init) > 1 and init[1].kind == "punct" and init[1].text in ("+", "-", ";",
                                                                                   ","):
            origin = init[0].text
        elif init[0].is_punct("&") and len(init) > 2 and init[1].kind == "id" \
                and (init[1].text in arrays or init[1].text in found) and init[2].is_punct("["):
            origin = init[1].text
        elif init[0].kind == "id" and init[0].text in rows:
            m = _after_subscripts(init, 1, rows[init[0].text] - 1)
            if m is not None and m < len(init) and init[m].kind == "punct" \
                    and init[m].text in ("+", "-", ";", ","):
                origin = init[0].text
        elif init[0].is_punct("&") and len(init) > 1 and init[1].kind == "id" \
                and init[1].text in rows \
                and _after_subscripts(init, 2, rows[init[1].text]) is not None:
            origin = init[1].text
        if origin is not None and t.text not in found:
            found[t.text] = found.get(origin, origin)
    out = {}
    for name, origin in found.items():
        if counts.get(name) != 1 or name in taken or name in arrays or name in rows:
            continue
        assigned = any(
            t.kind == "id" and t.text == name and k + 1 < len(sig) and sig[k + 1].is_punct("=")
            and not (k >= 1 and sig[k - 1].is_punct("*"))
            for k, t in enumerate(sig))
        if not assigned:
            out[name] = origin
    return out


def _after_subscripts(sig: list[Token], n: int, count: int) -> int | None:
    """The index after exactly ``count`` subscripts from ``sig[n]`` on, or None."""
    for _ in range(count):
        if n >= len(sig) or not sig[n].is_punct("["):
            return None
        n = _match_items(sig, n) + 1
    return None if n < len(sig) and sig[n].is_punct("[") else n


def skip_blank(parts: list, n: int) -> int:
    """The index of the first part from ``parts[n]`` on that is not a blank or comment."""
    while n < len(parts) and isinstance(parts[n], Token) and parts[n].kind in ("ws", "comment"):
        n += 1
    return n


def last_code(out: list) -> object | None:
    """The last part of ``out`` that is code (not a blank, comment or empty generated text)."""
    return next((o for o in reversed(out)
                 if not (isinstance(o, Token) and o.kind in ("ws", "comment"))
                 and not (isinstance(o, Gen) and not o.text.strip())), None)


def additive(rest: list) -> bool:
    """Whether ``rest`` has no operator binding looser than ``+`` at its top level."""
    depth = 0
    for it in rest:
        if isinstance(it, Token) and it.kind == "punct":
            if it.text in "([{":
                depth += 1
            elif it.text in ")]}":
                depth -= 1
            elif depth == 0 and it.text in _LOOSER:
                return False
        elif isinstance(it, (Gen, Call)) and depth == 0:
            return False  # generated code: not read
    return True


def after_header(code: list) -> bool:
    """Whether ``code`` ends with the header of a ``for``/``if``/``while``, so a ``*``
    next starts a statement."""
    if not code or not _is_tok(code[-1], ")"):
        return False
    depth = 0
    for k in range(len(code) - 1, -1, -1):
        if _is_tok(code[k], ")"):
            depth += 1
        elif _is_tok(code[k], "("):
            depth -= 1
            if depth == 0:
                return k > 0 and _is_tok(code[k - 1], "for", "if", "while")
    return False


def one_term(rest: list) -> bool:
    """Whether ``rest`` has no ``+`` or ``-`` at its top level (``p - rest`` is
    ``p[-(rest)]``), a unary minus first aside."""
    depth = 0
    for k, it in enumerate(rest):
        if isinstance(it, Token) and it.kind == "punct":
            if it.text in "([{":
                depth += 1
            elif it.text in ")]}":
                depth -= 1
            elif depth == 0 and k and it.text in ("+", "-"):
                return False
    return True


def rewrite_views(parts: list, arrays: set[str], views: dict[str, str]) -> list:
    """``parts`` with view and pointer-arithmetic accesses spelled as array subscripts."""
    pointers = arrays | set(views)
    out: list = []
    n = 0
    while n < len(parts):
        it = parts[n]
        prev = last_code(out)
        member = _is_tok(prev, ".", "->", "::")
        if isinstance(it, Token) and it.is_punct("*") \
                and (prev is None or is_unary([prev, it], 1) or after_header(
                    [o for o in out if not (isinstance(o, Token) and o.kind in ("ws", "comment"))
                     and not (isinstance(o, Gen) and not o.text.strip())])):
            j = skip_blank(parts, n + 1)
            if j < len(parts) and _is_tok(parts[j], "("):
                close = _match_items(parts, j)
                inner = [p for p in parts[j + 1:close]
                         if not (isinstance(p, Token) and p.kind in ("ws", "comment"))]
                after = skip_blank(parts, close + 1)
                if len(inner) >= 3 and isinstance(inner[0], Token) and inner[0].kind == "id" \
                        and inner[0].text in pointers and (_is_tok(inner[1], "+") or (
                            _is_tok(inner[1], "-") and one_term(inner[2:]))) \
                        and additive(inner[2:]) and not (
                            after < len(parts) and _is_tok(parts[after], "[", "(", ".", "->")):
                    p = inner[0]
                    rest = inner[2:] if _is_tok(inner[1], "+") else [
                        Token("punct", "-", p.line, p.col), Token("punct", "(", p.line, p.col),
                        *inner[2:], Token("punct", ")", p.line, p.col)]
                    spelled = [p, Token("punct", "[", p.line, p.col), *rest,
                               Token("punct", "]", p.line, p.col)]
                    out += rewrite_views(spelled, arrays, views)
                    n = close + 1
                    continue
            elif j < len(parts) and isinstance(parts[j], Token) and parts[j].kind == "id" \
                    and parts[j].text in pointers:
                after = skip_blank(parts, j + 1)
                if not (after < len(parts) and _is_tok(parts[after], "[", "(", ".", "->", "++",
                                                        "--")):
                    p = parts[j]
                    spelled = [p, Token("punct", "[", p.line, p.col),
                               Token("num", "0", p.line, p.col), Token("punct", "]", p.line, p.col)]
                    out += rewrite_views(spelled, arrays, views)
                    n = j + 1
                    continue
        if isinstance(it, Token) and it.kind == "id" and it.text in views and not member:
            j = skip_blank(parts, n + 1)
            if j < len(parts) and _is_tok(parts[j], "["):
                close = _match_items(parts, j)
                origin = views[it.text]
                out += [Token("id", origin, it.line, it.col), parts[j],
                        Gen(f"({it.text} - {origin}) + (")]
                out += rewrite_views(parts[j + 1:close], arrays, views)
                out += [Gen(")"), parts[close]]
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def private_arrays(kernel: KernelDef | list[Token], macros: set[str],
                   taken: set[str]) -> dict[str, list[list]]:
    """The kernel's private arrays declared once with constant sizes: ``{name: sizes}``
    (``kernel`` may be a helper body's tokens instead).

    Each size is a part list ``(n)`` (literals, the source's macros, arithmetic), as
    :func:`~portakern.lower.subscripts.check_subscripts` takes ``@localmem`` sizes.
    """
    sig = significant(kernel if isinstance(kernel, list) else kernel.body)
    counts = _decl_counts(sig)
    out: dict[str, list[list]] = {}
    for j, t in enumerate(sig):
        if t.kind != "id" or j == 0 or j + 1 >= len(sig) or not sig[j + 1].is_punct("["):
            continue
        prev = sig[j - 1]
        if prev.kind != "id" or prev.text in _USE_WORDS:
            continue
        k = j - 1
        while k > 0 and (sig[k - 1].kind in ("id", "at")):
            k -= 1
        if any(w.text == "@localmem" for w in sig[k:j]):
            continue
        if k > 0 and not (sig[k - 1].kind == "punct" and sig[k - 1].text in ";{}"):
            continue
        dims: list[list] = []
        m = j + 1
        ok = True
        while m < len(sig) and sig[m].is_punct("["):
            close = _match_items(sig, m)
            size = sig[m + 1:close]
            if not size or not all(
                    (s.kind == "num" and _NUMBER.fullmatch(s.text)) or (
                        s.kind == "punct" and s.text in _SIZE_PUNCT)
                    or (s.kind == "id" and s.text in macros) for s in size):
                ok = False
                break
            dims.append([Gen("("), *size, Gen(")")])
            m = close + 1
        if ok and dims and m < len(sig) and sig[m].kind == "punct" \
                and sig[m].text in (";", "=", ","):
            out[t.text] = dims
    return {n: d for n, d in out.items() if counts.get(n) == 1 and n not in taken}


def debug_targets(kernel: KernelDef, module: Module,
                  structs: dict[str, dict[str, list[list]]] | None = None
                  ) -> tuple[dict[str, str], dict[str, list[list]]]:
    """The kernel's views (:func:`views`) and private arrays (:func:`private_arrays`),
    then its struct variables' member paths (``s.bins``, :mod:`.debug_members`; ``structs``
    is each struct's member arrays, :func:`.debug_methods.struct_scan` of the helpers).

    The lowering checks their accesses; the launcher names the private arrays of a
    fault record from the same list (:func:`portakern.launch.debug.check`).
    """
    from ..syntax.macros import expand_macros
    from .subscripts import localmem_names

    kernel = replace(kernel, body=expand_macros(kernel.body, module.helpers, kernel.line))
    arrays = {p.name for p in kernel.params if p.pointer}
    local = localmem_names(kernel)
    taken = {p.name for p in kernel.params} | set(local)
    macros = set()
    for t in module.helpers:
        if t.kind == "pp":
            m = re.match(r"#\s*define\s+([A-Za-z_]\w*)(?!\()", t.text)
            if m:
                macros.add(m.group(1))
    private = private_arrays(kernel, macros, taken)
    ranks = _localmem_ranks(significant(kernel.body))
    ranks.update({n: len(dims) for n, dims in private.items()})
    flat = {n for n, r in ranks.items() if r == 1}
    rows = {n: r for n, r in ranks.items() if r > 1}
    seen = views_of(significant(kernel.body), arrays | flat, taken - flat - set(rows), rows)
    from .debug_members import member_paths

    members = member_paths(kernel.body, structs or {}, taken | set(private))
    return seen, {**{n: d for n, d in private.items() if n not in seen}, **members}


def _localmem_ranks(sig: list[Token]) -> dict[str, int]:
    """The ``@localmem`` arrays among the significant tokens ``sig``, with their numbers of
    dimensions."""
    out = {}
    for i, t in enumerate(sig):
        if t.kind == "at" and t.text == "@localmem":
            bracket = next((j for j in range(i + 1, len(sig)) if sig[j].is_punct("[")), None)
            if bracket is not None:
                rank, close = 0, bracket - 1
                while close + 1 < len(sig) and sig[close + 1].is_punct("["):
                    close = _match_items(sig, close + 1)
                    rank += 1
                out[sig[bracket - 1].text] = rank
    return out


def _item_ids(ndim: int, line: int, inside: bool) -> list[list]:
    if not inside:
        return [[Gen("-1")]] * 3
    ids: list[list] = [[Call("global_id", (ndim - 1 - d,), line)] for d in range(ndim)]
    return ids + [[Gen("0")]] * (3 - ndim)


def declares(prev: object) -> bool:
    """Whether a name after ``prev`` is being declared (``prev`` ends in a type word)."""
    if isinstance(prev, Token):
        return prev.kind == "id" and prev.text not in _USE_WORDS
    if isinstance(prev, Gen):  # a declaration the lowering hoisted: "float " + name
        m = re.search(r"([A-Za-z_]\w*)\s*$", prev.text)
        return m is not None and m.group(1) not in _USE_WORDS
    return False


def _path_key(parts: list, n: int, paths: dict[tuple[str, str, str], str]
              ) -> tuple[str, int] | None:
    """``(key, index of the member's name)`` where ``parts[n:]`` spells a member path of
    ``paths`` (``s.bins``, ``p->bins``, ``this->bins``, :mod:`.debug_members`)."""
    j = skip_blank(parts, n + 1)
    m = skip_blank(parts, j + 1)
    if m < len(parts) and isinstance(parts[j], Token) and isinstance(parts[m], Token) \
            and parts[m].kind == "id":
        key = paths.get((parts[n].text, parts[j].text, parts[m].text))
        if key is not None:
            return key, m
    return None


def check_private(parts: list, private: dict[str, list[list]], first: int, ndim: int, *,
                  inside_item: bool = True, ids: list[list] | None = None) -> list:
    """``parts`` with each subscript of a private array checked (``checked_local``).

    ``first`` is the number of ``@localmem`` arrays: the ``m``-th private array's fault
    code for dimension ``d`` is ``-1 - (16 * (first + m) + d)``. ``ids`` (a helper's:
    its caller's work-item) replaces the work-item's index parts; a helper's record may
    be null (a call from a struct's method), so there the check is skipped. A key may be
    a member path (``s.bins``, ``p->bins``; ``this->bins`` is the bare ``bins`` too).
    """
    if not private:
        return parts
    names = list(private)
    paths: dict[tuple[str, str, str], str] = {}
    bare = {n: n for n in names if re.fullmatch(r"\w+", n)}
    for key in names:
        m = re.fullmatch(r"(\w+)(\.|->)(\w+)", key)
        if m:
            paths[m.groups()] = key
            if m.group(1) == "this":
                bare.setdefault(m.group(3), key)
    bases = {b for b, _, _ in paths}
    out: list = []
    depth = 0 if inside_item else -1
    n = 0
    while n < len(parts):
        it = parts[n]
        depth += item_step(it)
        prev = last_code(out)
        plain = isinstance(it, Token) and it.kind == "id" and not _is_tok(
            prev, ".", "->", "::") and not declares(prev)
        found = _path_key(parts, n, paths) if plain and it.text in bases else None
        if found is not None or (plain and it.text in bare):
            key = found[0] if found is not None else bare[it.text]
            code = -1 - 16 * (first + names.index(key))
            where = ids if ids is not None else _item_ids(ndim, it.line, depth >= 0)
            end = found[1] if found is not None else n
            out += parts[n:end + 1]
            n = end + 1
            for d, size in enumerate(private[key]):
                j = skip_blank(parts, n)
                if j >= len(parts) or not _is_tok(parts[j], "["):
                    break
                close = _match_items(parts, j)
                inner = check_private(parts[j + 1:close], private, first, ndim,
                                      inside_item=depth >= 0, ids=ids)
                out += parts[n:j + 1]
                check = Call("checked_local", (inner, size, code - d, it.line, *where), it.line)
                out += [Gen("pk_dbg ? "), check, Gen(" : ("), *inner, Gen(")")] \
                    if ids is not None else [check]
                out.append(parts[close])
                n = close + 1
            continue
        out.append(it)
        n += 1
    return out
