"""Argument maker and NumPy reference of the ``fir_complex`` example (a complex64 FIR)."""

from __future__ import annotations

import numpy as np

from .catalog import Args, Consts

#: Filter taps.
TAPS = 16


def _complex(rng: np.random.Generator, n: int) -> np.ndarray:
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)


def fir_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
             c: Consts) -> Args:
    n = int(np.prod(shape))
    return (np.zeros(n, np.complex64), _complex(rng, n + TAPS - 1), _complex(rng, TAPS),
            np.int32(TAPS))


def fir_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    y, x, h, taps = args
    n = y.size
    # y[i] = sum_k h[k] x[i + k]: a correlation, in complex128, rounded once.
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.complex128), int(taps))[:n]
    return {"y": (windows @ h.astype(np.complex128)).astype(np.complex64)}
