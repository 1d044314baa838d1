"""``workgroupsize="auto"``: the workgroup size chosen by timing (DESIGN §1a, "Sizes chosen
at launch").

The first launch of a *shape class* (the ndrange rounded to its power-of-two magnitude
per axis, ``(1000, 1000)`` and ``(1024, 600)`` alike), for one kernel variant on one
device, launches a few candidate sizes on the call's own arguments, times each with the
backend's timer (:meth:`~portakern.backends.base.Backend.timed_launch`, or the wall
clock with a synchronize where it has none), and keeps the fastest in the disk cache
(entry kind ``groups``): later launches, in this process or another, read it back and
time nothing. The candidates are powers of two along the fastest axis, within
:meth:`~portakern.backends.base.Backend.max_workgroup_size` and
:meth:`~portakern.backends.base.Backend.max_workitem_sizes`, and the backend's own
default; a kernel that declares its size has that one only.

Timing does not change results: a kernel whose written arrays are only stored to (no
atomics, no read of them) is timed on the real arguments, since every candidate stores
the same values; any other is timed on copies of its written arrays, and only the
winner's launch touches the caller's arrays.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from ..errors import PortakernError
from ..syntax.language import declared_workgroup
from . import timing
from .arguments import check_args

__all__ = ["BUDGET", "MAX_CANDIDATES", "REPEATS", "candidates", "chosen", "is_auto",
           "shape_class"]

#: At most this many candidate sizes are timed for one shape class.
MAX_CANDIDATES = 8
#: Timed launches per candidate (the best counts).
REPEATS = 3
#: Seconds the timing of one shape class may take, about: later candidates are skipped.
BUDGET = 0.05
#: Called with ``(kernel name, workgroupsize)`` for every timed candidate launch (tests
#: count them); None normally.
on_candidate: Callable[[str, Any], None] | None = None

#: True while candidates run (their launches choose nothing).
_choosing = False


def is_auto(wg: Any) -> bool:
    """Whether ``wg`` asks for a size chosen by timing (the string ``"auto"``)."""
    return type(wg) is str and wg == "auto"


def shape_class(nd: tuple[int, ...]) -> tuple[int, ...]:
    """Each extent's power-of-two magnitude: ``n`` in ``[2**(k-1), 2**k)`` gives ``k``."""
    return tuple(int(n).bit_length() for n in nd)


