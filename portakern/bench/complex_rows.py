"""The ``complex_madd`` row of ``portakern bench``: complex multiply-add on complex64.

``y = a * x + y`` on ``cfloat`` arrays (docs/language.md, "Complex numbers"), the saxpy of
complex numbers, on ``CPU()`` against NumPy's ``y += a * x`` in the same run. It shows the
cost of the complex struct and its operators against NumPy's own complex loops; no bound is
set yet (docs/performance.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .measure import interleaved
from .rows import Row

__all__ = ["NAME", "SOURCE", "bench_rows"]

#: The row's name (``portakern bench --only complex_madd``).
NAME = "complex_madd"

SOURCE = """
@kernel void complex_madd(T* y, const T* x, const T* a) {
    const long i = @index(Global, Linear);
    y[i] = a[0] * x[i] + y[i];
}
"""


def bench_rows(quick: bool = False, repeats: int = 7, budget: float = 2.0,
               only: Any = ()) -> list[Row]:
    """One row on ``CPU()`` against NumPy, after checking the kernel's output against it."""
    if only and NAME not in only:
        return []
    from .. import kernels
    from ..backends.opencl import CPU

    n = 4096 if quick else 1 << 22
    rng = np.random.default_rng(0)

    def values(k: int) -> np.ndarray:
        return (rng.standard_normal(k) + 1j * rng.standard_normal(k)).astype(np.complex64)

    x, y0, a = values(n), values(n), values(16)  # a: the multiplier, in a small array
    y, y_np, scratch = y0.copy(), y0.copy(), np.empty_like(y0)
    launch = kernels.Kernel(SOURCE)(CPU())

    def portakern() -> None:
        launch(y, x, a, ndrange=n)

    def numpy() -> None:
        np.multiply(x, a[0], out=scratch)
        np.add(y_np, scratch, out=y_np)

    portakern()
    numpy()
    ok = bool(np.allclose(y, y_np, rtol=1e-5, atol=1e-5))
    t_pk, t_np = interleaved([portakern, numpy], repeats, budget)
    nbytes = 3 * x.nbytes  # read x and y, write y
    return [Row(NAME, "CPU", t_pk, "numpy", t_np, t_pk / t_np, size=f"{n} complex64",
                gbps=nbytes / t_pk / 1e9, baseline_gbps=nbytes / t_np / 1e9,
                gflops=8 * n / t_pk / 1e9, baseline_gflops=8 * n / t_np / 1e9, ok=ok,
                note="y = a * x + y on cfloat arrays, against NumPy's multiply and add")]
