"""A backend pickled by recipe (its class and constructor arguments), and its Dask token.

The contract's side of :mod:`portakern.launch.recipes`: :meth:`Backend.__reduce_ex__
<portakern.backends.base.Backend.__reduce_ex__>` and ``__dask_tokenize__`` use these,
so the backend layer never imports the kernel objects above it.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..subprocesses import fork_safe_lock

__all__ = ["backend_token", "rebuild_backend", "token_digest"]

_LOCK = fork_safe_lock()
_BACKENDS: dict[tuple, Any] = {}


def token_digest(parts: Any) -> str:
    """A SHA-256 of ``repr(parts)``: equal for equal recipes in every process."""
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()


def rebuild_backend(cls: type, args: tuple, kwargs: tuple) -> Any:
    """``cls(*args, **kwargs)``, one object per recipe and process."""
    key = (cls, args, kwargs)
    with _LOCK:
        hit = _BACKENDS.get(key)
        if hit is None:
            hit = _BACKENDS[key] = cls(*args, **dict(kwargs))
        return hit


def backend_token(backend: Any) -> str:
    """A digest of what rebuilds ``backend``: equal for equal recipes in every process."""
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
