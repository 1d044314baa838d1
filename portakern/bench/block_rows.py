"""The rows of ``portakern bench`` for the building blocks (docs/building-blocks.md).

``elementwise_kernel``: a fused expression as one ``pk.ElementwiseKernel`` against NumPy
computing it with temporaries (DESIGN section 4: at most 0.5x NumPy's time).
``reduction_kernel``: ``pk.ReductionKernel`` sum and L2 norm over the last and the first
axis against NumPy's (at most 1x). On ``CPU()``, each checked against NumPy first.
On an ``OpenCL`` backend (PyOpenCL arrays, PoCL here), :func:`opencl_rows` times the same
expressions against PyOpenCL's own ``ElementwiseKernel`` and ``ReductionKernel`` on the
same queue (at most 1x): the fused expression, and the sum and L2 norm of every element
(PyOpenCL's reduction has no axis), each checked against the other side first.
"""

from __future__ import annotations

from collections.abc import Callable
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


def opencl_rows(backends: list, quick: bool = False, repeats: int = 7, budget: float = 2.0,
                only: Any = ()) -> list[Row]:
    """The rows against PyOpenCL's own kernels, per ``OpenCL`` backend, where it is installed."""
    from ..backends.opencl import OpenCL

    rows: list[Row] = []
    for backend in backends:
        if type(backend) is not OpenCL:
            continue
        try:
            import pyopencl.elementwise  # noqa: F401 - the peer; its rows need it
            import pyopencl.reduction  # noqa: F401
        except ImportError:
            return rows
        for name, fn in (("elementwise_kernel", _cl_elementwise), ("reduction_kernel",
                                                                   _cl_reductions)):
            if only and name not in only:
                continue
            try:
                new = fn(backend, quick, repeats, budget)
            except Exception as exc:  # noqa: BLE001 - one failing row must not end the run
                new = [Row(name, backend.name, float("nan"), "pyopencl", float("nan"),
                           float("nan"), ok=False, note=f"{type(exc).__name__}: {exc}")]
            rows += new
    return rows


def _peer_row(name: str, backend: Any, size: str, t_pk: float, t_cl: float, quick: bool,
              ok: bool, note: str) -> Row:
    ratio = t_pk / t_cl
    return Row(name, backend.name, t_pk, "pyopencl", t_cl, ratio, size=size,
               target="" if quick else "<= 1x pyopencl", meets=None if quick else ratio <= 1,
               ok=ok, note=note)


def _timed_pair(backend: Any, ours: Callable[[], Any], theirs: Callable[[], Any],
                repeats: int, budget: float) -> tuple[float, float]:
    def a() -> None:
        ours()
        backend.synchronize()

    def b() -> None:
        theirs()
        backend.synchronize()

    return interleaved([a, b], repeats, budget)


def _cl_elementwise(backend: Any, quick: bool, repeats: int, budget: float) -> list[Row]:
    from pyopencl.elementwise import ElementwiseKernel as ClElementwise

    from ..blocks import ElementwiseKernel

    n = 1 << 14 if quick else 10**7
    rng = np.random.default_rng(24)
    hx, hy = rng.random(n, dtype=F32), rng.random(n, dtype=F32)
    x, y = backend.to_device(hx), backend.to_device(hy)
    z, w = backend.to_device(np.zeros(n, F32)), backend.to_device(np.zeros(n, F32))
    a, b = F32(1.5), F32(0.5)
    fused = ElementwiseKernel("T x, T y, T a, T b", "T z", "z = a * x * x + b * y - x * y",
                              "bench_fused")
    peer = ClElementwise(backend.context, "float *w, const float *x, const float *y, "
                         "float a, float b", "w[i] = a * x[i] * x[i] + b * y[i] - x[i] * y[i]",
                         "bench_fused_cl")
    fused(x, y, a, b, z)
    peer(w, x, y, a, b, queue=backend.queue)
    got, want = backend.to_host(z), backend.to_host(w)
    ok = bool(np.allclose(got, want, rtol=1e-5, atol=1e-6)
              and np.allclose(got, a * hx * hx + b * hy - hx * hy, rtol=1e-5, atol=1e-6))
    t_pk, t_cl = _timed_pair(backend, lambda: fused(x, y, a, b, z),
                             lambda: peer(w, x, y, a, b, queue=backend.queue), repeats, budget)
    return [_peer_row("elementwise_kernel", backend, f"{n} float32", t_pk, t_cl, quick, ok,
                      "z = a*x*x + b*y - x*y: pk.ElementwiseKernel against "
                      "pyopencl.elementwise.ElementwiseKernel, same queue, outputs given")]


def _cl_reductions(backend: Any, quick: bool, repeats: int, budget: float) -> list[Row]:
    from pyopencl.reduction import ReductionKernel as ClReduction

    from ..blocks import ReductionKernel

    side = 256 if quick else 4096
    host = np.random.default_rng(24).random((side, side), dtype=F32)
    m = backend.to_device(host)
    rows = []
    cases = [("sum", "x", "y = a", "x[i]", lambda s: s),
             ("L2 norm", "x * x", "y = sqrt(a)", "x[i] * x[i]", np.sqrt)]
    for label, map_expr, post, cl_map, finish in cases:
        ours = ReductionKernel("T x", "T y", map_expr, "a + b", post, "0", "bench_red")
        peer = ClReduction(backend.context, np.float32, neutral="0", reduce_expr="a + b",
                           map_expr=cl_map, arguments="const float *x")
        got = float(backend.to_host(ours(m)))
        theirs = float(finish(peer(m, queue=backend.queue).get()))
        want = float(finish(host.sum(dtype=np.float64) if label == "sum"
                            else np.square(host, dtype=np.float64).sum()))
        ok = bool(np.isclose(got, want, rtol=1e-4) and np.isclose(theirs, want, rtol=1e-4))
        t_pk, t_cl = _timed_pair(backend, lambda k=ours: backend.to_host(k(m)),
                                 lambda k=peer, f=finish: f(k(m, queue=backend.queue).get()),
                                 repeats, budget)
        rows.append(_peer_row("reduction_kernel", backend, f"{label}, every element, "
                              f"{side}x{side} float32", t_pk, t_cl, quick, ok,
                              f"ReductionKernel {label} of all elements, read back, against "
                              f"pyopencl.reduction.ReductionKernel on the same queue"))
    return rows
