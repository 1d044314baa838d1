"""Measuring: a progress bar, alternating timed samples, and a workload's prepared case."""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .rows import F32
from .workloads import Workload


class ProgressBar:
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


#: Shortest sample: calls shorter than this are repeated inside one sample, so the
#: clock's resolution and one-off hiccups of a shared machine weigh less.
_MIN_SAMPLE = 0.005


def _warmed(fns: Sequence[Callable[[], Any]], repeats: int, budget: float) -> tuple[int, int]:
    """Run each function once (compiles, caches); return the calls per sample (at least
    :data:`_MIN_SAMPLE` seconds of the fastest) and how many samples fit ``budget``
    (``repeats``, or fewer but at least three, or ``repeats`` if less)."""
    first = []
    for fn in fns:
        t = time.perf_counter()
        fn()
        first.append(time.perf_counter() - t)
    calls = max(1, math.ceil(_MIN_SAMPLE / max(min(first), 1e-9)))
    n = max(min(3, repeats), min(repeats, int(budget / max(calls * sum(first), 1e-9))))
    return calls, n


def interleaved(fns: Sequence[Callable[[], Any]], repeats: int,
                 budget: float) -> list[float]:
    """Median seconds per call of each function, sampled in alternation.

    Each function runs once to warm up (compiles, caches); then samples of
    ``calls`` back-to-back calls alternate between the functions, so a change in
    the machine's load affects all of them alike. ``repeats`` samples are taken,
    fewer (at least three, or ``repeats`` if less) when that would exceed ``budget``
    seconds.
    """
    calls, n = _warmed(fns, repeats, budget)
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(n):
        for fn, out in zip(fns, times, strict=True):
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            out.append((time.perf_counter() - t) / calls)
    return [statistics.median(t) for t in times]


#: Seconds :func:`blocked` waits before each block: longer than OpenBLAS's helper threads
#: keep spinning after a call returns (on the 2-core development machine, 2026-12-03: 26-38
#: ms of CPU time within 0.1-0.2 s of ``np.matmul`` returning, none after that).
_SETTLE = 0.25


def blocked(fns: Sequence[Callable[[], Any]], repeats: int, budget: float) -> list[float]:
    """Median seconds per call of each function, each timed in blocks of its own.

    For a baseline that leaves threads running after it returns: OpenBLAS's helper
    threads spin for about 0.1 s after each ``np.matmul``, so a kernel sampled right
    after one (as :func:`interleaved` does) shares the cores with them and reads up to
    twice as slow as on its own. Here each block waits :data:`_SETTLE` seconds, calls its
    function once untimed, then takes its samples back to back; the blocks alternate
    (two rounds, where there are four samples or more), so a change in the machine's load
    still falls on both sides. Samples and ``calls`` per sample as in :func:`interleaved`.
    """
    calls, n = _warmed(fns, repeats, budget)
    rounds = 2 if n >= 4 else 1
    times: list[list[float]] = [[] for _ in fns]
    for r in range(rounds):
        for fn, out in zip(fns, times, strict=True):
            time.sleep(_SETTLE)
            fn()
            for _ in range(n // rounds + (r < n % rounds)):
                t = time.perf_counter()
                for _ in range(calls):
                    fn()
                out.append((time.perf_counter() - t) / calls)
    return [statistics.median(t) for t in times]


def host_arrays(backend: Any) -> bool:
    """Whether ``backend`` launches NumPy arrays in place (as the CPU peers take them).

    Asked through the contract (``array_info`` of a NumPy array), so a ``CPU`` subclass
    with arrays of its own (a plugin's tensors) is not taken for a NumPy backend.
    """
    return backend.array_info(np.empty(1, np.float32)) is not None


class Case:
    """A workload bound to its kernel, inputs and launch shape."""

    def __init__(self, w: Workload, quick: bool) -> None:
        from .. import examples
        from ..kernels import Kernel

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
                self.args = (np.zeros(n, F32), rng.uniform(-3, 3, n).astype(F32))
            self.ndrange = self.args[0].shape
            self.wg = None
        self.size = "x".join(str(s) for s in np.atleast_1d(size))

    def written(self, args: tuple) -> dict[str, Any]:
        return {p.name: a for p, a in zip(self.kernel.params, args, strict=True) if p.writable}

    def to_device(self, backend: Any) -> tuple:
        args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in self.args)
        if host_arrays(backend):
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


def outputs_agree(got: dict, want: dict) -> bool:
    for name, w in want.items():
        w, g = np.asarray(w), np.asarray(got[name])
        exact = not np.issubdtype(w.dtype, np.inexact)
        if g.shape != w.shape or not np.allclose(g, w, rtol=0 if exact else 1e-4,
                                                 atol=0 if exact else 1e-4):
            return False
    return True
