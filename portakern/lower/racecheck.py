"""Debug mode's racecheck: two work-items on one ``@localmem`` element between two barriers.

DESIGN section 2a: two work-items of a group touching one ``@localmem`` element between
the same two barriers, at least one of them writing, is a fault (``KernelFaultError``
naming the array, the element, both lines and both work-items). Atomics are excepted.

It rides on initcheck's rewriting (:func:`portakern.lower.initcheck.check_reads` with
``race=True``): a plain read, write or compound update of an element becomes
``race_read``, ``race_write`` or ``race_update``, which do initcheck's work and then
consult the element's race shadow (declared with initcheck's by
:func:`portakern.lower.initcheck.shadows`: ``pk_rcs_<name>``, seven ints an element: the epoch
it was last touched in, its last writer and line, and up to two distinct readers and
their lines, each a work-item's local linear index). The epoch (``pk_rc_epoch``) counts
the barriers the group has passed; :func:`bump_epochs` adds ``race_barrier`` after each
one, so a shadow from an earlier epoch reads as empty and nothing has to be cleared.
An atomic, or an access that may be written through (``&s[i]``, a call's argument), is
left to initcheck alone. A helper function given the array checks its own accesses
(:mod:`portakern.lower.debug_helpers`), so a call of one counts as a write here.

On the native path the group's work-items run one after another in loops, so the
check is exact. On OpenCL the shadows are ``@localmem`` arrays of their own, cleared
with initcheck's (``race_clear``), and the epoch is each work-item's count of barriers.

Between two barriers where no work-item writes an array (decided from the lowered tree by
:func:`quiet_reads`), its reads cannot race: they are left to initcheck alone, with no
bookkeeping. Nor can the writes of an array that is only written there, each work-item to
its own element: every write has the same subscripts, and those are the work-item's local
id, one axis a dimension, every axis of the group used (``tile[li][lj]`` with
``auto [li, lj] = @index(Local, NTuple)``, ``s[l]`` with ``l = @index(Local, Linear)`` in
one dimension), in variables nothing else assigns, increments, takes the address of or
passes alone to a call. Those writes keep initcheck's mark and lose the race record
(the tile loads of a tiled matmul: 87% of its debug-mode time on the native path).

A race is recorded with code ``-1 - (16 * k + 14)`` for the ``k``-th array, the element,
the array's size, the line and work-item of the access that found it, and in the
record's ``[12]`` .. ``[15]`` the other access's line, its work-item's local linear index,
whether it wrote and whether this one did (:func:`portakern.launch.debug.check`).
"""

from __future__ import annotations

import re

from ..syntax.language import Token
from ..syntax.parts import BARRIER, Call, Gen, code_index, item_step

__all__ = ["FIELDS_NAME", "RACE_DIMENSION", "RACE_FIELDS", "bump_epochs", "group_race_shadows",
           "local_id_variables", "quiet_reads"]

#: The dimension field of a fault code that marks a race.
RACE_DIMENSION = 14
#: The ints of one element's race shadow on the native path and OpenCL.
RACE_FIELDS = 7
#: The constant that sizes the race shadows' last dimension: each target's debug accessors
#: define it, and its ``buffer_sizes`` name its value (OpenCL :data:`RACE_FIELDS`; CUDA and
#: Metal 2, whose threads run at once: templates/cuda/macros.j2).
FIELDS_NAME = "PK_RC_FIELDS"


def group_race_shadows(have: dict[str, int], localmem: list) -> tuple[list, list]:
    """For a target whose work-items run at once (OpenCL, CUDA, Metal): the code that clears
    the race shadows (to run before initcheck's clear and its barrier), and their
    ``@localmem`` declarations (``int pk_rcs_<name>``, one row of :data:`FIELDS_NAME` ints
    per element)."""
    decls = {d[0].args[1]: d[0] for d in localmem
             if d and isinstance(d[0], Call) and d[0].macro == "localmem"}
    names = tuple(n for n in have if n in decls)
    extra = [[Call("localmem", ([Token("id", "int", 0, 0)], f"pk_rcs_{n}",
                                [*decls[n].args[2], Gen(f"[{FIELDS_NAME}]")]), decls[n].line)]
             for n in names]
    return ([Call("race_clear", (names,), 0)] if names else []), extra


def bump_epochs(parts: list) -> list:
    """``parts`` with ``race_barrier`` after each barrier: the epoch moves on."""
    out: list = []
    for it in parts:
        out.append(it)
        if isinstance(it, Call) and it.macro == BARRIER:
            out.append(Call("race_barrier", (), it.line))
    return out


