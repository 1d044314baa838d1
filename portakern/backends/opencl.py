"""The OpenCL launchers: ``OpenCL(queue)`` for PyOpenCL arrays, ``CPU()`` for NumPy.

``CPU()`` runs NumPy arrays on a CPU OpenCL device (PoCL from the
``pocl-binary-distribution`` wheel on Linux x86_64, or whatever CPU driver the
platform has) through ``USE_HOST_PTR`` buffers, so no array is copied, and it
waits for the kernel before returning. ``OpenCL(queue)`` runs
``pyopencl.array.Array`` objects on their queue and returns at once.
"""

from __future__ import annotations

import os
import sys
import weakref
from typing import Any, ClassVar

import numpy as np

from ..errors import BackendUnavailableError, LaunchError
from ..subprocesses import fork_safe_lock
from .base import ArrayInfo, Availability, Backend, Limits, cpu_groups
from .cl_devices import cpu_install_hint, find_cpu_device, first_that_builds, is_pocl
from .cpu_paths import cpu_mode, hosted_native, native_backend
from .host import NumPyArrays, same_args
from .limits import both_paths, opencl_limits
from .opencl_host import host_buffers, sync_host, writes_reach_host
from .opencl_programs import (
    Compiled,
    build_program,
    check_stack_use,
    half_storage_variant,
    local_memory,
)

__all__ = ["OpenCL", "CPU", "cpu_install_hint"]

_LOCK = fork_safe_lock()

_START_LOCK = fork_safe_lock()

# queue pointer -> OpenCL backend (see OpenCL.for_array). Weak: a backend nobody uses
# any more lets its queue and context go.
_BY_QUEUE: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def _import_cl() -> Any:
    try:
        import pyopencl as cl
    except ImportError as exc:  # pragma: no cover - pyopencl is a dependency
        raise BackendUnavailableError(
            f"pyopencl is not installed: pip install pyopencl ({exc})") from exc
    return cl


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
        self._programs: dict[str, Compiled] = {}
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

    @classmethod
    def for_array(cls, array: Any) -> OpenCL:
        """One backend per queue: arrays on one queue compare equal and share programs."""
        queue = array.queue
        backend = _BY_QUEUE.get(queue.int_ptr)
        if backend is None or backend.queue is not queue and backend.queue != queue:
            backend = _BY_QUEUE[queue.int_ptr] = cls(queue)
        return backend

    @property
    def cache_key(self) -> Any:
        return ("opencl", self.context.int_ptr, self.device.int_ptr)

    def pickle_recipe(self) -> tuple[tuple, dict] | None:
        raise TypeError(
            f"{self!r} cannot be pickled: its PyOpenCL queue belongs to this process. "
            f"Send the kernel (or a launcher on pk.CPU()) instead and create the OpenCL "
            f"backend where it runs (pk.OpenCL(queue) inside the task), or let "
            f"pk.get_backend(array) pick it from the arrays there")

    def __eq__(self, other: object) -> bool:
        # (Identity first: a direct launch compares its arrays' backends on every call.)
        return other is self or (type(other) is type(self)
                                 and other.queue == self.queue)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        # Worked out once: a direct launch looks its launcher up by backend on every call.
        known = self.__dict__.get("_hash")
        if known is None:
            known = self.__dict__["_hash"] = hash((type(self), self.queue.int_ptr))
        return known

    def __repr__(self) -> str:
        return f"{type(self).__name__}(device={self.device.name.strip()!r})"

    # -- compile and launch -------------------------------------------------------
    def compile(self, rendered: Any) -> Compiled:
        cl = _import_cl()
        with _LOCK:
            hit = self._programs.get(rendered.source)
            if hit is None:
                hit = build_program(cl, self.context, self.device,
                                    half_storage_variant(rendered, self._extensions),
                                    self.build_options)
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
            return True  # without cl_khr_fp16, as storage computed in float
        if feature == "half_arithmetic":
            return "cl_khr_fp16" in self._extensions
        if feature == "int64_atomics":
            return "cl_khr_int64_base_atomics" in self._extensions
        return True

    @property
    def limits(self) -> Limits:
        """The device's figures (:func:`.limits.opencl_limits`)."""
        return opencl_limits(self.device, self._extensions, self._max_wg)

    @property
    def cpu_device(self) -> bool:  # type: ignore[override]
        """True on a CPU device (PoCL); starts ``CPU()``'s OpenCL device, importing PyOpenCL."""
        return bool(self.device.type & sys.modules["pyopencl"].device_type.CPU)

    @property
    def unmask_exact(self) -> bool:
        """True on CPU devices: launch without the bounds mask when groups tile the ndrange.

        PoCL vectorises a work-group's loop over its work-items only when the body
        has no per-item condition; the implicit bounds mask is one, and costs 2-4x
        on elementwise kernels (docs/performance.md). On GPUs the mask is free.
        """
        return self.cpu_device

    def default_workgroupsize(self, ndrange: tuple[int, ...], compiled: Any) -> tuple[int, ...]:
        """On a CPU device, a shape that tiles the ndrange exactly where one exists.

        ``compiled`` may be None here (see :attr:`unmask_exact`): the device limit
        then stands in for the kernel's.
        """
        if not self.unmask_exact:
            return super().default_workgroupsize(ndrange, compiled)
        limit = self._max_wg if compiled is None else self.max_workgroup_size(compiled)
        return cpu_groups(ndrange, limit, self._max_items, int(self.device.max_compute_units),
                          self.preferred_group_size)

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> Any:
        """Enqueue on the queue; returns the launch's ``pyopencl.Event``."""
        cl = sys.modules["pyopencl"]
        kernel = compiled.kernel
        if _FORKED and is_pocl(self.device.platform):
            raise LaunchError(_FORKED[0])
        try:
            local = local_memory(cl, compiled, args, local_size, self.limits.local_memory,
                                 repr(self)) if compiled.sized else ()
            with compiled.lock:
                compiled.last = None  # CPU.launch's record no longer describes the arguments
                kernel.set_args(*args, *local)
                event = cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)
            if self.synchronous:
                event.wait()
        except cl.Error as exc:
            raise LaunchError(
                f"OpenCL launch of {kernel.function_name!r} failed (global {global_size}, "
                f"local {local_size}): {exc}") from exc
        return event

    def timed_launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
                     local_size: tuple[int, ...]) -> Any:
        """The event's profiling times, if the queue was made with profiling enabled."""
        cl = sys.modules["pyopencl"]
        if self.synchronous or not (self.queue.properties
                                    & cl.command_queue_properties.PROFILING_ENABLE):
            return super().timed_launch(compiled, args, global_size, local_size)
        event = self.launch(compiled, args, global_size, local_size)

        def elapsed() -> float:
            event.wait()
            return float(event.profile.end - event.profile.start) * 1e-9

        return elapsed

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
        devices = []
        for p in platforms:
            try:
                devices += p.get_devices(device_type=kind)
            except cl.Error:
                continue
        if devices:
            return cl.Context([first_that_builds(cl, devices, "OpenCL device")])
    raise BackendUnavailableError("no OpenCL device found; " + cpu_install_hint())


