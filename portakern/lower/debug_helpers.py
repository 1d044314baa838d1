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
A call in a struct's method body, where no record is at hand, passes a null record and
unknown extents (:func:`_outside`).

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
elements are the flat offsets.
"""

from __future__ import annotations

from ..syntax.function_values import NOT_FUNCTIONS, function_values
from ..syntax.language import Token
from ..syntax.parts import Call, Gen, item_step
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from ..syntax.parts import split_top as _split_top

__all__ = ["HELPER_CODE", "check_helpers", "helper_pointers", "helper_private_arrays",
           "pass_extents"]

#: The fault code of a subscript in a helper into the kernel's array argument ``k``:
#: ``HELPER_CODE + k`` (the launcher then says where the access went instead).
HELPER_CODE = 1 << 20

_BLANK = ("ws", "comment")


def _tok(it: object) -> Token | None:
    return it if isinstance(it, Token) else None


def _code(items: list) -> list:
    return [it for it in items if not (isinstance(it, Token) and it.kind in _BLANK)
            and not (isinstance(it, Gen) and not it.text.strip())]


def _next(parts: list, k: int) -> int:
    while k < len(parts) and isinstance(parts[k], Token) and parts[k].kind in _BLANK:
        k += 1
    return k


def _params_of(inner: list) -> list[tuple[str, bool]]:
    """``(name, is pointer)`` of each parameter in a declaration's parameter list."""
    out = []
    for group in _split_top(inner, ","):
        sig = _code(group)
        if not sig or (len(sig) == 1 and _is_tok(sig[0], "void")):
            continue
        ids = [t for t in sig if isinstance(t, Token) and t.kind == "id"]
        pointer = any(_is_tok(t, "*", "[") for t in sig)
        name = ids[-1].text if len(ids) > 1 else ""
        if any(_is_tok(t, "[") for t in sig):  # float a[] / float a[4]
            before = [t for t in sig[:next(k for k, t in enumerate(sig) if _is_tok(t, "["))]
                      if isinstance(t, Token) and t.kind == "id"]
            name = before[-1].text if before else name
        out.append((name, pointer))
    return out


def _definitions(parts: list) -> list[tuple[int, int, int, int]]:
    """``(name, open, close, brace or -1)`` of each top-level function declaration."""
    found = []
    depth = 0
    n = 0
    while n < len(parts):
        it = parts[n]
        if isinstance(it, Token) and it.kind == "punct" and it.text in "([{":
            if it.text == "(" and depth == 0:
                k = n - 1
                while k >= 0 and isinstance(parts[k], Token) and parts[k].kind in _BLANK:
                    k -= 1
                name = _tok(parts[k]) if k >= 0 else None
                b = k - 1
                while b >= 0 and isinstance(parts[b], Token) and parts[b].kind in _BLANK:
                    b -= 1
                # A declaration's name follows its type (not '=': `float k = f(2);`).
                typed = b >= 0 and (
                    (isinstance(parts[b], Token) and parts[b].kind == "id"
                     and parts[b].text not in NOT_FUNCTIONS)
                    or _is_tok(parts[b], "*", "&", ">") or isinstance(parts[b], (Gen, Call)))
                close = _match_items(parts, n)
                after = _next(parts, close + 1)
                if name is not None and name.kind == "id" and name.text not in NOT_FUNCTIONS \
                        and typed and after < len(parts) and _is_tok(parts[after], "{", ";"):
                    found.append((k, n, close, after if _is_tok(parts[after], "{") else -1))
                    n = close + 1
                    continue
            depth += 1
        elif isinstance(it, Token) and it.kind == "punct" and it.text in ")]}":
            depth -= 1
        n += 1
    return found


def helper_pointers(parts: list) -> dict[str, list[tuple[str, bool]]]:
    """Each helper function that takes the hidden parameters: its parameters, ``(name,
    is pointer)``, by function name. Those are the helpers with a pointer parameter and
    those that call one; the others (``float sq(float v)``) stay as written, so code
    outside a kernel can still call them."""
    params: dict[str, list[tuple[str, bool]]] = {}
    calls: dict[str, set[str]] = {}
    for name, open_at, close, brace in _definitions(parts):
        fn = parts[name].text
        params.setdefault(fn, _params_of(parts[open_at + 1:close]))
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
    from .debug_helper_private import helper_privates

    return helper_privates(parts, [
        (parts[name].text, [p for p, _ in _params_of(parts[open_at + 1:close])],
         parts[brace + 1:_match_items(parts, brace)])
        for name, open_at, close, brace in _definitions(parts) if brace >= 0])


