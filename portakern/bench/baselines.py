"""The baselines a portakern launch is timed against: PyOpenCL by hand, CuPy, and peers
(Numba, numexpr, C++/OpenMP) on ``CPU()``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .measure import Case
from .workloads import jacobi_edges


def runs_pyopencl(backend: Any) -> bool:
    """Whether ``backend`` builds with PyOpenCL, so a hand-written PyOpenCL launch of what
    it built is its baseline (``CPU()`` included)."""
    from ..backends.opencl import OpenCL

    return isinstance(backend, OpenCL)


def runs_cupy(backend: Any) -> bool:
    """Whether ``backend`` launches CuPy arrays, so CuPy's own kernels are its baseline."""
    from ..backends.cuda import CUDA

    return isinstance(backend, CUDA)


def opencl_launcher(kernel: Any, backend: Any, wg: Any = None) -> Any:
    """A launcher that runs ``kernel`` through OpenCL on ``backend``.

    ``CPU()`` runs most kernels on its native path; the PyOpenCL baseline is the
    same kernel built by its OpenCL device (PoCL), launched by hand.
    """
    launcher = kernel(backend, wg)
    launcher.runner = backend  # CPU(): its OpenCL path, not its native one
    return launcher


def handwritten(backend: Any, case: Case, args: tuple) -> Callable[[], None] | None:
    """A PyOpenCL launch of the kernel portakern built for OpenCL, arguments set once."""
    if not runs_pyopencl(backend) or case.w.pipeline:
        return None
    launcher = opencl_launcher(case.kernel, backend, case.wg)
    launcher(*args, ndrange=case.ndrange)
    backend.synchronize()
    return preset_launch(backend, launcher, args)


def native_call(launcher: Any, args: tuple = ()) -> Callable[[], None] | None:
    """A hand-written call of the native path's ``pk_launch``, its arguments built once.

    None unless ``launcher`` ran on CPU()'s native path. What it leaves out is
    portakern's part of a launch: argument checks, the plan lookup, the record.
    """
    runner = launcher.runner
    if getattr(runner, "clips_ndrange", False) is not True:
        return None
    (compiled, global_size, local_size, sizes), = launcher.plans.values()
    # A plugin's arrays (CPU subclasses) hand the native path their memory's handle.
    handles = [runner.array_info(a).handle if runner.array_info(a) is not None else a
               for a in args]
    call, launch_args = runner.prepare_launch(compiled, handles + list(sizes), global_size,
                                              local_size), handles + list(sizes)
    return lambda: call(launch_args)


def preset_launch(backend: Any, launcher: Any, args: tuple, *,
                   set_each_call: bool = False) -> Callable[[], None]:
    """A hand-written PyOpenCL launch of what ``launcher`` built (and has run once).

    It uses a kernel object of its own, because portakern's keeps its own arguments
    set. The arguments are set once, or on every call (``set_each_call``); each
    launch waits, as a synchronous ``CPU()`` launch does.
    """
    import pyopencl as cl

    (compiled, global_size, local_size, sizes), = launcher.plans.values()
    kernel = cl.Kernel(compiled.program, compiled.kernel.function_name)
    cl_args = _opencl_args(cl, backend, (*args, *sizes))
    kernel.set_args(*cl_args)
    queue = backend.queue

    def launch() -> None:
        if set_each_call:
            kernel.set_args(*cl_args)
        cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size).wait()

    return launch


def _opencl_args(cl: Any, backend: Any, args: tuple) -> list:
    """Kernel arguments for a hand-written launch of what ``backend`` launches.

    Each array becomes what the backend itself hands the device (a plugin's
    arrays included); NumPy memory gets a zero-copy buffer, as ``CPU()`` gives it.
    """
    mf = cl.mem_flags
    out = []
    for a in args:
        info = None if isinstance(a, np.generic) else backend.array_info(a)
        h = a if info is None else info.handle
        if isinstance(h, np.ndarray):
            h = cl.Buffer(backend.context, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=h)
        out.append(h)
    return out


def cupy_baseline(case: Case, args: tuple) -> Callable[[], None] | None:
    """CuPy's own kernel for the same result (code path only without a GPU here)."""
    body = case.w.cupy
    if body is None:
        return None
    import cupy

    sync = cupy.cuda.Stream.null.synchronize
    if body == "matmul":
        c, a, b = args[0], args[1], args[2]
        return lambda: (cupy.matmul(a, b, out=c), sync())
    params = ", ".join(f"T {p.name}" for p in case.kernel.params if not p.writable)
    outs = ", ".join(f"T {p.name}" for p in case.kernel.params if p.writable)
    ek = cupy.ElementwiseKernel(params, outs, body, f"pk_bench_{case.w.name}")
    ins = [a for a, p in zip(args, case.kernel.params, strict=True) if not p.writable]
    out = [a for a, p in zip(args, case.kernel.params, strict=True) if p.writable]
    return lambda: (ek(*ins, *out), sync())


_JITTED: dict[str, Any] = {}


def _numba() -> Any:
    try:
        import numba
    except ImportError:
        return None
    return numba


def _numexpr() -> Any:
    try:
        import numexpr
    except ImportError:
        return None
    return numexpr


def _numba_sum(args: tuple) -> Callable[[], Any] | None:
    numba = _numba()
    if numba is None:
        return None
    if "sum" not in _JITTED:
        def total(x: np.ndarray) -> float:
            t = 0.0
            for i in numba.prange(x.size):
                t += x[i]
            return t

        _JITTED["sum"] = numba.njit(parallel=True)(total)
    fn, x = _JITTED["sum"], args[1].reshape(-1)
    return lambda: {"result": fn(x)}


