"""Debug mode through pointers into the rows of a helper's arrays of arrays (issue 28).

Two kinds of array of arrays in a helper function (:mod:`.debug_helpers`) have rows a pointer
can range over:

* the helper's own multi-dimensional private array (``float acc[2][4];``,
  :mod:`.debug_helper_private`), whose flat place is offset 0, its size and its fault code
  for the flat dimension (:data:`.debug_rows.FLAT_DIMENSION`);
* a parameter declared as an array of arrays (``const float b[][4]``,
  :mod:`.debug_helper_arrays`), whose flat place is what the caller passed for it (``pk_dbg_k_o``,
  ``pk_dbg_k_n``, ``pk_dbg_k_c`` and the initcheck's and racecheck's shadows).

As in the kernel body (:mod:`.debug_rows`), an access through a row (``row = acc[r];
row[k]``, ``*(b[r] + c)``, ``&b[r][c]`` or ``b[r] + c`` passed on) is spelled as a flat
subscript of the array's first element first (:func:`.debug_rows.rewrite_rows`; ``*b`` is
``b[0]`` before that, :func:`first_rows`), the place is named by that first element's text
(:func:`row_places`), so a call passes the flat offset on, and :func:`check_row_refs` checks
each flat subscript against the whole array: running from row ``r`` into row ``r + 1`` is no
fault, past the last element is. For a parameter the access is also the flat element's for
the initcheck and the racecheck (``helper_local``), as ``b[r][c]`` is.
"""

from __future__ import annotations

from ..syntax.language import Token
from ..syntax.parts import Call, Gen, is_unary
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from .debug_helper_parts import KINDS
from .debug_helper_parts import code_of as _code
from .debug_helper_parts import skip as _next
from .debug_rows import FLAT_DIMENSION, FlatRef, flat_size, flat_text

__all__ = ["check_row_refs", "first_rows", "row_places"]


def row_places(sizes: dict[str, tuple[list[list], int]],
               grids: dict[str, tuple[int, list[list], int]], whole: dict[str, tuple | None]
               ) -> tuple[dict[str, list[list]], dict[str, tuple], dict[str, tuple]]:
    """The arrays of arrays of a helper whose rows are checked, ``{name: sizes}`` (a
    parameter's first size is never read), the place of each one's first element for the
    calls (``{flat text: (offset, extent, code[, shadows])}``), and how
    :func:`check_row_refs` checks each (``{name: ("private", size, code)}`` or
    ``{name: ("param", position)}``).

    ``sizes`` are the helper's own private arrays with their fault codes of dimension 0
    (:func:`.debug_helper_private.private_sizes`); ``grids`` and ``whole`` are
    :func:`.debug_helper_arrays.grid_params`'s."""
    rows: dict[str, list[list]] = {}
    places: dict[str, tuple] = {}
    checks: dict[str, tuple] = {}
    for name, (dims, first) in sizes.items():
        if len(dims) > 1:
            code = first - FLAT_DIMENSION
            rows[name] = dims
            places[flat_text(name, len(dims))] = (
                "0", [Gen("(pk_dbg ? "), *flat_size(dims), Gen(" : -1)")], str(code))
            checks[name] = ("private", flat_size(dims), code)
    for name, (k, inner, _) in grids.items():
        place = whole.get(name)
        if place is None:
            continue
        rows[name] = [[Gen("(0)")], *inner]
        places[flat_text(name, len(inner) + 1)] = tuple(place)
        checks[name] = ("param", k)
    return rows, places, checks


def first_rows(body: list, rows: dict[str, list[list]]) -> list:
    """``body`` with ``*b`` of an array of arrays ``b`` in ``rows`` (its first row, used as
    a pointer) spelled ``b[0]``, which :func:`.debug_rows.rewrite_rows` then sees as a row."""
    if not rows:
        return body
    out: list = []
    n = 0
    while n < len(body):
        it = body[n]
        seen = _code(out)
        if _is_tok(it, "*") and is_unary([*seen[-1:], it], min(len(seen), 1)):
            j = _next(body, n + 1)
            after = _next(body, j + 1)
            if j < len(body) and type(body[j]) is Token and body[j].kind == "id" \
                    and body[j].text in rows and not (
                        after < len(body) and _is_tok(body[after], "[", "(", ".", "->", "++",
                                                      "--")):
                b = body[j]
                out += [b, Token("punct", "[", b.line, b.col), Token("num", "0", b.line, b.col),
                        Token("punct", "]", b.line, b.col)]
                n = j + 1
                continue
        out.append(it)
        n += 1
    return out


def check_row_refs(body: list, checks: dict[str, tuple], ids: list[list]) -> list:
    """``body`` with each flat subscript ``(&acc[0][0])[e]`` of an array in ``checks``
    (:func:`row_places`) checked against the array's flat extent; ``ids`` are the caller's
    work-item parts. A private array's check is skipped under a null record (a call from a
    struct's method), a parameter's where its caller passed no extent."""
    if not checks:
        return body
    from .debug_helper_parts import access_kind_of
    from .initcheck import HandedOn

    out: list = []
    n = 0
    while n < len(body):
        it = body[n]
        j = _next(body, n + 1)
        if isinstance(it, FlatRef) and it.array in checks and j < len(body) \
                and _is_tok(body[j], "["):
            close = _match_items(body, j)
            inner = check_row_refs(body[j + 1:close], checks, ids)
            how = checks[it.array]
            if how[0] == "private":
                _, size, code = how
                check = Call("checked_local", (inner, size, code, it.line, *ids), it.line)
                out += [it, body[j], Gen("pk_dbg ? "), check, Gen(" : ("), *inner, Gen(")"),
                        body[close]]
                n = close + 1
                continue
            k = how[1]
            off, extent, fault = f"pk_dbg_{k}_o", f"pk_dbg_{k}_n", f"pk_dbg_{k}_c"
            index = [Gen(f"{off} + ("), *inner, Gen(")")]
            access = [it, body[j], Gen(f"{extent} < 0 ? ("), *inner, Gen(") : "),
                      Call("checked_local", (index, extent, fault, it.line, *ids), it.line),
                      Gen(f" - {off}"), body[close]]
            kind = access_kind_of(out, body, close)
            prev = next(iter(reversed(_code(out))), None)
            if kind == KINDS["mark"] and isinstance(prev, HandedOn):  # the callee tracks it
                out += access
            else:
                out.append(Call("helper_local", (kind, access, f"({it.text} - ({off}))", k,
                                                 it.line), it.line))
            n = close + 1
            continue
        out.append(it)
        n += 1
    return out