#: The shadows a helper is passed for a pointer that is not into a ``@localmem`` array
#: with initcheck's shadows: none.
_NO_SHADOWS = (Gen("0, 0"),)


def _shadows(entry: tuple) -> list:
    """The shadow arguments of a ``known`` entry (its optional fourth item)."""
    return list(entry[3]) if len(entry) > 3 else list(_NO_SHADOWS)


def _where(arg: list, known: dict[str, tuple]) -> tuple[list, str, str, list]:
    """``(offset parts, extent, code, shadow parts)`` of a pointer argument ``arg``."""
    sig = _code(arg)
    head = _tok(sig[0]) if sig else None
    if head is not None and head.kind == "id" and head.text in known:
        off, extent, code = known[head.text][:3]
        if len(sig) == 1:
            return [Gen(off)], extent, code, _shadows(known[head.text])
        if len(sig) > 2 and _is_tok(sig[1], "+", "-") \
                and not any(_is_tok(t, ",", "?", ":", "=", "<", ">", "==", "!=", "&&", "||",
                                    "<<", ">>", "&", "|", "^") for t in sig[2:]):
            return [Gen(f"{off} {sig[1].text} ("), *arg[arg.index(sig[1]) + 1:], Gen(")")], \
                extent, code, _shadows(known[head.text])
    if len(sig) > 3 and _is_tok(sig[0], "&") and isinstance(sig[1], Token) \
            and sig[1].text in known and _is_tok(sig[2], "[") and _is_tok(sig[-1], "]") \
            and _match_items(sig, 2) == len(sig) - 1:
        off, extent, code = known[sig[1].text][:3]
        return [Gen(f"{off} + ("), *sig[3:-1], Gen(")")], extent, code, _shadows(known[sig[1].text])
    return [Gen("0")], "-1", "0", list(_NO_SHADOWS)


def _hidden_args(args: list[list], params: list[tuple[str, bool]], ids: list[list],
                 known: dict[str, tuple], record: str, context: Call) -> list:
    out: list = [Gen(record)]
    for g in ids:
        out += [Gen(", "), *g]
    out.append(context)  # renders with its own leading comma, or as nothing
    for (_, pointer), arg in zip(params, args, strict=False):
        if pointer:
            off, extent, code, shadows = _where(arg, known)
            if isinstance(extent, list):  # a @localmem or private array's size
                out += [Gen(", "), *off, Gen(", "), *extent, Gen(f", {code}")]
            else:
                out += [Gen(", "), *off, Gen(f", {extent}, {code}")]
            out += [Gen(", "), *shadows]
    return out


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
                hidden = _hidden_args(args, helpers[t.text], ids_of(t.line, depth >= 0), known,
                                      record, context_of(depth >= 0))
                out += parts[n:j + 1] + inner + ([Gen(", ")] if args else []) + hidden
                out.append(parts[close])
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


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
    known: dict[str, tuple] = {
        a: ("0", f"pk_dbg[{16 + k}]", str(HELPER_CODE + k)) for a, k in arrays.items()}
    shadowed = shadowed or {}
    for name, (size, code) in (local or {}).items():
        known[name] = ("0", size, str(code))
        owner = (owners or {}).get(name, name)
        if owner in shadowed:
            known[name] += ((Call("helper_shadows", (owner, shadowed[owner]), 0),),)
    for view, origin in views.items():
        if origin in known:
            known[view] = (f"({view} - {origin})", *known[origin][1:])
    epoch = any(shadowed.values())

    def context_of(here: bool) -> Call:
        where = ("loop" if here else "group") if lockstep else "any"
        return Call("helper_context", (where, epoch), 0)

    return _rewrite_calls(parts, helpers, known, ids_of, inside, context_of=context_of)


#: ``helper_local``'s ``kind`` for each of :func:`.initcheck.access_kind`'s answers.
_KINDS = {"read": 0, "write": 1, "update": 2, "atomic": 3, "mark": 4}