def candidates(nd: tuple[int, ...], limit: int, items: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The sizes to time for ndrange ``nd`` (ndrange order; the last axis is the fastest).

    Totals of 32 work-items up to ``limit``, in powers of two, those nearest 256 first; the
    fastest axis takes 32 or more where the total allows (whole warps and SIMD rows along
    contiguous memory), the next axis the rest. No axis exceeds its device limit
    (``items``, hardware order) or the ndrange's extent rounded up to a power of two.
    """
    ndim = len(nd)
    if ndim == 0:
        return []
    cap = [min(items[ndim - 1 - d] if ndim - 1 - d < len(items) else 1,
               1 << max(int(n) - 1, 0).bit_length()) for d, n in enumerate(nd)]
    out: list[tuple[int, ...]] = []
    total = 32
    while total <= limit:
        for x in (32, 64, 128, 256) if ndim > 1 else (total,):
            if x > total:
                break
            shape = [1] * ndim
            shape[-1] = min(x, cap[-1])
            if ndim > 1:
                shape[-2] = min(total // shape[-1], cap[-2])
            wg = tuple(shape)
            if wg not in out and math.prod(wg) <= limit:
                out.append(wg)
        total *= 2
    # Nearest to 256 work-items first (what most devices run best), so a budget that
    # runs out skips the unlikely ones; at most MAX_CANDIDATES - 1 (one is the default).
    out.sort(key=lambda wg: abs(math.prod(wg).bit_length() - 9))
    return out[:MAX_CANDIDATES - 1]


def chosen(launcher: Any, args: tuple, ndrange: Any, workgroupsize: Any) -> Any:
    """The workgroup size for a launch that asks for ``"auto"``: a tuple, or None for the
    backend's default (or a declared or static size, which needs no choosing)."""
    if not is_auto(workgroupsize) and (workgroupsize is not None
                                       or not is_auto(launcher.static_workgroupsize)):
        return workgroupsize  # a size given to this launch (or a string to refuse)
    if _choosing or launcher.kernel.debug:
        return None  # a candidate's own launch; debug mode checks, it does not time
    static = launcher.static_workgroupsize
    if static is not None and not is_auto(static):
        return None  # the launcher's static size is the one size
    nd = launcher._ndrange(ndrange)
    backend = launcher.runner or launcher._route()
    kernel = launcher.kernel
    kdef = kernel.parsed(backend.target)[1]
    declared = declared_workgroup(kdef, len(nd)) if nd else None
    if declared is not None and timing.active:
        timing.note_workgroup(kernel.name, declared)  # the one candidate
    if not nd or math.prod(nd) == 0 or declared is not None:
        return None
    memo = launcher.__dict__.setdefault("_auto_choices", {})
    fast_key = (id(backend), shape_class(nd),
                tuple(getattr(a, "dtype", type(a)) for a in args))
    hit = memo.get(fast_key, _MISSING)
    if hit is not _MISSING:
        _note(kernel.name, hit, launcher, nd, backend)
        return hit
    bindings = check_args(kdef, args, backend, kernel.constants, {}, kernel.labels,
                          kernel.template)[1]
    from ..cache import store as cache

    key = _disk_key(kernel, backend, bindings, nd)
    stored, found = cache.chosen_workgroup(key)
    if not stored:
        found = _time(launcher, backend, kdef, bindings, args, ndrange, nd)
        cache.keep_workgroup(key, found)
    memo[fast_key] = found
    _note(kernel.name, found, launcher, nd, backend)
    return found


_MISSING = object()


def _disk_key(kernel: Any, backend: Any, bindings: tuple, nd: tuple[int, ...]) -> tuple:
    """What a choice depends on: the kernel variant, the device, the shape class."""
    from ..variant import Variant

    variant = Variant.of(backend.target, bindings, len(nd), unmasked=False,
                         debug=kernel.debug, **kernel._options())
    source, name, filename, constants = kernel.recipe
    return (source, name, filename, repr(list(constants)), repr(tuple(variant)),
            _device(backend), shape_class(nd))


def _device(backend: Any) -> str:
    """The device, as text that is the same in every process (no pointers)."""
    key = backend.cache_key
    stable = _plain(key)
    limits = getattr(backend, "limits", None)
    return repr((type(backend).__module__, type(backend).__qualname__, backend.target,
                 repr(backend), key if stable else None,
                 tuple(limits) if limits is not None else None,
                 tuple(backend.max_workitem_sizes())))


def _plain(value: Any) -> bool:
    """Whether ``value`` is text, bools and small ints only (an OpenCL context's key holds
    pointers, which differ between processes)."""
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    return isinstance(value, int) and abs(value) < 2**20


def _time(launcher: Any, backend: Any, kdef: Any, bindings: tuple, args: tuple,
          ndrange: Any, nd: tuple[int, ...]) -> tuple[int, ...] | None:
    """Launch each candidate a few times; the fastest (None: the default was)."""
    global _choosing
    compiled = launcher.kernel.build(backend, bindings, len(nd))
    sizes = candidates(nd, backend.max_workgroup_size(compiled),
                       tuple(backend.max_workitem_sizes()))
    run_args = _timing_args(launcher, kdef, args)
    best: tuple[float, Any] | None = None
    start = time.perf_counter()
    _choosing = True
    try:
        for wg in (None, *sizes):
            if wg is not None and time.perf_counter() - start > BUDGET:
                break
            try:
                seconds = _measure(launcher, backend, run_args, ndrange, wg)
            except PortakernError:
                if wg is None:
                    raise
                continue  # not a valid launch of this kernel here (too large, local memory)
            if best is None or seconds < best[0]:
                best = (seconds, wg)
            if wg is None:
                start = time.perf_counter()  # the budget starts after the first compile
    finally:
        _choosing = False
    return None if best is None else best[1]


def _measure(launcher: Any, backend: Any, args: tuple, ndrange: Any, wg: Any) -> float:
    """The best of :data:`REPEATS` timed launches with workgroup size ``wg``, after one
    that compiles and warms up."""
    times = []
    with timing.private() as block:
        launcher._run(args, ndrange, wg).wait()
        for _ in range(REPEATS):
            if on_candidate is not None:
                on_candidate(launcher.kernel.name, wg)
            t = time.perf_counter()
            handle = launcher._run(args, ndrange, wg).wait()
            wall = time.perf_counter() - t
            elapsed = handle.elapsed if handle in block.launches else None
            times.append(wall if elapsed is None else elapsed)
    return min(times)


def _timing_args(launcher: Any, kdef: Any, args: tuple) -> tuple:
    """``args``, or with copies of the written arrays where timing on them would show."""
    written = [p for p in kdef.params if p.writable]
    if not written or _stores_only(kdef, {p.name for p in written}):
        return args
    backend = launcher.backend
    out = list(args)
    for p in written:
        if p.index < len(out) and out[p.index] is not None:
            out[p.index] = backend.to_device(backend.to_host(out[p.index]))
    return tuple(out)


def _stores_only(kdef: Any, names: set[str]) -> bool:
    """Whether the body only stores to the arrays ``names`` (``y[...] = value;``, each
    element the same whatever the group shape) and uses no atomics."""
    toks = [t for t in kdef.body if t.kind not in ("ws", "comment")]
    for n, t in enumerate(toks):
        if t.kind == "at" and t.text.startswith("@atomic"):
            return False
        if t.text not in names or (n and toks[n - 1].text in (".", "->")):
            continue
        if n + 1 >= len(toks) or toks[n + 1].text != "[":
            return False  # passed on, taken apart or its address taken: may be read
        depth, m = 0, n + 1
        while m < len(toks):
            depth += {"[": 1, "]": -1}.get(toks[m].text, 0)
            if depth == 0:
                break
            m += 1
        if m + 1 >= len(toks) or toks[m + 1].text != "=":
            return False  # read, or updated in place (+=, ++)
    return True


def _note(name: str, wg: Any, launcher: Any, nd: tuple[int, ...], backend: Any) -> None:
    """Tell the open ``pk.timed()`` blocks what was chosen (the default's own size)."""
    if not timing.active:
        return
    if wg is None:
        plan = next((p for k, p in launcher.plans.items() if k[1] == nd and k[2] is None
                     and p is not None), None)
        shown = tuple(reversed(plan.local_size)) if plan is not None else "default"
    else:
        shown = wg
    timing.note_workgroup(name, shown)
