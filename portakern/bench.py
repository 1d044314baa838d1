"""``portakern bench``: DESIGN section 4 measured, as ratios against baselines in one run.

Every row times a portakern launch and one baseline on the same inputs, in
alternation (so drift in the machine's load hits both alike), and reports the
median of the repeats and their ratio, ``seconds / baseline_seconds``: below 1
portakern is faster. The baselines are

* ``numpy``: the NumPy expression a user would write for the same result;
* ``pyopencl``: a hand-written PyOpenCL launch of the very kernel portakern
  built (arguments set once, ``enqueue_nd_range_kernel`` then a wait), which
  isolates what portakern's checks and bookkeeping cost;
* ``cupy``: CuPy's ``ElementwiseKernel``, ``RawKernel`` and ``cupy.matmul`` on
  CUDA;
* peers on ``CPU()`` (:data:`PEERS`): Numba ``prange`` loops and numexpr, each only
  when installed, and a C++/OpenMP loop with per-thread bins for the histogram; the
  fastest baseline of a workload is marked ``(fastest)``;
* ``target``: a fixed number from the contract (``get_backend`` under 1 us, a
  ready kernel in a new process under 50 ms).

Each row is checked against NumPy before it is timed (the ``ok`` column). The
sizes are those of the issue, except the tiled matmul (1024 instead of 2048:
PoCL runs it at ~1 GFLOP/s, so 2048 would take minutes); ``--quick`` shrinks
everything to a few seconds. See ``docs/performance.md`` for the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = ["Row", "Workload", "WORKLOADS", "main", "run"]

_F32 = np.float32


@dataclass
class Row:
    """One measurement: portakern against one baseline (fields as in ``--json``)."""

    name: str
    backend: str
    seconds: float
    baseline: str
    baseline_seconds: float
    ratio: float
    size: str = ""
    gbps: float | None = None
    baseline_gbps: float | None = None
    gflops: float | None = None
    baseline_gflops: float | None = None
    target: str = ""
    meets: bool | None = None
    ok: bool | None = None
    note: str = ""
    #: The fastest of a workload's baselines (NumPy and its peers): the one to beat.
    best: bool | None = None


@dataclass(frozen=True)
class Workload:
    """A benchmark problem: an example kernel (or an inline one) and its NumPy twin.

    Parameters
    ----------
    name : str
        Row name.
    example : str
        The catalog entry (:mod:`portakern.examples`) whose kernel, inputs and
        launch shape are used; with ``source``, the ``@kernel`` name instead.
    full, quick : int or tuple
        Problem sizes (in the example's ``size`` convention).
    numpy : callable
        ``numpy(args)``: the same result with NumPy, written into ``args`` in place
        (for a pipeline: returns the answer).
    kind : str
        ``"single"`` (one elementwise operation: portakern must not be slower),
        ``"fused"`` (several: portakern must be 2x faster) or ``""``.
    bytes, flops : callable, optional
        Memory traffic and floating-point work of one run, for GB/s and GFLOP/s.
    constants : dict
        Jinja constants for the kernel (``NSTEPS``).
    source : str, optional
        An inline kernel source (for operations no example covers).
    pipeline : bool
        Run the example's whole multi-launch pipeline (``Example.run``).
    cupy : str, optional
        The body of a ``cupy.ElementwiseKernel`` with the same result, or
        ``"matmul"`` for ``cupy.matmul``.
    patch : (str, str), optional
        Replace this text of the example's source by that one: a variant that
        shows the effect of a source change in the same run.
    make_args : callable, optional
        ``make_args(size, rng)``: the inputs of an inline ``source`` (default: an
        output of zeros and a uniform input, both float32); the ndrange is the
        first argument's shape.
    limit : float, optional
        The contract's bound on the ratio to NumPy, where ``kind`` does not give one.
    peers : tuple of str
        Other baselines (:data:`PEERS`): Numba, numexpr, a C++ loop. A peer whose
        package is not installed is left out of the run.
    """

    name: str
    example: str
    full: Any
    quick: Any
    numpy: Callable[[tuple], Any]
    kind: str = ""
    bytes: Callable[[tuple], float] | None = None
    flops: Callable[[tuple], float] | None = None
    constants: dict = field(default_factory=dict)
    source: str | None = None
    pipeline: bool = False
    cupy: str | None = None
    patch: tuple[str, str] | None = None
    make_args: Callable[[Any, np.random.Generator], tuple] | None = None
    limit: float | None = None
    peers: tuple[str, ...] = ()


def _nbytes(*which: int) -> Callable[[tuple], float]:
    return lambda args: float(sum(args[i].nbytes for i in which))


def _numpy_add(args: tuple) -> None:
    np.add(args[1], args[2], out=args[0])


def _numpy_saxpy(args: tuple) -> None:
    y, x, a = args
    y += a * x


def _numpy_polynomial(args: tuple) -> None:
    y, x, a, b, c = args
    y[...] = a * x * x + b * x + c


def _numpy_sin(args: tuple) -> None:
    np.sin(args[1], out=args[0])


def _numpy_exp(args: tuple) -> None:
    np.exp(args[1], out=args[0])


def _numpy_gray(args: tuple) -> None:
    gray, rgb = args
    r, g, b = (rgb[c].astype(np.uint32) for c in range(3))
    gray[...] = (77 * r + 150 * g + 29 * b + 128) >> 8


def _numpy_negative(args: tuple) -> None:
    np.subtract(255, args[1], out=args[0])


def _numpy_darken(args: tuple) -> None:
    out, img, factor = args
    out[...] = np.minimum(img * factor, np.float32(255))


def _numpy_argmax(args: tuple) -> dict:
    x = args[2]
    pos = int(np.argmax(x))
    return {"value": x.reshape(-1)[pos],
            "index": np.array(np.unravel_index(pos, x.shape), np.int64)}


def _numpy_histogram(args: tuple) -> None:
    counts, data = args
    counts += np.bincount(data.reshape(-1), minlength=counts.size).astype(np.uint32)


def _numpy_matmul(args: tuple) -> None:
    np.matmul(args[1], args[2], out=args[0])


def _numpy_particles(args: tuple, nsteps: int) -> None:
    x, v, dt, k, d = args
    for _ in range(nsteps):
        v += dt * (-k * x - d * v)
        x += dt * v


_NSTEPS = 200


def _numpy_particles200(args: tuple) -> None:
    _numpy_particles(args, _NSTEPS)


def _numpy_sum(args: tuple) -> dict:
    return {"result": args[1].sum(dtype=args[1].dtype)}


#: One Jacobi sweep of a 2D grid: each interior point becomes the mean of its four
#: neighbours, the boundary is copied.
_JACOBI = """@kernel void jacobi(T* out, const T* u) {
    auto [i, j] = @index(Global, NTuple);
    const long h = @ndrange(0);
    const long w = @ndrange(1);
    const long c = i * w + j;
    if (i > 0 && i < h - 1 && j > 0 && j < w - 1) {
        out[c] = (T)0.25 * (u[c - w] + u[c + w] + u[c - 1] + u[c + 1]);
    } else {
        out[c] = u[c];
    }
}
"""


def _jacobi_args(size: Any, rng: np.random.Generator) -> tuple:
    u = rng.uniform(0, 1, size).astype(_F32)
    return np.zeros_like(u), u


def _numpy_jacobi(args: tuple) -> None:
    out, u = args
    out[1:-1, 1:-1] = np.float32(0.25) * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                          + u[1:-1, 2:])
    _jacobi_edges(out, u)


def _jacobi_edges(out: np.ndarray, u: np.ndarray) -> None:
    out[0], out[-1], out[:, 0], out[:, -1] = u[0], u[-1], u[:, 0], u[:, -1]


_UNARY = """@kernel void {name}(T* y, const T* x) {{
    const long i = @index(Global, Linear);
    y[i] = {expr};
}}
"""

#: What the bench runs, in order. Sizes follow the issue (10^7 elements, 4000x4000
#: images, 10^6 particles with NSTEPS=200), except the tiled matmul (1024).
WORKLOADS: tuple[Workload, ...] = (
    Workload("vector_add", "vector_add", 10**7, 10**4, _numpy_add, "single",
             bytes=_nbytes(0, 1, 2), flops=lambda a: a[0].size, cupy="c = a + b"),
    Workload("negative", "negative", (4000, 4000), (64, 64), _numpy_negative, "single",
             bytes=_nbytes(0, 1), cupy="out = 255 - img"),
    Workload("sin", "pk_sin", 10**7, 10**4, _numpy_sin, "single", bytes=_nbytes(0, 1),
             source=_UNARY.format(name="pk_sin", expr="sin(x[i])"), cupy="y = sin(x)"),
    Workload("exp", "pk_exp", 10**7, 10**4, _numpy_exp, "single", bytes=_nbytes(0, 1),
             source=_UNARY.format(name="pk_exp", expr="exp(x[i])"), cupy="y = exp(x)"),
    Workload("saxpy", "saxpy", 10**7, 10**4, _numpy_saxpy, "fused", bytes=_nbytes(0, 1, 0),
             flops=lambda a: 2 * a[0].size, cupy="y = a * x + y"),
    Workload("polynomial", "polynomial", 10**7, 10**4, _numpy_polynomial, "fused",
             bytes=_nbytes(0, 1), flops=lambda a: 5 * a[0].size,
             cupy="y = a * x * x + b * x + c"),
    Workload("rgb_to_gray", "rgb_to_gray", 4000, 64, _numpy_gray, "fused",
             bytes=_nbytes(0, 1)),
    Workload("darken", "darken", (4000, 4000), (64, 64), _numpy_darken, "fused",
             bytes=_nbytes(0, 1)),
    Workload("brightest_pixel", "brightest_pixel", (4000, 4000), (64, 64), _numpy_argmax,
             bytes=_nbytes(2), pipeline=True),
    Workload("histogram", "histogram", (4000, 4000), (64, 64), _numpy_histogram,
             bytes=_nbytes(1), peers=("cpp_histogram", "numba_histogram")),
    # DESIGN section 4 (2026-12): a workgroup reduction within 1x NumPy's sum. The
    # example's partial sums, reduced again until one value is left.
    Workload("sum", "reduce_sum", 10**7, 10**4, _numpy_sum, bytes=_nbytes(1), pipeline=True,
             limit=1.0, peers=("numba_sum", "numexpr_sum")),
    Workload("jacobi", "jacobi", (4000, 4000), (64, 64), _numpy_jacobi, "fused",
             bytes=_nbytes(0, 1), flops=lambda a: 4.0 * a[0].size, source=_JACOBI,
             make_args=_jacobi_args, peers=("numba_jacobi", "numexpr_jacobi")),
    Workload("matmul_tiled", "matmul_tiled", 1024, 64, _numpy_matmul,
             flops=lambda a: 2.0 * a[1].shape[0] * a[1].shape[1] * a[2].shape[1],
             cupy="matmul"),
    Workload("particle_push", "particle_push", 10**6, 10**3, _numpy_particles200, "fused",
             flops=lambda a: 21.0 * _NSTEPS * a[0].shape[1],
             constants={"NSTEPS": _NSTEPS}),
    # PoCL vectorises across work-items only when a work-item's body has no loop left
    # (LLVM vectorises innermost loops): the example unrolls its step loop; this row
    # runs it without the `#pragma unroll`, to show what the pragma is worth.
    Workload("particle_push_rolled", "particle_push", 10**6, 10**3, _numpy_particles200,
             "fused", flops=lambda a: 21.0 * _NSTEPS * a[0].shape[1],
             constants={"NSTEPS": _NSTEPS},
             patch=("    #pragma unroll\n", "")),
)


# -- progress ---------------------------------------------------------------------------

class _Progress:
    """rich's or tqdm's progress bar when installed, else a line on stderr per step."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total, self.done, self._bar, self._kind = total, 0, None, "plain"
        self.enabled = enabled
        if not enabled:
            return
        try:
            from tqdm import tqdm  # type: ignore[import-not-found]

            self._bar, self._kind = tqdm(total=total, file=sys.stderr, leave=False), "tqdm"
        except ImportError:
            try:
                from rich.progress import Progress  # type: ignore[import-not-found]

                self._bar, self._kind = Progress(transient=True), "rich"
                self._bar.start()
                self._task = self._bar.add_task("bench", total=total)
            except ImportError:
                pass

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self._kind == "tqdm":
            self._bar.set_description(label)
            self._bar.update(1)
        elif self._kind == "rich":
            self._bar.update(self._task, advance=1, description=label)
        else:
            end = "\r" if sys.stderr.isatty() else "\n"
            print(f"[{self.done:>3}/{self.total}] {label:<40}", end=end, file=sys.stderr,
                  flush=True)

    def close(self) -> None:
        if self._kind == "tqdm":
            self._bar.close()
        elif self._kind == "rich":
            self._bar.stop()
        elif self.enabled and sys.stderr.isatty():
            print(" " * 60, end="\r", file=sys.stderr)


# -- timing -----------------------------------------------------------------------------

#: Shortest sample: calls shorter than this are repeated inside one sample, so the
#: clock's resolution and one-off hiccups of a shared machine weigh less.
_MIN_SAMPLE = 0.005


def _interleaved(fns: Sequence[Callable[[], Any]], repeats: int,
                 budget: float) -> list[float]:
    """Median seconds per call of each function, sampled in alternation.

    Each function runs once to warm up (compiles, caches); then samples of
    ``calls`` back-to-back calls alternate between the functions, so a change in
    the machine's load affects all of them alike. ``repeats`` samples are taken,
    fewer (at least three) when that would exceed ``budget`` seconds.
    """
    first = []
    for fn in fns:
        t = time.perf_counter()
        fn()
        first.append(time.perf_counter() - t)
    calls = max(1, math.ceil(_MIN_SAMPLE / max(min(first), 1e-9)))
    n = max(3, min(repeats, int(budget / max(calls * sum(first), 1e-9))))
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(n):
        for fn, out in zip(fns, times, strict=True):
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            out.append((time.perf_counter() - t) / calls)
    return [statistics.median(t) for t in times]


# -- one backend ------------------------------------------------------------------------

class _Case:
    """A workload bound to its kernel, inputs and launch shape."""

    def __init__(self, w: Workload, quick: bool) -> None:
        from . import examples
        from .kernels import Kernel

        self.w = w
        size = w.quick if quick else w.full
        if w.source is None:
            self.ex = examples.get(w.example)
            self.kernel = self.ex.load(**w.constants)
            if w.patch is not None:
                old, new = w.patch
                if old not in self.ex.source:
                    raise ValueError(f"{w.example}.pk no longer contains {old.strip()!r}")
                self.kernel = Kernel(self.ex.source.replace(old, new, 1), self.ex.kernel,
                                     filename=str(self.ex.path),
                                     **self.ex.merged_constants(**w.constants))
            self.args = self.ex.make_args(size, np.random.default_rng(0), **w.constants)
            self.ndrange = self.ex.ndrange(self.args)
            self.wg = self.ex.workgroupsize(**w.constants)
        else:
            self.ex = None
            self.kernel = Kernel(w.source, w.example)
            rng = np.random.default_rng(0)
            if w.make_args is not None:
                self.args = w.make_args(size, rng)
            else:
                n = size if isinstance(size, int) else math.prod(size)
                self.args = (np.zeros(n, _F32), rng.uniform(-3, 3, n).astype(_F32))
            self.ndrange = self.args[0].shape
            self.wg = None
        self.size = "x".join(str(s) for s in np.atleast_1d(size))

    def written(self, args: tuple) -> dict[str, Any]:
        return {p.name: a for p, a in zip(self.kernel.params, args, strict=True) if p.writable}

    def to_device(self, backend: Any) -> tuple:
        args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in self.args)
        if backend.name == "CPU":
            return args
        return tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in args)

    def launcher(self, backend: Any) -> Callable[[tuple], Any]:
        if self.w.pipeline:
            ex = self.ex
            consts = self.w.constants
            return lambda args: ex.run(backend, args, **consts)
        launch = self.kernel(backend, self.wg)
        nd = self.ndrange
        if backend.synchronous:
            return lambda args: launch(*args, ndrange=nd)

        def run_and_wait(args: tuple) -> None:
            launch(*args, ndrange=nd)
            backend.synchronize()
        return run_and_wait


