"""Debug mode checks a struct method's pointer parameters (issue 28, docs/debugging.md "In a
struct's method").

A method that takes the fault record (:mod:`.debug_methods`) takes, for each pointer
parameter at position ``k`` that :func:`method_pointers` lists, the hidden values a helper's
pointer parameter takes (:mod:`.debug_helpers`: ``pk_dbg_k_o``, ``pk_dbg_k_n``,
``pk_dbg_k_c`` and the shadows ``pk_dbg_k_w``, ``pk_dbg_k_r``), each **with a default**: an
unknown extent (-1) and no shadows, so a call debug mode does not rewrite still builds and
leaves the subscripts unchecked. A call it rewrites (:func:`.debug_methods.pass_to_methods`)
passes where its argument points, as a helper call does: an array parameter, a
``@localmem`` or private array, a view of one, ``&y[e]``, the caller's own pointer parameter
(in a helper or a method) or member array. ``v[k]`` in the method is then checked as
``v[o + k]`` against the extent, and its pointer parameters' places go on to the helpers and
methods it calls.

A parameter is one of these when it is a plain one-level pointer (``const float* v``,
``float v[]``) at the same position in every method of that name (a call ``x.m()`` is
rewritten by the name alone); ``float** v``, ``float*& v`` and ``float g[][4]`` are left
unchecked. A pointer the method moves (``v++``) keeps where it started, as in a helper; one
the method points elsewhere (``v = other``) is left unchecked (a helper's is refused: a
method was built in debug mode before its pointers were checked, and still is).
"""

from __future__ import annotations

from ..errors import KernelSyntaxError
from ..syntax.language import Token
from ..syntax.parts import Call
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import split_top as _split_top
from .debug_helper_parts import BLANK as _BLANK
from .debug_helper_parts import code_of as _code

__all__ = ["check_pointer_params", "method_pointers"]


def _plain_pointers(inner: list) -> tuple[int, ...]:
    """The positions of the one-level pointer parameters of a parameter list ``inner``."""
    out = []
    for k, group in enumerate(_split_top(inner, ",")):
        sig = [t for t in _code(group) if isinstance(t, Token)]
        stars = sum(1 for t in sig if _is_tok(t, "*"))
        brackets = sum(1 for t in sig if _is_tok(t, "["))
        ids = [t for t in sig if t.kind == "id"]
        if len(ids) > 1 and stars + brackets == 1 and not any(
                _is_tok(t, "&", "&&", "=", "(") for t in sig):
            out.append(k)
    return tuple(out)


def method_pointers(parts: list, methods: list) -> dict[str, tuple[int, ...]]:
    """``{method: positions}``: the pointer parameters the ``methods`` of the helper code
    ``parts`` (:func:`.debug_methods.methods_in`, which the caller finds: that module reads
    this one) take the hidden values of, those every method of the name has."""
    found: dict[str, set[int]] = {}
    for m in methods:
        mine = set(_plain_pointers(parts[m.open + 1:m.close]))
        found[m.name] = found[m.name] & mine if m.name in found else mine
    return {name: tuple(sorted(ks)) for name, ks in found.items() if ks}


def check_pointer_params(parts: list, m, slots: tuple[int, ...], filename: str
                         ) -> tuple[list, list, dict[str, tuple], dict[str, int]]:
    """The method ``m``'s body ready for :func:`.debug_helpers.check_body` (views and
    ``*(v + i)`` spelled as subscripts of its pointer parameters ``slots``), the
    ``debug_origin`` lines of those it moves, their places ``{name: (offset, extent, code,
    shadows)}`` and their positions ``{name: k}``."""
    from ..syntax.parts import Gen
    from .debug_helper_moves import moves, step_derefs
    from .debug_helper_parts import params_of
    from .debug_views import rewrite_views, views_of

    body = parts[m.brace + 1:m.end]
    params = params_of(parts[m.open + 1:m.close])
    checked: dict[str, int] = {}
    moved: set[str] = set()
    for k, (p, _) in enumerate(params):
        if k not in slots or not p:
            continue
        try:
            if moves(body, p, m.full, filename):
                moved.add(p)
        except KernelSyntaxError:  # pointed at another array: unchecked
            continue
        checked[p] = k
    known: dict[str, tuple] = {
        p: (f"(pk_dbg_{k}_o + ({p} - pk_dbg_{k}_a))" if p in moved else f"pk_dbg_{k}_o",
            f"pk_dbg_{k}_n", f"pk_dbg_{k}_c", (Gen(f"pk_dbg_{k}_w, pk_dbg_{k}_r"),))
        for p, k in checked.items()}
    sig = [t for t in body if isinstance(t, Token) and t.kind not in _BLANK]
    seen = views_of(sig, set(checked), {p for p, _ in params})
    for view, origin in seen.items():
        known[view] = (f"({known[origin][0]} + ({view} - {origin}))", *known[origin][1:])
    body = step_derefs(body, set(checked) | set(seen))
    body = rewrite_views(body, set(checked), seen)
    origins = [Call("debug_origin", (p, checked[p]), parts[m.at].line) for p in moved]
    return body, origins, known, checked
