"""Debug mode through pointers into multi-dimensional ``@localmem`` and private arrays
(issue 28; the one-dimensional case: :mod:`.debug_views`).

A pointer into ``grid[R][C]`` ranges over the whole array, row-major, as compute-sanitizer
checks the allocation: ``float* row = grid[r]; row[j]`` is checked as the flat element
``(row - &grid[0][0]) + j`` against ``R * C``, so running past row ``r`` into row ``r + 1``
is no fault and past the last element is. :func:`rewrite_rows`, before the subscript
checks, spells each access through such a pointer as a flat subscript of the array's
first element, ``(&grid[0][0])[flat]``, whose base is a :class:`FlatRef`:

* a view the kernel declares into a row (``grid[r]``, ``grid[r] + c``, ``&grid[r][c]``,
  found by :func:`~.debug_views.views_of`): ``row[j]``, ``*(row + j)`` and ``*row``;
* ``*(grid[r] + c)`` (``*grid[r]`` is ``grid[r][0]``, checked one dimension at a time);
* a helper's argument ``grid[r]``, ``grid[r] + c``, ``&grid[r][c]`` is ``&(&grid[0][0])[flat]``,
  so :func:`~.debug_helpers.pass_extents` passes the flat offset and extent.

:func:`check_rows`, after them, checks each such subscript (``checked_local``, fault code
``-1 - (16 * k + FLAT_DIMENSION)`` for the ``k``-th ``@localmem`` or private array); the
initcheck and the racecheck see it as the element at that flat offset, as their reports
name a multi-dimensional array's elements.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..syntax.language import Token
from ..syntax.parts import Call, Gen, is_unary, item_step, split_top
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from .debug_views import additive, after_header, last_code, one_term, skip_blank

__all__ = ["FLAT_DIMENSION", "FlatRef", "check_rows", "flat_size", "flat_text", "rewrite_rows"]

#: The dimension field of the fault code of an access through a pointer into a
#: multi-dimensional array: its index is the flat element, its extent the array's size.
FLAT_DIMENSION = 13


@dataclass(frozen=True)
class FlatRef(Token):
    """``(&grid[0][0])``: the first element of the multi-dimensional array ``array``, the
    base of a flat subscript. It renders as its text (a word no pass matches);
    :func:`check_rows` and the initcheck find the subscript after it."""

    array: str = ""


def flat_text(name: str, ndims: int) -> str:
    """The text of the first element's address of ``name`` (``ndims`` dimensions)."""
    return f"(&{name}{'[0]' * ndims})"


def flat_size(dims: list[list]) -> list:
    """The number of elements of an array of sizes ``dims`` (part lists)."""
    out: list = [Gen("(")]
    for d, size in enumerate(dims):
        out += ([Gen(" * ")] if d else []) + list(size)
    return out + [Gen(")")]


def _subscripts(parts: list, n: int, count: int) -> tuple[list[list], int] | None:
    """The ``count`` subscripts from ``parts[n]`` on (their insides) and the index after
    them, or None where there are fewer; more count as None too."""
    subs = []
    for _ in range(count):
        j = skip_blank(parts, n)
        if j >= len(parts) or not _is_tok(parts[j], "["):
            return None
        close = _match_items(parts, j)
        subs.append(parts[j + 1:close])
        n = close + 1
    j = skip_blank(parts, n)
    if j < len(parts) and _is_tok(parts[j], "["):
        return None
    return subs, n


def _flat(subs: list[list], dims: list[list]) -> list:
    """The flat offset of ``grid[s0]..[sm]`` in an array of sizes ``dims``: ``(s0) * (D1) *
    .. + (s1) * ..``."""
    out: list = []
    for i, s in enumerate(subs):
        out += ([Gen(" + ")] if i else []) + [Gen("("), *s, Gen(")")]
        for size in dims[i + 1:]:
            out += [Gen(" * "), *size]
    return out or [Gen("0")]


def _ref(name: str, dims: list[list], at: Token) -> FlatRef:
    return FlatRef("id", flat_text(name, len(dims)), at.line, at.col, name)


def _pointer_arg(arg: list, rows: dict[str, list[list]],
                 again: Callable[[list], list]) -> list | None:
    """``&(&grid[0][0])[flat]`` for a pointer ``grid[r]`` (``± e``) or ``&grid[r][c]`` (a
    helper's argument, the inside of ``*(...)``), else None; ``again`` rewrites the
    indices."""
    code = [k for k, it in enumerate(arg) if not (isinstance(it, Token)
                                                 and it.kind in ("ws", "comment"))]
    if not code:
        return None
    first = arg[code[0]]
    amp = _is_tok(first, "&")
    head = arg[code[1]] if amp and len(code) > 1 else first
    if not (isinstance(head, Token) and head.kind == "id" and head.text in rows) \
            or type(head) is not Token:
        return None
    dims = rows[head.text]
    got = _subscripts(arg, code[1 if amp else 0] + 1, len(dims) if amp else len(dims) - 1)
    if got is None:
        return None
    subs, after = got
    flat = _flat([again(s) for s in subs], dims)
    rest = [it for it in arg[after:] if not (isinstance(it, Token)
                                             and it.kind in ("ws", "comment"))]
    if rest:
        if amp or not (_is_tok(rest[0], "+") or (_is_tok(rest[0], "-") and one_term(rest[1:]))) \
                or len(rest) < 2 or not additive(rest[1:]):
            return None
        k = next(k for k in code if k >= after)
        flat += [Gen(f" {rest[0].text} ("), *again(arg[k + 1:]), Gen(")")]
    return [Token("punct", "&", head.line, head.col), _ref(head.text, dims, head),
            Token("punct", "[", head.line, head.col), *flat,
            Token("punct", "]", head.line, head.col)]


