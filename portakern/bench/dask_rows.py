"""``portakern bench --dask``: portakern.dask against plain dask.array on one LocalCluster.

Each row times one graph computed on the workers (``persist`` and wait: the result
stays there, nothing is gathered), with the inputs already on the workers, same
chunks for both sides: saxpy and a fused polynomial (:func:`portakern.dask.map_blocks`
against the array expression), a Jacobi step (:func:`portakern.dask.map_overlap`
against ``dask.array.map_overlap`` of the NumPy step) and a 256-bin histogram
(:func:`portakern.dask.reduce` against ``dask.array.histogram``). The ratio is
portakern's time over plain Dask's; the first run of each side (compiles) is not timed.
"""

from __future__ import annotations

import logging
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .rows import Row

SAXPY = """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

POLY = """\
@kernel void poly(T* y, const T* x) {
    const long i = @index(Global, Linear);
    const T v = x[i];
    y[i] = ((((T)0.5 * v + (T)1.5) * v - (T)2.0) * v + (T)0.25) * v + (T)3.0;
}
"""

JACOBI = """\
@kernel void jacobi(T* y, const T* x) {
    auto [i, j] = @index(Global, NTuple);
    const long n = @ndrange(0), m = @ndrange(1), k = i * m + j;
    if (i == 0 || j == 0 || i == n - 1 || j == m - 1) { y[k] = x[k]; return; }
    y[k] = (T)0.25 * (x[k - 1] + x[k + 1] + x[k - m] + x[k + m]);
}
"""

HIST = """\
@kernel void hist(int* bins, const float* x, int nbins) {
    const long i = @index(Global, Linear);
    int b = (int)(x[i] * nbins);
    b = b < 0 ? 0 : (b >= nbins ? nbins - 1 : b);
    @atomic_add(&bins[b], 1);
}
"""


def _np_jacobi(x: np.ndarray) -> np.ndarray:
    y = x.copy()
    y[1:-1, 1:-1] = np.float32(0.25) * (x[1:-1, :-2] + x[1:-1, 2:] + x[:-2, 1:-1]
                                        + x[2:, 1:-1])
    return y


def _timed(client: Any, make: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    from distributed import wait

    first = client.persist(make())  # warm-up: compiles on the workers
    wait(first)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        r = client.persist(make())
        wait(r)
        times.append(time.perf_counter() - t)
        del r
    return statistics.median(times), first


def run(*, quick: bool = False, repeats: int = 5, workers: int | None = None,
        client: Any = None) -> list[Row]:
    """The rows, on ``client``, else on a new ``LocalCluster(processes=True)`` of ``workers``."""
    from distributed import Client, LocalCluster

    if client is not None:
        return _rows(client, quick, repeats)
    workers = workers or max(2, min(4, (os.cpu_count() or 2) // 2))
    with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as new:
        return _rows(new, quick, repeats)


def _rows(client: Any, quick: bool, repeats: int) -> list[Row]:
    import dask.array as da

    import portakern as pk
    import portakern.dask as pkd

    n = 2 * 10**6 if quick else 5 * 10**7
    nchunks = 4 if quick else 20
    side = 1000 if quick else 6000
    workers = len(client.scheduler_info()["workers"])
    rows: list[Row] = []
    rs = da.random.default_rng(0)
    x = client.persist(rs.random(n, chunks=n // nchunks, dtype=np.float32))
    y = client.persist(rs.random(n, chunks=n // nchunks, dtype=np.float32))
    g = client.persist(rs.random((side, side), chunks=(side // 2, side // max(2, nchunks // 2)),
                                 dtype=np.float32))
    saxpy, poly = pk.kernel(SAXPY), pk.kernel(POLY)
    jacobi, hist = pk.kernel(JACOBI), pk.kernel(HIST)
    a = np.float32(2.0)
    cases: list[tuple[str, str, Callable[[], Any], Callable[[], Any], int]] = [
        ("saxpy", "dask.array", lambda: pkd.map_blocks(saxpy, y, x, a, inout="y"),
         lambda: a * x + y, 3 * 4 * n),
        ("polynomial", "dask.array", lambda: pkd.map_blocks(poly, x, out="y"),
         lambda: (((0.5 * x + 1.5) * x - 2.0) * x + 0.25) * x + 3.0, 2 * 4 * n),
        ("jacobi (map_overlap)", "dask map_overlap",
         lambda: pkd.map_overlap(jacobi, g, depth=1, boundary="none", out="y"),
         lambda: g.map_overlap(_np_jacobi, depth=1, boundary="none",
                               meta=np.empty((0, 0), np.float32)), 2 * 4 * side * side),
        ("histogram (reduce)", "da.histogram",
         lambda: pkd.reduce(hist, x, 256, out="bins", shape=(256,), dtype=np.int32),
         lambda: da.histogram(x, bins=256, range=(0, 1))[0], 4 * n),
    ]
    for name, baseline, ours, theirs, nbytes in cases:
        t_ours, r_ours = _timed(client, ours, repeats)
        t_base, r_base = _timed(client, theirs, repeats)
        ok = bool(abs(r_ours.astype(np.float64) - r_base).max().compute()
                  <= (0 if "histogram" in name else 1e-3))
        size = f"{n:.0e} in {nchunks} chunks" if "jacobi" not in name else (
            f"{side}x{side} in {g.npartitions} chunks")
        rows.append(Row(name, f"dask x{workers}", t_ours, baseline, t_base,
                        t_ours / t_base, size=size, gbps=nbytes / t_ours / 1e9,
                        baseline_gbps=nbytes / t_base / 1e9, ok=ok))
        del r_ours, r_base
    return rows
