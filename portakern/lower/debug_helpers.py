"""Debug mode inside helper functions: their pointer parameters' subscripts checked (issue 28).

A helper gets a plain pointer, so in debug mode each helper function takes hidden
parameters after its own (the target's ``debug_helper_params``): the fault record
``pk_dbg``, the caller's work-item (``pk_dbg_g0`` .. ``pk_dbg_g2``) and, for the
pointer parameter at position ``k``, where it points: ``pk_dbg_k_o`` (its offset into
the array the kernel was passed), ``pk_dbg_k_n`` (that array's extent, -1 where the
pointer's array is unknown) and ``pk_dbg_k_c`` (the fault code, :data:`HELPER_CODE` plus
the array's argument position). Each call of a
helper, in the kernel (:func:`pass_extents`) or in a helper (:func:`check_helpers`),
passes them: for ``y``, an array parameter, offset 0 and ``y``'s extent; for a view
(``row = x + i * n``, :mod:`.debug_views`) or ``y + e``, ``&y[e]``, the offset into
the array; for a one-dimensional ``@localmem`` or private array (or a view of one), its
offset, its size and its own fault code, so a fault names it; for a helper's own
parameter, its hidden values, plus the offset. A
subscript ``a[e]`` in the helper is then checked as ``a[o + e]`` against the extent
(``checked_local``, which gives the first element of the array after recording the
fault), so the report names the kernel's array and the index into it; ``*(a + i)`` and
``*a`` are ``a[i]`` and ``a[0]`` first (:func:`.debug_views.rewrite_views`).

A pointer variable the helper declares from a pointer parameter (``const float* row =
a + i * n;``, :func:`.debug_views.views_of`) is checked as ``a[(row - a) + (j)]``. A
pointer parameter the helper moves (``a++``, ``a += k``, ``a = a + k``; ``*a++`` is
``*(a++, &a[-1])`` first) keeps where it started (``debug_origin``: ``pk_dbg_k_a``), so its
offset is ``pk_dbg_k_o + (a - pk_dbg_k_a)``. Pointing one at another array (``a = b``),
``a++[k]`` and a helper named as a function pointer are refused (:class:`KernelSyntaxError`;
a variable, parameter or field of the helper's name is not the helper).
A struct's method that takes the record too (:mod:`.debug_methods`) passes it on, with
its pointer parameters' places (:mod:`.debug_method_pointers`); a call in any other
method body, where no record is at hand, passes a null
record and unknown extents (:func:`_outside`).

Debug mode's initcheck and racecheck follow a ``@localmem`` array into a helper the same
way: each pointer parameter also takes ``pk_dbg_k_w`` and ``pk_dbg_k_r``, the array's
initcheck and race shadows (``helper_shadows``; null for a pointer into anything else),
and the call passes its racecheck context (``helper_context``: on the native path the
work-item's local index, -1 in code that runs once per group, and the group's epoch; what
else a target needs). Each subscript of a pointer parameter in the helper is then an
access (``helper_local``) that marks or checks the shadows as the kernel body's does
(:func:`.initcheck.access_kind`: a read, a write, an update, an atomic or a use that may
write through), with the fault codes of the kernel's ``@localmem`` array (``pk_dbg_k_c``
less 15 and 14), so a report names the array, the element and the helper's line. A row of
a multi-dimensional ``@localmem`` array (``grid[r]``, ``&grid[r][c]``: :mod:`.debug_rows`)
brings that array's shadows too (``owners`` of :func:`pass_extents`); its code is the flat
one, which ``helper_local`` takes back to the array's dimension-0 code first, so its
elements are the flat offsets. The call itself marks nothing for an argument ``&s[e]`` whose
helper gets ``s``'s shadows (:class:`.initcheck.HandedOn`): the helper's accesses count.

A helper's own private arrays are places as the kernel's are
(:func:`.debug_helper_private.private_places`): passed on, and pointed into (``float* p =
acc + 1;``). A multi-dimensional array passed whole, or a parameter declared ``b[][4]``, is
its flat place (:class:`.debug_helper_parts.Whole`), whose subscripts
:mod:`.debug_helper_arrays` checks, and a pointer into a row of either is a flat subscript
of its first element (:mod:`.debug_helper_rows`); a moved pointer parameter is
:mod:`.debug_helper_moves`'s.
"""

