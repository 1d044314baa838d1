"""The ``kernel creation`` row of ``portakern bench``: source to :class:`~portakern.Kernel`.

Creating a kernel renders its source for each built-in target and runs the
portability scan on every rendering; a source that does not branch on ``target``
renders alike everywhere and is parsed once (DESIGN section 7). The row prices
that against the floor of the front end: one render and one parse of the same
source, so a ratio near 1 says creation parses once, and one near the number of
targets says it parses per target.
"""

from __future__ import annotations

import statistics
import time

from .rows import Row

#: How many kernels a sample creates (each from a distinct source text, so no memo hits).
_PER_SAMPLE = 20


def bench_rows(quick: bool = False, repeats: int = 7, only: object = ()) -> list[Row]:
    """One row per example source: ``pk.kernel()`` against one render + one parse."""
    names = ("saxpy",) if quick else ("saxpy", "matmul_tiled")  # quick: a smoke test
    names = tuple(n for n in names if not only or n in only)  # type: ignore[operator]
    return [_row(name, 1 if quick else max(3, repeats)) for name in names]


def _row(name: str, samples_wanted: int) -> Row:
    from .. import examples
    from ..kernels import Kernel
    from ..source.template import KernelTemplate
    from ..syntax.language import parse
    from ..targets import CANONICAL_TARGET, builtin_targets

    ex = examples.get(name)
    source, constants, filename = ex.source, dict(ex.constants), str(ex.path)
    serial = iter(range(10**9))

    def variant() -> str:  # a new text each time: nothing is memoised across samples
        return source + "\n" * (next(serial) % 7 + 1) + " " * next(serial)

    def create() -> None:
        for _ in range(_PER_SAMPLE):
            Kernel(variant(), ex.kernel, filename=filename, **constants)

    def floor() -> None:
        for _ in range(_PER_SAMPLE):
            template = KernelTemplate(variant(), filename)
            parse(template.render(CANONICAL_TARGET, constants, ex.kernel))

    create(), floor()  # imports and the Jinja environment, outside the timing
    samples: list[list[float]] = [[], []]
    for _ in range(samples_wanted):
        for fn, out in zip((create, floor), samples, strict=True):
            t = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t) / _PER_SAMPLE)
    t_create, t_floor = (statistics.median(s) for s in samples)
    return Row("kernel creation", "CPU", t_create, "one render + parse", t_floor,
               t_create / t_floor, size=name,
               note=f"pk.kernel() of the {name} example: render for "
                    f"{len(builtin_targets())} targets and the portability scan, against "
                    f"rendering and parsing its source once; median of alternating samples "
                    f"of {_PER_SAMPLE}")
