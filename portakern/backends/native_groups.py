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
the cache a group needs do not grow with it) and whose arrays (``@localmem`` and
``@private``) each hold fewer elements than the OpenCL path's group has items, so
none can have a slot per work-item of a group. :func:`array_bound` finds that fact
in the rendered source, once per compiled kernel.
"""

from __future__ import annotations

import math
import re

__all__ = ["GROUP_ITEMS", "array_bound", "lockstep_groups"]

#: The most work-items of a group this path chooses by itself (a caller or a kernel
#: may ask for up to 4096, PoCL's limit). 16384 items of a 4-byte array are 64 KiB,
#: well inside a core's L2 cache, which a group re-reads after each barrier.
GROUP_ITEMS = 16384

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
# ``T name[d]...;`` on a line of its own: every array declaration the templates emit
# (a statement such as ``x[i] = v;`` has no type before the name; ``return t[i];``
# reads as one, with a non-literal size, which only makes the answer None).
_ARRAY = re.compile(
    r"^[ \t]*(?:(?:const|static|volatile)\s+)*[A-Za-z_][\w:<>]*(?:[ \t]+[A-Za-z_][\w:<>]*)*"
    r"(?:[ \t]+|[ \t]*\*+[ \t]*)[A-Za-z_]\w*[ \t]*((?:\[[^\[\]\n]*\][ \t]*)+);",
    re.MULTILINE)
_DIM = re.compile(r"\[([^\[\]]*)\]")
_LITERAL = re.compile(r"\s*(\d+)[uUlL]*\s*")


def array_bound(source: str) -> int | None:
    """The most elements of any array a rendered (``c``) kernel declares, or None.

    None when some array's size is not a product of integer literals, or the kernel
    keeps per-item state (``pk_items`` used beyond its declaration): then no larger
    group is safe to choose for it. 0 when it declares no array.
    """
    text = _COMMENTS.sub(" ", source)
    if len(re.findall(r"\bpk_items\b", text)) > 1:
        return None
    most = 0
    for m in _ARRAY.finditer(text):
        n = 1
        for dim in _DIM.findall(m.group(1)):
            literal = _LITERAL.fullmatch(dim)
            if literal is None:
                return None
            n *= int(literal.group(1))
        most = max(most, n)
    return most


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