def _agrees(got: dict, want: dict) -> bool:
    for name, w in want.items():
        w, g = np.asarray(w), np.asarray(got[name])
        exact = not np.issubdtype(w.dtype, np.inexact)
        if g.shape != w.shape or not np.allclose(g, w, rtol=0 if exact else 1e-4,
                                                 atol=0 if exact else 1e-4):
            return False
    return True


def _opencl_launcher(kernel: Any, backend: Any, wg: Any = None) -> Any:
    """A launcher that runs ``kernel`` through OpenCL on ``backend``.

    ``CPU()`` runs most kernels on its native path; the PyOpenCL baseline is the
    same kernel built by its OpenCL device (PoCL), launched by hand.
    """
    launcher = kernel(backend, wg)
    launcher.runner = backend  # CPU(): its OpenCL path, not its native one
    return launcher


def _handwritten(backend: Any, case: _Case, args: tuple) -> Callable[[], None] | None:
    """A PyOpenCL launch of the kernel portakern built for OpenCL, arguments set once."""
    if backend.target != "opencl" or case.w.pipeline:
        return None
    launcher = _opencl_launcher(case.kernel, backend, case.wg)
    launcher(*args, ndrange=case.ndrange)
    backend.synchronize()
    return _preset_launch(backend, launcher, args)