from __future__ import annotations

from ..syntax.function_values import function_values
from ..syntax.language import Token
from ..syntax.parts import Call, Gen, item_step
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from ..syntax.parts import split_top as _split_top
from .debug_helper_calls import check_body, handed_on, hidden_args
from .debug_helper_parts import BLANK as _BLANK
from .debug_helper_parts import Whole, definitions, params_of
from .debug_helper_parts import code_of as _code
from .debug_helper_parts import skip as _next
from .debug_helper_parts import tok as _tok

__all__ = ["HELPER_CODE", "check_body", "check_helpers", "handed_on", "helper_pointers",
           "helper_private_arrays", "hidden_args", "known_places", "params_of", "pass_extents"]

#: The fault code of a subscript in a helper into the kernel's array argument ``k``:
#: ``HELPER_CODE + k`` (the launcher then says where the access went instead).
HELPER_CODE = 1 << 20



def helper_pointers(parts: list) -> dict[str, list[tuple[str, bool]]]:
    """Each helper function that takes the hidden parameters: its parameters, ``(name,
    is pointer)``, by function name. Those are the helpers with a pointer parameter and
    those that call one; the others (``float sq(float v)``) stay as written, so code
    outside a kernel can still call them."""
    params: dict[str, list[tuple[str, bool]]] = {}
    calls: dict[str, set[str]] = {}
    for name, open_at, close, brace in definitions(parts):
        fn = parts[name].text
        params.setdefault(fn, params_of(parts[open_at + 1:close]))
        if brace >= 0:
            body = _code(parts[brace + 1:_match_items(parts, brace)])
            # A call, `at(...)`; never a field `s.at` or a variable of the same name.
            calls.setdefault(fn, set()).update(
                t.text for k, t in enumerate(body) if isinstance(t, Token) and t.kind == "id"
                and k + 1 < len(body) and _is_tok(body[k + 1], "(")
                and not (k and _is_tok(body[k - 1], ".", "->")))
    need = {fn for fn, ps in params.items() if any(ptr for _, ptr in ps)}
    need |= {fn for fn, _, _ in helper_private_arrays(parts)}  # their subscripts are checked
    grown = True
    while grown:
        more = {fn for fn, used in calls.items() if fn not in need and used & need}
        need |= more
        grown = bool(more)
    return {fn: ps for fn, ps in params.items() if fn in need}


def helper_private_arrays(parts: list) -> list[tuple[str, str, list[list]]]:
    """``(helper, array, sizes)`` of each private array the helper functions in ``parts``
    declare that debug mode checks (:mod:`.debug_helper_private`), in source order."""
    from .debug_helper_arrays import base_name
    from .debug_helper_private import helper_privates
    from .debug_members import function_members
    from .debug_methods import method_privates, struct_scan

    found = [d for d in definitions(parts) if d[3] >= 0]
    return helper_privates(parts, [
        (parts[name].text, [p for p, _ in params_of(parts[open_at + 1:close])],
         parts[brace + 1:_match_items(parts, brace)])
        for name, open_at, close, brace in found]
    ) + method_privates(parts) + function_members(parts, [
        (base_name(parts[name].text), open_at, _match_items(parts, brace))
        for name, open_at, _, brace in found], struct_scan(parts).arrays)


