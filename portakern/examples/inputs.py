"""Inputs and launch shapes shared by the example families: random arrays, scalars,
the ``size`` -> shape rules, and small constant-driven callables for the catalog.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .catalog import U8, Args, Consts, Size


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype,
                 low: float = -1.0, high: float = 1.0) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        # Small integers keep products and sums far from overflow.
        lo, hi = (0, 256) if dtype == U8 else (-10, 10)
        return rng.integers(lo, hi, size=shape, dtype=dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def scalar(dtype: np.dtype, value: float) -> np.generic:
    if np.issubdtype(dtype, np.integer):
        return dtype.type(int(round(value)) or 1)
    return dtype.type(value)


def shape_any(size: Size) -> tuple[int, ...]:
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"size must be an int or a shape of 1-3 axes, got {size!r}")
    return shape


def shape_2d(size: Size) -> tuple[int, ...]:
    shape = (size, size) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    if len(shape) != 2:
        raise ValueError(f"size must be an int n (an n x n image) or (H, W), got {size!r}")
    return shape


def shape_matmul(size: Size) -> tuple[int, ...]:
    if isinstance(size, (int, np.integer)):
        return (int(size),) * 3
    shape = tuple(int(s) for s in size)
    if len(shape) != 3:
        raise ValueError(f"size must be an int n (n x n matrices) or (M, K, N), got {size!r}")
    return shape


def shape_flat(size: Size) -> tuple[int, ...]:
    # Any shape: the reductions and the histogram run over the flattened array.
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    if not shape:
        raise ValueError("size must be an int or a non-empty shape")
    return shape


def groups(n: int, group: int) -> int:
    return max(1, -(-n // group))


def first_shape(args: Args) -> tuple[int, ...]:
    return tuple(args[0].shape)


def input_size(index: int) -> Callable[[Args], tuple[int, ...]]:
    return lambda args: (int(args[index].size),)


def constant(name: str) -> Callable[[Consts], Any]:
    return lambda c: c[name]


def tile(c: Consts) -> tuple[int, int]:
    return (c["TILE"], c["TILE"])
