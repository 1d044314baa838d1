"""``portakern demo``: every example kernel on every backend here, checked against NumPy."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

import numpy as np

from ..errors import BackendUnavailableError


class UsageError(Exception):
    """A command-line mistake found after parsing (exit status 2)."""


# -- demo -----------------------------------------------------------------------------------

_SMALL = {"vector_add": 10_000, "saxpy": 10_000, "polynomial": 10_000, "translate": (61, 97),
          "matmul": (45, 37, 29), "matmul_tiled": (45, 37, 29), "reduce_sum": 10_000,
          "reduce_max": 10_000, "brightest_pixel": (61, 97), "histogram": 10_000,
          "rgb_to_gray": (61, 97), "negative": (61, 97), "darken": (61, 97),
          "particle_push": 1000}


def _fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def _run_once(ex: Any, backend: Any, args: tuple) -> dict[str, Any]:
    if ex.has_pipeline:
        return ex.run(backend, args)
    ex.launch(backend, args)
    return ex.outputs(args, backend)


def cmd_demo(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``portakern demo``: every example on ``CPU()``, checked against NumPy."""
    out = out or sys.stdout
    from ..backends.opencl import CPU
    from ..examples import EXAMPLES, copy_args, get

    # Progress goes to stderr as it happens (the first run probes the compiler and builds
    # every kernel, seconds of silence otherwise); the table goes to `out`.
    def progress(text: str) -> None:
        sys.stderr.write(f"portakern demo: {text}\n")
        sys.stderr.flush()

    progress("finding the CPU backend (probes the C++ compiler and OpenMP on first use)")
    status = CPU.available()
    if not status:
        raise BackendUnavailableError(f"the demo runs on the CPU backend: {status.reason}")
    backend = CPU()
    names = [n for group in args.only for n in group.split(",") if n] if args.only \
        else list(EXAMPLES)
    try:
        chosen = [get(n) for n in names]
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    repeat = max(1, args.repeats)
    # start=False: kernels the native path runs never need the OpenCL runtime.
    out.write(f"portakern demo on {backend!r} ({CPU.describe(start=False)})\n")
    header = f"{'kernel':<16} {'shape':<16} {'dtype':<8} {'time':>10} {'NumPy':>10} " \
             f"{'max error':>10}  result"
    out.write(header + "\n" + "-" * len(header) + "\n")
    rng = np.random.default_rng(2024)
    failures = 0
    start = time.perf_counter()
    for k, ex in enumerate(chosen, 1):
        progress(f"[{k}/{len(chosen)}] {ex.name}: building (cached after the first run) "
                 f"and timing")
        size = _SMALL.get(ex.name, 1000) if args.small else None
        base = ex.make_args(size, rng)
        numpy_best = kernel_best = float("inf")
        for _ in range(repeat):
            trial = copy_args(base)
            t0 = time.perf_counter()
            expected = ex.run_reference(trial) if ex.has_pipeline else ex.reference(trial)
            numpy_best = min(numpy_best, time.perf_counter() - t0)
        # The first launch renders and compiles; it is not timed.
        _run_once(ex, backend, copy_args(base))
        got: dict[str, Any] = {}
        for _ in range(repeat):
            trial = copy_args(base)
            t0 = time.perf_counter()
            got = _run_once(ex, backend, trial)
            kernel_best = min(kernel_best, time.perf_counter() - t0)
        ok = ex.agrees(got, expected)
        failures += not ok
        shape = _shape_label(ex, base)
        dtype = str(_main_dtype(base))
        out.write(f"{ex.name:<16} {shape:<16} {dtype:<8} {_fmt_time(kernel_best):>10} "
                  f"{_fmt_time(numpy_best):>10} {ex.max_error(got, expected):>10.3g}  "
                  f"{'OK' if ok else 'FAIL'}\n")
    elapsed = time.perf_counter() - start
    out.write(f"{len(chosen) - failures}/{len(chosen)} examples agree with NumPy "
              f"({elapsed:.1f} s; times are the best of {repeat}, after a compiling run)\n")
    return 1 if failures else 0


def _shape_label(ex: Any, args: tuple) -> str:
    if ex.name.startswith("matmul"):
        _, a, b, _k = args
        return f"{a.shape[0]}x{a.shape[1]}x{b.shape[1]}"
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    biggest = max(arrays, key=lambda a: a.size)
    return "x".join(str(s) for s in biggest.shape)


def _main_dtype(args: tuple) -> np.dtype:
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return max(arrays, key=lambda a: a.size).dtype
