"""``pk.copy_if(x, "x > 0")``: the elements of ``x`` a predicate keeps, in order, and their count.

PyOpenCL's ``pyopencl.algorithm.copy_if``, built on a scan, portable: every work-item
counts the elements of its chunk that pass (``<name>_count``), the counts are scanned
inclusively (:class:`~portakern.blocks.scan.InclusiveScanKernel` with ``a+b``), the
last scanned count is the result's length, and each work-item then copies its chunk's
kept elements from the offset the chunks before it leave (``<name>_write``). Like the
scans, ``x`` is read twice and the result written once.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

import numpy as np

from ..launch.resolve import get_backend
from ..subprocesses import fork_safe_lock
from ..target_facts import CONSTANTS, MATH_FUNCTIONS
from ..types import KNOWN_TYPES, type_name_of
from .scan import InclusiveScanKernel, chunk_for
from .scan_fragment import check_expression

__all__ = ["copy_if"]

_COUNT = """
@kernel void @NAME@_count(long* cif_counts, const T* cif_src, @SCALARS@long cif_total,
                          long cif_chunk) {
    const long cif_i = @index(Global, Linear);
    const long cif_lo = cif_i * cif_chunk;
    const long cif_hi = cif_lo + cif_chunk < cif_total ? cif_lo + cif_chunk : cif_total;
    long cif_c = 0;
    for (long cif_j = cif_lo; cif_j < cif_hi; ++cif_j) {
        const T x = cif_src[cif_j];
        cif_c += (@PRED@) ? 1 : 0;
    }
    cif_counts[cif_i] = cif_c;
}

