"""Argument makers, NumPy reference models and multi-launch pipelines of the
reductions (sum, max, argmax), the histogram and the bitonic sort.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..resolve import get_backend
from .catalog import Args, Consts, Example
from .inputs import groups, random_array


def reduce_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                c: Consts) -> Args:
    x = random_array(rng, shape, dt, 0.0, 1.0)
    return (np.zeros(groups(x.size, c["GROUP"]), dt), x)


def _per_group(x: np.ndarray, group: int, fn: Callable[..., np.ndarray]) -> np.ndarray:
    flat = x.reshape(-1)
    return fn(flat, np.arange(0, flat.size, group))


def reduce_sum_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    partial, x = args
    return {"partial": _per_group(x, c["GROUP"], np.add.reduceat).astype(partial.dtype)}


def reduce_max_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    partial, x = args
    return {"partial": _per_group(x, c["GROUP"], np.maximum.reduceat).astype(partial.dtype)}


def argmax_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                c: Consts) -> Args:
    x = random_array(rng, shape, dt, 0.0, 1.0)
    ngroups = groups(x.size, c["GROUP"])
    return (np.zeros(ngroups, dt), np.zeros(ngroups, np.int64), x)


def argmax_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    best, _, x = args
    flat = x.reshape(-1)
    group = c["GROUP"]
    starts = np.arange(0, flat.size, group)
    where = np.array([s + int(np.argmax(flat[s:s + group])) for s in starts], np.int64)
    return {"best": flat[where].astype(best.dtype), "best_index": where}


def _backend_for(backend: Any, arrays: Args) -> Any:
    if backend is not None:
        return backend
    return get_backend(*(a for a in arrays if not isinstance(a, np.generic)))


def reduce_run(backend: Any, args: Args, c: Consts, ex: Example) -> dict[str, Any]:
    partial, x = args
    backend = _backend_for(backend, args)
    group = c["GROUP"]
    launch = ex.load(**c)(backend, group)
    launch(partial, x, ndrange=(int(np.prod(x.shape)),))
    current = partial
    # Each pass reduces GROUP-fold; a few passes reach one value.
    while int(np.prod(current.shape)) > 1:
        n = int(np.prod(current.shape))
        nxt = backend.allocate((groups(n, group),), backend.array_info(current).dtype)
        launch(nxt, current, ndrange=(n,))
        current = nxt
    backend.synchronize()
    return {"result": backend.to_host(current)[0]}


def reduce_sum_total(args: Args, c: Consts) -> dict[str, Any]:
    return {"result": args[1].sum(dtype=args[1].dtype)}


def reduce_max_total(args: Args, c: Consts) -> dict[str, Any]:
    return {"result": args[1].max()}


def argmax_run(backend: Any, args: Args, c: Consts, ex: Example) -> dict[str, Any]:
    best, best_index, x = args
    backend = _backend_for(backend, args)
    group = c["GROUP"]
    launch = ex.load(**c)(backend, group)
    launch(best, best_index, x, ndrange=(int(np.prod(x.shape)),))
    chain = [best_index]
    current = best
    while int(np.prod(current.shape)) > 1:
        n = int(np.prod(current.shape))
        m = groups(n, group)
        dtype = backend.array_info(current).dtype  # a NumPy dtype, whatever the array type
        nxt, nxt_index = backend.allocate((m,), dtype), backend.allocate((m,), np.int64)
        launch(nxt, nxt_index, current, ndrange=(n,))
        chain.append(nxt_index)
        current = nxt
    backend.synchronize()
    # Each level's index points into the level below; follow them down to x.
    pos = 0
    for level in reversed(chain):
        pos = int(backend.to_host(level)[pos])
    return {"value": backend.to_host(current)[0],
            "index": np.array(np.unravel_index(pos, tuple(x.shape)), np.int64)}


def argmax_total(args: Args, c: Consts) -> dict[str, Any]:
    x = args[2]
    pos = int(np.argmax(x))
    return {"value": x.reshape(-1)[pos],
            "index": np.array(np.unravel_index(pos, x.shape), np.int64)}


def histogram_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                   c: Consts) -> Args:
    # A peaked distribution, so a few bins see heavy atomic contention.
    data = np.clip(rng.normal(128, 40, size=shape), 0, 255).astype(np.uint8)
    return (np.zeros(c["BINS"], np.uint32), data)


def histogram_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    counts, data = args
    bins = (data.reshape(-1).astype(np.int64) * c["BINS"]) // 256
    return {"counts": (counts + np.bincount(bins, minlength=c["BINS"])).astype(np.uint32)}


def bitonic_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                 c: Consts) -> Args:
    keys = rng.integers(0, 2**32, size=int(np.prod(shape)), dtype=np.uint64).astype(dt)
    return (keys, np.int64(keys.size))


def bitonic_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    keys = args[0].copy()
    segment = 2 * c["GROUP"]
    for start in range(0, keys.size, segment):
        keys[start:start + segment].sort()
    return {"keys": keys}


def bitonic_ndrange(args: Args) -> tuple[int, ...]:
    return (-(-args[0].size // 2),)  # a work-item per two keys
