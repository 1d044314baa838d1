"""``portakern bench --kernel FILE``: time the kernels of a user's ``.pk`` file.

Each ``@kernel`` of the file runs on made-up inputs: every array parameter gets
one element per work-item (floats uniform in [0, 1), integers and bools zero, so an
array read as an index stays at 0), every scalar the value ``-D NAME=VALUE``
gives it, else 1; type variables are bound to float unless ``-D T=double`` says
otherwise. Before it is timed, a kernel runs once in debug mode: an out-of-bounds
subscript (say, a scalar that should have been the array's length) is reported on
its row, with the line, instead of corrupting memory.

The baseline is NumPy copying the same number of bytes (every array read or
written once): a ratio near 1 is a kernel at the memory bandwidth of a copy; a
compute-bound kernel shows how far from it it is.
"""

from __future__ import annotations

import math
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import KernelFaultError, PortakernError
from ..syntax.vectors import VECTOR_TYPES
from ..types import KNOWN_TYPES, TYPE_DTYPES
from .rows import Row

__all__ = ["run_file"]

#: The default ndrange per rank (elements of every array).
_DEFAULT_NDRANGE = {1: (1 << 22,), 2: (2048, 2048), 3: (128, 128, 256)}


def run_file(path: str | Path, defines: dict[str, Any], ndrange: tuple[int, ...] | None,
             backend: Any, repeats: int = 7) -> list[Row]:
    """One row per ``@kernel`` of the file at ``path`` (see the module docstring)."""
    from ..kernels import Kernel
    from ..lower.lowering import infer_ndim
    from ..render.emit import KernelTemplate, check_constants
    from ..syntax.language import parse
    from ..targets import CANONICAL_TARGET

    p = Path(path)
    text = p.read_text(encoding="utf-8")
    smap = KernelTemplate(text, str(p)).render(CANONICAL_TARGET, check_constants(dict(defines)))
    rows = []
    for kdef in parse(smap).kernels:
        # A -D naming a scalar parameter is its value at launch (and, unused, a constant).
        scalars = {q.name: defines[q.name] for q in kdef.params
                   if not q.pointer and q.name in defines}
        unbound = {tv: "float" for tv in kdef.type_vars if tv not in defines}
        nd = ndrange or _DEFAULT_NDRANGE[max(infer_ndim(kdef), 1)]
        try:
            plain = Kernel(text, kdef.name, filename=str(p), **defines, **unbound)
            checked = Kernel(text, kdef.name, filename=str(p), debug=True, **defines,
                             **unbound)
            args = _inputs(plain, nd, scalars, backend)
            rows.append(_row(plain, checked, args, nd, backend, repeats))
        except (PortakernError, ValueError, TypeError) as exc:
            rows.append(Row(kdef.name, backend.name, math.nan, "", math.nan, math.nan,
                            size="x".join(map(str, nd)), ok=False,
                            note=f"{type(exc).__name__}: {exc}"))
    return rows


def _inputs(kernel: Any, nd: tuple[int, ...], scalars: dict[str, Any],
            backend: Any) -> list[Any]:
    rng = np.random.default_rng(0)
    n = math.prod(nd)
    args: list[Any] = []
    bound = {k: str(v) for k, v in kernel.constants.items()}
    for q in kernel.signature:
        type_name = bound.get(q.type, q.type)
        vector = VECTOR_TYPES.get(type_name)  # float4*: an (n, 4) float32 array
        if type_name not in KNOWN_TYPES and vector is None:
            raise ValueError(f"parameter {q.name!r} has type {q.type}, which -D {q.type}=... "
                             f"must bind")
        dtype = vector.dtype if vector else TYPE_DTYPES[type_name]
        if q.pointer:
            shape = (n, vector.width) if vector else (n,)
            host = (rng.random(shape).astype(dtype) if dtype.kind == "f"
                    else np.zeros(shape, dtype))
            args.append(backend.to_device(host))
        else:
            args.append(dtype.type(scalars.get(q.name, 1)))
    return args


def _row(plain: Any, checked: Any, args: list[Any], nd: tuple[int, ...], backend: Any,
         repeats: int) -> Row:
    size = "x".join(map(str, nd))
    try:  # once in debug mode: a fault is reported, not timed
        checked(backend)(*args, ndrange=nd)
        backend.synchronize()
    except KernelFaultError as exc:
        return Row(plain.name, backend.name, math.nan, "", math.nan, math.nan, size=size,
                   ok=False, note=f"faults in debug mode, not timed: {exc}")
    launch = plain(backend)
    launch(*args, ndrange=nd)  # compile, warm
    backend.synchronize()
    seconds = _median(lambda: (launch(*args, ndrange=nd), backend.synchronize()), repeats)
    nbytes = sum(int(backend.to_host(a).nbytes) for a in args
                 if not isinstance(a, np.generic))
    half = max(nbytes // 2 // 4, 1)
    src, dst = np.ones(half, np.float32), np.empty(half, np.float32)
    copy = _median(lambda: np.copyto(dst, src), repeats)
    return Row(plain.name, backend.name, seconds, "NumPy copy, same bytes", copy,
               seconds / copy, size=size, gbps=nbytes / seconds / 1e9,
               baseline_gbps=nbytes / copy / 1e9, ok=True)


def _median(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(max(repeats, 1)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def parse_ndrange(text: str) -> tuple[int, ...]:
    """``"1024"`` or ``"512x512"`` -> the ndrange tuple."""
    try:
        nd = tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--ndrange takes sizes like 1048576 or 1024x1024, got {text!r}") \
            from None
    if not 1 <= len(nd) <= 3 or min(nd) < 1:
        raise ValueError(f"--ndrange takes 1 to 3 sizes >= 1, got {text!r}")
    return nd
