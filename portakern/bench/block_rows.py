"""The rows of ``portakern bench`` for the building blocks (docs/building-blocks.md).

``elementwise_kernel``: a fused expression as one ``pk.ElementwiseKernel`` against NumPy
computing it with temporaries (DESIGN section 4: at most 0.5x NumPy's time).
``reduction_kernel``: ``pk.ReductionKernel`` sum and L2 norm over the last and the first
axis against NumPy's (at most 1x). On ``CPU()``, each checked against NumPy first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .measure import interleaved
from .rows import F32, Row

#: The names these rows answer to in ``portakern bench --only``.
NAMES = ("elementwise_kernel", "reduction_kernel")


def _row(name: str, size: str, t_pk: float, t_np: float, limit: float | None, ok: bool,
         note: str) -> Row:
    """A row; ``limit`` None (quick sizes) carries no target."""
    ratio = t_pk / t_np
    return Row(name, "CPU", t_pk, "numpy", t_np, ratio, size=size,
               target=f"<= {limit}" if limit is not None else "",
               meets=ratio <= limit if limit is not None else None, ok=ok, note=note)


def bench_rows(quick: bool = False, repeats: int = 7, budget: float = 2.0,
               only: Any = ()) -> list[Row]:
    """The building blocks' rows on ``CPU()`` (medians of alternating samples)."""
    from ..blocks import ElementwiseKernel, ReductionKernel

    rows: list[Row] = []
    rng = np.random.default_rng(24)
    if not only or "elementwise_kernel" in only:
        n = 1 << 14 if quick else 10**7
        x, y = rng.random(n, dtype=F32), rng.random(n, dtype=F32)
        fused = ElementwiseKernel("T x, T y, T a, T b", "T z",
                                  "z = a * x * x + b * y - x * y", "bench_fused")
        out = np.empty_like(x)
        a, b = F32(1.5), F32(0.5)

        def numpy_fused() -> Any:
            return a * x * x + b * y - x * y

        fused(x, y, a, b, out)
        ok = bool(np.allclose(out, numpy_fused(), rtol=1e-5, atol=1e-6))
        t_pk, t_np = interleaved([lambda: fused(x, y, a, b, out), numpy_fused], repeats,
                                 budget)
        rows.append(_row("elementwise_kernel", f"{n} float32", t_pk, t_np,
                         None if quick else 0.5, ok,
                         "z = a*x*x + b*y - x*y as one ElementwiseKernel (output given) "
                         "against NumPy's expression"))
    if not only or "reduction_kernel" in only:
        side = 256 if quick else 4096
        m = rng.random((side, side), dtype=F32)
        total = ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "bench_sum")
        l2 = ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "bench_l2")
        cases = [("sum", total, lambda ax: m.sum(axis=ax)),
                 ("L2 norm", l2, lambda ax: np.sqrt(np.einsum("ij,ij->j", m, m)) if ax == 0
                  else np.linalg.norm(m, axis=ax))]
        for label, block, reference in cases:
            for axis in (-1, 0):
                got = block(m, axis=axis)
                ok = bool(np.allclose(got, reference(axis), rtol=1e-4))
                t_pk, t_np = interleaved([lambda b=block, ax=axis: b(m, axis=ax),
                                          lambda ax=axis, ref=reference: ref(ax)], repeats,
                                         budget)
                rows.append(_row("reduction_kernel", f"{label}, axis={axis}, {side}x{side} "
                                 "float32", t_pk, t_np, None if quick else 1.0, ok,
                                 f"ReductionKernel {label} over axis {axis} against NumPy"))
    return rows