def rewrite_rows(parts: list, rows: dict[str, list[list]], views: dict[str, str],
                 helpers: set[str]) -> list:
    """``parts`` with the accesses through pointers into the multi-dimensional arrays
    ``rows`` (``{name: sizes}``) spelled as flat subscripts; ``views`` maps the kernel's
    pointer variables into them to their arrays, ``helpers`` names the helper functions."""
    if not rows:
        return parts
    from .debug_views import rewrite_views

    if views:  # *(row + j) and *row: row[j] and row[0]
        parts = rewrite_views(parts, set(views), {})
    return _rows(parts, rows, views, helpers)


def _rows(parts: list, rows: dict[str, list[list]], views: dict[str, str],
          helpers: set[str]) -> list:
    def again(inner: list) -> list:
        return _rows(inner, rows, views, helpers)

    out: list = []
    n = 0
    while n < len(parts):
        it = parts[n]
        prev = last_code(out)
        member = _is_tok(prev, ".", "->", "::")
        if _is_tok(it, "*") and (prev is None or is_unary([prev, it], 1) or after_header(
                [o for o in out if not (isinstance(o, Token) and o.kind in ("ws", "comment"))
                 and not (isinstance(o, Gen) and not o.text.strip())])):
            j = skip_blank(parts, n + 1)
            if j < len(parts) and _is_tok(parts[j], "("):  # *(grid[r] + c)
                close = _match_items(parts, j)
                after = skip_blank(parts, close + 1)
                inner = parts[j + 1:close]
                arg = None if _is_tok(_first_code(inner), "&") or (
                    after < len(parts) and _is_tok(parts[after], "[", "(", ".", "->")) \
                    else _pointer_arg(inner, rows, again)
                if arg is not None:
                    out += arg[1:]
                    n = close + 1
                    continue
            elif j < len(parts) and type(parts[j]) is Token and parts[j].kind == "id" \
                    and parts[j].text in rows:  # *grid[r]: grid[r][0]
                head = parts[j]
                got = _subscripts(parts, j + 1, len(rows[head.text]) - 1)
                if got is not None:
                    subs, after = got
                    nxt = skip_blank(parts, after)
                    if not (nxt < len(parts) and _is_tok(parts[nxt], "(", ".", "->", "++",
                                                          "--")):
                        out.append(head)
                        for s in subs:
                            out += [Token("punct", "[", head.line, head.col), *again(s),
                                    Token("punct", "]", head.line, head.col)]
                        out += [Token("punct", "[", head.line, head.col),
                                Token("num", "0", head.line, head.col),
                                Token("punct", "]", head.line, head.col)]
                        n = after
                        continue
        if type(it) is Token and it.kind == "id" and it.text in views and not member:
            j = skip_blank(parts, n + 1)
            if j < len(parts) and _is_tok(parts[j], "["):  # row[j]
                close = _match_items(parts, j)
                origin = views[it.text]
                ref = _ref(origin, rows[origin], it)
                out += [ref, parts[j], Gen(f"({it.text} - {ref.text}) + ("),
                        *again(parts[j + 1:close]), Gen(")"), parts[close]]
                n = close + 1
                continue
        if type(it) is Token and it.kind == "id" and it.text in helpers and not member:
            j = skip_blank(parts, n + 1)
            if j < len(parts) and _is_tok(parts[j], "("):
                close = _match_items(parts, j)
                out += parts[n:j + 1]
                for k, arg in enumerate(split_top(parts[j + 1:close], ",")):
                    if k:
                        out.append(Token("punct", ",", it.line, it.col))
                    spelled = _pointer_arg(arg, rows, again)
                    out += spelled if spelled is not None else again(arg)
                out.append(parts[close])
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def _first_code(parts: list) -> object | None:
    return next((p for p in parts if not (isinstance(p, Token) and p.kind in ("ws", "comment"))),
                None)


def check_rows(parts: list, rows: dict[str, tuple[list, int]], ndim: int, *,
               inside_item: bool = True) -> list:
    """``parts`` with each flat subscript ``(&grid[0][0])[e]`` checked against the array's
    size: ``rows`` maps each array to its size (parts) and fault code."""
    from .subscripts import item_ids

    if not rows:
        return parts
    out: list = []
    depth = 0 if inside_item else -1
    n = 0
    while n < len(parts):
        it = parts[n]
        depth += item_step(it)
        if isinstance(it, FlatRef) and it.array in rows:
            j = skip_blank(parts, n + 1)
            if j < len(parts) and _is_tok(parts[j], "["):
                close = _match_items(parts, j)
                size, code = rows[it.array]
                inner = check_rows(parts[j + 1:close], rows, ndim, inside_item=depth >= 0)
                out += [it, parts[j], Call("checked_local", (
                    inner, size, code, it.line, *item_ids(ndim, it.line, depth >= 0)),
                    it.line), parts[close]]
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out
