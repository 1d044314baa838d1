"""Inclusive and exclusive scans (prefix sums) over any associative C expression.

``pk.InclusiveScanKernel(dtype, "a+b")`` is PyOpenCL's object of the same name, built
from portakern's kernel language, so it runs on every backend (NumPy arrays on
``CPU()``, PyOpenCL arrays, the CUDA and Metal stand-ins) with the same caches and debug
mode as a hand-written kernel.

The scan is multi-pass (reduce, then scan, then apply), which needs no neutral element
for an inclusive scan:

1. the input is cut into chunks of ``chunk`` elements, one per work-item; each
   work-item combines its chunk into one total (``pk_scan_totals``);
2. the totals are scanned, inclusively, by the same object (recursively, until one
   chunk holds them all);
3. each work-item scans its chunk again, starting from the scanned total of the chunks
   before it, and writes the result (``pk_scan_apply``).

The input is read twice and the output written once. On a CPU (``CPU()`` on either
path, ``OpenCL`` on a CPU device) a chunk per thread is what is fast: a work-item's
sequential loop runs at the speed of ``numpy.cumsum``'s, and a few hundred chunks keep
every core busy. GPU backends instead scan a tile per workgroup in ``@localmem``
(:mod:`.scan_workgroup`: coalesced loads, many work-items), measured three times slower
on the CPUs (``strategy_for``); their segmented scans take short chunks.

A segmented scan (``segmented=True``, called ``knl(x, flags)``) restarts at every
element whose flag is nonzero, PyOpenCL's ``is_segment_start_expr`` given as an array:
the totals then carry a flag saying whether their chunk holds a segment start.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..launch.resolve import get_backend
from ..subprocesses import fork_safe_lock
from ..types import type_name_of
from . import scan_workgroup
from .common import on_cpu_device
from .scan_fragment import check_expression

__all__ = ["InclusiveScanKernel", "ExclusiveScanKernel", "GenericScan"]

#: Elements per work-item on CPU(): at least this many, and about this many chunks.
_CPU_MIN_CHUNK = 4096
_CPU_CHUNKS = 256
#: Elements per work-item on GPU backends (coalescing is not attempted; many items).
_GPU_CHUNK = 64

_OP = "static inline T scan_op(T a, T b) { return (@EXPR@); }\n"

_TOTALS = """
@kernel void @NAME@_totals(T* totals, @TFLAGS_OUT@const T* x, @FLAGS@long n, long chunk) {
    const long i = @index(Global, Linear);
    const long lo = i * chunk;
    const long hi = lo + chunk < n ? lo + chunk : n;
    T acc = x[lo];
    @SEG_INIT@
    for (long j = lo + 1; j < hi; ++j) {
        @SEG_RESTART@acc = scan_op(acc, x[j]);
    }
    totals[i] = acc;
    @SEG_STORE@
}
"""

_INCLUSIVE = """
@kernel void @NAME@_apply@SUFFIX@(T* y, @X@const T* totals, @FLAGS@long n, long chunk) {
    const long i = @index(Global, Linear);
    const long lo = i * chunk;
    const long hi = lo + chunk < n ? lo + chunk : n;
    long j = lo;
    T acc;
    if (i > 0) {
        acc = totals[i - 1];
    } else {
        acc = @XR@[lo];
        y[lo] = acc;
        j = lo + 1;
    }
    for (; j < hi; ++j) {
        const T v = @XR@[j];
        acc = @SEG_PICK@scan_op(acc, v);
        y[j] = acc;
    }
}
"""

_EXCLUSIVE = """
@kernel void @NAME@_apply@SUFFIX@(T* y, @X@const T* totals, @FLAGS@long n, long chunk) {
    const long i = @index(Global, Linear);
    const long lo = i * chunk;
    const long hi = lo + chunk < n ? lo + chunk : n;
    T acc = i > 0 ? totals[i - 1] : (T)(@NEUTRAL@);
    for (long j = lo; j < hi; ++j) {
        const T v = @XR@[j];
        @SEG_RESET@y[j] = acc;
        acc = scan_op(acc, v);
    }
}
"""


def _fill(text: str, **parts: str) -> str:
    for key, value in parts.items():
        text = text.replace(f"@{key}@", value)
    return text


def _source(name: str, expr: str, neutral: str | None, exclusive: bool,
            segmented: bool) -> str:
    """The kernels of one scan: totals, and apply (out of place and in place)."""
    seg = {
        "TFLAGS_OUT": "uint8_t* tflags, " if segmented else "",
        "FLAGS": "const F* flags, " if segmented else "",
        "SEG_INIT": "bool f = flags[lo] != 0;" if segmented else "",
        "SEG_RESTART": ("if (flags[j] != 0) { acc = x[j]; f = true; continue; }\n        "
                        if segmented else ""),
        "SEG_STORE": "tflags[i] = f ? 1 : 0;" if segmented else "",
        "SEG_PICK": "flags[j] != 0 ? v : " if segmented else "",
        "SEG_RESET": (f"if (flags[j] != 0) acc = (T)({neutral});\n        "
                      if segmented else ""),
    }
    apply = _EXCLUSIVE if exclusive else _INCLUSIVE
    parts = [_fill(_OP, EXPR=expr), _fill(_TOTALS, NAME=name, **seg)]
    # Two apply kernels: out of place (x read-only, declared no-alias) and in place
    # (out=x: y is read and written, so no restrict-qualified second pointer to it).
    parts.append(_fill(apply, NAME=name, SUFFIX="", X="const T* x, ", XR="x",
                       NEUTRAL=neutral or "0", **seg))
    parts.append(_fill(apply, NAME=name, SUFFIX="_inplace", X="", XR="y",
                       NEUTRAL=neutral or "0", **seg))
    return "".join(parts)


def _identifier(name: object) -> str:
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise ValueError(f"name must be a C identifier (letters, digits, '_'), got {name!r}")
    return name


def _neutral(neutral: object, what: str) -> str | None:
    if neutral is None:
        return None
    if isinstance(neutral, (bool, np.bool_)):
        return "1" if neutral else "0"
    if isinstance(neutral, (int, np.integer)):
        return str(int(neutral))
    if isinstance(neutral, (float, np.floating)):
        value = float(neutral)
        if math.isinf(value):
            return "INFINITY" if value > 0 else "-INFINITY"
        return repr(value)
    return check_expression(neutral, what, frozenset())


def strategy_for(backend: Any, segmented: bool) -> str:
    """``"chunks"`` (a chunk per work-item) on a CPU and for segmented scans, else
    ``"tiles"`` (a workgroup's tile in ``@localmem``, :mod:`.scan_workgroup`).

    Measured on PoCL over 10^7 float32 (two cores): chunks 28 ms, tiles 87 ms; on the
    native path tiles took 78 ms, chunks 20 ms.
    """
    return "chunks" if segmented or on_cpu_device(backend) else "tiles"


def chunk_for(backend: Any, n: int) -> int:
    """Elements per work-item for ``n`` elements on ``backend`` (the scans and copy_if)."""
    if on_cpu_device(backend):
        return max(_CPU_MIN_CHUNK, -(-n // _CPU_CHUNKS))
    return _GPU_CHUNK


class GenericScan:
    """What the inclusive and exclusive scans share: checking, kernels, the passes."""

    _exclusive = False

    def __init__(self, dtype: Any, scan_expr: str, neutral: Any = None, name: str = "scan",
                 *, segmented: bool = False, debug: bool | None = None) -> None:
        try:
            self.dtype = np.dtype(dtype)
        except TypeError as err:
            raise TypeError(f"dtype must be a NumPy dtype (numpy.float32, 'int32'), got "
                            f"{dtype!r}") from err
        if type_name_of(self.dtype) is None or self.dtype == np.bool_ \
                or self.dtype.kind not in "iuf":
            raise TypeError(f"dtype {self.dtype} cannot be scanned: give an integer or "
                            "floating-point dtype (numpy.float32, numpy.int64, ...)")
        self.scan_expr = check_expression(scan_expr, "scan_expr", frozenset({"a", "b"}))
        self.neutral = _neutral(neutral, "neutral")
        if self._exclusive and self.neutral is None:
            raise TypeError("ExclusiveScanKernel needs neutral=, the identity of scan_expr "
                            "(\"0\" for a+b): it is the first output")
        self.name = _identifier(name)
        self.segmented = bool(segmented)
        self.debug = debug
        self._source = _source(self.name, self.scan_expr, self.neutral, self._exclusive,
                               self.segmented)
        if not self.segmented:
            self._source += scan_workgroup.source(self.name, self.neutral, self._exclusive)
        self._kernels: dict[str, Any] = {}
        self._launchers: dict[tuple, Any] = {}
        self._dummies: dict[Any, Any] = {}
        self._totals_scan: GenericScan | None = None
        self._lock = fork_safe_lock()

    def __reduce__(self) -> tuple:
        # By recipe (like a Kernel): rebuilt where it lands, its kernels from the disk cache.
        return (_rebuild, (type(self), self.dtype, self.scan_expr, self.neutral, self.name,
                           self.segmented, self.debug))

    def __repr__(self) -> str:
        extra = ", segmented=True" if self.segmented else ""
        return (f"{type(self).__name__}({self.dtype.name!r}, {self.scan_expr!r}, "
                f"neutral={self.neutral!r}{extra})")

    # -- kernels -------------------------------------------------------------------

    def _launcher(self, which: str, backend: Any) -> Any:
        # CPU()'s launchers keep the path (native or PoCL) they started on, so a
        # change of PORTAKERN_CPU gets launchers of its own.
        key = (which, backend, os.environ.get("PORTAKERN_CPU", ""))
        launch = self._launchers.get(key)
        if launch is None:
            with self._lock:
                kernel = self._kernels.get(which)
                if kernel is None:
                    from ..kernels import kernel as make

                    kernel = make(self._source, name=f"{self.name}_{which}", T=self.dtype,
                                  debug=self.debug)
                    self._kernels[which] = kernel
                launch = self._launchers[key] = kernel(backend)
        return launch

    def _totals_kernel(self) -> GenericScan:
        # The totals are always scanned inclusively (chunk i starts from total i-1).
        if self._totals_scan is None:
            self._totals_scan = InclusiveScanKernel(self.dtype, self.scan_expr, None,
                                                    name=self.name, segmented=self.segmented,
                                                    debug=self.debug)
        return self._totals_scan

    # -- calls ---------------------------------------------------------------------

    def __call__(self, x: Any, flags: Any = None, *, out: Any = None) -> Any:
        """Scan ``x`` (segmented: restart where ``flags`` is nonzero); return the result.

        Parameters
        ----------
        x : array
            A 1-D C-contiguous array of the kernel's dtype, of any backend.
        flags : array, optional
            Segmented scans only: a 1-D integer or bool array as long as ``x``; a
            nonzero flag starts a new segment at that element.
        out : array, optional
            Where to write (as long as ``x``, same dtype and backend); ``out=x`` scans
            in place. A new array is allocated and returned otherwise.
        """
        backend = get_backend(x) if out is None else get_backend(x, out)
        n = self._check(backend, x, "x")
        if self.segmented:
            if flags is None:
                raise TypeError(f"{type(self).__name__}(..., segmented=True) is called "
                                "knl(x, flags): flags (nonzero where a segment starts) is "
                                "missing")
            get_backend(x, flags)
            self._check_flags(backend, flags, n)
        elif flags is not None:
            raise TypeError(f"{type(self).__name__} is not segmented: knl(x) takes no flags "
                            "(make it with segmented=True to pass them)")
        if out is None:
            out = backend.allocate((n,), self.dtype)
        else:
            m = self._check(backend, out, "out")
            if m != n:
                raise ValueError(f"out has {m} elements but x has {n}: give out= an array "
                                 f"of shape ({n},), or leave it out to get a new one")
        if n:
            self._run(backend, x, flags, out, n)
        return out

    def _check(self, backend: Any, a: Any, what: str) -> int:
        info = backend.array_info(a)
        if info is None:
            raise TypeError(f"{what} must be an array, got {type(a).__name__}")
        if len(info.shape) != 1:
            raise ValueError(f"{what} must be 1-D, got shape {tuple(info.shape)}: pass "
                             f"{what}.reshape(-1) (or scan each row on its own)")
        if info.dtype != self.dtype:
            raise TypeError(f"{what} has dtype {info.dtype}, but this scan was made for "
                            f"{self.dtype}: pass {what}.astype({self.dtype.name!r}) or make "
                            f"the kernel with dtype={info.dtype.name!r}")
        if not info.c_contiguous:
            raise ValueError(f"{what} must be contiguous: pass a contiguous copy")
        return int(info.shape[0])

    def _check_flags(self, backend: Any, flags: Any, n: int) -> None:
        info = backend.array_info(flags)
        if info is None or len(info.shape) != 1 or info.shape[0] != n:
            shape = None if info is None else tuple(info.shape)
            raise ValueError(f"flags must be a 1-D array of {n} elements (as long as x), got "
                             f"shape {shape}")
        if info.dtype.kind not in "biu" or not info.c_contiguous:
            raise TypeError(f"flags must be a contiguous integer or bool array (nonzero "
                            f"starts a segment), got dtype {info.dtype}: pass "
                            "flags.astype('uint8')")

    def _dummy(self, backend: Any) -> Any:
        dummy = self._dummies.get(backend)
        if dummy is None:
            dummy = self._dummies[backend] = backend.allocate((1,), self.dtype)
        return dummy

    def _run(self, backend: Any, x: Any, flags: Any, out: Any, n: int) -> None:
        if strategy_for(backend, self.segmented) == "tiles":
            self._run_tiles(backend, x, out, n)
            return
        chunk = min(chunk_for(backend, n), n)
        nchunks = -(-n // chunk)
        seg = (flags,) if self.segmented else ()
        apply = "apply_inplace" if out is x else "apply"
        xs = () if out is x else (x,)
        if nchunks == 1:
            # One chunk: the totals are never read (chunk 0 starts from its first
            # element), so a one-element stand-in goes (x or out would alias y).
            self._launcher(apply, backend)(out, *xs, self._dummy(backend), *seg, n, chunk,
                                           ndrange=(1,))
            return
        totals = backend.allocate((nchunks,), self.dtype)
        if self.segmented:
            tflags = backend.allocate((nchunks,), np.uint8)
            self._launcher("totals", backend)(totals, tflags, x, flags, n, chunk,
                                              ndrange=(nchunks,))
            self._totals_kernel()(totals, tflags, out=totals)
        else:
            self._launcher("totals", backend)(totals, x, n, chunk, ndrange=(nchunks,))
            self._totals_kernel()(totals, out=totals)
        self._launcher(apply, backend)(out, *xs, totals, *seg, n, chunk, ndrange=(nchunks,))

    def _run_tiles(self, backend: Any, x: Any, out: Any, n: int) -> None:
        tile, wg = scan_workgroup.TILE, scan_workgroup.WG
        launch = self._launcher("wg_inplace" if out is x else "wg", backend)
        xs = () if out is x else (x,)
        groups = -(-n // tile)
        if groups == 1:  # its total is not needed: it goes to a one-element stand-in
            launch(out, self._dummy(backend), *xs, n, ndrange=(wg,))
            return
        gtotals = backend.allocate((groups,), self.dtype)
        launch(out, gtotals, *xs, n, ndrange=(groups * wg,))
        self._totals_kernel()(gtotals, out=gtotals)
        self._launcher("addback", backend)(out, gtotals, n, ndrange=(n - tile,))


def _rebuild(cls: type, dtype: np.dtype, scan_expr: str, neutral: str | None, name: str,
             segmented: bool, debug: bool | None) -> GenericScan:
    return cls(dtype, scan_expr, neutral, name, segmented=segmented, debug=debug)


class InclusiveScanKernel(GenericScan):
    """``y[i] = x[0] op x[1] op ... op x[i]`` for an associative ``scan_expr`` in ``a``, ``b``.

    PyOpenCL's ``InclusiveScanKernel(dtype, scan_expr, neutral=None, name_prefix)``,
    portable: ``knl = pk.InclusiveScanKernel(np.float32, "a+b")``, then ``y = knl(x)``
    (a new array on ``x``'s backend), ``knl(x, out=y)``, or ``knl(x, out=x)`` in place.

    Parameters
    ----------
    dtype : numpy dtype
        The element type of the input and the output.
    scan_expr : str
        A C expression in ``a`` (the earlier elements' result) and ``b`` (the next
        element): ``"a+b"``, ``"max(a, b)"``, ``"a*b"``. It must be associative; it need
        not be commutative (``a`` is always the left operand).
    neutral : str or number, optional
        Its identity (not needed for an inclusive scan; accepted for PyOpenCL's shape).
    name : str
        A prefix for the generated kernels' names (in caches, timings and errors).
    segmented : bool
        Called ``knl(x, flags)``: the scan restarts at each element whose flag is nonzero.
    debug : bool, optional
        Debug mode for the generated kernels (docs/debugging.md).
    """


class ExclusiveScanKernel(GenericScan):
    """``y[0] = neutral``, ``y[i] = x[0] op ... op x[i-1]``: PyOpenCL's ``ExclusiveScanKernel``.

    The same parameters as :class:`InclusiveScanKernel`, but ``neutral`` (the identity
    of ``scan_expr``, ``"0"`` for ``"a+b"``) is required. Segmented: each segment's
    first output is ``neutral``.
    """

    _exclusive = True

    def __init__(self, dtype: Any, scan_expr: str, neutral: Any = None, name: str = "scan",
                 *, segmented: bool = False, debug: bool | None = None) -> None:
        super().__init__(dtype, scan_expr, neutral, name, segmented=segmented, debug=debug)