#: Group-level words after which the code between two barriers may not run straight
#: through (a branch, a loop, a jump): such a stretch keeps every read's bookkeeping.
_NOT_STRAIGHT = frozenset({"if", "else", "for", "while", "do", "switch", "case", "default",
                           "break", "continue", "return", "goto"})
_GEN_WORDS = re.compile(r"[A-Za-z_]\w*|[{}]")


def _writes(parts: object, into: set) -> None:
    """Add to ``into`` the arrays that ``parts`` racechecks a write or update of."""
    if isinstance(parts, Call):
        if parts.macro in ("race_write", "race_update") or (
                parts.macro == "helper_shadows" and parts.args[1]):  # a helper may write it
            into.add(parts.args[0])
        for a in parts.args:
            _writes(a, into)
    elif isinstance(parts, (list, tuple)):
        for it in parts:
            _writes(it, into)


def _straight(it: object) -> bool:
    """Whether a group-level part (outside the work-item loops) keeps control flow straight."""
    if isinstance(it, Call):
        return True
    if isinstance(it, Gen):
        return not any(w in ("{", "}") or w in _NOT_STRAIGHT for w in _GEN_WORDS.findall(it.text))
    text = getattr(it, "text", "")
    return text not in ("{", "}") and text not in _NOT_STRAIGHT


_ASSIGN = frozenset({"=", "<<=", ">>="})
_COMPOUND = frozenset({"+", "-", "*", "/", "%", "&", "|", "^"})


def _code_at(items: list | tuple, n: int, step: int) -> int:
    """The index of the next item of code from ``n`` in direction ``step`` (-1 past the end)."""
    return code_index(items, n + step, step)


def _code(items: list | tuple, n: int, step: int) -> object | None:
    k = _code_at(items, n, step) if n >= 0 else -1
    return items[k] if k >= 0 else None


def _text(it: object) -> str | None:
    """A token's text; a generated part's, stripped (the lowering writes `` = `` and ``, ``)."""
    if isinstance(it, Token):
        return it.text
    return it.text.strip() if isinstance(it, Gen) else None


def _local_id_value(items: list | tuple, n: int, ndim: int) -> int | None:
    """The axis of ``v = @index(Local, ...)`` when ``items[n]`` is that ``v``, else None."""
    k = n + 1
    seen = []
    while k < len(items) and len(seen) < 5:
        it = items[k]
        k += 1
        if isinstance(it, Token) and it.kind in ("ws", "comment"):
            continue
        if isinstance(it, Gen) and it.text.strip() in ("", "(", ")"):
            continue  # the 1-d Linear form is ( local_id(0) )
        seen.append(it)
        if len(seen) == 3:
            break
    if len(seen) < 3 or _text(seen[0]) != "=" or _text(seen[2]) not in (",", ";"):
        return None
    value = seen[1]
    if not (isinstance(value, Call) and value.macro == "local_id" and value.args
            and isinstance(value.args[0], int) and 0 <= value.args[0] < max(ndim, 1)):
        return None
    return value.args[0]


def _walk_lists(parts: object):
    if isinstance(parts, (list, tuple)):
        yield parts
        for it in parts:
            yield from _walk_lists(it)
    elif isinstance(parts, Call):
        yield from _walk_lists(parts.args)


def local_id_variables(parts: list, ndim: int) -> dict[str, int]:
    """The variables that hold the work-item's local id on one axis wherever they are read:
    name -> axis. Each is declared ``v = @index(Local, ...)`` (the same axis every time:
    lockstep repeats a declaration in each work-item loop) and otherwise only read, never
    assigned, incremented, addressed, bound to a reference, declared again (``long v(0)``
    in a block) or passed alone to a call (which might take it by reference)."""
    axes: dict[str, set] = {}
    spoilt: set = set()
    for items in _walk_lists(parts):
        for n, it in enumerate(items):
            if not (isinstance(it, Token) and it.kind == "id"):
                continue
            at_prev, at_next = _code_at(items, n, -1), _code_at(items, n, 1)
            prev, nxt = _code(items, n, -1), _code(items, n, 1)
            if _text(prev) in (".", "->", "::"):
                continue  # a member or a qualified name, not the variable
            axis = _local_id_value(items, n, ndim)
            if axis is not None:
                axes.setdefault(it.text, set()).add(axis)
                continue
            after = _code(items, at_next, 1)
            # T& r = v; (r would write v): '&', a name, '=' before it
            bound = _text(prev) == "=" and _text(_code(items, _code_at(items, at_prev, -1), -1)) \
                in ("&", "&&")
            # long v(0); long v{0}; for (long v : r): another v, or this one initialised
            if _text(nxt) in _ASSIGN or _text(nxt) in ("++", "--", "(", "{", ":") or bound \
                    or _text(prev) in ("++", "--", "&") \
                    or (_text(nxt) in _COMPOUND and _text(after) == "=") \
                    or (_text(prev) in ("(", ",", "[") and _text(nxt) in (")", ",", "]")):
                spoilt.add(it.text)
    return {v: next(iter(a)) for v, a in axes.items() if len(a) == 1 and v not in spoilt}


