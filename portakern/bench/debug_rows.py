"""The rows of ``portakern bench`` that price debug mode on ``CPU()`` (docs/debugging.md)."""

from __future__ import annotations

from typing import Any

from .rows import Row


def bench_rows(quick: bool = False, repeats: int = 7, budget: float = 2.0,
               only: Any = ()) -> list:
    """``portakern bench`` rows: debug mode's cost on ``CPU()`` (saxpy, matmul_tiled, histogram).

    Each row times the same example launched with debug mode on against off, in
    alternating samples (the median of each), after checking that the debug launch
    still agrees with NumPy.
    """
    import statistics
    import time

    from .. import examples
    from ..backends.opencl import CPU

    rows = []
    backend = CPU()
    for name, size, small in (("saxpy", 1 << 22, 1 << 16), ("matmul_tiled", 384, 64),
                              ("histogram", 1 << 22, 1 << 16)):
        if only and name not in only:
            continue
        ex = examples.get(name)
        args = ex.make_args(small if quick else size)
        nd, wg = ex.ndrange(args), ex.workgroupsize()
        expected = ex.reference(args)
        plain, checked = ex.load()(backend, wg), ex.load(debug=True)(backend, wg)
        checked(*args, ndrange=nd)
        ok = ex.agrees(ex.outputs(args), expected)
        samples: list[list[float]] = [[], []]
        started = time.perf_counter()
        for k in range(repeats):
            for launcher, out in zip((plain, checked), samples, strict=True):
                t = time.perf_counter()
                launcher(*args, ndrange=nd)
                out.append(time.perf_counter() - t)
            if k >= 2 and time.perf_counter() - started > budget:
                break
        t_plain, t_debug = (statistics.median(s) for s in samples)
        rows.append(Row(f"launch in debug mode ({name})", "CPU", t_debug, "debug off", t_plain,
                        t_debug / t_plain, size=str(args[0].size), ok=ok,
                        note="the same launcher with every subscript bounds-checked, "
                             "against debug mode off; median of alternating launches"))
    return rows