class CPU(NumPyArrays, OpenCL):
    """NumPy arrays on a CPU OpenCL device, zero-copy, finished on return.

    All ``CPU()`` objects share one context and queue (per process), so they
    compare equal and compiled kernels are reused between them. Set
    ``PORTAKERN_CPU_PLATFORM`` to a substring of a platform name to pick one.
    """

    name: ClassVar[str] = "CPU"
    synchronous: ClassVar[bool] = True
    cpu_device: ClassVar[bool] = True  # type: ignore[assignment]  # without starting PoCL
    # NumPy arrays carry no queue: every one belongs to the one shared CPU().
    for_array = classmethod(Backend.for_array.__func__)  # type: ignore[assignment]
    preferred_group_size: ClassVar[int] = 256
    _shared: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        # The OpenCL device starts on first use (~100 ms): kernels that the native
        # path runs never need it.
        pass

    def __getattr__(self, name: str) -> Any:
        if name not in _CPU_STATE:
            raise AttributeError(f"'CPU' object has no attribute {name!r}")
        self._start()
        return object.__getattribute__(self, name)

    def _start(self) -> None:
        state = CPU._shared.get("state")
        if state is None and _FORKED:
            raise BackendUnavailableError(_FORKED[0])
        if state is None:
            with _START_LOCK:  # not _LOCK: compile() holds that one when it gets here
                state = CPU._shared.get("state") or _cpu_state()
                CPU._shared["state"] = state
        self.queue = state["queue"]
        self.context = self.queue.context
        self.device = self.queue.device
        self._programs = state["programs"]
        self._max_wg = int(self.device.max_work_group_size)
        self._max_items = tuple(int(s) for s in self.device.max_work_item_sizes)
        self._extensions = self.device.extensions
        self._map_after = state["map_after"]

    @property
    def limits(self) -> Limits:
        """What holds on both of ``CPU()``'s paths, since a kernel may run on either: each
        figure the smaller of the native path's and the PoCL device's (one path's alone
        where the other cannot start)."""
        paths = native_backend() if _hosts_numpy(type(self)) else None
        native = paths[0].limits if paths else None
        try:
            device = OpenCL.limits.fget(self)  # type: ignore[attr-defined]
        except BackendUnavailableError:
            if native is None:
                raise
            device = None
        return both_paths(device, native)

    def executor(self, kernel: Any) -> Backend:
        """The backend that runs ``kernel`` for ``CPU()``: the native path or PoCL.

        The native path (:mod:`portakern.backends.native`) runs a kernel unless it
        has ``@synchronize``/``@localmem`` and a jump statement (which would leave
        the work-item loops), no C++ compiler with OpenMP is found, or
        ``PORTAKERN_CPU=opencl``. (A kernel whose C++ does not compile moves to PoCL at
        its first launch. Control flow around a barrier that depends on a per-item
        value is a ``KernelSyntaxError`` on every path, never a reason to move.)
        ``PORTAKERN_CPU=native`` makes a missing compiler an error instead. A
        subclass (a plugin's backend, with arrays of its own) gets the native path too
        when its arrays are host memory, that is when it keeps ``CPU.launch`` (which
        takes the NumPy arrays its ``array_info`` hands out); one with a launch of its
        own keeps the OpenCL path it was written for.
        """
        if type(self) is not CPU and not _hosts_numpy(type(self)):
            return self
        native = native_backend()
        if native is None:
            return self
        if type(self) is not CPU:
            native = hosted_native(self, native)
        facts = kernel.facts("c")
        if not facts.lockstep:
            return native[0]
        # Barrier kernels run natively as work-item loops, unless a jump statement
        # would leave those loops (the OpenCL device runs them instead).
        return self if facts.lockstep_blocker else native[1]

    @classmethod
    def available(cls) -> Availability:
        """Available when the native path or a CPU OpenCL device is."""
        try:
            if native_backend() is not None:
                return Availability(True)
        except BackendUnavailableError as exc:  # PORTAKERN_CPU asks for what is not here
            return Availability(False, str(exc))
        return cls.opencl_available()

    @classmethod
    def describe(cls, start: bool = True) -> str:
        """The CPU paths: the native compiler, and the OpenCL device (found, not started).

        With ``start=False`` and the native path on, PyOpenCL is not even imported.
        """
        from .native import native_toolchain

        try:
            mode = cpu_mode()
        except BackendUnavailableError as exc:
            return str(exc)
        toolchain = native_toolchain()
        native = mode != "opencl" and not isinstance(toolchain, str)
        if not _hosts_numpy(cls):
            native = False
            parts = [f"native path not used ({cls.__name__} has a launch of its own)"]
        elif mode == "opencl":
            parts = ["native path off (PORTAKERN_CPU=opencl)"]
        elif isinstance(toolchain, str):
            parts = [f"native path unavailable: {toolchain}"]
        else:
            math = "libmvec vector math" if toolchain.simd_math else "scalar math"
            parts = [f"native: {os.path.basename(toolchain.compiler)} + OpenMP, {math}"]
        if native and not start:
            parts.append("the OpenCL device for what the native path cannot run")
            return "; ".join(parts)
        try:
            device = find_cpu_device(_import_cl())
        except Exception as exc:  # noqa: BLE001 - the ICD loader fails in many ways
            parts.append(f"no OpenCL device: {exc}")
        else:
            parts.append(f"OpenCL: {device.name.strip()}, {device.platform.name.strip()}"
                         + (", for what the native path cannot run" if native else ""))
        return "; ".join(parts)

    @classmethod
    def opencl_available(cls) -> Availability:
        """Whether the OpenCL path (what the native path cannot run) has a CPU device."""
        try:
            cl = _import_cl()
            find_cpu_device(cl)
        except BackendUnavailableError as exc:
            return Availability(False, str(exc))
        except Exception as exc:  # noqa: BLE001 - the ICD loader fails in many ways
            return Availability(False, f"no OpenCL platform ({exc}); {cpu_install_hint()}")
        return Availability(True)

    def synchronize(self) -> None:
        """Nothing to wait for: every ``CPU()`` launch has finished when it returns.

        The OpenCL queue is finished only if PoCL was started, so a native-path
        program never starts PoCL (nor imports PyOpenCL) to synchronize.
        """
        state = CPU._shared.get("state")
        if state is not None:
            state["queue"].finish()

    def __eq__(self, other: object) -> bool:
        return type(other) is CPU

    def __hash__(self) -> int:
        return hash(CPU)

    def pickle_recipe(self) -> tuple[tuple, dict] | None:
        # CPU() travels as CPU(); a plugin's subclass with its own constructor decides.
        return ((), {}) if type(self).__init__ is CPU.__init__ else None

    def __repr__(self) -> str:
        return "CPU()"

    def cpu_workgroupsize(self, ndrange: tuple[int, ...], facts: Any,
                          compiled: Any) -> tuple[int, ...]:
        """``CPU()``'s default, as on the native path (:func:`.native_groups.cpu_workgroup`);
        a kernel blind to its group's shape keeps :meth:`default_workgroupsize`'s."""
        from .native_groups import cpu_workgroup

        limit = self._max_wg if compiled is None else self.max_workgroup_size(compiled)
        return cpu_workgroup(ndrange, facts, limit, self._max_items,
                             self.default_workgroupsize(ndrange, compiled))

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        cl = sys.modules["pyopencl"]
        kernel = compiled.kernel
        if _FORKED:
            raise LaunchError(_FORKED[0])
        guard = _guard()
        if guard is not None:
            guard.pk_rt_enter()  # the native runtime's SIGFPE handler fixes a division
        try:
            with compiled.lock:
                # Relaunching with the same arrays and scalars: the kernel's arguments
                # are still set. Setting them again costs PoCL ~6 us of a ~30 us launch.
                last = compiled.last
                if compiled.checked is None or local_size not in compiled.checked:
                    check_stack_use(compiled, local_size, self.device)
                if compiled.sized:  # its __local buffer's size follows the arguments
                    local = local_memory(cl, compiled, args, local_size,
                                         OpenCL.limits.fget(self).local_memory, "PoCL")
                    compiled.last = None
                    host_buffers(cl, self.context, args, compiled)
                    kernel.set_args(*args, *local)
                elif last is None or not same_args(last, args):
                    compiled.last = None  # until set_args has succeeded
                    record = host_buffers(cl, self.context, args, compiled)
                    kernel.set_args(*args)
                    compiled.last = record
                event = cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)
                event.wait()
                if self._map_after:
                    sync_host(cl, self.queue, args)
        except cl.Error as exc:
            raise LaunchError(
                f"OpenCL launch of {kernel.function_name!r} failed (global {global_size}, "
                f"local {local_size}): {exc}") from exc
        finally:
            if guard is not None:
                guard.pk_rt_leave()