def _check_body(body: list, known: dict[str, tuple[str, str, str]],
                slots: dict[str, int]) -> list:
    """A helper body with each subscript of a pointer parameter in ``known`` (its offset,
    extent and fault code) checked, and tracked (``helper_local``: initcheck and racecheck
    where the kernel passed the pointer's shadows; ``slots`` gives each pointer's position)."""
    from .initcheck import access_kind

    ids = [[Gen(f"pk_dbg_g{d}")] for d in range(3)]
    out: list = []
    n = 0
    while n < len(body):
        it = body[n]
        t = _tok(it)
        if t is not None and t.kind == "id" and t.text in known:
            prev = next((o for o in reversed(_code(out))), None)
            j = _next(body, n + 1)
            if j < len(body) and _is_tok(body[j], "[") and not _is_tok(prev, ".", "->", "::"):
                close = _match_items(body, j)
                inner = _check_body(body[j + 1:close], known, slots)
                off, extent, code = known[t.text]
                index = [Gen(f"{off} + ("), *inner, Gen(")")]
                access = [it, body[j], Gen(f"{extent} < 0 ? ("), *inner, Gen(") : "),
                          Call("checked_local", (index, extent, code, t.line, *ids), t.line),
                          Gen(f" - {off}"), body[close]]
                stepped = _stepped(out, body, close)
                kind = _KINDS[access_kind(*stepped) if stepped else
                              access_kind(out, body, close + 1)]
                out.append(Call("helper_local", (kind, access, f"({t.text} - ({off}))",
                                                 slots[t.text], t.line), t.line))
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def _stepped(out: list, body: list, close: int) -> tuple[list, list, int] | None:
    """For the element of ``*(p++, &p[-1])`` (:func:`_step_derefs`) whose subscript closes at
    ``body[close]``: the code before the ``*``, and the body and index after the ``)``, so
    the access is told apart (read, write, update) as ``*p++`` itself."""
    code = _code(out)
    if len(code) < 6 or not _is_tok(code[-1], "&") or not _is_tok(code[-2], ",") \
            or not _is_tok(code[-5], "(") or not _is_tok(code[-6], "*"):
        return None
    k = _next(body, close + 1)
    if k >= len(body) or not _is_tok(body[k], ")"):
        return None
    star = max(i for i, o in enumerate(out) if o is code[-6])
    return out[:star], body, k + 1


def _moves(body: list, name: str, fn: str, filename: str) -> bool:
    """Whether the helper ``fn`` moves its pointer parameter ``name`` (``a++``, ``a += k``,
    ``a = a + k``, ``a = &a[k]``): its offset is then tracked. Pointing it at another
    array (``a = b``) is a :class:`~portakern.errors.KernelSyntaxError` in debug mode."""
    sig = _code(body)
    moved = False
    for k, t in enumerate(sig):
        if not (isinstance(t, Token) and t.kind == "id" and t.text == name):
            continue
        before = sig[k - 1] if k else None
        after = sig[k + 1] if k + 1 < len(sig) else None
        if _is_tok(before, ".", "->", "::"):
            continue
        if _is_tok(after, "++", "--"):
            if k + 2 < len(sig) and _is_tok(sig[k + 2], "["):
                _refuse(fn, name, t, filename, f"subscripts '{name}{sig[k + 1].text}[...]'",
                        f"write '{name}[k]' and move '{name}' in a statement of its own")
            moved = True
        elif _is_tok(before, "++", "--") or _is_tok(after, "+=", "-="):
            moved = True
        elif _is_tok(after, "=") and not _is_tok(before, "*"):
            rhs = []
            depth = 0
            for it in sig[k + 2:]:
                if _is_tok(it, "(", "[", "{"):
                    depth += 1
                elif _is_tok(it, ")", "]", "}"):
                    depth -= 1
                if depth < 0 or (depth == 0 and _is_tok(it, ";", ",")):
                    break
                rhs.append(it)
            if _where(rhs, {name: ("0", "0", "0")})[1] != "0":
                _refuse(fn, name, t, filename, "points it at another array",
                        f"index the other array directly, or give it a pointer variable of "
                        f"its own (const float* q = ...;) and leave '{name}' as passed")
            moved = True
    return moved


def _refuse(fn: str, name: str, at: Token, filename: str, what: str, instead: str) -> None:
    from ..errors import KernelSyntaxError

    raise KernelSyntaxError(
        f"debug mode: helper {fn!r} {what} with its pointer parameter {name!r}, which debug "
        f"mode checks only while it stays in the array it was passed (moved by {name}++, "
        f"{name} += k, {name} = {name} + k) or as a pointer variable declared from it; "
        f"{instead}", filename, at.line, at.col)


