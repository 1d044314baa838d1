"""Argument maker and NumPy reference model of the q4_0 example: an array of structs
(a NumPy structured dtype) dequantized to floats."""

from __future__ import annotations

import numpy as np

from .catalog import Args, Consts, Size

#: ``block_q4_0`` of q4_0.pk as a NumPy dtype: a half scale and 16 packed bytes (ggml's).
BLOCK_Q4_0 = np.dtype([("d", np.float16), ("qs", np.uint8, (16,))])

#: Values per block.
QK4_0 = 32


def q4_0_shape(size: Size) -> tuple[int, ...]:
    """An int n: about n values (whole blocks of 32, at least one); a shape counts its
    elements."""
    n = size if isinstance(size, (int, np.integer)) else int(np.prod(size))
    return (max(1, -(-int(n) // QK4_0)) * QK4_0,)


def q4_0_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
              c: Consts) -> Args:
    blocks = np.zeros(shape[0] // QK4_0, BLOCK_Q4_0)
    blocks["d"] = (rng.random(blocks.size, dtype=np.float32) * 2 - 1).astype(np.float16)
    blocks["qs"] = rng.integers(0, 256, (blocks.size, 16), dtype=np.uint8)
    return (np.zeros(shape, np.float32), blocks)


def q4_0_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, blocks = args
    q = np.concatenate([blocks["qs"] & 15, blocks["qs"] >> 4], axis=1).astype(np.float32)
    return {"y": (blocks["d"].astype(np.float32)[:, None] * (q - 8)).ravel()}
