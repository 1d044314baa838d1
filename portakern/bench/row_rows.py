"""The row-wise rows of ``portakern bench``: one workgroup per row (issue 27, DESIGN section 4).

``rms_norm``, ``softmax`` and ``group_norm`` (``examples/rowwise.pk``: a strided pass per
work-item, ``@groupreduce``, then a second pass) and ``argsort_rows``
(``examples/argsort_rows.pk``: a bitonic sort of (key, index) pairs in ``@localmem``), each
on ``CPU()`` against the same math in NumPy in the same run, and on the ``OpenCL`` backend
(PoCL here) where one starts. Targets (``portakern bench`` reports them): rms_norm and
softmax at most 0.5x NumPy's time, group_norm at most 1x, argsort_rows at most 5x
``np.argsort(x, axis=-1)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .measure import interleaved
from .rows import Row

__all__ = ["NAMES", "bench_rows"]

#: The rows' names (``portakern bench --only softmax``), and each one's bound on the
#: ratio to NumPy.
LIMITS = {"rms_norm": 0.5, "softmax": 0.5, "group_norm": 1.0, "argsort_rows": 5.0}
NAMES = tuple(LIMITS)

_EPS = np.float32(1e-5)


def _numpy(name: str) -> Callable[[np.ndarray], Any]:
    if name == "rms_norm":
        return lambda x: x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + _EPS)
    if name == "softmax":
        def softmax(x: np.ndarray) -> np.ndarray:
            e = np.exp(x - x.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        return softmax
    if name == "group_norm":
        def group_norm(x: np.ndarray) -> np.ndarray:
            d = x - x.mean(axis=1, keepdims=True)
            return d / np.sqrt(np.mean(d * d, axis=1, keepdims=True) + _EPS)
        return group_norm
    return lambda x: np.argsort(x, axis=-1)


def _shape(name: str, quick: bool) -> tuple[int, int]:
    if quick:
        return (8, 1024) if name == "group_norm" else (16, 256)
    # group_norm: ggml's shape, 32 groups of channels over a 4096 x 4096 float32 tensor.
    return {"group_norm": (32, 4096 * 4096 // 32), "argsort_rows": (4096, 1024)}.get(
        name, (4096, 4096))


def _pocl() -> Any:
    """The OpenCL backend on a CPU device (PoCL), or None where none starts."""
    try:
        from ..backends.opencl import OpenCL

        backend = OpenCL()
        return backend if getattr(backend, "cpu_device", False) else None
    except Exception:  # noqa: BLE001 - no PyOpenCL, no platform: the row is left out
        return None


def bench_rows(quick: bool = False, repeats: int = 7, budget: float = 2.0,
               only: Any = ()) -> list[Row]:
    """Per name in :data:`NAMES` (all, or those in ``only``): a ``CPU()`` row against
    NumPy, and an ``OpenCL`` (PoCL) row against NumPy where one starts; each after
    checking the kernel's output against NumPy's."""
    names = [n for n in NAMES if not only or n in only]
    if not names:
        return []
    from .. import examples
    from ..backends.opencl import CPU

    pocl = None if quick else _pocl()
    rows: list[Row] = []
    for name in names:
        ex = examples.get(name)
        shape = _shape(name, quick)
        args = ex.make_args(shape, np.random.default_rng(0), np.float32)
        x = args[1]
        want = ex.reference(args)
        kernel, wg, nd = ex.load(), ex.workgroupsize(), ex.ndrange(args)
        on_cpu = kernel(CPU(), wg)
        model = _numpy(name)
        fns = [lambda on_cpu=on_cpu, args=args, nd=nd: on_cpu(*args, ndrange=nd),
               lambda model=model, x=x: model(x)]
        on_cpu(*args, ndrange=nd)
        oks = [ex.agrees(ex.outputs(args), want)]
        if pocl is not None:
            dev = ex.to_device(args, pocl)
            on_pocl = kernel(pocl, wg)

            def pocl_run(dev: Any = dev, on_pocl: Any = on_pocl, nd: Any = nd) -> None:
                on_pocl(*dev, ndrange=nd)
                pocl.synchronize()

            pocl_run()
            oks.append(ex.agrees(ex.outputs(dev, pocl), want))
            fns.append(pocl_run)
        times = interleaved(fns, repeats, budget)
        limit = LIMITS[name]
        size = f"{shape[0]}x{shape[1]}"
        nbytes = 2 * x.nbytes
        what = "np.argsort(x, axis=-1)" if name == "argsort_rows" else "the same math in NumPy"
        for backend, t, ok in zip(("CPU", "OpenCL"), [times[0], *times[2:]], oks,
                                  strict=False):
            rows.append(Row(
                name, backend, t, "numpy", times[1], t / times[1], size=size,
                gbps=nbytes / t / 1e9, baseline_gbps=nbytes / times[1] / 1e9,
                target="" if quick or backend != "CPU" else f"<= {limit}",
                meets=None if quick or backend != "CPU" else t / times[1] <= limit, ok=ok,
                note=f"the {name} example, one workgroup of {wg} per row, against {what}"))
    return rows
