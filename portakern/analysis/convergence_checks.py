"""Convergence's facts and errors: the records the analysis keeps, and its checks.

Split from :mod:`portakern.analysis.convergence`, which walks a kernel body and finds the
per-item variables and the group-uniform statements; this module holds what that
walk records (variables, their writes, the statements and the loops around a
barrier) and, given its findings, raises the
:class:`~portakern.errors.KernelSyntaxError` that names the per-item value, how it
got that way, and the rewrite (:func:`check`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..syntax.language import SourceMap, Token
from ..syntax.parts import SUBGROUP, Call, Gen, UniformMark

__all__ = ["PER_ITEM", "Binding", "Loop", "Unit", "Write", "check"]

#: Primitive calls whose value differs between the work-items of a group.
PER_ITEM = {"global_id": "@index(Global, ...)", "local_id": "@index(Local, ...)",
            "lane_id": "@laneid()", "subgroup_id": "@subgroupid()",
            SUBGROUP: "a subgroup operation (@shuffle..., @subgroupreduce)"}

_REWRITE = (
    "Control flow around a barrier must be group-uniform: every work-item of the group, "
    "in the ndrange or not, runs a loop that contains @synchronize() the same number of "
    "times, so its condition, its counter and the statements that update them may only "
    "use kernel arguments, constants, @ndrange, @groupsize, @index(Group, ...) and "
    "@uniform values. The usual rewrite is a group-uniform trip count with a masked "
    "body: 'for (long base = 0; base < n; base += step) { const long row = base + "
    "offset; if (row < n) { ... } @synchronize(); }'")


_REWRITE_IF = (
    "Every work-item of the group, in the ndrange or not, must take the same branch of an "
    "'if' that contains @synchronize(), so its condition may only use kernel arguments, "
    "constants, @ndrange, @groupsize, @index(Group, ...), memory at group-uniform indices "
    "and @uniform values. The usual rewrite keeps the barrier outside the per-item "
    "condition: 'if (cond) { ... } @synchronize();'")


@dataclass(eq=False)
class Binding:
    """One declared variable."""

    name: str
    at: Token
    pointer: bool = False


@dataclass(eq=False)
class Write:
    """A place that sets a variable, and what the value depends on."""

    binding: Binding
    at: Token
    reads: list  # [(token, binding)]
    source: object  # a per-item construct (Call or Gen), or None
    declaration: bool


@dataclass(eq=False)
class Unit:
    """A statement the lowering places on its own (masked, or group-uniform)."""

    first: object  # its first code part: the lowering looks the statement up by it
    mark: UniformMark | None
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    source: object = None
    store: Token | None = None
    declared: list = field(default_factory=list)  # [(binding, its own reads, source)]
    jump: Token | None = None  # a jump out of (or on in) the loop around it
    loop: Loop | None = None  # the innermost loop around @synchronize() it is in


@dataclass(eq=False)
class Loop:
    """A loop around @synchronize(): what its header reads and writes."""

    keyword: Token
    refs: list  # [(token, binding)]
    source: object
    barrier: int = 0  # the line of the first @synchronize() in it

    @property
    def is_loop(self) -> bool:
        """False for an ``if`` around a barrier (analysed like a loop's header)."""
        return self.keyword.text != "if"

    def describe(self) -> str:
        what = "the loop" if self.is_loop else "the 'if'"
        return (f"{what} on line {self.keyword.line} (it contains @synchronize() on line "
                f"{self.barrier})")


def check(smap: SourceMap, loops: list[Loop], uniform: list[Unit], per_item: dict,
          why: dict) -> None:
    """Raise where a loop (or 'if') around a barrier, or a group-uniform statement, depends
    on a per-item value (``per_item``: variable -> the write that makes it so), or where a
    group-uniform statement writes memory. ``why``: each control variable's reason."""
    for loop in loops:
        _check_loop(smap, loop, per_item)
    for unit in uniform:  # in the order found: a control variable's setters first
        _check_unit(smap, unit, per_item, why)


def _check_loop(smap: SourceMap, loop: Loop, per_item: dict) -> None:
    rewrite = _REWRITE if loop.is_loop else _REWRITE_IF
    if loop.source is not None:
        raise smap.error_at(
            f"{loop.describe()} reads {_construct(loop.source)}, which has a value per "
            f"work-item. {rewrite}", _position(loop.source, loop.keyword))
    bad = [(t, b) for t, b in loop.refs if b in per_item]
    if not bad:
        return
    own = {id(b) for t, b in loop.refs if t is b.at}
    tok, b = next(((t, b) for t, b in bad if id(b) not in own), bad[0])
    raise smap.error_at(
        f"{loop.describe()} depends on '{b.name}', which has a value per work-item "
        f"({_chain(b, per_item)}). {rewrite}", tok)


def _check_unit(smap: SourceMap, unit: Unit, per_item: dict, why: dict) -> None:
    if unit.mark is not None:
        for b, reads, source in unit.declared:
            hit = source or next(((t, r) for t, r in reads if r in per_item), None)
            if hit is not None:
                raise smap.error_at(
                    f"@uniform '{b.name}' must have the same value for every work-item "
                    f"of the group, but it {_cause(hit, per_item)}; drop @uniform, or "
                    f"compute it from group-uniform values (kernel arguments, constants, "
                    f"@ndrange, @groupsize, @index(Group, ...))",
                    _position(hit if not isinstance(hit, tuple) else hit[0], _near(unit)))
        return
    if unit.jump is not None:
        assert unit.loop is not None  # a jump is recorded with the loop it leaves
        what = (f"'{unit.jump.text}' on line {unit.jump.line} leaves "
                f"{unit.loop.describe()}, and every work-item of the group must leave it "
                f"together")
        _check_uniform(smap, unit, what, "; its condition may only read group-uniform values",
                       True, per_item)
        return
    control, last, end = _root(unit, why)
    via = "" if last is control else f"goes into '{last.name}', which "
    if isinstance(end, Loop):
        what = f"'{control.name}' {via}decides how often {end.describe()} runs"
    elif isinstance(end, Unit):  # the condition of a 'break'
        assert end.jump is not None and end.loop is not None  # _root returns it for its jump
        what = (f"'{control.name}' {via}decides whether '{end.jump.text}' on line "
                f"{end.jump.line} leaves {end.loop.describe()}")
    else:
        what = f"'{control.name}' {via}is a @uniform value"
    several = len(unit.declared) > 1
    hint = (f"; declare '{control.name}' in a declaration of its own" if several else
            "; compute it from group-uniform values only")
    what += ", so every work-item of the group, in the ndrange or not, runs this " \
            "statement, which sets it"
    _check_uniform(smap, unit, what, hint, end is not None, per_item)


def _check_uniform(smap: SourceMap, unit: Unit, what: str, hint: str, rule: bool,
                  per_item: dict) -> None:
    """A group-uniform statement reads no per-item value and writes no memory."""
    written = {id(b) for _, b in unit.writes}
    bad = [(t, r) for t, r in unit.reads if r in per_item]
    hit = unit.source or next((h for h in bad if id(h[1]) not in written),
                              bad[0] if bad else None)
    if hit is not None:
        raise smap.error_at(
            f"{what}; but the statement {_cause(hit, per_item)}{hint}."
            f"{' ' + _REWRITE if rule else ''}",
            _position(hit if not isinstance(hit, tuple) else hit[0], _near(unit)))
    if unit.store is not None:
        raise smap.error_at(
            f"{what}; it cannot also write memory ('{unit.store.text}'), which it would "
            f"do for work-items past the end of the ndrange: move the store to a "
            f"statement of its own", unit.store)


def _root(unit: Unit, why: dict) -> tuple[Binding, Binding, object]:
    """The control variable ``unit`` sets, the one it feeds that decides the control
    flow, and what it decides: a loop, a unit with a 'break', or None (@uniform)."""
    b = next(b for _, b in unit.writes if b in why)
    first = b
    seen: set[int] = set()
    while True:
        reason = why[b]
        if isinstance(reason, Loop):
            return first, b, reason
        seen.add(id(b))
        nxt = reason[1] if isinstance(reason, tuple) else None
        if nxt is None or id(nxt) in seen:
            ender = reason[0] if isinstance(reason, tuple) else reason
            return first, b, ender if getattr(ender, "jump", None) else None
        b = nxt


def _construct(source: object) -> str:
    if isinstance(source, Call):
        return PER_ITEM.get(source.macro, source.macro)
    if isinstance(source, Gen) and source.at is not None:
        return f"{source.at.text} (its result differs between work-items)"
    return "a per-item value"


def _position(it: object, near: object = None) -> Token:
    """Where ``it`` is in the user's file; ``near`` (the statement's or loop's first
    token) where ``it`` has no position of its own, never line 1 by default."""
    if isinstance(it, Token):
        return it
    if isinstance(it, Gen) and it.at is not None:
        return it.at
    fallback = near if isinstance(near, Token) else None
    if isinstance(it, Call) and it.line:
        return Token("at", "@index", it.line, it.col or 1)
    if fallback is not None:
        return fallback
    return Token("at", "@synchronize", 1, 1)


def _near(unit: Unit) -> Token | None:
    """The first of the user's tokens a unit has (its first part, a read, a write)."""
    for it in (unit.first, *(t for t, _ in unit.reads), *(t for t, _ in unit.writes)):
        if isinstance(it, Token):
            return it
    return None


def _cause(hit: object, per_item: dict) -> str:
    if isinstance(hit, tuple):
        _, b = hit
        return f"reads '{b.name}', which has a value per work-item ({_chain(b, per_item)})"
    return f"reads {_construct(hit)}, which has a value per work-item"


def _chain(b: Binding | None, per_item: dict) -> str:
    """``'row' is set on line 7 from 'tid', which is set on line 5 from @index(...)``."""
    parts: list[str] = []
    seen: set[int] = set()
    while b is not None and id(b) not in seen and len(parts) < 4:
        seen.add(id(b))
        write, cause = per_item[b]
        subject = f"'{b.name}' is" if not parts else "which is"
        how = (f"set on line {write.at.line} from" if write.declaration else
               f"changed on line {write.at.line} by a statement that reads")
        if isinstance(cause, tuple):
            b = cause[1]
            parts.append(f"{subject} {how} '{b.name}'")
        else:
            parts.append(f"{subject} {how} {_construct(cause)}")
            b = None
    return ", ".join(parts)
