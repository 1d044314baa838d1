"""The ``scan`` and ``copy_if`` rows of ``portakern bench`` (DESIGN section 2a, issue 24).

``scan``: ``pk.InclusiveScanKernel(dtype, "a+b")`` over 10^7 float32 and int32 elements,
against ``numpy.cumsum`` (target at most 1.5x) and, on an ``OpenCL`` backend (PyOpenCL
arrays, PoCL here), against PyOpenCL's own ``InclusiveScanKernel`` on the same queue
(target at most 1x). ``copy_if``: ``pk.copy_if(x, "x > 0")`` over 10^7 float32 against
NumPy's ``x[x > 0]`` (at most 1.5x) and PyOpenCL's ``pyopencl.algorithm.copy_if``
(at most 1x). Each row first checks that both sides agree, then times them in
alternating samples (the median of each). A GPU backend's rows are left out here
(its stand-in runs one thread per GPU thread: a time there means nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .measure import interleaved
from .rows import Row

#: The workload names these rows answer to in ``--only``.
NAMES = ("scan", "copy_if")

_N, _QUICK_N = 10**7, 10**4


def bench_rows(backends: list, quick: bool = False, repeats: int = 7, budget: float = 2.0,
               only: Any = ()) -> list[Row]:
    """The rows of every backend that runs on this machine's CPU (``CPU()``, ``OpenCL``)."""
    from ..backends.opencl import CPU, OpenCL

    rows: list[Row] = []
    n = _QUICK_N if quick else _N
    for backend in backends:
        if not isinstance(backend, (CPU, OpenCL)):
            continue
        for name, fn in (("scan", _scan_rows), ("copy_if", _copy_if_rows)):
            if only and name not in only:
                continue
            try:
                new = fn(backend, n, repeats, budget)
            except Exception as exc:  # noqa: BLE001 - one failing row must not end the run
                new = [Row(name, backend.name, float("nan"), "numpy", float("nan"),
                           float("nan"), ok=False, note=f"{type(exc).__name__}: {exc}")]
            if quick:
                for r in new:
                    r.target, r.meets = "", None
            rows += new
    return rows


def _row(name: str, backend: Any, t: float, baseline: str, t_base: float, n: int,
         dtype: Any, ok: bool, limit: float, note: str) -> Row:
    ratio = t / t_base
    return Row(name, backend.name, t, baseline, t_base, ratio, size=f"{n} {np.dtype(dtype)}",
               gbps=2 * n * np.dtype(dtype).itemsize / t / 1e9,
               target=f"<= {limit:g}x {baseline}", meets=ratio <= limit, ok=ok, note=note)


def _pyopencl_scan(backend: Any, dtype: Any) -> Callable[[Any, Any], Any] | None:
    from ..backends.opencl import CPU

    if isinstance(backend, CPU):
        return None
    try:
        from pyopencl.scan import InclusiveScanKernel as ClScan
    except ImportError:
        return None
    knl = ClScan(backend.context, dtype, "a+b", neutral="0")
    return lambda x, y: knl(x, y, queue=backend.queue)


def _scan_rows(backend: Any, n: int, repeats: int, budget: float) -> list[Row]:
    rows: list[Row] = []
    for dtype in (np.float32, np.int32):
        rows += _scan_dtype(backend, np.dtype(dtype), n, repeats, budget)
    return rows


def _scan_dtype(backend: Any, dtype: np.dtype, n: int, repeats: int,
                budget: float) -> list[Row]:
    from ..blocks.scan import InclusiveScanKernel

    # Small integers: float32 sums stay exact, so both sides must agree bit for bit.
    host = np.random.default_rng(0).integers(0, 4, n).astype(dtype)
    x, y = backend.to_device(host), backend.to_device(np.zeros(n, dtype))
    knl = InclusiveScanKernel(dtype, "a+b")
    want = np.cumsum(host, dtype=dtype)
    knl(x, out=y)
    ok = bool(np.array_equal(backend.to_host(y), want))
    out = np.empty_like(host)

    def ours() -> None:
        knl(x, out=y)
        backend.synchronize()

    t_pk, t_np = interleaved([ours, lambda: np.cumsum(host, dtype=dtype, out=out)],
                             repeats, budget)
    note = ("pk.InclusiveScanKernel(dtype, 'a+b')(x, out=y): chunk totals, their scan, "
            "the chunks again; against numpy.cumsum(x, dtype=dtype, out=out)")
    rows = [_row("scan", backend, t_pk, "numpy", t_np, n, dtype, ok, 1.5, note)]
    theirs = _pyopencl_scan(backend, dtype)
    if theirs is None:
        return rows
    z = backend.to_device(np.zeros(n, dtype))
    theirs(x, z)
    ok_cl = ok and bool(np.array_equal(backend.to_host(z), want))

    def peer() -> None:
        theirs(x, z)
        backend.synchronize()

    t_pk, t_cl = interleaved([ours, peer], repeats, budget)
    rows.append(_row("scan", backend, t_pk, "pyopencl", t_cl, n, dtype, ok_cl, 1.0,
                     "against pyopencl.scan.InclusiveScanKernel(ctx, dtype, 'a+b', "
                     "neutral='0') on the same queue"))
    return rows


def _copy_if_rows(backend: Any, n: int, repeats: int, budget: float) -> list[Row]:
    from ..backends.opencl import CPU
    from ..blocks.copy_if import copy_if

    host = (np.random.default_rng(1).random(n) - 0.5).astype(np.float32)
    x = backend.to_device(host)
    want = host[host > 0]
    got, count = copy_if(x, "x > 0")
    ok = count == want.size and bool(np.array_equal(backend.to_host(got), want))

    def ours() -> None:
        copy_if(x, "x > 0")
        backend.synchronize()

    t_pk, t_np = interleaved([ours, lambda: host[host > 0]], repeats, budget)
    rows = [_row("copy_if", backend, t_pk, "numpy", t_np, n, np.float32, ok, 1.5,
                 "pk.copy_if(x, 'x > 0'): chunk counts, their scan, the kept elements "
                 "copied; against numpy's x[x > 0]; half the elements kept")]
    if isinstance(backend, CPU):
        return rows
    try:
        from pyopencl.algorithm import copy_if as cl_copy_if
    except ImportError:
        return rows

    def peer() -> Any:
        out, cl_count, _ = cl_copy_if(x, "ary[i] > 0", queue=backend.queue)
        return out, int(cl_count.get())  # waits, as pk.copy_if's count does

    out, m = peer()
    ok_cl = ok and m == want.size and bool(np.array_equal(out.get()[:m], want))
    t_pk, t_cl = interleaved([ours, peer], repeats, budget)
    rows.append(_row("copy_if", backend, t_pk, "pyopencl", t_cl, n, np.float32, ok_cl, 1.0,
                     "against pyopencl.algorithm.copy_if(x, 'ary[i] > 0') on the same "
                     "queue (its count read back, as pk.copy_if returns an int)"))
    return rows
