"""Debug mode's initcheck on the native path: a read of ``@localmem`` that nothing wrote.

DESIGN section 2a: a read of a ``@localmem`` element that no work-item of the group has
written since the group started is a fault (``KernelFaultError`` naming the array, the
element, the line and the work-item). The commonest case is the masked work-item: a
group that reaches past the ndrange has items that never run, so the slots they would
have written (a histogram's bins, a matmul's tile) hold what the last group left.

On the native path a group runs once, its work-items in loops (the lockstep
lowering), so each ``@localmem`` array gets a shadow of one byte per element, declared
and cleared where the group starts (:func:`shadows`). :func:`check_reads` then rewrites
each access of the array (already bounds-checked by
:func:`~portakern.lower.subscripts.check_subscripts`):

* an assignment's target (``s[i] = v``) marks its element written (``local_write``);
* ``s[i] += v``, ``s[i]++``, ``++s[i]`` check the element, then mark it
  (``local_update``);
* a read (``v = s[i]``) checks it (``local_read``): a fault records code
  ``-1 - (16 * k + 15)`` for the ``k``-th array, the flat element and the array's size;
* an atomic on the element (``@atomic_add(&s[i], 1)``) checks it, then marks it;
* anything else (``&s[i]``, a call's argument, which may be a reference, the
  initializer of a reference ``T& r = s[i];``, ``s[i].x``) marks the element written
  and checks nothing, so the check never reports what may have been written; but
  ``&s[i]`` given to a helper that is passed ``s``'s shadows (:class:`HandedOn`) marks
  nothing: the helper's own accesses are what counts.

A helper function given the array (or a pointer into it) is passed its shadows
(``helper_shadows``) and does the same with its own accesses
(:mod:`portakern.lower.debug_helpers`); a work-item loop that calls one runs one item
after another.

The work-items of a run between barriers go one after another here, so a read of an
element that a later item of the same run writes is reported too (a race on a GPU).
An array whose size is not plain text of the source (a lowered construct) is left out.

Once every element of an array is marked (checked at each barrier, ``initcheck_seal``:
a group never clears its shadows, so that holds for the rest of the group), no read of it
can fault. :func:`fast_runs` gives each run that only reads ``@localmem`` a second copy
for that case: its reads plain, the loop vectorised as without debug mode.

On OpenCL (PoCL) the shadows are ``@localmem`` arrays of their own
(:func:`group_shadows`), cleared by the group's work-items at the top of the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..syntax.language import Token
from ..syntax.parts import BARRIER, Call, Gen, code_index, item_step, walk_parts
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from .debug_rows import FlatRef
from .racecheck import RACE_DIMENSION

__all__ = ["DEBUG_SIMD", "INITCHECK_DIMENSION", "HandedOn", "access_kind", "check_reads",
           "fast_runs", "group_shadows", "seal_barriers", "shadows"]

@dataclass(frozen=True)
class HandedOn(Token):
    """The ``&`` of a helper's argument ``&s[e]`` whose helper is given ``s``'s shadows
    (:mod:`portakern.lower.debug_helpers`): the helper's own accesses through it are
    checked, so the call marks nothing (a read in the helper of an unwritten element is
    reported); the subscript is still bounds-checked."""


#: The dimension field of a fault code that marks an uninitialised read.
INITCHECK_DIMENSION = 15
#: ``items_begin``'s ``simd`` in debug mode for a run that could be vectorised without it:
#: :func:`fast_runs` decides once the checks are in.
DEBUG_SIMD = "if its checks allow"
#: Debug mode's checks that leave a run's work-items free to run as SIMD lanes: a bounds
#: check only reads (its fault path is a call, which the compiler does not vectorise).
_LANE_CHECKS = frozenset({"checked_local", "local_read"})
_DEBUG_CALLS = frozenset({"checked", "checked_local", "local_read", "local_write",
                          "local_update", "race_read", "race_write", "race_update",
                          "helper_shadows"})
_SPLIT_ASSIGN = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
_ASSIGN = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="})


def _text(dim: list) -> str | None:
    out = []
    for it in dim:
        if isinstance(it, Token):
            out.append(it.text)
        elif isinstance(it, Gen):
            out.append(it.text)
        else:
            return None
    return " ".join(out)


def shadows(local_dims: dict[str, list[list]], *, race: bool = False
            ) -> tuple[list, dict[str, int]]:
    """The shadow declarations (parts for the start of the group's code), and the
    arrays that have one, with their position among the ``@localmem`` arrays; with
    ``race``, racecheck's shadows and epoch too (:mod:`portakern.lower.racecheck`)."""
    decls: list = [Gen("int pk_rc_epoch = 1;\n")] if race else []
    have: dict[str, int] = {}
    for k, (name, dims) in enumerate(local_dims.items()):
        texts = [_text(d) for d in dims]
        if any(t is None for t in texts):
            continue
        size = "".join(f"[{t}]" for t in texts)
        decls.append(Gen(f"unsigned char pk_w_{name}{size}; "
                         f"memset(pk_w_{name}, 0, sizeof pk_w_{name}); "
                         f"bool pk_wf_{name} = false;\n"))
        if race:
            decls.append(Gen(f"pk_race pk_rcs_{name}{size}; "
                             f"memset(pk_rcs_{name}, 0, sizeof pk_rcs_{name});\n"))
        have[name] = k
    return decls, have


def group_shadows(local_dims: dict[str, list[list]], localmem: list
                  ) -> tuple[list, dict[str, int], list]:
    """For a target whose work-items run at once (OpenCL): the code that clears the
    shadows (``initcheck_clear``: every work-item clears its share, then a barrier, at
    the top of the kernel, where every work-item is), the arrays that have one, and
    the shadows' ``@localmem`` declarations (``pk_w_<name>``, one ``unsigned char`` each)."""
    decls = {d[0].args[1]: d[0] for d in localmem
             if d and isinstance(d[0], Call) and d[0].macro == "localmem"}
    have = {name: k for k, name in enumerate(local_dims) if name in decls}
    extra = [[Call("localmem", ([Token("id", "unsigned char", 0, 0)], f"pk_w_{name}",
                                decls[name].args[2]), decls[name].line)] for name in have]
    clear = [Call("initcheck_clear", (tuple(have),), 0)] if have else []
    return clear, have, extra


def _item_ids(ndim: int, line: int, inside: bool) -> list[list]:
    if not inside:
        return [[Gen("-1")]] * 3
    ids: list[list] = [[Call("global_id", (ndim - 1 - d,), line)] for d in range(ndim)]
    return ids + [[Gen("0")]] * (3 - ndim)


def _code_neighbour(parts: list, n: int, step: int) -> object | None:
    k = code_index(parts, n, step)
    return parts[k] if k >= 0 else None


_NOT_CALLS = frozenset({"if", "while", "for", "switch", "return", "sizeof"})


def _in_call_argument(out: list) -> bool:
    """Whether the code in ``out`` ends inside a call's parentheses, at an argument."""
    depth = 0
    for k in range(len(out) - 1, -1, -1):
        it = out[k]
        if isinstance(it, Token) and it.kind == "punct":
            if it.text in ")]":
                depth += 1
            elif it.text in "([":
                if depth == 0:
                    if it.text == "[":
                        return False
                    before = _code_neighbour(out, k - 1, -1)
                    if isinstance(before, Token):
                        return before.kind == "id" and before.text not in _NOT_CALLS
                    return isinstance(before, (Call, Gen))
                depth -= 1
            elif it.text in (";", "{", "}") and depth == 0:
                return False
    return False


def _atomic_target(out: list) -> bool:
    """Whether ``out`` ends with ``<atomic>(&``: the first argument of an atomic."""
    amp = _code_neighbour(out, len(out) - 1, -1)
    k = len(out) - 1
    while k >= 0 and out[k] is not amp:
        k -= 1
    paren = _code_neighbour(out, k - 1, -1)
    if not _is_tok(paren, "("):
        return False
    while k >= 0 and out[k] is not paren:
        k -= 1
    name = _code_neighbour(out, k - 1, -1)
    text = name.text if isinstance(name, (Gen, Token)) else ""
    return "atomic_" in text.strip().rsplit(None, 1)[-1] if text.strip() else False


def access_kind(out: list, parts: list, m: int) -> str:
    """What the access ending just before ``parts[m]`` does to its element, ``out`` being
    the code before it: ``"write"`` (``s[i] = v``), ``"update"`` (``s[i] += v``,
    ``s[i]++``), ``"atomic"`` (``@atomic_add(&s[i], 1)``), ``"mark"`` (``&s[i]``, a call's
    argument, ``T& r = s[i];``, ``s[i].x``: it may be written through) or ``"read"``."""
    prev = _code_neighbour(out, len(out) - 1, -1)
    nxt = _code_neighbour(parts, m, 1)
    if _is_tok(nxt, *_SPLIT_ASSIGN):  # ``+=`` split into ``+`` ``=`` by an earlier pass
        k = m
        while parts[k] is not nxt:
            k += 1
        if k + 1 < len(parts) and _is_tok(parts[k + 1], "=") \
                and not (k + 2 < len(parts) and _is_tok(parts[k + 2], "=")):
            nxt = Token("punct", nxt.text + "=", nxt.line, nxt.col)
    if isinstance(nxt, Token) and nxt.kind == "punct" and nxt.text == "=":
        return "write"
    if (isinstance(nxt, Token) and nxt.kind == "punct"
            and (nxt.text in _ASSIGN or nxt.text in ("++", "--"))) or _is_tok(prev, "++", "--"):
        return "update"
    if _is_tok(prev, "&") and _atomic_target(out):
        return "atomic"
    if _is_tok(prev, "&") or _is_tok(nxt, ".", "[") or _in_call_argument(out) \
            or (_is_tok(prev, "=") and _is_tok(nxt, ";", ",") and _binds_reference(out)) \
            or _address_of_parenthesised(out, parts, m):
        return "mark"
    return "read"


def _address_of_parenthesised(out: list, parts: list, m: int) -> bool:
    """Whether the access is ``&(s[i])`` (in any number of parentheses): the lockstep
    lowering's spelling of a reference ``T& r = s[i];`` as a pointer."""
    b, a = len(out) - 1, m
    while True:
        prev, nxt = _code_neighbour(out, b, -1), _code_neighbour(parts, a, 1)
        if not (_is_tok(prev, "(") and _is_tok(nxt, ")")):
            return _is_tok(prev, "&") and b < len(out) - 1
        while out[b] is not prev:
            b -= 1
        while parts[a] is not nxt:
            a += 1
        b, a = b - 1, a + 1


def _binds_reference(out: list) -> bool:
    """Whether ``out`` ends with ``T& r =``: the access initialises a reference, through
    which the element may be written (``float& r = t[e]; r = v;``), so it is no read."""
    k = len(out) - 1
    seen: list[object] = []
    while k >= 0 and len(seen) < 4:
        it = out[k]
        if not (isinstance(it, Token) and it.kind in ("ws", "comment")) \
                and not (isinstance(it, Gen) and not it.text.strip()):
            seen.append(it)
        k -= 1
    if len(seen) < 4:
        return False
    _eq, name, amp, before = seen
    return (isinstance(name, Token) and name.kind == "id" and _is_tok(amp, "&")
            and ((isinstance(before, Token) and before.kind == "id"
                  and before.text not in _NOT_CALLS) or _is_tok(before, ">")))


def _is_end(it: object) -> bool:
    return _is_tok(it, ";") or (isinstance(it, Gen) and it.text.strip() == ";")


def _hoisted_references(parts: list) -> set[str]:
    """The references a lowering declared apart from their value (``float& r;``, hoisted
    above a kernel's bounds check, ``r = t[e];`` below it binding the reference)."""
    code = [it for it in parts if _code_neighbour([it], 0, 1) is not None]
    return {code[k].text for k in range(2, len(code) - 1)
            if isinstance(code[k], Token) and code[k].kind == "id" and _is_tok(code[k - 1], "&")
            and isinstance(code[k - 2], Token) and code[k - 2].kind == "id"
            and _is_end(code[k + 1])}


def _binds_hoisted(out: list, parts: list, m: int, hoisted: set[str]) -> bool:
    """Whether the access is the value of ``r = t[e];``, the binding of a hoisted reference
    ``r`` (its first assignment; a later ``r = t[e]`` writes through it, a read of ``t``)."""
    if not hoisted or not _is_end(_code_neighbour(parts, m, 1)):
        return False
    eq = _code_neighbour(out, len(out) - 1, -1)
    if not (_is_tok(eq, "=") or (isinstance(eq, Gen) and eq.text.strip() == "=")):
        return False
    k = len(out) - 1
    while out[k] is not eq:
        k -= 1
    name = _code_neighbour(out, k - 1, -1)
    if isinstance(name, Token) and name.kind == "id" and name.text in hoisted:
        hoisted.discard(name.text)
        return True
    return False


def check_reads(parts: list, have: dict[str, int], dims: dict[str, list[list]], ndim: int,
                *, inside_item: bool = True, race: frozenset[str] = frozenset()) -> list:
    """``parts`` (a bounds-checked body) with each access of an array in ``have`` tracked;
    a plain read, write or update of an array in ``race`` is racechecked as well
    (``race_read``, ``race_write``, ``race_update``: :mod:`portakern.lower.racecheck`)."""
    if not have:
        return parts
    out: list = []
    hoisted = _hoisted_references(parts)
    depth = 0 if inside_item else -1
    n = 0
    while n < len(parts):
        it = parts[n]
        depth += item_step(it)
        flat = isinstance(it, FlatRef)  # (&s[0][0])[e]: flat element e (debug_rows)
        name = it.array if flat else getattr(it, "text", None)
        if not (isinstance(it, Token) and it.kind == "id" and name in have):
            out.append(it)
            n += 1
            continue
        prev = _code_neighbour(out, len(out) - 1, -1)
        if _is_tok(prev, ".", "->", "::"):
            out.append(it)
            n += 1
            continue
        access = [it]
        m = n + 1
        want = 1 if flat else len(dims[name])
        for _ in range(want):
            j = m
            while j < len(parts) and isinstance(parts[j], Token) \
                    and parts[j].kind in ("ws", "comment"):
                j += 1
            if j >= len(parts) or not _is_tok(parts[j], "["):
                break
            close = _match_items(parts, j)
            access += parts[m:close + 1]
            m = close + 1
            want -= 1
        if want:  # the array itself or a row of it (a pointer): not tracked
            out.append(it)
            n += 1
            continue
        kind = access_kind(out, parts, m)
        if kind == "mark" and isinstance(prev, HandedOn):  # the helper checks its accesses
            out += access
            n = m
            continue
        if kind == "read" and _binds_hoisted(out, parts, m, hoisted):
            kind = "mark"  # `T& r;` hoisted above the bounds check, bound here: `r = t[e];`
        plain = name in race
        macro = {"write": "race_write" if plain else "local_write",
                 "update": "race_update" if plain else "local_update",
                 "read": "race_read" if plain else "local_read",
                 "atomic": "local_update",  # an atomic reads the element, then writes it
                 "mark": "local_write"}[kind]  # may be written through: marked, not checked
        code = -1 - (16 * have[name] + INITCHECK_DIMENSION)
        ids = _item_ids(ndim, it.line, depth >= 0)
        extra: tuple = ()
        if macro.startswith("race_"):
            extra = (code + INITCHECK_DIMENSION - RACE_DIMENSION, int(depth >= 0))
        out.append(Call(macro, (name, access, code, it.line, *ids, *extra), it.line))
        n = m
    return out


def seal_barriers(parts: list, have: dict[str, int]) -> list:
    """``parts`` with ``initcheck_seal`` after each barrier: an array whose shadow is all
    marked is flagged (``pk_wf_<name>``), and its reads need no check from then on."""
    if not have:
        return parts
    out: list = []
    for it in parts:
        out.append(it)
        if isinstance(it, Call) and it.macro == BARRIER:
            out.append(Call("initcheck_seal", (tuple(have),), it.line))
    return out


def _plain(parts: list) -> list:
    """``parts`` with each ``local_read`` the plain (still bounds-checked) element."""
    out: list = []
    for it in parts:
        if isinstance(it, Call) and it.macro == "local_read":
            out += [Gen("("), *_plain(it.args[1]), Gen(")")]
        elif isinstance(it, Call):
            out.append(Call(it.macro, tuple(_plain(a) if isinstance(a, list) else a
                                            for a in it.args), it.line, it.col))
        else:
            out.append(it)
    return out


def _with_simd(begin: Call, simd: bool) -> Call:
    args = list(begin.args)
    args[2] = simd
    if not simd and len(args) > 4:
        args[4] = 0  # the rows are unrolled only for a vectorised run
    return Call(begin.macro, tuple(args), begin.line, begin.col)


def fast_runs(parts: list) -> list:
    """On the native path, once the checks are in: each work-item loop that debug mode kept
    from ``omp simd`` (``items_begin``'s ``simd`` is :data:`DEBUG_SIMD`) gets it back if its
    only checks are bounds checks of ``@localmem`` and private arrays; one that also reads
    ``@localmem`` runs as two copies, ``if (pk_wf_a && ...) {fast} else {checked}``: the
    fast one, for when every element of the arrays it reads is written (no read of them can
    fault), reads them plainly and is vectorised; the other keeps every check, one item
    after another."""
    out: list = []
    n = 0
    while n < len(parts):
        it = parts[n]
        if not (isinstance(it, Call) and it.macro == "items_begin" and len(it.args) > 2
                and it.args[2] == DEBUG_SIMD):
            out.append(it)
            n += 1
            continue
        end, depth = n + 1, 1
        while end < len(parts):
            p = parts[end]
            depth += item_step(p)
            if depth == 0:
                break
            end += 1
        body = parts[n + 1:end + 1]  # through items_end
        calls = [c for c in walk_parts(body) if isinstance(c, Call) and c.macro in _DEBUG_CALLS]
        reads = sorted({c.args[0] for c in calls if c.macro == "local_read"})
        if any(c.macro not in _LANE_CHECKS for c in calls):
            out += [_with_simd(it, False), *body]
        elif not reads:
            out += [_with_simd(it, True), *body]
        else:
            flags = " && ".join(f"pk_wf_{r}" for r in reads)
            out += [Gen(f"if ({flags}) {{ "), _with_simd(it, True), *_plain(body),
                    Gen(" } else { "), _with_simd(it, False), *body, Gen(" }")]
        n = end + 1
    return out
