"""The OpenCL launchers: ``OpenCL(queue)`` for PyOpenCL arrays, ``CPU()`` for NumPy.

``CPU()`` runs NumPy arrays on a CPU OpenCL device (PoCL from the
``pocl-binary-distribution`` wheel on Linux x86_64, or whatever CPU driver the
platform has) through ``USE_HOST_PTR`` buffers, so no array is copied, and it
waits for the kernel before returning. ``OpenCL(queue)`` runs
``pyopencl.array.Array`` objects on their queue and returns at once.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from typing import Any, ClassVar

import numpy as np

from ..errors import BackendUnavailableError, CompilationError, LaunchError
from .base import ArrayInfo, Availability, Backend

__all__ = ["OpenCL", "CPU", "cpu_install_hint"]

_LOCK = threading.Lock()


def cpu_install_hint() -> str:
    """The command that installs a CPU OpenCL driver on this platform."""
    system, machine = platform.system(), platform.machine().lower()
    if system == "Linux" and machine in ("x86_64", "amd64"):
        return 'pip install "pyopencl[pocl]"  (or: pip install pocl-binary-distribution)'
    if system == "Linux":
        return "apt-get install pocl-opencl-icd  (Debian/Ubuntu; PoCL has no PyPI wheel here)"
    if system == "Darwin":
        return "macOS ships a CPU OpenCL driver; reinstall pyopencl if it is not found"
    return "install your CPU vendor's OpenCL runtime (Intel oneAPI or AMD), then pyopencl"


def _import_cl() -> Any:
    try:
        import pyopencl as cl
    except ImportError as exc:  # pragma: no cover - pyopencl is a dependency
        raise BackendUnavailableError(
            f"pyopencl is not installed: pip install pyopencl ({exc})") from exc
    return cl


class _Compiled:
    """A built program's kernel, with its scalar dtypes fixed once."""

    __slots__ = ("kernel", "program", "max_wg", "source")

    def __init__(self, program: Any, kernel: Any, max_wg: int, source: str) -> None:
        self.program = program
        self.kernel = kernel
        self.max_wg = max_wg
        self.source = source


def _build(cl: Any, context: Any, device: Any, rendered: Any, options: list[str]) -> _Compiled:
    try:
        program = cl.Program(context, rendered.source).build(options=options, devices=[device])
    except cl.RuntimeError as exc:
        from ..checks.diagnostics import format_diagnostics, parse_diagnostics

        log = str(exc)
        diags = [d for d in parse_diagnostics(log) if d.filename == rendered.filename]
        msg = format_diagnostics(diags, rendered.sources()) if diags else log
        raise CompilationError(
            f"OpenCL compilation of kernel {rendered.name!r} failed:\n{msg}",
            log=log, source=rendered.source, target="opencl") from exc
    kernel = cl.Kernel(program, rendered.name)
    max_wg = kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device)
    return _Compiled(program, kernel, int(max_wg), rendered.source)


class OpenCL(Backend):
    """PyOpenCL arrays on any OpenCL device, asynchronously on their queue.

    Parameters
    ----------
    queue : pyopencl.CommandQueue, optional
        The queue to launch on; its context and device are used for compiling.
        Without one, a context is created on the first GPU found (else any device).
    """

    name: ClassVar[str] = "OpenCL"
    target: ClassVar[str] = "opencl"
    build_options: ClassVar[list[str]] = []

    def __init__(self, queue: Any = None) -> None:
        cl = _import_cl()
        if queue is None:
            queue = cl.CommandQueue(_default_context(cl))
        self.queue = queue
        self.context = queue.context
        self.device = queue.device
        self._programs: dict[str, _Compiled] = {}
        self._max_wg = int(self.device.max_work_group_size)
        self._max_items = tuple(int(s) for s in self.device.max_work_item_sizes)
        self._extensions = self.device.extensions

    @classmethod
    def available(cls) -> Availability:
        try:
            cl = _import_cl()
            if not any(p.get_devices() for p in cl.get_platforms()):
                return Availability(False, "no OpenCL device found; " + cpu_install_hint())
        except BackendUnavailableError as exc:
            return Availability(False, str(exc))
        except Exception as exc:  # noqa: BLE001 - the ICD loader fails in many ways
            return Availability(False, f"no OpenCL platform ({exc}); {cpu_install_hint()}")
        return Availability(True)

    @property
    def cache_key(self) -> Any:
        return ("opencl", self.context.int_ptr, self.device.int_ptr)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.queue == self.queue  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.queue.int_ptr))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(device={self.device.name.strip()!r})"

    # -- compile and launch -------------------------------------------------------
    def compile(self, rendered: Any) -> _Compiled:
        cl = _import_cl()
        with _LOCK:
            hit = self._programs.get(rendered.source)
            if hit is None:
                hit = _build(cl, self.context, self.device, rendered, self.build_options)
                self._programs[rendered.source] = hit
        return hit

    def max_workgroup_size(self, compiled: Any) -> int:
        return min(self._max_wg, compiled.max_wg)

    def max_workitem_sizes(self) -> tuple[int, ...]:
        return self._max_items

    def supports(self, feature: str) -> bool:
        if feature == "float64":
            return "cl_khr_fp64" in self._extensions
        if feature == "float16":
            return "cl_khr_fp16" in self._extensions
        if feature == "int64_atomics":
            return "cl_khr_int64_base_atomics" in self._extensions
        return True

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        cl = sys.modules["pyopencl"]
        kernel = compiled.kernel
        try:
            kernel.set_args(*args)
            event = cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)
            if self.synchronous:
                event.wait()
        except cl.Error as exc:
            raise LaunchError(
                f"OpenCL launch of {kernel.function_name!r} failed (global {global_size}, "
                f"local {local_size}): {exc}") from exc

    # -- arrays -------------------------------------------------------------------
    def array_info(self, array: Any) -> ArrayInfo | None:
        cla = sys.modules.get("pyopencl.array")
        if cla is None or not isinstance(array, cla.Array):
            return None
        if array.context != self.context:
            return None
        if array.offset:
            # A sub-buffer would need the device's base-address alignment; a copy is clearer.
            handle = None
        else:
            handle = array.base_data
        return ArrayInfo(array.dtype, array.shape, bool(array.flags.c_contiguous), True,
                         handle)

    def synchronize(self) -> None:
        self.queue.finish()

    def allocate(self, shape: Any, dtype: Any) -> Any:
        import pyopencl.array as cla

        return cla.empty(self.queue, shape, dtype)

    def zeros(self, shape: Any, dtype: Any) -> Any:
        import pyopencl.array as cla

        return cla.zeros(self.queue, shape, dtype)

    def to_device(self, array: np.ndarray) -> Any:
        import pyopencl.array as cla

        return cla.to_device(self.queue, np.ascontiguousarray(array))

    def to_host(self, array: Any) -> np.ndarray:
        return array.get(queue=self.queue)


