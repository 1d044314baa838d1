"""The native path's default workgroup for barrier kernels, and the fact it rests on.

A barrier kernel on ``CPU()`` starts from the OpenCL path's CPU default
(:func:`~.base.cpu_groups`: a shape that tiles the ndrange, up to 2048 items, at
least four groups per core). Each group costs what the kernel does once per group
whatever its size: the histogram example clears its 256 local bins and adds them to
the global counts with 256 atomics, 8000 times for 4000x4000 items in groups of 2000,
where a C++ loop with per-thread bins adds its bins once per thread
(docs/performance.md, "The histogram's groups").

Larger groups are given only to a kernel that cannot tell, except by ``@groupsize``:
one with no per-item state (no ``pk_priv_*[pk_items]`` array: nothing a work-item
keeps across a barrier lives in a group-sized array on the stack, so the stack and
the cache a group needs do not grow with it) and whose ``@localmem`` arrays each hold
fewer elements than the OpenCL path's group has items, so
none can have a slot per work-item of a group. The lowering publishes that fact
(:attr:`portakern.lower.LoweredKernel.group_bound`), the ``c`` module writes it on a
line of the rendered source (which the disk cache keeps), and :func:`array_bound` reads
it back once per compiled kernel.
"""

from __future__ import annotations

import math
import re

__all__ = ["GROUP_ITEMS", "array_bound", "lockstep_groups"]

#: The most work-items of a group this path chooses by itself (a caller or a kernel
#: may ask for up to 4096, PoCL's limit). 16384 items of a 4-byte array are 64 KiB,
#: well inside a core's L2 cache, which a group re-reads after each barrier.
GROUP_ITEMS = 16384

_BOUND = re.compile(r"^// portakern group bound: (\d+|none)$", re.MULTILINE)


def array_bound(source: str) -> int | None:
    """The lowering's answer for a rendered (``c``) barrier kernel, or None.

    The ``c`` module writes :attr:`portakern.lower.LoweredKernel.group_bound` on a line
    of its own: the most elements of a ``@localmem`` array (0 without one), or
    ``none`` where a size is not a product of integer literals or the kernel keeps
    per-item state. None too for a rendering without that line.
    """
    m = _BOUND.search(source)
    return None if m is None or m.group(1) == "none" else int(m.group(1))


def lockstep_groups(ndrange: tuple[int, ...], base: tuple[int, ...], bound: int | None,
                    cores: int) -> tuple[int, ...]:
    """``base`` (the OpenCL path's default), grown where the kernel allows it.

    The last axis first, then (once a group spans the whole last axis) the next: each
    by whole multiples of its ``base`` extent while the group holds at most
    :data:`GROUP_ITEMS` items, stays within the axis, and the launch keeps four groups
    per core; where ``base`` tiles an axis, only sizes that tile it too (no partial
    last group). ``bound`` is :func:`array_bound`'s answer: a kernel with an array of
    ``math.prod(base)`` elements or more keeps ``base``.
    """
    if not ndrange or bound is None or bound >= math.prod(base):
        return base
    shape = list(base)
    least = 4 * max(cores, 1)
    for d in range(len(ndrange) - 1, -1, -1):
        n, step = ndrange[d], base[d]
        others = math.prod(shape) // shape[d]
        for f in range(2, GROUP_ITEMS // (others * step) + 1):
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