def _rewrite_calls(parts: list, helpers: dict[str, list[tuple[str, bool]]],
                   known: dict[str, tuple], ids_of, inside: bool,
                   record: str = "pk_dbg", context_of=None) -> list:
    """``parts`` with the hidden arguments added to each call of a helper; ``context_of(
    inside)`` gives the ``helper_context`` part (where the call runs, for racecheck)."""
    if context_of is None:
        def context_of(_inside: bool) -> Call:
            return Call("helper_context", ("none", False), 0)
    out: list = []
    depth = 0 if inside else -1
    n = 0
    while n < len(parts):
        it = parts[n]
        step = item_step(it)
        depth += step
        if not step and isinstance(it, Call) and any(isinstance(a, list) for a in it.args):
            # User code inside a primitive (a subgroup collective's value, say).
            it = Call(it.macro, tuple(
                _rewrite_calls(a, helpers, known, ids_of, depth >= 0, record, context_of)
                if isinstance(a, list)
                else a for a in it.args), it.line, it.col)
        t = _tok(it)
        if t is not None and t.kind == "id" and t.text in helpers:
            prev = next((o for o in reversed(_code(out))), None)
            j = _next(parts, n + 1)
            if j < len(parts) and _is_tok(parts[j], "(") and not _is_tok(prev, ".", "->", "::"):
                close = _match_items(parts, j)
                inner = _rewrite_calls(parts[j + 1:close], helpers, known, ids_of, depth >= 0,
                                       record, context_of)
                args = [a for a in _split_top(inner, ",")]
                if args == [[]] or not _code(inner):
                    args = []
                hidden = hidden_args(args, helpers[t.text], ids_of(t.line, depth >= 0), known,
                                      record, context_of(depth >= 0))
                inner = handed_on(inner, args, helpers[t.text], known)
                out += parts[n:j + 1] + inner + ([Gen(", ")] if args else []) + hidden
                out.append(parts[close])
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def known_places(arrays: dict[str, int], views: dict[str, str],
                 local: dict[str, tuple[list, int]] | None = None,
                 shadowed: dict[str, bool] | None = None,
                 owners: dict[str, str] | None = None) -> dict[str, tuple]:
    """Where each pointer the kernel body can pass points (:func:`pass_extents`'s
    arguments): ``{name: (offset, extent, code[, shadows])}``, or a :class:`Whole`."""
    known: dict[str, tuple] = {
        a: ("0", f"pk_dbg[{16 + k}]", str(HELPER_CODE + k)) for a, k in arrays.items()}
    shadowed = shadowed or {}
    for name, (size, code) in (local or {}).items():
        known[name] = ("0", size, str(code))
        owner = (owners or {}).get(name, name)
        if owner in shadowed:
            known[name] += ((Call("helper_shadows", (owner, shadowed[owner]), 0),),)
    for first, owner in (owners or {}).items():  # a multi-dimensional array passed whole
        if first in known and owner not in known:
            known[owner] = Whole(known[first])
    for view, origin in views.items():
        if origin in known:
            known[view] = (f"({view} - {origin})", *known[origin][1:])
    return known


def pass_extents(parts: list, helpers: dict[str, list[tuple[str, bool]]],
                 arrays: dict[str, int], views: dict[str, str], ids_of, inside: bool,
                 local: dict[str, tuple[list, int]] | None = None,
                 shadowed: dict[str, bool] | None = None, lockstep: bool = False,
                 owners: dict[str, str] | None = None) -> list:
    """The kernel's ``parts`` with each helper call passing the hidden debug arguments.

    ``arrays`` maps the kernel's flat array parameters to their positions, ``views``
    its pointer views to their arrays; ``ids_of(line, inside)`` gives the work-item's
    index parts. ``local`` maps each one-dimensional ``@localmem`` and private array to
    its subscripts against that size, and a fault names that array. ``shadowed`` maps
    each of those ``@localmem`` arrays that has initcheck's shadow to whether it has a race
    shadow too: a helper given one is passed them (``helper_shadows``) and initchecks and
    racechecks its accesses; ``lockstep``: the work-items run in loops (the native path).
    ``owners`` maps an entry of ``local`` that stands for a multi-dimensional array (its
    first element, :func:`.debug_rows.flat_text`) to the array: a helper given a row of
    one is passed the array's shadows, and its accesses are the flat elements.
    """
    if not helpers:
        return parts
    known = known_places(arrays, views, local, shadowed, owners)
    epoch = any((shadowed or {}).values())

    def context_of(here: bool) -> Call:
        where = ("loop" if here else "group") if lockstep else "any"
        return Call("helper_context", (where, epoch), 0)

    return _rewrite_calls(parts, helpers, known, ids_of, inside, context_of=context_of)


