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
bookkeeping.

A race is recorded with code ``-1 - (16 * k + 14)`` for the ``k``-th array, the element,
the array's size, the line and work-item of the access that found it, and in the
record's ``[12]`` .. ``[15]`` the other access's line, its work-item's local linear index,
whether it wrote and whether this one did (:func:`portakern.launch.debug.check`).
"""

from __future__ import annotations

import re

from ..syntax.language import Token
from ..syntax.parts import BARRIER, Call, Gen, item_step

__all__ = ["FIELDS_NAME", "RACE_DIMENSION", "RACE_FIELDS", "bump_epochs", "group_race_shadows",
           "quiet_reads"]

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


def quiet_reads(parts: list) -> list:
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
    out: list = []
    start, depth, straight = 0, 0, True
    for n in range(len(parts) + 1):
        it = parts[n] if n < len(parts) else None
        if it is not None and not (isinstance(it, Call) and it.macro == BARRIER):
            step = item_step(it)
            depth += step
            if not step and depth == 0 and not _straight(it):
                straight = False
            continue
        stretch = parts[start:n]
        written: set = set()
        _writes(stretch, written)
        for p in stretch:
            if straight and isinstance(p, Call) and p.macro == "race_read" \
                    and p.args[0] not in written:
                p = Call("local_read", p.args[:7], p.line, p.col)
            out.append(p)
        if it is not None:
            out.append(it)
        start, straight = n + 1, True
    return out
