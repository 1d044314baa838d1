"""The rows of ``portakern bench``: every workload on every backend, launch overhead,
startup, a busy machine and ``get_backend``."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .baselines import (
    PEERS,
    cupy_baseline,
    handwritten,
    native_call,
    opencl_launcher,
    preset_launch,
    runs_cupy,
    runs_pyopencl,
)
from .measure import Case, ProgressBar, blocked, host_arrays, interleaved, outputs_agree
from .rows import F32, Row
from .workloads import WORKLOADS, Workload


def _bench_peers(backend: Any, case: Case, run: Callable[[tuple], Any], pk_args: tuple,
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
        agrees = (outputs_agree({k: np.asarray(v) for k, v in got.items()}, expected)
                  if w.pipeline else outputs_agree(case.written(args), case.written(ref)))
        t_pk, t_peer = interleaved([lambda: run(pk_args), fn], repeats, budget)
        row = make_row(case, backend, t_pk, label, t_peer, args, ok)
        if limit is not None:
            row.target, row.meets = f"<= {limit}", row.ratio <= limit
        if not agrees:
            row.note = f"{label} disagrees with NumPy (its time is shown all the same)"
        rows.append(row)
    return rows


def bench_backend(backend: Any, workloads: Sequence[Workload], quick: bool, repeats: int,
                  budget: float, progress: ProgressBar) -> list[Row]:
    """Every workload on one backend, each against NumPy and the hand-written launch.

    With ``quick``, sizes are too small for the contract's targets to mean
    anything, so kernel rows carry none.
    """
    rows: list[Row] = []
    for w in workloads:
        progress.step(f"{w.name} on {backend.name}")
        try:
            new = _bench_case(backend, Case(w, quick), repeats, budget)
            if quick:
                for r in new:
                    r.target, r.meets = "", None
            rows += new
        except Exception as exc:  # noqa: BLE001 - one failing row must not end the run
            rows.append(Row(w.name, backend.name, math.nan, "numpy", math.nan, math.nan,
                            ok=False, note=f"{type(exc).__name__}: {exc}"))
    rows += _launch_overhead(backend, repeats, budget)
    return rows


def _bench_case(backend: Any, case: Case, repeats: int, budget: float) -> list[Row]:
    w = case.w
    run = case.launcher(backend)
    np_args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)
    pk_args = case.to_device(backend)
    # One run each from the same inputs, compared, before any timing.
    expected = w.numpy(np_args)
    got = run(pk_args)
    if w.pipeline:
        ok = outputs_agree({k: np.asarray(v) for k, v in got.items()}, expected)
    else:
        host = {k: backend.to_host(v) for k, v in case.written(pk_args).items()}
        ok = outputs_agree(host, case.written(np_args))
    rows = []
    # A NumPy call that leaves threads spinning (OpenBLAS) is timed in blocks of its own.
    timing = blocked if w.blocked else interleaved
    t_pk, t_np = timing([lambda: run(pk_args), lambda: w.numpy(np_args)], repeats, budget)
    rows.append(make_row(case, backend, t_pk, "numpy", t_np, np_args, ok))
    if w.blocked:
        rows[-1].note = "timed in blocks, not alternated: OpenBLAS's threads spin after a call"
    hand = handwritten(backend, case, pk_args)
    if hand is not None:
        t_pk, t_cl = interleaved([lambda: run(pk_args), hand], repeats, budget)
        rows.append(make_row(case, backend, t_pk, "pyopencl", t_cl, np_args, ok))
    if w.peers and host_arrays(backend):
        rows += _bench_peers(backend, case, run, pk_args, repeats, budget, ok)
        # Which way to the result is fastest, so the ratio to the best of them stands out.
        best = min((r for r in rows if r.baseline != "pyopencl"),
                   key=lambda r: r.baseline_seconds)
        best.best = True
    if runs_cupy(backend):
        cupy_fn = cupy_baseline(case, pk_args)
        if cupy_fn is not None:
            t_pk, t_cp = interleaved([lambda: run(pk_args), cupy_fn], repeats, budget)
            rows.append(make_row(case, backend, t_pk, "cupy", t_cp, np_args, ok))
    return rows


def make_row(case: Case, backend: Any, seconds: float, baseline: str, base_seconds: float,
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
    # The contract (DESIGN section 4): on the CPU against NumPy, on CUDA against CuPy.
    if host_arrays(backend) and baseline == "numpy" and (w.kind or w.limit):
        limit = w.limit or (1.0 if w.kind == "single" else 0.5)
        row.target, row.meets = f"<= {limit}", row.ratio <= limit
    if baseline == "cupy":
        limit = 2.0 if w.cupy == "matmul" else round(1 / 0.9, 2)
        row.target, row.meets = f"<= {limit}", row.ratio <= limit
    return row


def _launch_overhead(backend: Any, repeats: int, budget: float) -> list[Row]:
    """A tiny saxpy, launched the portakern way and by hand, back to back."""
    from .. import examples

    ex = examples.get("saxpy")
    n = 1024
    args = ex.make_args(n, np.random.default_rng(0))
    if not host_arrays(backend):
        args = tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in args)
    kernel = ex.load()
    launcher = kernel(backend)
    if backend.synchronous:
        # CPU() has finished on return: no synchronize(), and no call in its place (the
        # hand-written launches below are one call of the launch each, too).
        def ours() -> None:
            launcher(*args, ndrange=(n,))

        def direct() -> None:
            kernel(*args, ndrange=(n,))
    else:
        sync = backend.synchronize

        def ours() -> None:
            launcher(*args, ndrange=(n,))
            sync()

        def direct() -> None:
            kernel(*args, ndrange=(n,))
            sync()

    ours()
    rows = []
    if runs_pyopencl(backend):
        native = native_call(launcher, args)
        if native is not None:
            # DESIGN section 4: a warm launch on CPU() under 3 us (the time includes the
            # loop's call of ``ours``, as the ctypes time includes its lambda's).
            t_l, t_d, t_n = interleaved([ours, direct, native], repeats * 4, budget)
            for name, t in (("launch overhead", t_l), ("launch overhead (direct form)", t_d)):
                rows.append(Row(name, backend.name, t, "ctypes", t_n, t / t_n, size=str(n),
                                target="< 3 us", meets=t < 3e-6,
                                note="native path; hand-written: a ctypes call of the same "
                                "pk_launch, arguments built once (context: what "
                                "portakern's Python costs)"))
        opencl = opencl_launcher(kernel, backend)
        opencl(*args, ndrange=(n,))
        hand = preset_launch(backend, opencl, args)
        # For context: hand-written code whose arguments change sets them each call.
        hand_set = preset_launch(backend, opencl, args, set_each_call=True)
        t_l, t_d, t_h, t_s = interleaved([ours, direct, hand, hand_set], repeats * 4, budget)
        note = ("saxpy; hand-written: pre-set arguments, enqueue_nd_range_kernel + wait, "
                "back to back")
        for name, t in (("launch overhead", t_l), ("launch overhead (direct form)", t_d)):
            rows.append(Row(name, backend.name, t, "pyopencl", t_h, t / t_h, size=str(n),
                            target="<= 1.3", meets=t / t_h <= 1.3, note=note))
        rows.append(Row("launch overhead", backend.name, t_l, "pyopencl+set_args", t_s,
                        t_l / t_s, size=str(n), note="hand-written launch that sets its "
                        "arguments each call (context, not the contract)"))
    elif runs_cupy(backend):
        import cupy

        raw = cupy.RawKernel(r'''extern "C" __global__ void pk_noop(float* y, const float* x,
            float a, long long n) { long long i = blockIdx.x * (long long)blockDim.x +
            threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }''', "pk_noop")
        y, x, a = args

        def hand() -> None:
            raw(((n + 255) // 256,), (256,), (y, x, a, np.int64(n)))
            cupy.cuda.Stream.null.synchronize()

        t_l, t_h = interleaved([ours, hand], repeats * 4, budget)
        rows.append(Row("launch overhead", backend.name, t_l, "cupy", t_h, t_l / t_h,
                        size=str(n), target="<= 1.3", meets=t_l / t_h <= 1.3,
                        note="saxpy; hand-written: cupy.RawKernel + synchronize"))
    return rows


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
                  "ready": t4 - t3, "total": t4 - t1}))
"""


