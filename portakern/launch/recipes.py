"""Pickling by recipe: kernels, launchers and backends travel as what builds them.

A :class:`~portakern.Kernel` pickles as its source, kernel name, file name and
constants; a :class:`~portakern.Launcher` as its kernel, backend and static
workgroup size / ndrange; a backend as its class and constructor arguments
(``CPU()``, ``CUDA(device)``). Nothing compiled travels: the receiving process
rebuilds the object and compiles (or loads from its disk cache) on first launch.

Rebuilt objects are **interned per process**: the same recipe gives the same
object, so a worker that receives one kernel in many tasks compiles each variant
once. The tables hold the most recent :data:`MAX_INTERNED` recipes strongly.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any

from ..backends.recipes import backend_token, token_digest
from ..subprocesses import fork_safe_lock

#: How many kernels (and launchers, and backends) each process keeps by recipe.
MAX_INTERNED = 256

_LOCK = fork_safe_lock(reentrant=True)
_KERNELS: OrderedDict[tuple, Any] = OrderedDict()
_LAUNCHERS: OrderedDict[tuple, Any] = OrderedDict()


def _remember(table: OrderedDict, key: tuple, value: Any) -> Any:
    """``table[key]`` if present (and now most recent), else ``value`` stored there."""
    with _LOCK:
        hit = table.get(key)
        if hit is not None:
            table.move_to_end(key)
            return hit
        table[key] = value
        while len(table) > MAX_INTERNED:
            table.popitem(last=False)
        return value


# -- kernels ------------------------------------------------------------------------
def kernel_recipe(kernel: Any) -> tuple:
    """``(source, name, filename, constants)`` with constants as sorted ``(name, value)``."""
    return kernel.recipe


def _key(recipe: tuple) -> tuple:
    # 1, 1.0 and True hash alike but render differently: the value's type is in the key.
    source, name, filename, constants = recipe
    return (source, name, filename,
            tuple((k, type(v).__name__, v) for k, v in constants))


def _put(table: OrderedDict, key: tuple, value: Any) -> None:
    with _LOCK:
        table[key] = value
        table.move_to_end(key)
        while len(table) > MAX_INTERNED:
            table.popitem(last=False)


def intern_kernel(kernel: Any) -> None:
    """Make ``kernel`` the object its recipe rebuilds to in this process.

    Called when a kernel is pickled, so that a round trip in the sending process
    (Dask's local schedulers) gives back the very object, compiled variants and all.
    """
    _put(_KERNELS, _key(kernel_recipe(kernel)), kernel)


def rebuild_kernel(kernel_class: type, source: str, name: str | None, filename: str,
                   constants: tuple) -> Any:
    """The kernel of this recipe in this process: the interned one, else a new one.

    ``kernel_class`` travels in the pickle (``Kernel.__reduce__`` passes its class down),
    so this module never imports the kernel module back.
    """
    from ..errors import PortabilityWarning

    key = _key((source, name, filename, constants))
    with _LOCK:
        hit = _KERNELS.get(key)
    if hit is not None:
        return _remember(_KERNELS, key, hit)
    with warnings.catch_warnings():
        # The sender was warned when it created the kernel; workers need not be again.
        warnings.simplefilter("ignore", PortabilityWarning)
        new = kernel_class(source, name, filename=filename, **dict(constants))
    return _remember(_KERNELS, key, new)


def kernel_token(kernel: Any) -> str:
    """A digest of the recipe: equal for equal recipes in every process."""
    return token_digest(("portakern.Kernel",) + _key(kernel_recipe(kernel)))


# -- launchers ----------------------------------------------------------------------
def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, tuple):
        return tuple(_hashable(v) for v in value)
    try:
        import numpy as np

        if isinstance(value, np.integer):
            return int(value)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    return value


def launcher_recipe(launcher: Any) -> tuple:
    """``(kernel, backend, workgroupsize, ndrange)`` as given when it was made."""
    return (launcher.kernel, launcher.backend, _hashable(launcher.static_workgroupsize),
            launcher.static_ndrange)


def rebuild_launcher(launcher_class: type, kernel: Any, backend: Any, workgroupsize: Any,
                     ndrange: Any) -> Any:
    """The launcher of this recipe in this process (interned like kernels)."""
    key = (id(kernel), backend, workgroupsize, ndrange)
    with _LOCK:
        hit = _LAUNCHERS.get(key)
    if hit is not None and hit.kernel is kernel:
        return _remember(_LAUNCHERS, key, hit)
    return _remember(_LAUNCHERS, key, launcher_class(kernel, backend, workgroupsize, ndrange))


def intern_launcher(launcher: Any) -> None:
    kernel, backend, wg, nd = launcher_recipe(launcher)
    try:
        _put(_LAUNCHERS, (id(kernel), backend, wg, nd), launcher)
    except TypeError:
        pass  # an unhashable workgroupsize: the launcher is rebuilt, not interned


def launcher_token(launcher: Any) -> str:
    kernel, backend, wg, nd = launcher_recipe(launcher)
    return token_digest(("portakern.Launcher", kernel_token(kernel), backend_token(backend),
                    repr(wg), repr(nd)))