def _step_derefs(body: list, pointers: set[str]) -> list:
    """``*p++`` as ``*(p++, &p[-1])`` (and ``*p--``, ``*++p``, ``*--p`` alike), so the
    element's subscript is checked once ``p`` has moved."""
    from ..syntax.parts import is_unary
    from .debug_views import after_header

    out: list = []
    n = 0
    while n < len(body):
        it = body[n]
        prev = next((o for o in reversed(_code(out))), None)
        if _is_tok(it, "*") and (prev is None or is_unary([prev, it], 1)
                                 or after_header(_code(out))):
            j = _next(body, n + 1)
            k = _next(body, j + 1)
            p = op = None
            if j < len(body) and k < len(body) and isinstance(body[j], Token) \
                    and body[j].text in pointers and _is_tok(body[k], "++", "--"):
                p, op, post = body[j], body[k], True
            elif j < len(body) and k < len(body) and _is_tok(body[j], "++", "--") \
                    and isinstance(body[k], Token) and body[k].text in pointers:
                p, op, post = body[k], body[j], False
            if p is not None and op is not None:
                nxt = _next(body, k + 1)
                if not (nxt < len(body) and _is_tok(body[nxt], "[", "(", ".", "->")):
                    def tk(text: str, kind: str = "punct", at: Token = p) -> Token:
                        return Token(kind, text, at.line, at.col)

                    step = [p, op] if post else [op, p]
                    back = ([tk("-"), tk("1", "num")] if op.text == "++" else [tk("1", "num")]) \
                        if post else [tk("0", "num")]
                    out += [it, tk("("), *step, tk(","), tk("&"), p, tk("["), *back, tk("]"),
                            tk(")")]
                    n = k + 1
                    continue
        out.append(it)
        n += 1
    return out


def check_helpers(parts: list, filename: str = "<kernel>") -> list:
    """The lowered helper ``parts`` for debug mode: hidden parameters on every helper
    function, its pointer parameters' subscripts checked, its calls passing them on."""
    helpers = helper_pointers(parts)
    if not helpers:
        return parts
    _no_function_pointers(parts, helpers, filename)
    privates = helper_private_arrays(parts)
    out: list = []
    last = 0
    for name, open_at, close, brace in _definitions(parts):
        if parts[name].text not in helpers:
            continue
        params = _params_of(parts[open_at + 1:close])
        positions = tuple(k for k, (_, ptr) in enumerate(params) if ptr)
        end = _match_items(parts, brace) if brace >= 0 else close
        body = parts[brace + 1:end] if brace >= 0 else []
        fn = parts[name].text
        checked = {p: k for k, (p, ptr) in enumerate(params) if ptr and p}
        moved = {p for p in checked if _moves(body, p, fn, filename)}
        inner = parts[open_at + 1:close]
        if params:
            inner = [*inner, Gen(", ")]
        elif _code(inner):  # (void)
            inner = []
        hidden = Call("debug_helper_params", (positions,), parts[name].line)
        out += _outside(parts[last:name], helpers) + parts[name:open_at + 1] + inner + [hidden]
        if brace < 0:
            out += parts[close:close + 1]
            last = close + 1
            continue
        known = {p: (f"(pk_dbg_{k}_o + ({p} - pk_dbg_{k}_a))" if p in moved else
                     f"pk_dbg_{k}_o", f"pk_dbg_{k}_n", f"pk_dbg_{k}_c",
                     (Gen(f"pk_dbg_{k}_w, pk_dbg_{k}_r"),))
                 for p, k in checked.items()}
        from .debug_views import rewrite_views, views_of  # *(a + i) and *a: a[i] and a[0]

        sig = [t for t in body if isinstance(t, Token) and t.kind not in _BLANK]
        seen = views_of(sig, set(checked), {p for p, _ in params})
        for view, origin in seen.items():
            off = known[origin][0]
            known[view] = (f"({off} + ({view} - {origin}))", *known[origin][1:])
        body = _step_derefs(body, set(checked) | set(seen))
        body = rewrite_views(body, set(checked), seen)
        rewritten = _rewrite_calls(
            _check_body(body, {p: known[p][:3] for p in checked}, checked), helpers, known,
            lambda line, inside: [[Gen(f"pk_dbg_g{d}")] for d in range(3)], True,
            context_of=lambda inside: Call("helper_context", ("helper", True), 0))
        from .debug_helper_private import check_private_in

        rewritten = check_private_in(parts, fn, rewritten, [p for p, _ in params], privates)
        origins = [Call("debug_origin", (p, checked[p]), parts[name].line) for p in moved]
        out += parts[close:brace + 1] + origins + rewritten + [parts[end]]
        last = end + 1
    return out + _outside(parts[last:], helpers)


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


def _outside(parts: list, helpers: dict[str, list[tuple[str, bool]]]) -> list:
    """Code outside the helper functions (a struct's method bodies) with each helper call
    passing a null record and unknown extents: no fault record is at hand there, so the
    helper's subscripts of those pointers run unchecked."""
    return _rewrite_calls(parts, helpers, {}, lambda line, inside: [[Gen("-1")]] * 3, True,
                          "0")