def _startup_once(env: dict[str, str]) -> dict[str, float]:
    from ..examples import EXAMPLES_DIR

    out = subprocess.run([sys.executable, "-c", _STARTUP, str(EXAMPLES_DIR / "saxpy.pk")],
                         env=env, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_startup(repeats: int) -> list[Row]:
    """New processes: cold caches once, then warm caches (median of ``repeats``)."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="portakern-bench-") as tmp:
        # Python's bytecode cache is one of the warm caches: a `pip install` writes it, but
        # PYTHONDONTWRITEBYTECODE (set on some CI images and containers) would make every
        # new process compile portakern's modules from source again (~100 ms), which no
        # installed user pays. The children write and read it under a temporary prefix.
        env = dict(os.environ, PORTAKERN_CACHE_DIR=os.path.join(tmp, "pk"),
                   POCL_CACHE_DIR=os.path.join(tmp, "pocl"), PORTAKERN_CACHE="1",
                   PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cold = _startup_once(env)
        warm_runs = [_startup_once(env) for _ in range(max(3, repeats))]
    warm = {k: statistics.median(r[k] for r in warm_runs) for k in warm_runs[0]}
    note = "new process, saxpy from its .pk file"
    rows.append(Row("new process to a ready kernel", "CPU", warm["total"], "target", 0.05,
                    warm["total"] / 0.05, target="< 50 ms", meets=warm["total"] < 0.05,
                    note=note + "; import portakern, get_backend, pk.kernel() and the first "
                    "launch, warm caches (DESIGN §4's second process)"))
    rows.append(Row("ready kernel, warm caches", "CPU", warm["ready"], "target", 0.05,
                    warm["ready"] / 0.05, target="< 50 ms", meets=warm["ready"] < 0.05,
                    note=note + "; pk.kernel() to the first launch done, runtime started (it "
                    "loads the kernel pipeline)"))
    rows.append(Row("first call, cold caches", "CPU", cold["ready"], "warm caches",
                    warm["ready"], cold["ready"] / warm["ready"],
                    note=note + "; empty portakern and PoCL caches"))
    rows.append(Row("import portakern", "CPU", warm["import"], "target", 0.02,
                    warm["import"] / 0.02, target="< 20 ms", meets=warm["import"] < 0.02,
                    note=note + f"; after import numpy ({warm['numpy'] * 1e3:.0f} ms); the "
                    "pipeline loads on first use (get_backend, pk.kernel)"))
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
    from ..launch.resolve import get_backend

    y = np.ones(4, F32)
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


def _native_on() -> bool:
    from ..backends.cpu_paths import cpu_mode
    from ..backends.native import NativeCPU

    try:
        return cpu_mode() != "opencl" and NativeCPU.available().ok
    except Exception:  # noqa: BLE001 - PORTAKERN_CPU asks for what is not here
        return False


def _backends(wanted: str | None) -> tuple[list[Any], dict[str, str]]:
    from ..testing import available_backends

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
    """Run the benchmark; return the rows and ``backend name -> why it was skipped``.

    ``quick`` is a smoke test of the machinery, not a measurement: tiny sizes, one
    sample per row, and no new-process or busy-machine rows (each of those starts
    processes, seconds in all).
    """
    if quick:
        repeats, startup = 1, False
    workloads = [w for w in WORKLOADS if not only or w.name in only]
    from .auto_rows import NAME as WORKGROUPSIZE_AUTO
    from .block_rows import NAMES as ELEMENTWISE_ROWS
    from .complex_rows import NAME as COMPLEX_MADD
    from .ndarray_rows import NAME as TRANSPOSE_VIEW
    from .row_rows import NAMES as ROW_ROWS
    from .scan_rows import NAMES as SCAN_ROWS
    from .shape_rows import NAMES as SHAPE_ROWS

    BLOCK_ROWS = (*ELEMENTWISE_ROWS, *SCAN_ROWS, TRANSPOSE_VIEW, WORKGROUPSIZE_AUTO,
                  *ROW_ROWS, *SHAPE_ROWS, COMPLEX_MADD)

    unknown = set(only) - {w.name for w in WORKLOADS} - set(BLOCK_ROWS)
    if unknown:
        raise ValueError(f"unknown workload(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join([w.name for w in WORKLOADS] + list(BLOCK_ROWS))}")
    backends, reasons = _backends(backend)
    cpu_in = any(host_arrays(b) for b in backends)
    bar = ProgressBar(len(backends) * len(workloads) + ((1 + startup) if cpu_in else 0), progress)
    rows: list[Row] = []
    try:
        if cpu_in:
            bar.step("get_backend")
            rows.append(bench_get_backend())
            if startup:
                bar.step("new processes")
                rows += bench_startup(5)
                if _native_on():
                    rows.append(bench_busy(60))
            from .debug_rows import bench_rows  # debug mode's cost (docs/debugging.md)

            rows += bench_rows(quick, repeats, budget, only)
            from .creation_rows import bench_rows as creation_rows

            rows += creation_rows(quick, repeats, only)
            from .block_rows import bench_rows as block_rows  # docs/building-blocks.md

            rows += block_rows(quick, repeats, budget, only)
            from .ndarray_rows import bench_rows as ndarray_rows  # N-d views

            rows += ndarray_rows(quick, repeats, budget, only)
            from .row_rows import bench_rows as row_rows  # one workgroup per row

            rows += row_rows(quick, repeats, budget, only)
            from .shape_rows import bench_rows as shape_rows  # grid-stride, 32-bit, broadcast

            rows += shape_rows(quick, repeats, budget, only)

            from .complex_rows import bench_rows as complex_rows  # cfloat arithmetic

            rows += complex_rows(quick, repeats, budget, only)
        for b in backends:
            rows += bench_backend(b, workloads, quick, repeats, budget, bar)
        from .scan_rows import bench_rows as scan_rows  # pk.InclusiveScanKernel, copy_if

        rows += scan_rows(backends, quick, repeats, budget, only)
        from .block_rows import opencl_rows  # the blocks against PyOpenCL's, on OpenCL

        rows += opencl_rows(backends, quick, repeats, budget, only)
        from .auto_rows import bench_rows as auto_rows  # workgroupsize="auto"

        rows += auto_rows(backends, quick, repeats, budget, only)
    finally:
        bar.close()
    return rows, reasons