def _numexpr_sum(args: tuple) -> Callable[[], Any] | None:
    ne = _numexpr()
    if ne is None:
        return None
    x = args[1].reshape(-1)
    return lambda: {"result": ne.evaluate("sum(x)", local_dict={"x": x})[()]}


def _numba_jacobi(args: tuple) -> Callable[[], Any] | None:
    numba = _numba()
    if numba is None:
        return None
    if "jacobi" not in _JITTED:
        def sweep(out: np.ndarray, u: np.ndarray) -> None:
            h, w = u.shape
            q = np.float32(0.25)
            for i in numba.prange(1, h - 1):
                for j in range(1, w - 1):
                    out[i, j] = q * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
            out[0, :] = u[0, :]
            out[h - 1, :] = u[h - 1, :]
            out[:, 0] = u[:, 0]
            out[:, w - 1] = u[:, w - 1]

        _JITTED["jacobi"] = numba.njit(parallel=True)(sweep)
    fn, (out, u) = _JITTED["jacobi"], args
    return lambda: fn(out, u)


def _numexpr_jacobi(args: tuple) -> Callable[[], Any] | None:
    ne = _numexpr()
    if ne is None:
        return None
    out, u = args
    names = {"n": u[:-2, 1:-1], "s": u[2:, 1:-1], "w": u[1:-1, :-2], "e": u[1:-1, 2:],
             "q": np.float32(0.25)}
    inner = out[1:-1, 1:-1]

    def sweep() -> None:
        ne.evaluate("q * (n + s + w + e)", local_dict=names, out=inner, casting="same_kind")
        jacobi_edges(out, u)

    return sweep


_HISTOGRAM_CPP = r"""
#include <stdint.h>
#include <string.h>
#define PK_EXPORT extern "C" __attribute__((visibility("default")))
/* Per-thread bins: each OpenMP thread counts its share into its own 256 bins, which
   are added to the result at the end (what a C++ programmer writes for a CPU). */
PK_EXPORT void pk_bench_histogram(unsigned* counts, const uint8_t* data, long long n) {
#pragma omp parallel
    {
        unsigned bins[256];
        memset(bins, 0, sizeof bins);
#pragma omp for nowait
        for (long long i = 0; i < n; ++i) bins[data[i]]++;
        for (int b = 0; b < 256; ++b)
            if (bins[b]) __atomic_add_fetch(&counts[b], bins[b], __ATOMIC_RELAXED);
    }
}
"""


def _cpp_histogram(args: tuple) -> Callable[[], Any] | None:
    import ctypes

    from ..backends.native import native_toolchain
    from ..subprocesses import run, scratch_dir

    toolchain = native_toolchain()
    if isinstance(toolchain, str):
        return None
    if "cpp_histogram" not in _JITTED:
        with scratch_dir("build") as tmp:
            src, lib = Path(tmp) / "pk_bench_histogram.cpp", Path(tmp) / "histogram.so"
            src.write_text(_HISTOGRAM_CPP, encoding="utf-8")
            done = run([toolchain.compiler, *toolchain.flags(), str(src), "-o", str(lib),
                        *toolchain.libs()], timeout=120)
            if done.returncode != 0:
                return None  # no row, as when the compiler is missing
            # Loaded before the scratch folder goes: the mapping outlives the file.
            fn = ctypes.CDLL(str(lib)).pk_bench_histogram
        fn.restype = None
        fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong)
        _JITTED["cpp_histogram"] = fn
    fn, (counts, data) = _JITTED["cpp_histogram"], args
    if counts.size != 256:
        return None
    c, d, n = counts.ctypes.data, data.ctypes.data, data.size
    return lambda: fn(c, d, n)


def _numba_histogram(args: tuple) -> Callable[[], Any] | None:
    numba = _numba()
    if numba is None:
        return None
    if "histogram" not in _JITTED:
        def histogram(counts: np.ndarray, data: np.ndarray) -> None:
            nt = numba.get_num_threads()
            bins = np.zeros((nt, counts.size), np.uint32)
            n = data.size
            chunk = (n + nt - 1) // nt
            for t in numba.prange(nt):
                for i in range(t * chunk, min(n, (t + 1) * chunk)):
                    bins[t, data[i]] += 1
            for b in range(counts.size):
                s = counts[b]
                for t in range(nt):
                    s += bins[t, b]
                counts[b] = s

        _JITTED["histogram"] = numba.njit(parallel=True)(histogram)
    fn, (counts, data) = _JITTED["histogram"], args
    flat = data.reshape(-1)
    return lambda: fn(counts, flat)


#: Peer baselines by name: (the row's baseline label, builder, the contract's bound on
#: the ratio or None).
PEERS: dict[str, tuple[str, Callable[[tuple], Callable[[], Any] | None], float | None]] = {
    "numba_sum": ("numba prange", _numba_sum, None),
    "numexpr_sum": ("numexpr", _numexpr_sum, None),
    "numba_jacobi": ("numba prange", _numba_jacobi, None),
    "numexpr_jacobi": ("numexpr", _numexpr_jacobi, None),
    "cpp_histogram": ("C++ per-thread bins", _cpp_histogram, 1.5),
    "numba_histogram": ("numba per-thread bins", _numba_histogram, 1.5),
}
