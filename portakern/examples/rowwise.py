"""Argument makers and NumPy models of the row-wise examples (``rowwise.pk``,
``argsort_rows.pk``): one workgroup per row of a 2-D float32 array."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .catalog import Args, Consts, Size

__all__ = ["argsort_args", "argsort_ref", "group_norm_ref", "row_args", "row_eps_args",
           "row_ndrange", "rms_norm_ref", "shape_rows", "softmax_ref"]

#: The epsilon the normalisations add to the variance (ggml's default for rms_norm).
EPS = np.float32(1e-5)


def shape_rows(size: Size) -> tuple[int, int]:
    """An int n is n elements in rows of at most 1024; a shape of one axis is one row;
    (rows, n) as given, and more axes are rows of the last one."""
    if isinstance(size, int):
        return (-(-size // 1024), min(size, 1024))
    shape = tuple(int(s) for s in size)
    return (1, shape[0]) if len(shape) == 1 else (int(np.prod(shape[:-1])), shape[-1])


def row_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
             c: Consts) -> Args:
    x = rng.standard_normal(shape).astype(dt)
    return (np.zeros_like(x), x, np.int64(shape[1]))


def row_eps_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                 c: Consts) -> Args:
    return (*row_args(shape, rng, dt, c), EPS)


def row_ndrange(group: int) -> Callable[[Args], tuple[int, ...]]:
    """One group per row: rows * ``group`` items (``group`` the example's GROUP)."""
    def ndrange(args: Args) -> tuple[int, ...]:
        return (args[1].shape[0] * group,)
    return ndrange


def rms_norm_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    x = args[1]
    return {"y": x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + args[3])}


def softmax_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    x = args[1]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}


def group_norm_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    x = args[1]
    d = x - x.mean(axis=1, keepdims=True)
    return {"y": d / np.sqrt(np.mean(d * d, axis=1, keepdims=True) + args[3])}


def argsort_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                 c: Consts) -> Args:
    x = rng.standard_normal(shape).astype(dt)
    return (np.zeros(shape, np.int32), x, np.int64(shape[1]))


def argsort_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    # Distinct random floats: the order is unique, so any correct sort agrees.
    return {"idx": np.argsort(args[1], axis=-1, kind="stable").astype(np.int32)}