def _native_call(launcher: Any, args: tuple = ()) -> Callable[[], None] | None:
    """A hand-written call of the native path's ``pk_launch``, its arguments built once.

    None unless ``launcher`` ran on CPU()'s native path. What it leaves out is
    portakern's part of a launch: argument checks, the plan lookup, the record.
    """
    runner = launcher.runner
    if getattr(runner, "clips_ndrange", False) is not True:
        return None
    from .backends.native import _argument_block, _geometry

    (compiled, global_size, local_size, sizes), = launcher.plans.values()
    record = compiled.last  # the argument block of the launcher's last call
    if record is None:
        # A plugin's arrays (CPU subclasses): each call hands out new NumPy views of
        # their memory, so the record did not outlive the call. Built here, once.
        handles = [runner.array_info(a).handle if runner.array_info(a) is not None else a
                   for a in args]
        record = _argument_block(compiled, handles) + (handles,)
    argv, geom = record[1], _geometry(list(sizes), global_size, local_size)
    fn = compiled.fn
    return lambda _keep=record: fn(argv, geom)


def _preset_launch(backend: Any, launcher: Any, args: tuple, *,
                   set_each_call: bool = False) -> Callable[[], None]:
    """A hand-written PyOpenCL launch of what ``launcher`` built (and has run once).

    It uses a kernel object of its own, because portakern's keeps its own arguments
    set. The arguments are set once, or on every call (``set_each_call``); each
    launch waits, as a synchronous ``CPU()`` launch does.
    """
    import pyopencl as cl

    (compiled, global_size, local_size, sizes), = launcher.plans.values()
    kernel = cl.Kernel(compiled.program, compiled.kernel.function_name)
    cl_args = _opencl_args(cl, backend, (*args, *sizes))
    kernel.set_args(*cl_args)
    queue = backend.queue

    def launch() -> None:
        if set_each_call:
            kernel.set_args(*cl_args)
        cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size).wait()

    return launch


