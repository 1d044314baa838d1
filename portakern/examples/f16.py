"""Argument maker and NumPy reference of the ``f16_roundtrip`` example (float32 <-> half)."""

from __future__ import annotations

import numpy as np

from .catalog import Args, Consts


def f16_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
             c: Consts) -> Args:
    # Values across half's range: normals, subnormals (|v| < 6.1e-5), overflow to inf and
    # exact ties, so that the rounding is exercised.
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-26, 18, shape))).astype(np.float32)
    return (np.zeros(shape, np.float16), np.zeros(shape, np.float32), np.zeros(shape, np.uint16),
            x, np.float32(0.75))


def f16_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, _, _, x, scale = args
    with np.errstate(over="ignore"):
        h = (x * scale).astype(np.float16)
    return {"h": h, "back": h.astype(np.float32), "bits": h.view(np.uint16)}