def _default_context(cl: Any) -> Any:
    platforms = cl.get_platforms()
    for kind in (cl.device_type.GPU, cl.device_type.ALL):
        for p in platforms:
            try:
                devices = p.get_devices(device_type=kind)
            except cl.Error:
                continue
            if devices:
                return cl.Context([devices[0]])
    raise BackendUnavailableError("no OpenCL device found; " + cpu_install_hint())


class CPU(OpenCL):
    """NumPy arrays on a CPU OpenCL device, zero-copy, finished on return.

    All ``CPU()`` objects share one context and queue (per process), so they
    compare equal and compiled kernels are reused between them. Set
    ``PORTAKERN_CPU_PLATFORM`` to a substring of a platform name to pick one.
    """

    name: ClassVar[str] = "CPU"
    synchronous: ClassVar[bool] = True
    preferred_group_size: ClassVar[int] = 256
    _shared: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        state = CPU._shared.get("state")
        if state is None:
            with _LOCK:
                state = CPU._shared.get("state") or _cpu_state()
                CPU._shared["state"] = state
        self.queue = state["queue"]
        self.context = self.queue.context
        self.device = self.queue.device
        self._programs = state["programs"]
        self._max_wg = int(self.device.max_work_group_size)
        self._max_items = tuple(int(s) for s in self.device.max_work_item_sizes)
        self._extensions = self.device.extensions

    @classmethod
    def available(cls) -> Availability:
        try:
            cl = _import_cl()
            _find_cpu_device(cl)
        except BackendUnavailableError as exc:
            return Availability(False, str(exc))
        except Exception as exc:  # noqa: BLE001 - the ICD loader fails in many ways
            return Availability(False, f"no OpenCL platform ({exc}); {cpu_install_hint()}")
        return Availability(True)

    def __eq__(self, other: object) -> bool:
        return type(other) is CPU

    def __hash__(self) -> int:
        return hash(CPU)

    def __repr__(self) -> str:
        return "CPU()"

    def array_info(self, array: Any) -> ArrayInfo | None:
        if type(array) is not np.ndarray and not isinstance(array, np.ndarray):
            return None
        flags = array.flags
        # The buffer wraps the array's own memory (USE_HOST_PTR): no copy either way.
        return ArrayInfo(array.dtype, array.shape, flags.c_contiguous, flags.writeable, array)

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        cl = sys.modules["pyopencl"]
        mf = cl.mem_flags
        ctx = self.context
        bufs = []
        for n, a in enumerate(args):
            if type(a) is np.ndarray:
                if a.size == 0:
                    a = np.empty(1, a.dtype)
                flag = mf.READ_WRITE if a.flags.writeable else mf.READ_ONLY
                buf = cl.Buffer(ctx, flag | mf.USE_HOST_PTR, hostbuf=a)
                bufs.append(buf)
                args[n] = buf
        super().launch(compiled, args, global_size, local_size)

    def synchronize(self) -> None:
        self.queue.finish()

    def allocate(self, shape: Any, dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype)

    def zeros(self, shape: Any, dtype: Any) -> np.ndarray:
        return np.zeros(shape, dtype)

    def to_device(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, order="C", copy=True)

    def to_host(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, copy=True)


def _find_cpu_device(cl: Any) -> Any:
    wanted = os.environ.get("PORTAKERN_CPU_PLATFORM", "")
    candidates = []
    for p in cl.get_platforms():
        if wanted and wanted.lower() not in p.name.lower():
            continue
        try:
            devices = p.get_devices(device_type=cl.device_type.CPU)
        except cl.Error:
            continue
        for d in devices:
            # PoCL first: it is the driver the wheels ship and the one we test.
            candidates.append((0 if "pocl" in p.name.lower() else 1, d))
    if not candidates:
        raise BackendUnavailableError(
            "no CPU OpenCL device found" + (f" on a platform matching {wanted!r}" if wanted else "")
            + "; install one with: " + cpu_install_hint())
    candidates.sort(key=lambda c: c[0])
    return candidates[0][1]


def _cpu_state() -> dict[str, Any]:
    cl = _import_cl()
    device = _find_cpu_device(cl)
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    return {"queue": queue, "programs": {}}
