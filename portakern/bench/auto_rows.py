"""The ``workgroupsize_auto`` rows of ``portakern bench`` (issue 25, docs/api.md "Workgroup
sizes chosen by timing").

Each row times a launch with ``workgroupsize="auto"`` (the size chosen on its first
launch, read back after) against the same launch with the backend's default size: the
tiled matmul example (it declares its size, so "auto" has one candidate and the row shows
that it costs nothing), the plain matmul example, and a sum whose groups combine with an
atomic (any size gives the sum). Each row first checks that both launches agree.
Rows run on the backends of this machine's CPU (``CPU()``, ``OpenCL``) and on a real
CUDA device; the CUDA stand-in's times mean nothing (one thread per GPU thread).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .measure import interleaved
from .rows import F32, Row

__all__ = ["NAME", "bench_rows"]

#: The rows' name (``portakern bench --only workgroupsize_auto``).
NAME = "workgroupsize_auto"

_GROUP_SUM = """
@kernel void group_sum(float* total, const float* x) {
    const float s = @groupreduce(add, x[@index(Global, Linear)]);
    if (@index(Local, Linear) == 0) {
        @atomic_add(&total[0], s);
    }
}"""


def bench_rows(backends: list, quick: bool = False, repeats: int = 7, budget: float = 2.0,
               only: Any = ()) -> list[Row]:
    """One row per case and backend that runs here (see the module's text)."""
    if only and NAME not in only:
        return []
    from ..backends.cuda import CUDA
    from ..backends.opencl import CPU, OpenCL

    standin = "standin" in getattr(sys.modules.get("cupy"), "__version__", "standin")
    rows: list[Row] = []
    for backend in backends:
        if not isinstance(backend, (CPU, OpenCL)) and not (
                isinstance(backend, CUDA) and not standin):
            continue
        for case in (_matmul_tiled, _matmul, _group_sum):
            try:
                rows.append(case(backend, quick, repeats, budget))
            except Exception as exc:  # noqa: BLE001 - one failing row must not end the run
                rows.append(Row(NAME, backend.name, float("nan"), "default size",
                                float("nan"), float("nan"), ok=False,
                                note=f"{case.__name__[1:]}: {type(exc).__name__}: {exc}"))
    return rows


def _compare(backend: Any, kernel: Any, make: Any, nd: tuple, result: Any, what: str,
             size: str, repeats: int, budget: float) -> Row:
    """Time ``kernel`` launched with "auto" against the default size, after checking both."""
    from ..launch.timing import timed

    auto_args, default_args = make(), make()
    auto = kernel(backend, workgroupsize="auto")
    default = kernel(backend)
    with timed() as t:
        auto(*auto_args, ndrange=nd)  # the first launch of this shape class chooses
    chosen = next(iter(t.per_kernel().values())).workgroupsize
    default(*default_args, ndrange=nd)
    backend.synchronize()
    got, want = result(auto_args), result(default_args)
    ok = bool(np.allclose(got, want, rtol=1e-4, atol=1e-4))

    def run(launcher: Any, args: tuple) -> Any:
        def go() -> None:
            launcher(*args, ndrange=nd)
            backend.synchronize()
        return go

    t_auto, t_default = interleaved([run(auto, auto_args), run(default, default_args)],
                                    repeats, budget)
    return Row(NAME, backend.name, t_auto, "default size", t_default, t_auto / t_default,
               size=size, ok=ok, note=f"{what}: chose {chosen}")


def _host(backend: Any, a: Any) -> np.ndarray:
    return np.asarray(backend.to_host(a))


def _matmul_case(backend: Any, example: str, quick: bool, repeats: int, budget: float,
                 what: str) -> Row:
    from .. import examples

    n = 64 if quick else 512
    rng = np.random.default_rng(25)
    a, b = rng.random((n, n), dtype=F32), rng.random((n, n), dtype=F32)
    kernel = examples.get(example).load(T="float")

    def make() -> tuple:
        return (backend.zeros((n, n), F32), backend.to_device(a), backend.to_device(b),
                np.int64(n))

    return _compare(backend, kernel, make, (n, n), lambda args: _host(backend, args[0]),
                    what, f"{n}x{n} float32", repeats, budget)


def _matmul_tiled(backend: Any, quick: bool, repeats: int, budget: float) -> Row:
    return _matmul_case(backend, "matmul_tiled", quick, repeats, budget,
                        "matmul_tiled (declares (16, 16): the one candidate)")


def _matmul(backend: Any, quick: bool, repeats: int, budget: float) -> Row:
    return _matmul_case(backend, "matmul", quick, repeats, budget, "matmul")


def _group_sum(backend: Any, quick: bool, repeats: int, budget: float) -> Row:
    from ..kernels import kernel as make_kernel

    n = 1 << (12 if quick else 22)
    x = np.random.default_rng(25).random(n, dtype=F32)

    def make() -> tuple:
        return backend.zeros(1, F32), backend.to_device(x)

    # The total grows with every timed launch: the first launch's is the one compared.
    return _compare(backend, make_kernel(_GROUP_SUM), make, (n,),
                    lambda args: _host(backend, args[0]), "sum (@groupreduce, @atomic_add)",
                    f"{n} float32", repeats, budget)