def check_helpers(parts: list, filename: str = "<kernel>",
                  methods: frozenset[str] = frozenset(),
                  pointers: dict[str, tuple[int, ...]] | None = None) -> list:
    """The lowered helper ``parts`` for debug mode: hidden parameters on every helper
    function, its pointer parameters' subscripts checked, its calls passing them on;
    ``methods`` names the struct methods that take them too (:mod:`.debug_methods`), and
    ``pointers`` the positions of the pointer parameters each of those takes the hidden
    values of (:func:`.debug_method_pointers.method_pointers`, which the caller computes:
    that module reads this one)."""
    helpers = helper_pointers(parts)
    if not helpers and not methods:
        return parts
    if helpers:
        _no_function_pointers(parts, helpers, filename)
    privates = helper_private_arrays(parts)
    from .debug_helper_arrays import helper_array_params

    pointers = pointers or {}

    order = helper_array_params(parts)
    out: list = []
    last = 0
    for name, open_at, close, brace in definitions(parts):
        if parts[name].text not in helpers:
            continue
        params = params_of(parts[open_at + 1:close])
        positions = tuple(k for k, (_, ptr) in enumerate(params) if ptr)
        end = _match_items(parts, brace) if brace >= 0 else close
        body = parts[brace + 1:end] if brace >= 0 else []
        fn = parts[name].text
        from .debug_helper_arrays import grid_params
        from .debug_helper_moves import moves, step_derefs

        # b[][4]: checked by debug_helper_arrays (grids), or not at all; never as a[i].
        grids, whole = grid_params(parts, parts[open_at + 1:close], body, fn, params, order)
        checked = {p: k for k, (p, ptr) in enumerate(params) if ptr and p and p not in whole}
        moved = {p for p in checked if moves(body, p, fn, filename)}
        inner = parts[open_at + 1:close]
        if params:
            inner = [*inner, Gen(", ")]
        elif _code(inner):  # (void)
            inner = []
        hidden = Call("debug_helper_params", (positions,), parts[name].line)
        out += _outside(parts, last, name, helpers, methods, privates, pointers,
                        filename) \
            + parts[name:open_at + 1] + inner + [hidden]
        if brace < 0:
            out += parts[close:close + 1]
            last = close + 1
            continue
        known = {p: (f"(pk_dbg_{k}_o + ({p} - pk_dbg_{k}_a))" if p in moved else
                     f"pk_dbg_{k}_o", f"pk_dbg_{k}_n", f"pk_dbg_{k}_c",
                     (Gen(f"pk_dbg_{k}_w, pk_dbg_{k}_r"),))
                 for p, k in checked.items()}
        known.update({p: Whole(e) for p, e in whole.items() if e is not None})
        from .debug_helper_private import check_private_in, private_places
        from .debug_views import rewrite_views, views_of  # *(a + i) and *a: a[i] and a[0]

        # Its own private arrays: passed on, and pointed into, as the kernel's are.
        mine = private_places(parts, fn, body, [p for p, _ in params], privates)
        known.update({n: Whole(e) if multi else e for n, (e, multi) in mine.items()})
        flat = {n for n, (_, multi) in mine.items() if not multi}
        # Rows of its arrays of arrays (acc[2][4], b[][4]): the flat place of the first
        # element, as the kernel body's (debug_helper_rows).
        from .debug_helper_private import private_sizes
        from .debug_helper_rows import check_row_refs, first_rows, row_places
        from .debug_rows import flat_text, rewrite_rows

        rows, places, row_checks = row_places(
            private_sizes(parts, fn, body, [p for p, _ in params], privates), grids, whole)
        known.update(places)
        body = first_rows(body, rows)
        sig = [t for t in body if isinstance(t, Token) and t.kind not in _BLANK]
        seen = views_of(sig, set(checked) | flat, {p for p, _ in params},
                        {n: len(d) for n, d in rows.items()})
        for view, origin in seen.items():
            first = flat_text(origin, len(rows[origin])) if origin in rows else origin
            off = known[first][0]
            known[view] = (f"({off} + ({view} - {first}))", *known[first][1:])
        body = step_derefs(body, set(checked) | set(seen))
        body = rewrite_views(body, set(checked) | flat,
                             {v: o for v, o in seen.items() if o not in rows})
        body = rewrite_rows(body, rows, {v: o for v, o in seen.items() if o in rows},
                            set(helpers))
        ids = [[Gen(f"pk_dbg_g{d}")] for d in range(3)]
        # The calls first: an argument &a[k] passes a's place on (then a[k] is checked).
        rewritten = _rewrite_calls(body, helpers, known, lambda line, inside, ids=ids: ids, True,
                                   context_of=lambda inside: Call("helper_context",
                                                                  ("helper", True), 0))
        from .debug_methods import pass_to_methods

        rewritten = pass_to_methods(rewritten, methods, lambda line, inside, ids=ids: ids, True,
                                    lambda inside: Call("helper_context", ("helper", True), 0),
                                    pointers=pointers, known=known)
        rewritten = check_private_in(parts, fn, rewritten, [p for p, _ in params], privates)
        rewritten = check_body(rewritten, {p: known[p][:3] for p in checked}, checked)
        from .debug_helper_arrays import check_array_params

        rewritten = check_array_params(rewritten, grids, ids)
        rewritten = check_row_refs(rewritten, row_checks, ids)
        origins = [Call("debug_origin", (p, checked[p]), parts[name].line) for p in moved]
        out += parts[close:brace + 1] + origins + rewritten + [parts[end]]
        last = end + 1
    return out + _outside(parts, last, len(parts), helpers, methods, privates, pointers,
                        filename)