def _opencl_args(cl: Any, backend: Any, args: tuple) -> list:
    """Kernel arguments for a hand-written launch of what ``backend`` launches.

    Each array becomes what the backend itself hands the device (a plugin's
    arrays included); NumPy memory gets a zero-copy buffer, as ``CPU()`` gives it.
    """
    mf = cl.mem_flags
    out = []
    for a in args:
        info = None if isinstance(a, np.generic) else backend.array_info(a)
        h = a if info is None else info.handle
        if isinstance(h, np.ndarray):
            h = cl.Buffer(backend.context, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=h)
        out.append(h)
    return out


def _cupy_baseline(case: _Case, args: tuple) -> Callable[[], None] | None:
    """CuPy's own kernel for the same result (code path only without a GPU here)."""
    body = case.w.cupy
    if body is None:
        return None
    import cupy

    sync = cupy.cuda.Stream.null.synchronize
    if body == "matmul":
        c, a, b = args[0], args[1], args[2]
        return lambda: (cupy.matmul(a, b, out=c), sync())
    params = ", ".join(f"T {p.name}" for p in case.kernel.params if not p.writable)
    outs = ", ".join(f"T {p.name}" for p in case.kernel.params if p.writable)
    ek = cupy.ElementwiseKernel(params, outs, body, f"pk_bench_{case.w.name}")
    ins = [a for a, p in zip(args, case.kernel.params, strict=True) if not p.writable]
    out = [a for a, p in zip(args, case.kernel.params, strict=True) if p.writable]
    return lambda: (ek(*ins, *out), sync())


# -- peers: other ways to the same result on the CPU (optional packages) ------------------
#
# Each builder takes its own copy of a workload's inputs and returns the call to time
# (which returns the answer, for a pipeline), or None when the package is not
# installed. They are imported only here, when a row asks for them.

_JITTED: dict[str, Any] = {}


def _numba() -> Any:
    try:
        import numba
    except ImportError:
        return None
    return numba


def _numexpr() -> Any:
    try:
        import numexpr
    except ImportError:
        return None
    return numexpr


def _numba_sum(args: tuple) -> Callable[[], Any] | None:
    numba = _numba()
    if numba is None:
        return None
    if "sum" not in _JITTED:
        def total(x: np.ndarray) -> float:
            t = 0.0
            for i in numba.prange(x.size):
                t += x[i]
            return t

        _JITTED["sum"] = numba.njit(parallel=True)(total)
    fn, x = _JITTED["sum"], args[1].reshape(-1)
    return lambda: {"result": fn(x)}


def _numexpr_sum(args: tuple) -> Callable[[], Any] | None:
    ne = _numexpr()
    if ne is None:
        return None
    x = args[1].reshape(-1)
    return lambda: {"result": ne.evaluate("sum(x)", local_dict={"x": x})[()]}


def _numba_jacobi(args: tuple) -> Callable[[], Any] | None:
    numba = _numba()
    if numba is None:
        return None
    if "jacobi" not in _JITTED:
        def sweep(out: np.ndarray, u: np.ndarray) -> None:
            h, w = u.shape
            q = np.float32(0.25)
            for i in numba.prange(1, h - 1):
                for j in range(1, w - 1):
                    out[i, j] = q * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
            out[0, :] = u[0, :]
            out[h - 1, :] = u[h - 1, :]
            out[:, 0] = u[:, 0]
            out[:, w - 1] = u[:, w - 1]

        _JITTED["jacobi"] = numba.njit(parallel=True)(sweep)
    fn, (out, u) = _JITTED["jacobi"], args
    return lambda: fn(out, u)


def _numexpr_jacobi(args: tuple) -> Callable[[], Any] | None:
    ne = _numexpr()
    if ne is None:
        return None
    out, u = args
    names = {"n": u[:-2, 1:-1], "s": u[2:, 1:-1], "w": u[1:-1, :-2], "e": u[1:-1, 2:],
             "q": np.float32(0.25)}
    inner = out[1:-1, 1:-1]

    def sweep() -> None:
        ne.evaluate("q * (n + s + w + e)", local_dict=names, out=inner, casting="same_kind")
        _jacobi_edges(out, u)

    return sweep


_HISTOGRAM_CPP = r"""
#include <stdint.h>
#include <string.h>
#define PK_EXPORT extern "C" __attribute__((visibility("default")))
/* Per-thread bins: each OpenMP thread counts its share into its own 256 bins, which
   are added to the result at the end (what a C++ programmer writes for a CPU). */
PK_EXPORT void pk_bench_histogram(unsigned* counts, const uint8_t* data, long long n) {
#pragma omp parallel
    {
        unsigned bins[256];
        memset(bins, 0, sizeof bins);
#pragma omp for nowait
        for (long long i = 0; i < n; ++i) bins[data[i]]++;
        for (int b = 0; b < 256; ++b)
            if (bins[b]) __atomic_add_fetch(&counts[b], bins[b], __ATOMIC_RELAXED);
    }
}
PK_EXPORT int pk_launch(void* const*, const long long*) { return 0; }
"""


