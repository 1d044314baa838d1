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

import hashlib
import warnings
from collections import OrderedDict
from typing import Any

from .subprocesses import fork_safe_lock

#: How many kernels (and launchers, and backends) each process keeps by recipe.
MAX_INTERNED = 256

_LOCK = fork_safe_lock(reentrant=True)
_KERNELS: OrderedDict[tuple, Any] = OrderedDict()
_LAUNCHERS: OrderedDict[tuple, Any] = OrderedDict()
_BACKENDS: dict[tuple, Any] = {}


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


def rebuild_kernel(source: str, name: str | None, filename: str, constants: tuple) -> Any:
    """The kernel of this recipe in this process: the interned one, else a new one."""
    from .errors import PortabilityWarning
    from .kernels import Kernel

    key = _key((source, name, filename, constants))
    with _LOCK:
        hit = _KERNELS.get(key)
    if hit is not None:
        return _remember(_KERNELS, key, hit)
    with warnings.catch_warnings():
        # The sender was warned when it created the kernel; workers need not be again.
        warnings.simplefilter("ignore", PortabilityWarning)
        new = Kernel(source, name, filename=filename, **dict(constants))
    return _remember(_KERNELS, key, new)


def kernel_token(kernel: Any) -> str:
    """A digest of the recipe: equal for equal recipes in every process."""
    return token_digest(("portakern.Kernel",) + _key(kernel_recipe(kernel)))


def token_digest(parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()


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


def rebuild_launcher(kernel: Any, backend: Any, workgroupsize: Any, ndrange: Any) -> Any:
    """The launcher of this recipe in this process (interned like kernels)."""
    from .launch import Launcher

    key = (id(kernel), backend, workgroupsize, ndrange)
    with _LOCK:
        hit = _LAUNCHERS.get(key)
    if hit is not None and hit.kernel is kernel:
        return _remember(_LAUNCHERS, key, hit)
    return _remember(_LAUNCHERS, key, Launcher(kernel, backend, workgroupsize, ndrange))


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


# -- backends -----------------------------------------------------------------------
def rebuild_backend(cls: type, args: tuple, kwargs: tuple) -> Any:
    """``cls(*args, **kwargs)``, one object per recipe and process."""
    key = (cls, args, kwargs)
    with _LOCK:
        hit = _BACKENDS.get(key)
        if hit is None:
            hit = _BACKENDS[key] = cls(*args, **dict(kwargs))
        return hit


def backend_token(backend: Any) -> str:
    cls = type(backend)
    try:
        recipe = backend.pickle_recipe()
    except TypeError:
        # It cannot travel (OpenCL(queue)): distinct per object, stable in this process.
        return token_digest((cls.__module__, cls.__qualname__, repr(backend), id(backend)))
    if recipe is None:
        return token_digest((cls.__module__, cls.__qualname__, repr(backend),
                        repr(getattr(backend, "cache_key", None))))
    args, kwargs = recipe
    return token_digest((cls.__module__, cls.__qualname__, args, tuple(sorted(kwargs.items()))))
