"""Workgroup sizes given at instantiation, taken as declared (DESIGN §1a, "Sizes chosen at
launch"): ``kernel(backend, workgroupsize=16)`` of a kernel that reads ``@groupsize``
launches a copy of the kernel whose parse carries that size, as
``@kernel(workgroupsize=16)`` would, so ``@groupsize`` is a compile-time constant there
(usable in ``@localmem`` sizes) and each size is a variant of its own (the ``groupsize``
option of :class:`~portakern.variant.Variant`)."""

from __future__ import annotations

from typing import Any

from ..errors import PortakernError
from ..targets import CANONICAL_TARGET

__all__ = ["sized_kernel", "static_size"]


def static_size(wg: Any) -> bool:
    """Whether ``wg`` is a workgroup size a kernel could declare (an int or ints >= 1)."""
    sizes = wg if isinstance(wg, (tuple, list)) else (wg,)
    return bool(sizes) and all(hasattr(w, "__index__") and not isinstance(w, bool)
                               and int(w) >= 1 for w in sizes)


def sized_kernel(kernel: Any, workgroupsize: Any) -> Any:
    """``kernel`` with ``workgroupsize`` declared (:meth:`portakern.Kernel.sized`), kept on it."""
    if kernel._groupsize is not None or not static_size(workgroupsize):
        return kernel
    try:
        kdef = kernel.parsed(CANONICAL_TARGET)[1]
    except PortakernError:
        return kernel
    if kdef.workgroupsize is not None or not any(
            t.kind == "at" and t.text == "@groupsize" for t in kdef.body):
        return kernel
    key = int(workgroupsize) if not isinstance(workgroupsize, (tuple, list)) else tuple(
        int(w) for w in workgroupsize)
    hit = kernel._sized.get(key)
    if hit is None:
        hit = object.__new__(type(kernel))
        hit._init(kernel.template, kernel._name, dict(kernel.constants), kernel.debug)
        hit.labels = dict(kernel.labels)
        hit._groupsize, hit._unsized = key, kernel
        hit._portability_checked = kernel._portability_checked
        kernel._sized[key] = hit
    return hit
