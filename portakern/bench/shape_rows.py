"""The kernel-shape rows of ``portakern bench`` (issue 27, DESIGN section 4): shapes real
kernels are written in, each against the fast form of the same work.

``grid_stride``
    ``for (long i = @index(Global, Linear); i < n; i += @ndrange())`` with far fewer
    work-items than elements, against the same saxpy with one work-item per element (the
    fast form; target <= 1.3x), and against NumPy's ``a * x + y``.
``uint_index``
    saxpy indexed by ``uint tid = @index(Global, Linear)`` and by ``int tid``, each against
    ``long tid`` (target <= 1.1x), 10^7 floats.
``broadcast_add``
    ``out[i, j] = a[i, j] + b[i, j]`` on N-d array parameters, ``b`` an ``np.broadcast_to``
    view (stride 0: a row broadcast down the rows, and a column broadcast along them),
    against NumPy's ``a + b`` (target <= 1x).

Each kernel's output is checked against NumPy's before anything is timed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .measure import interleaved
from .rows import Row

__all__ = ["NAMES", "LIMITS", "SOURCES", "bench_rows"]

#: The rows' names (``portakern bench --only grid_stride``) and each one's bound.
LIMITS = {"grid_stride": 1.3, "uint_index": 1.1, "broadcast_add": 1.0}
NAMES = tuple(LIMITS)

_SAXPY = """
@kernel void saxpy_{name}(float* y, const float* x, const float a) {{
    {index} tid = @index(Global, Linear);
    y[tid] = a * x[tid] + y[tid];
}}
"""

#: The kernels, by name.
SOURCES = {
    "grid_stride": """
@kernel void saxpy_grid_stride(float* y, const float* x, const float a, const long n) {
    for (long i = @index(Global, Linear); i < n; i += @ndrange()) {
        y[i] = a * x[i] + y[i];
    }
}
""",
    **{f"saxpy_{t}": _SAXPY.format(name=t, index=t) for t in ("long", "uint", "int")},
    "broadcast_add": """
@kernel void broadcast_add(T out[:, :], const T a[:, :], const T b[:, :]) {
    auto [i, j] = @index(Global, NTuple);
    out[i, j] = a[i, j] + b[i, j];
}
""",
}


def _kernel(name: str) -> Any:
    from ..kernels import kernel

    return kernel(SOURCES[name])


def _row(name: str, t: float, baseline: str, t_base: float, size: str, nbytes: int,
         quick: bool, ok: bool, note: str, limit: float | None) -> Row:
    ratio = t / t_base
    return Row(name, "CPU", t, baseline, t_base, ratio, size=size, gbps=nbytes / t / 1e9,
               baseline_gbps=nbytes / t_base / 1e9,
               target="" if quick or limit is None else f"<= {limit}",
               meets=None if quick or limit is None else ratio <= limit, ok=ok, note=note)


def _saxpy_case(n: int) -> tuple[np.ndarray, np.ndarray, np.float32, np.ndarray]:
    rng = np.random.default_rng(0)
    y = rng.standard_normal(n).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    a = np.float32(2.5)
    return y, x, a, a * x + y


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    return bool(np.allclose(got, want, rtol=1e-5, atol=1e-5))


def _grid_stride(cpu: Any, quick: bool, repeats: int, budget: float) -> list[Row]:
    n = 10_000 if quick else 10_000_000
    items = 256 if quick else 65_536  # about 150 elements per work-item at full size
    y, x, a, want = _saxpy_case(n)
    strided, flat = _kernel("grid_stride")(cpu), _kernel("saxpy_long")(cpu)
    y1, y2 = y.copy(), y.copy()
    strided(y1, x, a, np.int64(n), ndrange=(items,))
    flat(y2, x, a, ndrange=(n,))
    ok = _close(y1, want) and _close(y2, want)
    # Timed on the same arrays over and over: y grows, the work per call does not.
    fns: list[Callable[[], Any]] = [
        lambda: strided(y1, x, a, np.int64(n), ndrange=(items,)),
        lambda: flat(y2, x, a, ndrange=(n,)),
        lambda: a * x + y]
    t_s, t_f, t_np = interleaved(fns, repeats, budget)
    size, nbytes = str(n), 3 * y.nbytes
    note = f"saxpy, {items} work-items looping with stride @ndrange()"
    return [_row("grid_stride", t_s, "one item per element", t_f, size, nbytes, quick, ok,
                 note + ", against the same kernel with one work-item per element",
                 LIMITS["grid_stride"]),
            _row("grid_stride", t_s, "numpy", t_np, size, nbytes, quick, ok,
                 note + ", against NumPy's a * x + y (context)", None)]


def _uint_index(cpu: Any, quick: bool, repeats: int, budget: float) -> list[Row]:
    n = 10_000 if quick else 10_000_000
    y, x, a, want = _saxpy_case(n)
    launch = {t: _kernel(f"saxpy_{t}")(cpu) for t in ("long", "uint", "int")}
    ys = {t: y.copy() for t in launch}
    for t, f in launch.items():
        f(ys[t], x, a, ndrange=(n,))
    oks = {t: _close(ys[t], want) for t in launch}
    fns = [lambda t=t, f=f: f(ys[t], x, a, ndrange=(n,)) for t, f in launch.items()]
    times = dict(zip(launch, interleaved(fns, repeats, budget), strict=True))
    rows = []
    for t in ("uint", "int"):
        rows.append(_row("uint_index", times[t], "long index", times["long"], str(n),
                         3 * y.nbytes, quick, oks[t] and oks["long"],
                         f"saxpy indexed by `{t} tid = @index(Global, Linear)`, against "
                         "`long tid`", LIMITS["uint_index"]))
    return rows


def _broadcast_add(cpu: Any, quick: bool, repeats: int, budget: float) -> list[Row]:
    h, w = (64, 96) if quick else (4096, 2048)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((h, w)).astype(np.float32)
    row = rng.standard_normal(w).astype(np.float32)
    col = rng.standard_normal(h).astype(np.float32)
    launch = _kernel("broadcast_add")(cpu)
    rows = []
    for what, b in (("row", np.broadcast_to(row, (h, w))),
                    ("column", np.broadcast_to(col[:, None], (h, w)))):
        out = np.empty_like(a)
        launch(out, a, b, ndrange=(h, w))
        ok = bool(np.array_equal(out, a + b))
        t_pk, t_np = interleaved([lambda b=b, out=out: launch(out, a, b, ndrange=(h, w)),
                                  lambda b=b: a + b], repeats, budget)
        stride = "strides (0, 4)" if what == "row" else "strides (4, 0)"
        rows.append(_row("broadcast_add", t_pk, "numpy", t_np, f"{h}x{w}, {what} b",
                         2 * a.nbytes, quick, ok,
                         f"a[:, :] + b[:, :], b = np.broadcast_to of a {what} ({stride} "
                         "bytes, no copy), against NumPy's a + b", LIMITS["broadcast_add"]))
    return rows


def bench_rows(quick: bool = False, repeats: int = 7, budget: float = 2.0,
               only: Any = ()) -> list[Row]:
    """The rows of each name in :data:`NAMES` (all, or those in ``only``) on ``CPU()``."""
    names = [n for n in NAMES if not only or n in only]
    if not names:
        return []
    from ..backends.opencl import CPU

    cpu = CPU()
    runs = {"grid_stride": _grid_stride, "uint_index": _uint_index,
            "broadcast_add": _broadcast_add}
    rows: list[Row] = []
    for name in names:
        rows += runs[name](cpu, quick, repeats, budget)
    return rows
