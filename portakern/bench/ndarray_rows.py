"""The ``transpose_view`` rows of ``portakern bench``: N-d array parameters on views.

DESIGN section 4 (2026-12): N-d strided views run as fast as contiguous arrays when the
access is contiguous. The ``transpose_views`` example transposes a view of padded rows
(``big[:, :W]``, strided, no copy) against the same data as a contiguous array (target
<= 1.2x), and against NumPy's transpose copy, ``np.ascontiguousarray(a.T)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .measure import interleaved
from .rows import Row

__all__ = ["NAME", "bench_rows"]

#: The rows' name (``portakern bench --only transpose_view``).
NAME = "transpose_view"
#: The view-against-contiguous bound (docs/performance.md).
LIMIT = 1.2


def bench_rows(quick: bool = False, repeats: int = 7, budget: float = 2.0,
               only: Any = ()) -> list[Row]:
    """Two rows on ``CPU()``: the transpose of a strided view against a contiguous array,
    and against NumPy; each after checking both runs against NumPy."""
    if only and NAME not in only:
        return []
    from .. import examples
    from ..backends.opencl import CPU

    h, w = (64, 48) if quick else (2048, 2048)
    rng = np.random.default_rng(0)
    big = rng.standard_normal((h, w + 16)).astype(np.float32)
    view = big[:, :w]  # padded rows: strides (w + 16, 1) elements
    dense = np.ascontiguousarray(view)
    out_view, out_dense = np.zeros((w, h), np.float32), np.zeros((w, h), np.float32)
    launch = examples.get("transpose_views").load()(CPU())
    nd = view.shape

    def on_view() -> None:
        launch(out_view, view, ndrange=nd)

    def on_dense() -> None:
        launch(out_dense, dense, ndrange=nd)

    def numpy() -> None:
        np.ascontiguousarray(view.T)

    on_view()
    on_dense()
    ok = bool(np.array_equal(out_view, view.T) and np.array_equal(out_dense, view.T))
    t_view, t_dense, t_np = interleaved([on_view, on_dense, numpy], repeats, budget)
    size = f"{h}x{w}"
    nbytes = 2 * view.nbytes
    note = "the transpose_views example on a view of padded rows, big[:, :W] (no copy)"
    return [
        Row(NAME, "CPU", t_view, "contiguous", t_dense, t_view / t_dense, size=size,
            gbps=nbytes / t_view / 1e9, baseline_gbps=nbytes / t_dense / 1e9,
            target="" if quick else f"<= {LIMIT}",
            meets=None if quick else t_view / t_dense <= LIMIT, ok=ok,
            note=note + ", against the same kernel on a contiguous copy of it"),
        Row(NAME, "CPU", t_view, "numpy", t_np, t_view / t_np, size=size,
            gbps=nbytes / t_view / 1e9, baseline_gbps=nbytes / t_np / 1e9, ok=ok,
            note=note + ", against np.ascontiguousarray(a.T)"),
    ]