_GUARD: list[Any] = []


def _guard() -> Any:
    """The native runtime (see :func:`portakern.backends.native.runtime_guard`), or None.

    PoCL's worker threads run a kernel's integer division: the runtime's SIGFPE
    handler gives it the native path's defined result (PoCL's own handler would
    step over the instruction and leave the dividend). Without a C++ compiler
    there is no runtime, and PoCL's behaviour stands.
    """
    if not _GUARD:
        from .native import runtime_guard, runtime_install

        try:
            lib = runtime_guard()
        except Exception:  # noqa: BLE001 - a missing runtime only loses the fix
            lib = None
        if lib is not None:
            lib.pk_rt_enter.restype = None
            lib.pk_rt_leave.restype = None
            runtime_install()  # in front of the handler PoCL installed when it started
        _GUARD.append(lib)
    return _GUARD[0]


#: Set in a forked child of a process that had loaded PyOpenCL: why PoCL cannot run there.
_FORKED: list[str] = []


def _after_fork_in_child() -> None:
    """A forked child: no PoCL (the locks are unlocked by ``fork_safe_lock``'s handler).

    PoCL's worker threads do not survive a fork (the child's first launch would wait
    forever in ``clWaitForEvents``), and PoCL cannot be restarted in the same process: once the
    parent has loaded PyOpenCL, the child's ``CPU()`` runs what the native path runs
    and refuses the rest with a clear error (use the ``forkserver`` or ``spawn``
    start method of ``multiprocessing`` for PoCL in children).
    """
    if "pyopencl" in sys.modules and not _FORKED:
        _FORKED.append(
            "the OpenCL (PoCL) path cannot run in a process forked from one that had "
            "started OpenCL: PoCL's worker threads do not survive fork(). Start worker "
            "processes with multiprocessing's 'forkserver' or 'spawn' method, or start "
            "OpenCL only in the children")
        CPU._shared.clear()
        _BY_QUEUE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


_CPU_STATE = frozenset({"queue", "context", "device", "_programs", "_max_wg", "_max_items",
                        "_extensions", "_map_after"})


def _hosts_numpy(cls: type) -> bool:
    """Whether a ``CPU`` (sub)class launches NumPy arrays over host memory: ``CPU.launch``.

    Its ``array_info`` then hands out NumPy arrays (``CPU.launch`` wraps nothing
    else), which the native path can run as well.
    """
    return cls is CPU or (issubclass(cls, CPU) and cls.launch is CPU.launch)


def _cpu_state() -> dict[str, Any]:
    cl = _import_cl()
    device = find_cpu_device(cl)
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    # PoCL runs kernels on USE_HOST_PTR memory itself (tested in CI, misaligned arrays
    # included). Another driver may work on a copy, which OpenCL only writes back on a
    # map: probe once, and map after every launch if the probe's write is not seen.
    zero_copy = is_pocl(device.platform) or writes_reach_host(cl, context, queue)
    return {"queue": queue, "programs": {}, "map_after": not zero_copy}
