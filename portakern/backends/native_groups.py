"""``CPU()``'s default workgroup, one rule for both paths, and the facts it rests on.

:func:`cpu_workgroup` decides the workgroup of a ``CPU()`` launch that gives none, on
the native path and on the OpenCL device alike, so a kernel that can tell its group's
shape (``@index(Local)``, ``@index(Group)``, ``@groupsize``, ``@groups``, workgroup
memory, barriers, subgroups, ``unsafe_indices``: :func:`reads_group_shape`) sees the
same shape on either. Only a kernel that cannot tell is left to each path's own choice
(the native path's rows of 1024 items, PoCL's tiling shapes): its result cannot
differ.

Barrier kernels start from the OpenCL path's CPU default (:func:`~.base.cpu_groups`:
a shape that tiles the ndrange, up to 2048 items, at least four groups per core). Each
group costs what the kernel does once per group whatever its size: the histogram
example clears its 256 local bins and adds them to the global counts with 256 atomics,
8000 times for 4000x4000 items in groups of 2000, where a C++ loop with per-thread bins
adds its bins once per thread (docs/performance.md, "The histogram's groups"). So both
paths grow the groups (up to 4096 items, the most PoCL runs) of a kernel with no
per-item state (no ``pk_priv_*[pk_items]`` array in its lockstep lowering: the stack
and the cache a group needs do not grow with it) whose ``@localmem`` arrays each hold
fewer elements than the base group has items, so none can have a slot per work-item.
The lowering publishes that fact (:attr:`portakern.lower.lowering.LoweredKernel.group_bound`),
and it travels beside the ``c`` rendering as its ``group_bound`` metadata
(:attr:`portakern.render.emit.RenderedKernel.meta`, which the disk cache keeps);
:func:`group_facts` hands it to both paths. (Before issue 22 the native path alone
grew such groups, up to 16384 items, so ``@groupsize`` differed between the paths.)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from .base import cpu_groups

__all__ = ["CPU_GROUP_LIMIT", "GroupFacts", "UNKNOWN", "cpu_workgroup", "group_facts",
           "lockstep_groups", "reads_group_shape"]

#: The most work-items of a group either CPU path chooses by itself: PoCL's limit,
#: which the native path adopts (docs/cpu.md), so one shape runs on both.
CPU_GROUP_LIMIT = 4096

@dataclass(frozen=True)
class GroupFacts:
    """What :func:`cpu_workgroup` needs to know about a kernel.

    ``reads_shape``: the kernel can tell the shape of its groups (see
    :func:`reads_group_shape`). ``bound``:
    :attr:`portakern.lower.lowering.LoweredKernel.group_bound` of its ``c`` rendering
    where that is a barrier kernel's, else None.
    """

    reads_shape: bool
    bound: int | None = None


#: What is assumed of a kernel nobody asked about: it reads its shape, groups stay base.
UNKNOWN = GroupFacts(True, None)


def reads_group_shape(kdef: Any, facts: Any) -> bool:
    """Whether a parsed kernel can tell the shape of its workgroups: ``unsafe_indices``
    (the items past the ndrange in the last group run) or its body's published fact
    (:attr:`portakern.syntax.tree.BodyFacts.reads_group_shape`)."""
    return bool(kdef.unsafe_indices or facts.reads_group_shape)


def group_facts(kernel: Any, bindings: tuple, ndim: int) -> GroupFacts:
    """The :class:`GroupFacts` of ``kernel`` (its ``c`` and ``opencl`` renderings both).

    Whatever CPU path runs it, the facts are the same: the shape is read if either
    rendering (Jinja's ``target`` may differ) reads it, and the bound is the ``c``
    rendering's, the one the native path's lockstep lowering publishes. A rendering
    that fails counts as reading the shape, with no bound.
    """
    from ..errors import PortakernError

    reads = False
    for target in ("c", "opencl"):
        try:
            reads = reads or reads_group_shape(kernel.parsed(target)[1],
                                               kernel.facts(target))
        except PortakernError:
            return UNKNOWN
    if not reads:
        return GroupFacts(False, None)
    try:
        if not kernel.facts("c").lockstep:
            return GroupFacts(True, None)
        bound = kernel.variant("c", bindings, ndim).fact("group_bound")
    except PortakernError:
        bound = None
    return GroupFacts(True, bound)


def cpu_workgroup(ndrange: tuple[int, ...], facts: GroupFacts, limit: int,
                  items: tuple[int, ...], blind: tuple[int, ...] | None = None,
                  ) -> tuple[int, ...]:
    """The workgroup of a ``CPU()`` launch that gives none, on either path.

    ``limit`` and ``items`` are the path's limits (4096 items on both: PoCL's, which the
    native path adopts). A kernel that reads its shape gets the OpenCL path's CPU shape
    (:func:`~.base.cpu_groups`: one that tiles the ndrange, up to 2048 items and four
    groups per core, else powers of two up to 256), grown by :func:`lockstep_groups`
    where ``facts.bound`` allows, never past ``limit``. A kernel that cannot tell gets
    ``blind`` where the path has a shape of its own for such kernels.
    """
    if not ndrange:
        return ()
    if not facts.reads_shape and blind is not None:
        return blind
    limit = min(limit, CPU_GROUP_LIMIT)
    cores = os.cpu_count() or 1
    base = cpu_groups(ndrange, limit, items, cores, 256)
    return lockstep_groups(ndrange, base, facts.bound, cores, limit)

def lockstep_groups(ndrange: tuple[int, ...], base: tuple[int, ...], bound: int | None,
                    cores: int, most: int) -> tuple[int, ...]:
    """``base`` (the OpenCL path's default), grown where the kernel allows it.

    The last axis first, then (once a group spans the whole last axis) the next: each
    by whole multiples of its ``base`` extent while the group holds at most ``most``
    items (the path's limit, at most 4096, so both CPU paths can run it), stays within
    the axis, and the launch keeps four groups per core; where ``base`` tiles an axis,
    only sizes that tile it too (no partial last group). ``bound`` is
    the rendering's ``group_bound`` fact: a kernel with an array of ``math.prod(base)``
    elements or more keeps ``base``.
    """
    if not ndrange or bound is None or bound >= math.prod(base):
        return base
    shape = list(base)
    least = 4 * max(cores, 1)
    for d in range(len(ndrange) - 1, -1, -1):
        n, step = ndrange[d], base[d]
        others = math.prod(shape) // shape[d]
        for f in range(2, most // (others * step) + 1):
            size = step * f
            groups = math.prod(-(-e // w) for e, w in zip(ndrange, shape, strict=True))
            groups = groups // -(-n // shape[d]) * -(-n // size)
            if size > n or groups < least:
                break
            if n % size == 0 or n % step:
                shape[d] = size
        if shape[d] < n:
            break  # a group that does not span this axis spans no outer one either
    return tuple(shape)
