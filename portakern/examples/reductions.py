"""Argument makers, NumPy reference models and multi-launch pipelines of the
reductions (sum, max, argmax), the histogram and the bitonic sort.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..launch.resolve import get_backend
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


#: The launchers and intermediate arrays of recent pipelines (see _take), at most _KEEP.
_KEPT: dict[tuple, list] = {}
_KEEP = 8


def _take(ex: Example, c: Consts, backend: Any, n: int, dtypes: tuple) -> tuple[tuple, list]:
    """One launcher per pass of a pipeline over ``n`` elements, and each later pass's outputs.

    A pipeline run again on inputs of the same size (a benchmark, a loop over images)
    gets the launchers and arrays of its last run back: each launch then sees the very
    arrays it saw before, which the launcher recognises without checking them again,
    where new arrays cost a full argument check per pass. While a run uses them they
    are out of the table, so a concurrent run of the same size builds its own.
    Returns the key (for :func:`_give_back`) and ``[(launch, outputs, size), ...]``:
    the first pass writes the caller's arrays (``outputs`` None), the last one value.
    """
    group = c["GROUP"]
    kernel = ex.load(**c)
    # The executor too: CPU()'s launchers keep the path (native or PoCL) they started on.
    key = (ex.name, tuple(sorted(c.items())), backend, backend.executor(kernel), n, dtypes)
    levels = _KEPT.pop(key, None)
    if levels is None:
        levels = [(kernel(backend, group), None, n)]
        m = groups(n, group)
        while m > 1:
            out = groups(m, group)
            levels.append((kernel(backend, group),
                           tuple(backend.allocate((out,), dt) for dt in dtypes), m))
            m = out
    return key, levels


def _give_back(key: tuple, levels: list) -> None:
    if len(_KEPT) >= _KEEP:
        _KEPT.pop(next(iter(_KEPT)))  # the oldest
    _KEPT[key] = levels


def reduce_run(backend: Any, args: Args, c: Consts, ex: Example) -> dict[str, Any]:
    partial, x = args
    backend = _backend_for(backend, args)
    n = math.prod(x.shape)
    key, levels = _take(ex, c, backend, n, (backend.array_info(partial).dtype,))
    try:
        # Each pass reduces GROUP-fold; a few passes reach one value.
        levels[0][0](partial, x, ndrange=(n,))
        current = partial
        for launch, (nxt,), size in levels[1:]:
            launch(nxt, current, ndrange=(size,))
            current = nxt
        backend.synchronize()
        return {"result": backend.to_host(current)[0]}
    finally:
        _give_back(key, levels)


def reduce_sum_total(args: Args, c: Consts) -> dict[str, Any]:
    return {"result": args[1].sum(dtype=args[1].dtype)}


def reduce_max_total(args: Args, c: Consts) -> dict[str, Any]:
    return {"result": args[1].max()}


def argmax_run(backend: Any, args: Args, c: Consts, ex: Example) -> dict[str, Any]:
    best, best_index, x = args
    backend = _backend_for(backend, args)
    n = math.prod(x.shape)
    # A NumPy dtype, whatever the array type.
    dtypes = (backend.array_info(best).dtype, np.dtype(np.int64))
    key, levels = _take(ex, c, backend, n, dtypes)
    try:
        levels[0][0](best, best_index, x, ndrange=(n,))
        chain, current = [best_index], best
        for launch, (nxt, nxt_index), size in levels[1:]:
            launch(nxt, nxt_index, current, ndrange=(size,))
            chain.append(nxt_index)
            current = nxt
        backend.synchronize()
        # Each level's index points into the level below; follow them down to x,
        # copying one element of each level to the host (not the whole level: the
        # first has one entry per group of x).
        pos = 0
        for level in reversed(chain):
            pos = int(backend.to_host(level[pos:pos + 1])[0])
        return {"value": backend.to_host(current)[0],
                "index": np.array(np.unravel_index(pos, tuple(x.shape)), np.int64)}
    finally:
        _give_back(key, levels)


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