@kernel void @NAME@_write(T* cif_dst, const T* cif_src, const long* cif_counts, @SCALARS@
                          long cif_total, long cif_chunk) {
    const long cif_i = @index(Global, Linear);
    const long cif_lo = cif_i * cif_chunk;
    const long cif_hi = cif_lo + cif_chunk < cif_total ? cif_lo + cif_chunk : cif_total;
    long cif_o = cif_i > 0 ? cif_counts[cif_i - 1] : 0;
    const long cif_end = cif_counts[cif_i];
    // Every element is stored at the next free place, and the place moves on only
    // when it is kept: no branch on the predicate (half of them mispredicted at a
    // 50% selection), only on staying inside this chunk's range, which holds until
    // its last kept element has gone.
    for (long cif_j = cif_lo; cif_j < cif_hi; ++cif_j) {
        const T x = cif_src[cif_j];
        const bool cif_keep = (@PRED@);
        if (cif_o < cif_end) {
            cif_dst[cif_o] = x;
        }
        cif_o += cif_keep ? 1 : 0;
    }
}
"""

#: The element's name and the type variable; the kernels' own names start with cif_.
_INTERNAL = frozenset({"x", "T"})

#: The counts are scanned by one shared kernel object (its launchers are per backend).
_COUNT_SCAN = InclusiveScanKernel(np.int64, "a+b", name="copy_if_offsets")

#: Recent predicates' kernels, at most _KEEP (a loop over thresholds reuses them).
_KEPT: OrderedDict[tuple, _CopyIf] = OrderedDict()
_KEEP = 32
_LOCK = fork_safe_lock()


def _scalar_type(name: str, value: object, dtype: np.dtype) -> tuple[str, Any]:
    """The C type of a scalar passed by keyword, and the value to launch with."""
    if isinstance(value, (bool, np.bool_)):
        return "bool", bool(value)
    if isinstance(value, np.generic):
        tname = type_name_of(value.dtype)
        if tname is None:
            raise TypeError(f"scalar {name}={value!r} has dtype {value.dtype}, which kernels "
                            "cannot take: pass a number")
        return tname, value
    if isinstance(value, int):
        return "long", value
    if isinstance(value, float):
        # Compared with x's elements: in x's precision when x is floating point (and a
        # float32 kernel keeps its float32 arithmetic), else as a double.
        if dtype.kind == "f":
            return "T", dtype.type(value)
        return "double", value
    raise TypeError(f"scalar {name}= must be a number (int, float, bool or a NumPy scalar), "
                    f"got {type(value).__name__} {value!r}")


class _CopyIf:
    """The two kernels of one predicate over one dtype, and their launchers per backend."""

    def __init__(self, dtype: np.dtype, predicate: str, scalars: tuple[tuple[str, str], ...],
                 name: str, debug: bool | None) -> None:
        from ..kernels import kernel as make

        params = "".join(f"{ctype} {sname}, " for sname, ctype in scalars)
        source = _COUNT.replace("@NAME@", name).replace("@PRED@", predicate) \
            .replace("@SCALARS@", params)
        self.count = make(source, name=f"{name}_count", T=dtype, debug=debug)
        self.write = make(source, name=f"{name}_write", T=dtype, debug=debug)
        self._launchers: dict[tuple, Any] = {}

    def launcher(self, which: str, backend: Any) -> Any:
        # CPU()'s launchers keep the path (native or PoCL) they started on, so a
        # change of PORTAKERN_CPU gets launchers of its own.
        key = (which, backend, os.environ.get("PORTAKERN_CPU", ""))
        launch = self._launchers.get(key)
        if launch is None:
            launch = self._launchers[key] = getattr(self, which)(backend)
        return launch


def _kernels(dtype: np.dtype, predicate: str, scalars: tuple[tuple[str, str], ...],
             name: str, debug: bool | None) -> _CopyIf:
    key = (dtype, predicate, scalars, name, debug)
    with _LOCK:
        found = _KEPT.pop(key, None)
        if found is None:
            found = _CopyIf(dtype, predicate, scalars, name, debug)
        _KEPT[key] = found  # the newest last
        while len(_KEPT) > _KEEP:
            _KEPT.popitem(last=False)
        return found


def copy_if(x: Any, predicate: str, *, name: str = "copy_if", debug: bool | None = None,
            **scalars: Any) -> tuple[Any, int]:
    """The elements of ``x`` for which ``predicate`` holds, in order, and how many.

    Parameters
    ----------
    x : array
        A 1-D C-contiguous array of any backend (NumPy, PyOpenCL, CuPy, MLX).
    predicate : str
        A C expression in ``x`` (one element), and the scalars given by keyword:
        ``"x > 0"``, ``"x > t && x < 2*t"`` with ``t=0.5``.
    name : str
        A prefix for the generated kernels' names.
    debug : bool, optional
        Debug mode for the generated kernels (docs/debugging.md).
    **scalars
        Numbers the predicate names (a Python float is compared in ``x``'s precision
        when ``x`` is floating point, an int as a 64-bit integer).

    Returns
    -------
    (selected, count) : (array, int)
        ``selected`` a new array of ``x``'s backend and dtype with ``count`` elements,
        what NumPy's ``x[x > 0]`` gives for ``"x > 0"``.
    """
    backend = get_backend(x)
    info = backend.array_info(x)
    if info is None:
        raise TypeError(f"x must be an array, got {type(x).__name__}")
    if len(info.shape) != 1:
        raise ValueError(f"x must be 1-D, got shape {tuple(info.shape)}: pass x.reshape(-1)")
    if not info.c_contiguous:
        raise ValueError("x must be contiguous: pass a contiguous copy")
    dtype = np.dtype(info.dtype)
    if type_name_of(dtype) is None:
        raise TypeError(f"x has dtype {dtype}, which kernels cannot take")
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise ValueError(f"name must be a C identifier, got {name!r}")
    taken = [s for s in scalars if s in KNOWN_TYPES or s in MATH_FUNCTIONS or s in CONSTANTS]
    if taken:
        raise TypeError(f"scalar {taken[0]}= is the name of a type, function or constant of "
                        "the kernel language: rename it in the predicate and the keyword")
    clash = sorted(s for s in scalars if s in _INTERNAL or s.startswith("cif_"))
    if clash:
        raise TypeError(f"scalar {clash[0]}= clashes with a name copy_if's kernels use ('x' is "
                        "the element, T its type, cif_* internal): rename it in the predicate "
                        "and the keyword")
    typed = [(sname, *_scalar_type(sname, value, dtype)) for sname, value in scalars.items()]
    predicate = check_expression(predicate, "predicate", frozenset({"x", *scalars}))
    kernels = _kernels(dtype, predicate, tuple((s, c) for s, c, _ in typed), name, debug)
    values = [v for _, _, v in typed]
    n = int(info.shape[0])
    if n == 0:
        return backend.allocate((0,), dtype), 0
    chunk = min(chunk_for(backend, n), n)
    nchunks = -(-n // chunk)
    counts = backend.allocate((nchunks,), np.int64)
    kernels.launcher("count", backend)(counts, x, *values, n, chunk, ndrange=(nchunks,))
    if nchunks > 1:
        _COUNT_SCAN(counts, out=counts)
    count = int(backend.to_host(counts[nchunks - 1:nchunks])[0])
    selected = backend.allocate((count,), dtype)
    if count:
        kernels.launcher("write", backend)(selected, x, counts, *values, n, chunk,
                                           ndrange=(nchunks,))
    return selected, count