def _no_function_pointers(parts: list, helpers: dict, filename: str) -> None:
    """A helper that takes the hidden parameters, named other than in a call (``f = at;``,
    a function pointer), is a :class:`~portakern.errors.KernelSyntaxError`: a call
    through the pointer could not pass them.

    ``pk.kernel()`` refuses every such use already
    (:func:`portakern.syntax.function_values.check_function_values`); this is the same
    scoped walk over the lowered helpers, for code a lowering wrote. A variable,
    parameter or struct field of the same name (``float at = p[i];``) is not the helper:
    where it is declared, to the end of its block, the name is the variable.
    """
    for t in function_values(parts, helpers):
        from ..errors import KernelSyntaxError

        raise KernelSyntaxError(
            f"debug mode: helper {t.text!r} is used as a function pointer; in debug mode "
            f"each call of a helper that takes a pointer passes it the array's extent, "
            f"which a call through a function pointer cannot: call {t.text!r} directly "
            f"(a switch over the helpers), or leave debug mode off for this kernel",
            filename, t.line, t.col)


def _outside(parts: list, lo: int, hi: int, helpers: dict[str, list[tuple[str, bool]]],
             methods: frozenset[str], privates: list, pointers: dict[str, tuple[int, ...]],
             filename: str) -> list:
    """Code outside the helper functions, ``parts[lo:hi]`` (structs): the methods that take
    the hidden parameters get them (:func:`.debug_methods.check_method`); in the rest (the
    other methods' bodies) each helper call passes a null record and unknown extents: no
    fault record is at hand there, so the helper's subscripts of those pointers run
    unchecked."""
    from .debug_helper_private import private_places
    from .debug_methods import check_method, methods_in

    def plain(seg: list) -> list:
        return _rewrite_calls(seg, helpers, {}, lambda line, inside: [[Gen("-1")]] * 3, True,
                              "0") if helpers else seg

    ids = [[Gen(f"pk_dbg_g{d}")] for d in range(3)]

    def places(m) -> dict[str, tuple]:
        """Where the method's private and (1-d) member arrays are: a call passes them."""
        params = [t.text for t in parts[m.open + 1:m.close]
                  if isinstance(t, Token) and t.kind == "id"]
        body = parts[m.brace + 1:m.end]
        mine = private_places(parts, m.full, body, params, privates)
        known = {n: Whole(e) if multi else e for n, (e, multi) in mine.items()}
        for k, (fn, name, dims) in enumerate(privates):  # its member arrays, 1-d
            if fn == m.full and name.startswith("this->") and len(dims) == 1:
                from .debug_helper_private import PRIVATE_FIRST

                known[name[len("this->"):]] = ("0", [Gen("(pk_dbg ? "), *dims[0],
                                                     Gen(" : -1)")],
                                               str(-1 - 16 * (PRIVATE_FIRST + k)))
        return known

    def calls(body: list, known: dict[str, tuple]) -> list:
        if not helpers:
            return body
        return _rewrite_calls(body, helpers, known, lambda line, inside: ids, True,
                              context_of=lambda inside: Call("helper_context",
                                                             ("helper", True), 0))

    out: list = []
    pos = lo
    for m in methods_in(parts, methods) if methods else []:
        if lo <= m.at and m.end < hi:
            out += plain(parts[pos:m.open])
            out += check_method(parts, m, methods, calls, privates, pointers, places(m),
                                filename)
            pos = m.end + 1
    return out + plain(parts[pos:hi])