def _cpp_histogram(args: tuple) -> Callable[[], Any] | None:
    import ctypes
    from types import SimpleNamespace

    from .backends.native import _build, native_toolchain

    toolchain = native_toolchain()
    if isinstance(toolchain, str):
        return None
    if "cpp_histogram" not in _JITTED:
        stub = SimpleNamespace(name="pk_bench_histogram", source=_HISTOGRAM_CPP, params=(),
                               bindings=(), user_source="", filename="pk_bench_histogram.cpp")
        fn = _build(toolchain, stub).lib.pk_bench_histogram
        fn.restype = None
        fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong)
        _JITTED["cpp_histogram"] = fn
    fn, (counts, data) = _JITTED["cpp_histogram"], args
    if counts.size != 256:
        return None
    c, d, n = counts.ctypes.data, data.ctypes.data, data.size
    return lambda: fn(c, d, n)


def _numba_histogram(args: tuple) -> Callable[[], Any] | None:
    numba = _numba()
    if numba is None:
        return None
    if "histogram" not in _JITTED:
        def histogram(counts: np.ndarray, data: np.ndarray) -> None:
            nt = numba.get_num_threads()
            bins = np.zeros((nt, counts.size), np.uint32)
            n = data.size
            chunk = (n + nt - 1) // nt
            for t in numba.prange(nt):
                for i in range(t * chunk, min(n, (t + 1) * chunk)):
                    bins[t, data[i]] += 1
            for b in range(counts.size):
                s = counts[b]
                for t in range(nt):
                    s += bins[t, b]
                counts[b] = s

        _JITTED["histogram"] = numba.njit(parallel=True)(histogram)
    fn, (counts, data) = _JITTED["histogram"], args
    flat = data.reshape(-1)
    return lambda: fn(counts, flat)


#: Peer baselines by name: (the row's baseline label, builder, the contract's bound on
#: the ratio or None).
PEERS: dict[str, tuple[str, Callable[[tuple], Callable[[], Any] | None], float | None]] = {
    "numba_sum": ("numba prange", _numba_sum, None),
    "numexpr_sum": ("numexpr", _numexpr_sum, None),
    "numba_jacobi": ("numba prange", _numba_jacobi, None),
    "numexpr_jacobi": ("numexpr", _numexpr_jacobi, None),
    "cpp_histogram": ("C++ per-thread bins", _cpp_histogram, 1.5),
    "numba_histogram": ("numba per-thread bins", _numba_histogram, 1.5),
}


def _bench_peers(backend: Any, case: _Case, run: Callable[[tuple], Any], pk_args: tuple,
                 repeats: int, budget: float, ok: bool) -> list[Row]:
    """The workload's peer rows (CPU only), each checked against NumPy before timing."""
    w = case.w
    rows = []
    for name in w.peers:
        label, build, limit = PEERS[name]
        args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)
        fn = build(args)
        if fn is None:
            continue  # not installed: no row
        ref = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)
        expected, got = w.numpy(ref), fn()
        agrees = (_agrees({k: np.asarray(v) for k, v in got.items()}, expected)
                  if w.pipeline else _agrees(case.written(args), case.written(ref)))
        t_pk, t_peer = _interleaved([lambda: run(pk_args), fn], repeats, budget)
        row = _row(case, backend, t_pk, label, t_peer, args, ok)
        if limit is not None:
            row.target, row.meets = f"<= {limit}", row.ratio <= limit
        if not agrees:
            row.note = f"{label} disagrees with NumPy (its time is shown all the same)"
        rows.append(row)
    return rows


def bench_backend(backend: Any, workloads: Sequence[Workload], quick: bool, repeats: int,
                  budget: float, progress: _Progress) -> list[Row]:
    """Every workload on one backend, each against NumPy and the hand-written launch.

    With ``quick``, sizes are too small for the contract's targets to mean
    anything, so kernel rows carry none.
    """
    rows: list[Row] = []
    for w in workloads:
        progress.step(f"{w.name} on {backend.name}")
        try:
            new = _bench_case(backend, _Case(w, quick), repeats, budget)
            if quick:
                for r in new:
                    r.target, r.meets = "", None
            rows += new
        except Exception as exc:  # noqa: BLE001 - one failing row must not end the run
            rows.append(Row(w.name, backend.name, math.nan, "numpy", math.nan, math.nan,
                            ok=False, note=f"{type(exc).__name__}: {exc}"))
    rows += _launch_overhead(backend, repeats, budget)
    return rows


def _bench_case(backend: Any, case: _Case, repeats: int, budget: float) -> list[Row]:
    w = case.w
    run = case.launcher(backend)
    np_args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)
    pk_args = case.to_device(backend)
    # One run each from the same inputs, compared, before any timing.
    expected = w.numpy(np_args)
    got = run(pk_args)
    if w.pipeline:
        ok = _agrees({k: np.asarray(v) for k, v in got.items()}, expected)
    else:
        host = {k: backend.to_host(v) for k, v in case.written(pk_args).items()}
        ok = _agrees(host, case.written(np_args))
    rows = []
    t_pk, t_np = _interleaved([lambda: run(pk_args), lambda: w.numpy(np_args)], repeats,
                              budget)
    rows.append(_row(case, backend, t_pk, "numpy", t_np, np_args, ok))
    hand = _handwritten(backend, case, pk_args)
    if hand is not None:
        t_pk, t_cl = _interleaved([lambda: run(pk_args), hand], repeats, budget)
        rows.append(_row(case, backend, t_pk, "pyopencl", t_cl, np_args, ok))
    if w.peers and backend.name == "CPU":
        rows += _bench_peers(backend, case, run, pk_args, repeats, budget, ok)
        # Which way to the result is fastest, so the ratio to the best of them stands out.
        best = min((r for r in rows if r.baseline != "pyopencl"),
                   key=lambda r: r.baseline_seconds)
        best.best = True
    if backend.name == "CUDA":
        cupy_fn = _cupy_baseline(case, pk_args)
        if cupy_fn is not None:
            t_pk, t_cp = _interleaved([lambda: run(pk_args), cupy_fn], repeats, budget)
            rows.append(_row(case, backend, t_pk, "cupy", t_cp, np_args, ok))
    return rows


