"""Argument makers and NumPy reference models of the elementwise and 2D examples:
vector_add, saxpy, polynomial, translate, matmul, the image kernels and transpose.
"""

from __future__ import annotations

import numpy as np

from .catalog import U8, Args, Consts
from .inputs import random_array, scalar


def vector_add_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                    c: Consts) -> Args:
    return (np.zeros(shape, dt), random_array(rng, shape, dt), random_array(rng, shape, dt))


def vector_add_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, a, b = args
    return {"c": a + b}


def saxpy_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
               c: Consts) -> Args:
    return (random_array(rng, shape, dt), random_array(rng, shape, dt), scalar(dt, 2.5))


def saxpy_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    y, x, a = args
    return {"y": a * x + y}


def polynomial_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                    c: Consts) -> Args:
    return (np.zeros(shape, dt), random_array(rng, shape, dt), scalar(dt, 1.5),
            scalar(dt, -2.0), scalar(dt, 0.5))


def polynomial_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, x, a, b, cc = args
    return {"y": a * x * x + b * x + cc}


# -- 2D: translate, matmul, images -------------------------------------------------------

def translate_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                   c: Consts) -> Args:
    h, w = shape
    # A shift down and to the left, so writes fall off two different edges.
    return (np.zeros(shape, dt), random_array(rng, shape, dt), np.int64(h // 5 + 1),
            np.int64(-(w // 7) - 1))


def translate_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    out, img, dy, dx = args
    h, w = img.shape
    dy, dx = int(dy), int(dx)
    want = out.copy()
    src_rows = slice(max(0, -dy), min(h, h - dy))
    src_cols = slice(max(0, -dx), min(w, w - dx))
    dst_rows = slice(max(0, dy), min(h, h + dy))
    dst_cols = slice(max(0, dx), min(w, w + dx))
    if src_rows.start < src_rows.stop and src_cols.start < src_cols.stop:
        want[dst_rows, dst_cols] = img[src_rows, src_cols]
    return {"out": want}


def matmul_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                c: Consts) -> Args:
    m, k, n = shape
    return (np.zeros((m, n), dt), random_array(rng, (m, k), dt), random_array(rng, (k, n), dt),
            np.int64(k))


def matmul_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, a, b, _k = args
    return {"c": a @ b}


def matmul_ndrange(args: Args) -> tuple[int, ...]:
    return tuple(args[0].shape)


def gray_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
              c: Consts) -> Args:
    return (np.zeros(shape, U8), random_array(rng, (3, *shape), U8))


def gray_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, rgb = args
    r, g, b = rgb.astype(np.uint32)
    return {"gray": ((77 * r + 150 * g + 29 * b + 128) >> 8).astype(np.uint8)}


def image_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
               c: Consts) -> Args:
    return (np.zeros(shape, U8), random_array(rng, shape, U8))


def negative_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, img = args
    return {"out": (255 - img).astype(np.uint8)}


def darken_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                c: Consts) -> Args:
    return (*image_args(shape, rng, dt, c), np.float32(0.6))


def darken_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, img, factor = args
    scaled = np.minimum(img.astype(np.float32) * np.float32(factor), np.float32(255))
    return {"out": scaled.astype(np.uint8)}


def transpose_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                   c: Consts) -> Args:
    return (np.zeros(shape[::-1], dt), random_array(rng, shape, dt))


def transpose_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    return {"out": np.ascontiguousarray(args[1].T)}


def transpose_views_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                         c: Consts) -> Args:
    """``out`` (W, H) and ``in`` (H, W) as a view: the transpose of a (W, H) array."""
    return (np.zeros(shape[::-1], dt), random_array(rng, shape[::-1], dt).T)


def input_shape(args: Args) -> tuple[int, ...]:
    return tuple(args[1].shape)