def _mentions(parts: object, name: str, skip: set) -> bool:
    """Whether ``parts`` names the array ``name`` outside the calls in ``skip``."""
    if isinstance(parts, Call):
        if id(parts) in skip:
            return False
        return (bool(parts.args) and parts.args[0] == name) \
            or any(_mentions(a, name, skip) for a in parts.args)
    if isinstance(parts, (list, tuple)):
        for n, it in enumerate(parts):
            if (isinstance(it, Token) and it.kind == "id" and it.text == name
                    and _text(_code(parts, n, -1)) not in (".", "->", "::")) \
                    or getattr(it, "array", None) == name or _mentions(it, name, skip):
                return True
    return False


def _own_subscripts(call: Call, ids: dict[str, int]) -> tuple | None:
    """Per dimension of a ``race_write``'s access, the local-id axis (or the constant) it is
    subscripted with; None where a subscript is anything else."""
    key = []
    for it in call.args[1]:
        if not (isinstance(it, Call) and it.macro == "checked_local"):
            continue
        index = [t for t in it.args[0]
                 if not (isinstance(t, Token) and t.kind in ("ws", "comment"))]
        if len(index) != 1 or not isinstance(index[0], Token):
            return None
        if index[0].kind == "id" and index[0].text in ids:
            key.append(("axis", ids[index[0].text]))
        elif index[0].kind == "num":
            key.append(("num", index[0].text))
        else:
            return None
    return tuple(key) or None


def _own_writes(stretch: list, ids: dict[str, int], ndim: int) -> set:
    """The arrays that ``stretch`` only writes, each work-item its own element."""
    writes: dict[str, list] = {}
    for it in stretch:
        if isinstance(it, Call) and it.macro == "race_write":
            writes.setdefault(it.args[0], []).append(it)
    own = set()
    for name, calls in writes.items():
        keys = {_own_subscripts(c, ids) for c in calls}
        if len(keys) != 1 or None in keys:
            continue
        axes = [a for kind, a in next(iter(keys)) if kind == "axis"]
        if sorted(axes) != list(range(max(ndim, 1))):
            continue  # an axis left out: items differing on it share the element
        if not _mentions(stretch, name, {id(c) for c in calls}):
            own.add(name)
    return own


def quiet_reads(parts: list, ndim: int = 1) -> list:
    """On the native path (work-items in loops, :mod:`portakern.lower.lockstep`): ``parts``
    with each ``race_read`` of an array that nothing between the same two barriers writes
    turned into initcheck's ``local_read``.

    A race needs a write between the two barriers, so such a read has nothing to record.
    Only a stretch that control flow runs straight through is decided: from the start of
    the group's code or a barrier to the next barrier or the end, with no group-level
    brace, branch, loop or jump (the work-item loops in between are whole; inside them
    anything goes). Any other stretch, and a kernel with a ``goto``, keeps every read's
    bookkeeping.
    """
    if any(getattr(it, "text", None) == "goto" for it in parts):
        return parts
    ids = local_id_variables(parts, ndim)
    stretches: list[tuple[int, int, bool]] = []  # (start, end, straight); a barrier at end
    start, depth, straight = 0, 0, True
    for n in range(len(parts) + 1):
        it = parts[n] if n < len(parts) else None
        if it is not None and not (isinstance(it, Call) and it.macro == BARRIER):
            step = item_step(it)
            depth += step
            if not step and depth == 0 and not _straight(it):
                straight = False
            continue
        stretches.append((start, n, straight))
        start, straight = n + 1, True
    # Stretches with control flow may run between the same two barriers in any mix (a
    # loop's tail with its head): their writes are decided over all of them at once.
    tangled = [p for a, b, ok in stretches if not ok for p in parts[a:b]]
    own_tangled = _own_writes(tangled, ids, ndim)
    out: list = []
    for a, b, ok in stretches:
        stretch = parts[a:b]
        written: set = set()
        _writes(stretch, written)
        own = _own_writes(stretch, ids, ndim) if ok else own_tangled
        for p in stretch:
            if ok and isinstance(p, Call) and p.macro == "race_read" \
                    and p.args[0] not in written:
                p = Call("local_read", p.args[:7], p.line, p.col)
            elif isinstance(p, Call) and p.macro == "race_write" and p.args[0] in own:
                p = Call("local_write", p.args[:7], p.line, p.col)
            out.append(p)
        if b < len(parts):
            out.append(parts[b])
    return out