def _row(case: _Case, backend: Any, seconds: float, baseline: str, base_seconds: float,
         args: tuple, ok: bool) -> Row:
    w = case.w
    row = Row(w.name, backend.name, seconds, baseline, base_seconds, seconds / base_seconds,
              size=case.size, ok=ok)
    if w.bytes is not None:
        nbytes = w.bytes(args)
        row.gbps, row.baseline_gbps = nbytes / seconds / 1e9, nbytes / base_seconds / 1e9
    if w.flops is not None:
        flops = w.flops(args)
        row.gflops, row.baseline_gflops = flops / seconds / 1e9, flops / base_seconds / 1e9
    if backend.name == "CPU" and baseline == "numpy" and (w.kind or w.limit):
        limit = w.limit or (1.0 if w.kind == "single" else 0.5)
        row.target, row.meets = f"<= {limit}", row.ratio <= limit
    if backend.name == "CUDA" and baseline == "cupy":
        limit = 2.0 if w.cupy == "matmul" else round(1 / 0.9, 2)
        row.target, row.meets = f"<= {limit}", row.ratio <= limit
    return row


def _launch_overhead(backend: Any, repeats: int, budget: float) -> list[Row]:
    """A tiny saxpy, launched the portakern way and by hand, back to back."""
    from . import examples

    ex = examples.get("saxpy")
    n = 1024
    args = ex.make_args(n, np.random.default_rng(0))
    if backend.name != "CPU":
        args = tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in args)
    kernel = ex.load()
    launcher = kernel(backend)
    # CPU() has finished on return; a synchronize() there would be extra work.
    sync = (lambda: None) if backend.synchronous else backend.synchronize

    def ours() -> None:
        launcher(*args, ndrange=(n,))
        sync()

    def direct() -> None:
        kernel(*args, ndrange=(n,))
        sync()

    ours()
    rows = []
    if backend.target == "opencl":
        native = _native_call(launcher, args)
        if native is not None:
            t_l, t_n = _interleaved([ours, native], repeats * 4, budget)
            rows.append(Row("launch overhead", backend.name, t_l, "ctypes", t_n, t_l / t_n,
                            size=str(n), note="native path; hand-written: a ctypes call of "
                            "the same pk_launch, arguments built once (context: what "
                            "portakern's Python costs)"))
        opencl = _opencl_launcher(kernel, backend)
        opencl(*args, ndrange=(n,))
        hand = _preset_launch(backend, opencl, args)
        # For context: hand-written code whose arguments change sets them each call.
        hand_set = _preset_launch(backend, opencl, args, set_each_call=True)
        t_l, t_d, t_h, t_s = _interleaved([ours, direct, hand, hand_set], repeats * 4, budget)
        note = ("saxpy; hand-written: pre-set arguments, enqueue_nd_range_kernel + wait, "
                "back to back")
        for name, t in (("launch overhead", t_l), ("launch overhead (direct form)", t_d)):
            rows.append(Row(name, backend.name, t, "pyopencl", t_h, t / t_h, size=str(n),
                            target="<= 1.3", meets=t / t_h <= 1.3, note=note))
        rows.append(Row("launch overhead", backend.name, t_l, "pyopencl+set_args", t_s,
                        t_l / t_s, size=str(n), note="hand-written launch that sets its "
                        "arguments each call (context, not the contract)"))
    elif backend.name == "CUDA":
        import cupy

        raw = cupy.RawKernel(r'''extern "C" __global__ void pk_noop(float* y, const float* x,
            float a, long long n) { long long i = blockIdx.x * (long long)blockDim.x +
            threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }''', "pk_noop")
        y, x, a = args

        def hand() -> None:
            raw(((n + 255) // 256,), (256,), (y, x, a, np.int64(n)))
            cupy.cuda.Stream.null.synchronize()

        t_l, t_h = _interleaved([ours, hand], repeats * 4, budget)
        rows.append(Row("launch overhead", backend.name, t_l, "cupy", t_h, t_l / t_h,
                        size=str(n), target="<= 1.3", meets=t_l / t_h <= 1.3,
                        note="saxpy; hand-written: cupy.RawKernel + synchronize"))
    return rows


# -- startup ----------------------------------------------------------------------------

_STARTUP = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
import portakern as pk
t2 = time.perf_counter()
y, x = np.ones(1000, np.float32), np.ones(1000, np.float32)
backend = pk.get_backend(y)
backend.check_available()
t3 = time.perf_counter()
kernel = pk.kernel.from_file(sys.argv[1])
kernel(y, x, np.float32(2), ndrange=y.shape)
t4 = time.perf_counter()
print(json.dumps({"numpy": t1 - t0, "import": t2 - t1, "runtime": t3 - t2,
                  "ready": t4 - t3}))
"""


def _startup_once(env: dict[str, str]) -> dict[str, float]:
    from .examples import EXAMPLES_DIR

    out = subprocess.run([sys.executable, "-c", _STARTUP, str(EXAMPLES_DIR / "saxpy.pk")],
                         env=env, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_startup(repeats: int) -> list[Row]:
    """New processes: cold caches once, then warm caches (median of ``repeats``)."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="portakern-bench-") as tmp:
        env = dict(os.environ, PORTAKERN_CACHE_DIR=os.path.join(tmp, "pk"),
                   POCL_CACHE_DIR=os.path.join(tmp, "pocl"), PORTAKERN_CACHE="1")
        cold = _startup_once(env)
        warm_runs = [_startup_once(env) for _ in range(max(3, repeats))]
    warm = {k: statistics.median(r[k] for r in warm_runs) for k in warm_runs[0]}
    note = "new process, saxpy from its .pk file"
    rows.append(Row("ready kernel, warm caches", "CPU", warm["ready"], "target", 0.05,
                    warm["ready"] / 0.05, target="< 50 ms", meets=warm["ready"] < 0.05,
                    note=note + "; pk.kernel() to the first launch done, runtime started"))
    rows.append(Row("first call, cold caches", "CPU", cold["ready"], "warm caches",
                    warm["ready"], cold["ready"] / warm["ready"],
                    note=note + "; empty portakern and PoCL caches"))
    rows.append(Row("import portakern", "CPU", warm["import"], "import numpy",
                    warm["numpy"], warm["import"] / warm["numpy"], note=note))
    rows.append(Row("CPU backend start", "CPU", warm["runtime"], "target", 0.05,
                    warm["runtime"] / 0.05,
                    note=note + "; get_backend + check_available: the native path's "
                    "compiler probe (from the disk cache), or PoCL's context"))
    return rows


_BUSY = r"""
import json, os, sys, time
import numpy as np
import portakern.backends.native  # sets portakern's OpenMP defaults
if sys.argv[1] == "spin":
    os.environ.pop("OMP_WAIT_POLICY", None)  # libgomp's own default: spin, then sleep
import portakern as pk
k = pk.kernel("@kernel void s(float* y, const float* x, const float a) "
              "{ int i = @index(Global, Linear); y[i] = a * x[i] + y[i]; }")
y, x = np.zeros(10000, np.float32), np.ones(10000, np.float32)
f = k(pk.CPU(), workgroupsize=1024)
f(y, x, np.float32(2), ndrange=y.shape)
print("ready", flush=True)
sys.stdin.readline()  # the background load is running
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    f(y, x, np.float32(2), ndrange=y.shape)
    times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({"mean": sum(times) / len(times), "median": times[len(times) // 2]}))
"""


def bench_busy(launches: int = 60) -> Row:
    """A launch of 10 workgroups while every core runs a busy loop: OpenMP's wait policy.

    Two new processes: portakern's default (``OMP_WAIT_POLICY=passive``) and
    libgomp's own (threads spin after each parallel loop), each timed while one busy
    process per core competes for the CPU.
    """
    busy: list[subprocess.Popen] = []
    medians: dict[str, float] = {}  # means, in fact: see the note
    load = math.nan
    try:
        for mode in ("passive", "spin"):
            child = subprocess.Popen([sys.executable, "-c", _BUSY, mode, str(launches)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert child.stdin is not None and child.stdout is not None
            if child.stdout.readline().strip() != "ready":
                child.kill()
                raise RuntimeError("the busy-machine child did not start")
            if not busy:
                busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                        for _ in range(os.cpu_count() or 1)]
                time.sleep(0.5)  # let the scheduler spread the load
            child.stdin.write("go\n")
            child.stdin.flush()
            out, _ = child.communicate(timeout=300)
            medians[mode] = json.loads(out.strip().splitlines()[-1])["mean"]
        if hasattr(os, "getloadavg"):
            load = os.getloadavg()[0]
    finally:
        for b in busy:
            b.kill()
            b.wait()
    t, t_spin = medians["passive"], medians["spin"]
    return Row("launch on a busy machine", "CPU", t, "OpenMP spinning", t_spin, t / t_spin,
               size="10000", note=f"native saxpy, 10 workgroups, {len(busy)} busy processes "
               f"(load average {load:.1f}); portakern's OMP_WAIT_POLICY=passive against "
               f"libgomp's default; mean of {launches} (a launch that meets a "
               f"spinning thread descheduled costs milliseconds, so the median can hide it)")


def bench_get_backend() -> Row:
    """``get_backend`` on one NumPy array, per call."""
    from .resolve import get_backend

    y = np.ones(4, _F32)
    get_backend(y)
    calls = 20000
    best = math.inf
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            get_backend(y)
        best = min(best, (time.perf_counter() - t) / calls)
    return Row("get_backend", "CPU", best, "target", 1e-6, best / 1e-6, target="< 1 us",
               meets=best < 1e-6, note="best of 5 x 20000 calls")


# -- driver -----------------------------------------------------------------------------

def _native_on() -> bool:
    from .backends.native import NativeCPU
    from .backends.opencl import cpu_mode

    try:
        return cpu_mode() != "opencl" and NativeCPU.available().ok
    except Exception:  # noqa: BLE001 - PORTAKERN_CPU asks for what is not here
        return False


def _backends(wanted: str | None) -> tuple[list[Any], dict[str, str]]:
    from .testing import available_backends

    reasons: dict[str, str] = {}
    found = available_backends(reasons)
    if wanted:
        found = [b for b in found if b.name.lower() == wanted.lower()]
        if not found and wanted.lower() not in {n.lower() for n in reasons}:
            reasons[wanted] = "no backend of that name is registered"
    return found, reasons


def run(*, backend: str | None = None, quick: bool = False, only: Sequence[str] = (),
        repeats: int = 7, budget: float = 2.0, startup: bool = True,
        progress: bool = True) -> tuple[list[Row], dict[str, str]]:
    """Run the benchmark; return the rows and ``backend name -> why it was skipped``."""
    workloads = [w for w in WORKLOADS if not only or w.name in only]
    unknown = set(only) - {w.name for w in WORKLOADS}
    if unknown:
        raise ValueError(f"unknown workload(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(w.name for w in WORKLOADS)}")
    backends, reasons = _backends(backend)
    cpu_in = any(b.name == "CPU" for b in backends)
    bar = _Progress(len(backends) * len(workloads) + (2 if cpu_in else 0), progress)
    rows: list[Row] = []
    try:
        if cpu_in:
            bar.step("get_backend")
            rows.append(bench_get_backend())
            if startup:
                bar.step("new processes")
                rows += bench_startup(3 if quick else 5)
                if _native_on():
                    rows.append(bench_busy(20 if quick else 60))
            from .debug import bench_rows  # debug mode's cost (docs/debugging.md)

            rows += bench_rows(quick, repeats, budget, only)
        for b in backends:
            rows += bench_backend(b, workloads, quick, repeats, budget, bar)
    finally:
        bar.close()
    return rows, reasons


def _fmt_time(s: float) -> str:
    if not math.isfinite(s):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a plain-text table (ratio = portakern time / baseline time)."""
    head = ("kernel", "backend", "size", "portakern", "baseline", "base time", "ratio",
            "GB/s", "GFLOP/s", "target", "ok")
    lines = [head]
    for r in rows:
        rate = "" if r.gbps is None else f"{r.gbps:.3g}"
        flops = "" if r.gflops is None else f"{r.gflops:.3g}"
        target = "" if not r.target else f"{r.target} {'met' if r.meets else 'MISSED'}"
        ok = "" if r.ok is None else ("yes" if r.ok else "WRONG")
        lines.append((r.name, r.backend, r.size, _fmt_time(r.seconds),
                      r.baseline + (" (fastest)" if r.best else ""),
                      _fmt_time(r.baseline_seconds),
                      "-" if not math.isfinite(r.ratio) else f"{r.ratio:.3g}", rate, flops,
                      target, ok))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    out = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"{r.name} on {r.backend}: {r.note}" for r in rows if r.note and r.ok is False]
    return "\n".join(out + notes)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install 'portakern[plot]'") from None
    return plt


def machine_label() -> str:
    """One line naming the machine a run was measured on: CPU, cores, load, Python."""
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f
                        if ln.startswith("model name")), cpu)
    except OSError:
        pass
    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (f"{cpu}, {os.cpu_count()} cores{load}, Python {platform.python_version()}, "
            f"{platform.system()}")


def write_plot(rows: Sequence[Row], path: str) -> None:
    """A bar chart of the ratios (log scale), one bar per row; needs matplotlib."""
    plt = _pyplot()
    shown = [r for r in rows if math.isfinite(r.ratio) and r.ratio > 0]
    fig, ax = plt.subplots(figsize=(10, 0.3 * len(shown) + 1.5))
    labels = [f"{r.name} [{r.backend}] vs {r.baseline}" for r in shown]
    colors = ["tab:green" if r.ratio <= 1 else "tab:red" for r in shown]
    ax.barh(range(len(shown)), [r.ratio for r in shown], color=colors)
    ax.set_yticks(range(len(shown)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("portakern time / baseline time (left of 1: portakern faster)")
    ax.set_title(f"portakern bench\n{machine_label()}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="portakern bench",
        description="Time the example kernels on every available backend against NumPy, a "
                    "hand-written PyOpenCL launch and (on CUDA) CuPy; ratio = portakern "
                    "time / baseline time.")
    p.add_argument("--backend", metavar="NAME", help="only this backend (CPU, OpenCL, CUDA)")
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    p.add_argument("--only", metavar="NAMES", default="",
                   help="comma-separated workloads: " + ", ".join(w.name for w in WORKLOADS))
    p.add_argument("--repeats", type=int, default=7, metavar="N",
                   help="timed runs per row, at most (default 7; fewer for slow rows)")
    p.add_argument("--no-startup", action="store_true",
                   help="skip the new-process measurements (import, ready kernel)")
    p.add_argument("--json", metavar="FILE", help="write one record per row")
    p.add_argument("--plot", metavar="FILE.png", help="draw the ratios (needs matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--kernel", metavar="FILE.pk",
                   help="time the kernels of your own .pk file instead (see -D, --ndrange)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="with --kernel: a Jinja constant, a type variable (T=double) or a "
                        "scalar parameter's value (n=1000); repeatable")
    p.add_argument("--ndrange", metavar="N[xM[xK]]",
                   help="with --kernel: the launch size (default 4194304, 2048x2048 or "
                        "128x128x256 by the kernel's rank)")
    p.add_argument("--dask", action="store_true",
                   help="only the portakern.dask rows: a LocalCluster of worker processes, "
                        "against plain dask.array (needs portakern[dask])")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``portakern bench [options]``; returns the exit status."""
    opts = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if opts.repeats < 1:
        print("portakern bench: --repeats must be >= 1", file=sys.stderr)
        return 2
    only = [s.strip() for s in opts.only.split(",") if s.strip()]
    if opts.plot:
        try:
            _pyplot()  # before the run, not after minutes of measuring
        except ImportError as exc:
            print(f"portakern bench: {exc}", file=sys.stderr)
            return 1
    if opts.dask:
        return _main_dask(opts)
    if opts.kernel:
        return _main_user(opts)
    try:
        rows, reasons = run(backend=opts.backend, quick=opts.quick, only=only,
                            repeats=opts.repeats, startup=not opts.no_startup,
                            progress=not opts.no_progress)
    except ValueError as exc:
        print(f"portakern bench: {exc}", file=sys.stderr)
        return 2
    print(format_table(rows))
    for name, why in reasons.items():
        print(f"skipped {name}: {why}")
    _write_json(rows, opts.json)
    if opts.plot:
        try:
            write_plot(rows, opts.plot)
        except ImportError as exc:
            print(f"portakern bench: {exc}", file=sys.stderr)
            return 1
    if not rows:
        print("portakern bench: no backend to run on", file=sys.stderr)
        return 1
    return 0


def _main_user(opts: argparse.Namespace) -> int:
    """``portakern bench --kernel FILE``: see :mod:`portakern.bench_user`."""
    from .bench_user import parse_ndrange, run_file
    from .cli import parse_define
    from .errors import PortakernError
    from .registry import backend_by_name

    try:
        defines = dict(parse_define(d) for d in opts.defines)
        nd = parse_ndrange(opts.ndrange) if opts.ndrange else None
        backend = backend_by_name(opts.backend or "CPU")
        rows = run_file(opts.kernel, defines, nd, backend, repeats=opts.repeats)
    except (OSError, ValueError, argparse.ArgumentTypeError, PortakernError) as exc:
        print(f"portakern bench --kernel: {exc}", file=sys.stderr)
        return 2
    print(format_table(rows))
    _write_json(rows, opts.json)
    return 0 if all(r.ok for r in rows) else 1


def _main_dask(opts: argparse.Namespace) -> int:
    """``portakern bench --dask``: see :mod:`portakern.bench_dask`."""
    try:
        from . import bench_dask

        rows = bench_dask.run(quick=opts.quick, repeats=opts.repeats)
    except ImportError as exc:
        print(f"portakern bench --dask: {exc}; pip install 'portakern[dask]'", file=sys.stderr)
        return 1
    print(format_table(rows))
    _write_json(rows, opts.json)
    return 0 if all(r.ok for r in rows) else 1


def _write_json(rows: Sequence[Row], path: str | None) -> None:
    """``--json FILE``: one record per row (nothing without the option)."""
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump([_jsonable(asdict(r)) for r in rows], f, indent=1)


def _jsonable(d: dict) -> dict:
    # JSON has no NaN: a row that failed reports null times.
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in d.items()}
