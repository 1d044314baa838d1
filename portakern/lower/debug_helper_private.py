"""Debug mode checks the private arrays a helper function declares (issue 28).

``float acc[4];`` in a helper's body, declared once with a constant size (the rules of the
kernel body's private arrays, :func:`.debug_views.private_arrays`), has each subscript
checked (:func:`.debug_views.check_private`) with the helper's hidden record and its
caller's work-item. The fault code of dimension ``d`` of the ``j``-th such array of the
source's helpers, in the order :func:`helper_privates` lists them, is
``-1 - (16 * (PRIVATE_FIRST + j) + d)``, a range of its own that the launcher names from
the same list (:func:`.debug_helpers.helper_private_arrays`,
:func:`portakern.launch.debug.check`). A helper with such an array takes the hidden
parameters (:func:`.debug_helpers.helper_pointers`).
"""

from __future__ import annotations

import re

from ..syntax.language import Token

__all__ = ["PRIVATE_FIRST", "check_private_in", "helper_privates", "private_places",
           "private_sizes"]

#: The array number of the first helper private array in a fault code (past any kernel's
#: ``@localmem`` and private arrays, and below the N-d parameter codes).
PRIVATE_FIRST = 1 << 26


def _macros(parts: list) -> set[str]:
    out = set()
    for t in parts:
        if isinstance(t, Token) and t.kind == "pp":
            m = re.match(r"#\s*define\s+([A-Za-z_]\w*)(?!\()", t.text)
            if m:
                out.add(m.group(1))
    return out


def _privates(parts: list, body: list, params: list[str]) -> dict[str, list[list]]:
    from .debug_views import private_arrays

    tokens = [t for t in body if type(t) is Token]
    return private_arrays(tokens, _macros(parts), set(params))


def helper_privates(parts: list, definitions: list[tuple[str, list[str], list]]
                    ) -> list[tuple[str, str, list[list]]]:
    """``(helper, array, sizes)`` of each checked private array of the helpers in
    ``parts`` (the source's helper code, macros expanded), in source order; ``definitions``
    gives each helper function's name, parameter names and body. The copies of a helper
    for other address spaces (``dot_pk_gl``) share the source helper's entries."""
    from .debug_helper_arrays import base_name

    out: list[tuple[str, str, list[list]]] = []
    for fn, params, body in definitions:
        for n, d in _privates(parts, body, params).items():
            if not any(f == base_name(fn) and m == n for f, m, _ in out):
                out.append((base_name(fn), n, d))
    return out


def _number(fn: str, name: str, order: list[tuple[str, str, list[list]]]) -> int:
    from .debug_helper_arrays import base_name

    return next(k for k, (f, n, _) in enumerate(order) if f == base_name(fn) and n == name)


def private_places(parts: list, fn: str, body: list, params: list[str],
                   order: list[tuple[str, str, list[list]]]) -> dict[str, tuple[tuple, bool]]:
    """Where each checked private array of the helper ``fn`` is, for a call passing it (or
    a pointer into it) on and for its pointer variables: ``{name: ((offset, extent,
    code), multi-dimensional)}``; the extent is -1 when the record is null (a call from a
    struct's method), so the callee checks nothing then. A multi-dimensional one is its
    flat array (:mod:`.debug_rows`)."""
    from ..syntax.parts import Gen
    from .debug_rows import FLAT_DIMENSION, flat_size

    out: dict[str, tuple[tuple, bool]] = {}
    for name, dims in _privates(parts, body, params).items():
        code = -1 - 16 * (PRIVATE_FIRST + _number(fn, name, order))
        size = dims[0] if len(dims) == 1 else flat_size(dims)
        extent = [Gen("(pk_dbg ? "), *size, Gen(" : -1)")]
        out[name] = (("0", extent, str(code if len(dims) == 1 else code - FLAT_DIMENSION)),
                     len(dims) > 1)
    return out


def private_sizes(parts: list, fn: str, body: list, params: list[str],
                  order: list[tuple[str, str, list[list]]]) -> dict[str, tuple[list[list], int]]:
    """The sizes of each checked private array of the helper ``fn`` and its fault code of
    dimension 0: ``{name: (sizes, code)}`` (a pointer into a row of a multi-dimensional one,
    :mod:`.debug_helper_rows`)."""
    return {name: (dims, -1 - 16 * (PRIVATE_FIRST + _number(fn, name, order)))
            for name, dims in _privates(parts, body, params).items()}


def check_private_in(parts: list, fn: str, body: list, params: list[str],
                     order: list[tuple[str, str, list[list]]]) -> list:
    """The helper ``fn``'s ``body`` with its private arrays' subscripts checked; ``order``
    is :func:`helper_privates` of the whole helper code (the fault codes)."""
    from ..syntax.parts import Gen
    from .debug_helper_arrays import base_name
    from .debug_views import check_private

    mine = _privates(parts, body, params)
    # Its struct variables' member arrays (o.bins, :mod:`.debug_members`): listed in order.
    mine.update({n: d for f, n, d in order if f == base_name(fn) and ("." in n or "->" in n)})
    if not mine:
        return body
    out = body
    ids = [[Gen(f"pk_dbg_g{d}")] for d in range(3)]
    for name, dims in mine.items():
        out = check_private(out, {name: dims}, PRIVATE_FIRST + _number(fn, name, order), 1,
                            ids=ids)
    return out
