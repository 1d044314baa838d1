"""The CUDA launcher: CuPy arrays, and any CUDA array, through CuPy and NVRTC.

``CUDA(device)`` compiles the ``cuda`` rendering with :class:`cupy.RawModule`
(NVRTC; kernels are ``extern "C"``, so no name mangling) once per device and
rendered source, and launches on CuPy's current stream of that device without
waiting. :meth:`CUDA.synchronize` waits for every stream it launched on.

Arrays of other libraries are run on in place: an object with
``__cuda_array_interface__`` (PyTorch, Numba, JAX) or a CUDA ``__dlpack__``
becomes a CuPy view (``cupy.asarray`` / ``cupy.from_dlpack``) at launch, never a
copy.

CuPy is imported inside methods only, so ``import portakern`` and resolving a
NumPy array never import it, and this module imports on a machine without CuPy.
A machine without a GPU can still compile-check the CUDA rendering to PTX:
:meth:`CUDA.compile_check` runs NVRTC (or nvcc) through
:mod:`portakern.checks.cuda`, with the options a launch would use.
"""

from __future__ import annotations

import math
import operator
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..errors import (
    BackendMismatchError,
    BackendUnavailableError,
    CompilationError,
    KernelArgumentError,
    LaunchError,
)
from ..subprocesses import fork_safe_lock
from .base import ArrayInfo, Availability, Backend, Limits
from .cuda_support import (
    DLPACK_CUDA,
    INSTALL_HINT,
    ForeignArray,
    array_interface,
    cuda_array_info,
    dlpack_device,
    import_cupy,
    launch_config,
    type_name,
)
from .local_sizes import launch_bytes, sized_arrays

__all__ = ["CUDA", "INSTALL_HINT", "launch_config", "nvrtc_options", "cuda_array_info",
           "reset_state"]


#: NVRTC options of every launch and check: one C++ standard (CuPy before v14 had another);
#: a struct's member functions, which have no ``__device__``, are device code (not host).
BASE_OPTIONS: tuple[str, ...] = ("-std=c++17", "--device-as-default-execution-space")

# Re-entered: for_array builds a CUDA, which registers its state.
_LOCK = fork_safe_lock(reentrant=True)

_AVAILABILITY: list[Availability] = []  # computed once per process


def _cuda_errors(cp: Any) -> tuple[type[BaseException], ...]:
    return (cp.cuda.runtime.CUDARuntimeError, cp.cuda.driver.CUDADriverError)


# -- NVRTC options and headers ---------------------------------------------------------
_NO_FP16_HEADER = (
    "this kernel uses half, whose CUDA type comes from cuda_fp16.h, and NVRTC ships no "
    "headers: install the CUDA runtime headers (pip install nvidia-cuda-runtime, or "
    "nvidia-cuda-runtime-cu12 for CUDA 12) or the CUDA toolkit, and set CUDA_PATH")


def nvrtc_options(rendered: Any, include_dirs: tuple[str, ...] | None = None,
                  ) -> tuple[str, ...]:
    """The NVRTC options for compiling a CUDA :class:`~portakern.render.emit.RenderedKernel`.

    Read from the facts beside its source (``rendered.fact``), never from the text:
    NVRTC has no default include path, so a rendering whose ``uses_half`` fact is set
    (every ``half`` kernel includes ``cuda_fp16.h``) gets the directory holding it; a
    ``@kernel(contract=false)`` one (its ``contract`` fact is False) gets
    ``--fmad=false``: CUDA has no pragma to stop FMA contraction.

    Raises
    ------
    CompilationError
        The source needs ``cuda_fp16.h`` and no CUDA headers are found; the
        message says what to install.
    """
    if isinstance(rendered, str):
        raise TypeError("nvrtc_options takes the RenderedKernel (Kernel.rendered(...)), "
                        "whose facts say what NVRTC needs; got the source text")
    base = BASE_OPTIONS + contract_options(rendered)
    if not rendered.fact("uses_half", False):
        return base
    dirs = _fp16_include_dirs() if include_dirs is None else include_dirs
    if not dirs:
        raise CompilationError(_NO_FP16_HEADER, source=rendered.source, target="cuda")
    return base + tuple(f"-I{d}" for d in dirs)


def contract_options(rendered: Any) -> tuple[str, ...]:
    """``("--fmad=false",)`` for a ``@kernel(contract=false)`` rendering, else ``()``."""
    return () if rendered.fact("contract", True) else ("--fmad=false",)


def _fp16_include_dirs() -> tuple[str, ...]:
    roots: list[Path] = []
    cp = sys.modules.get("cupy")
    if cp is not None:
        try:
            found = cp.cuda.get_cuda_path()
        except Exception:  # noqa: BLE001 - CuPy may find no toolkit at all
            found = None
        if found:
            roots.append(Path(found))
    roots += [Path(v) for v in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME")) if v]
    dirs = [r / "include" for r in roots]
    for entry in sys.path:
        # pip's CUDA runtime wheels: nvidia/cu13/include, nvidia/cuda_runtime/include (cu12).
        dirs += sorted(Path(entry or ".", "nvidia").glob("*/include"), reverse=True)
    dirs.append(Path("/usr/local/cuda/include"))
    for d in dirs:
        # One directory only: headers of two CUDA versions do not mix.
        if (d / "cuda_fp16.h").is_file():
            return (str(d),)
    return ()


def _user_sources(rendered: Any) -> dict[str, str]:
    # Compiler messages name the user's file (#line); quote it when it is one on disk.
    path = Path(rendered.filename)
    try:
        if path.is_file():
            return {rendered.filename: path.read_text(encoding="utf-8")}
    except OSError:
        pass
    return {}


def _device_of(array: Any) -> int | None:
    """The CUDA device an array lives on, or None if it cannot be told cheaply."""
    cp = sys.modules.get("cupy")
    if cp is not None and isinstance(array, cp.ndarray):
        return int(array.data.device_id)
    dl = dlpack_device(array)
    if dl is not None:
        kind, index = dl
        if kind not in DLPACK_CUDA:
            raise BackendMismatchError(
                f"a {type_name(array)} in DLPack device type {kind} memory is not a CUDA "
                f"array; move it to a CUDA device, or to NumPy for CPU()")
        return index
    cai = array_interface(array)
    if cai is not None and CUDA.available():
        # Only the driver knows which device a bare pointer belongs to.
        cp = import_cupy()
        try:
            attrs = cp.cuda.runtime.pointerGetAttributes(int(cai["data"][0]))
        except Exception:  # noqa: BLE001 - a pointer the driver does not know
            return None
        # Only device (2) and managed (3) memory belong to a device; for host or
        # unregistered memory let the launch report what goes wrong.
        if int(attrs.type) in (2, 3) and int(attrs.device) >= 0:
            return int(attrs.device)
    return None


# -- compiled kernels and per-device state -------------------------------------------------
class _Compiled:
    """A loaded kernel of one device, with its limits."""

    __slots__ = ("module", "kernel", "name", "max_threads", "source", "sized")

    def __init__(self, module: Any, kernel: Any, name: str, max_threads: int,
                 source: str, sized: tuple = ()) -> None:
        self.module = module
        self.sized = sized  # @localmem sized at launch: dynamic shared memory (.local_sizes)
        self.kernel = kernel
        self.name = name
        self.max_threads = max_threads
        self.source = source


class _DeviceState:
    """What every ``CUDA`` object of one device shares: compiled modules and limits."""

    def __init__(self) -> None:
        self.modules: dict[str, _Compiled] = {}
        self.props: dict[str, Any] | None = None
        self.max_grid: tuple[int, ...] | None = None
        # Per device, not per object: equal CUDA objects wait for each other's launches.
        #: stream pointer -> (stream, kernel name, grid, block) of its last launch
        self.pending: dict[int, tuple[Any, str, tuple, tuple]] = {}
        self.lock = fork_safe_lock()


_STATES: dict[int, _DeviceState] = {}

_INSTANCES: dict[int, CUDA] = {}


def _state(device: int) -> _DeviceState:
    state = _STATES.get(device)
    if state is None:
        with _LOCK:
            state = _STATES.setdefault(device, _DeviceState())
    return state


class CUDA(Backend):
    """CuPy arrays, and any CUDA array, on one NVIDIA GPU, asynchronously.

    Parameters
    ----------
    device : int, optional
        CUDA device ordinal. Default: CuPy's current device (0 when CuPy or a
        driver is missing, so that the object can still be built and report why
        it is unavailable).

    Notes
    -----
    Kernels launch on CuPy's current stream of the device
    (``with cupy.cuda.Stream(): ...`` picks another) and return at once; call
    :meth:`synchronize` or read a result with :meth:`to_host`. Objects of the
    same device compare equal and share compiled kernels.
    """

    name: ClassVar[str] = "CUDA"
    target: ClassVar[str] = "cuda"
    preferred_group_size: ClassVar[int] = 256

    def __init__(self, device: int | None = None) -> None:
        if device is None:
            device = _current_device()
        elif isinstance(device, bool):
            raise KernelArgumentError(f"device must be a CUDA device ordinal, got {device!r}")
        else:
            device = operator.index(device)
        if device < 0:
            raise KernelArgumentError(f"device must be >= 0, got {device}")
        count = self.device_count()
        if count:
            if device >= count:
                raise KernelArgumentError(
                    f"CUDA device {device} does not exist; this machine has {count} "
                    f"(ordinals 0 to {count - 1})")
        self.device = device
        self._state = _state(device)

    @classmethod
    def for_array(cls, array: Any) -> CUDA:
        """The backend of the device ``array`` lives on (one object per device).

        Used by :func:`~portakern.get_backend`; touches no device when the array
        tells its device itself (CuPy arrays, ``__dlpack_device__``).
        """
        device = _device_of(array)
        if device is None:
            device = _current_device()
        hit = _INSTANCES.get(device)
        if hit is None:
            with _LOCK:
                hit = _INSTANCES.get(device)
                if hit is None:
                    hit = _INSTANCES[device] = cls(device)
        return hit

    @classmethod
    def available(cls) -> Availability:
        if _AVAILABILITY:
            return _AVAILABILITY[0]
        status = _probe()
        with _LOCK:
            if not _AVAILABILITY:
                _AVAILABILITY.append(status)
        return _AVAILABILITY[0]

    @classmethod
    def device_count(cls) -> int:
        """How many CUDA devices this process sees (0 when the backend is unavailable)."""
        if not cls.available():
            return 0
        return int(import_cupy().cuda.runtime.getDeviceCount())

    @property
    def cache_key(self) -> Any:
        return ("cuda", self.device)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.device == self.device  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((CUDA, self.device))

    def __repr__(self) -> str:
        return f"CUDA(device={self.device})"

    def pickle_recipe(self) -> tuple[tuple, dict]:
        """A CUDA backend travels as its device ordinal: ``CUDA(device)`` there."""
        return (self.device,), {}

    # -- device properties ------------------------------------------------------------
    def _props(self) -> dict[str, Any]:
        props = self._state.props
        if props is None:
            self.check_available()
            props = import_cupy().cuda.runtime.getDeviceProperties(self.device)
            self._state.props = props
        return props

    def max_workgroup_size(self, compiled: Any) -> int:
        return min(int(self._props()["maxThreadsPerBlock"]), compiled.max_threads)

    def max_workitem_sizes(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self._props()["maxThreadsDim"])

    def max_grid_sizes(self) -> tuple[int, ...]:
        """The largest number of workgroups per hardware axis (x, y, z)."""
        # Asked on every launch: kept as a tuple once read.
        grid = self._state.max_grid
        if grid is None:
            grid = self._state.max_grid = tuple(int(n) for n in self._props()["maxGridSize"])
        return grid

    @property
    def limits(self) -> Limits:
        """The device's figures, from ``cudaGetDeviceProperties`` (static shared memory)."""
        props = self._props()
        return Limits(int(props["maxThreadsPerBlock"]), int(props["sharedMemPerBlock"]),
                      int(props["warpSize"]), int(props["multiProcessorCount"]))

    def compute_capability(self) -> tuple[int, int]:
        """The device's compute capability, e.g. ``(9, 0)``."""
        props = self._props()
        return int(props["major"]), int(props["minor"])

    def supports(self, feature: str) -> bool:
        if feature == "float16":
            return self.compute_capability() >= (5, 3)
        # float64 and 64-bit integer atomics exist on every GPU CUDA 12 supports;
        # float64 atomic add falls back to compare-and-swap before sm_60.
        return True

    # -- compile and launch -----------------------------------------------------------
    def compile(self, rendered: Any) -> _Compiled:
        state = self._state
        hit = state.modules.get(rendered.source)
        if hit is not None:
            return hit
        self.check_available()
        cp = import_cupy()
        options = nvrtc_options(rendered)
        with state.lock:
            hit = state.modules.get(rendered.source)
            if hit is None:
                hit = _build(cp, self.device, rendered, options)
                state.modules[rendered.source] = hit
        return hit

    @staticmethod
    def compile_check(rendered: Any, arch: str = "compute_90") -> str:
        """Compile a rendered kernel to PTX without a GPU, as a launch would.

        Uses :func:`portakern.checks.cuda.compile_cuda_ptx` (NVRTC, else nvcc)
        with :func:`nvrtc_options`; returns the PTX text.

        Raises
        ------
        CompilationError
            The compiler rejected the source; the message quotes the user's line.
        BackendUnavailableError
            Neither NVRTC nor nvcc is installed.
        """
        from ..checks.cuda import compile_cuda_ptx

        try:
            # compile_cuda_ptx adds the CUDA include directory it finds itself.
            return compile_cuda_ptx(rendered.source, arch=arch, name=f"{rendered.name}.cu",
                                    options=BASE_OPTIONS + contract_options(rendered),
                                    sources=_user_sources(rendered))
        except CompilationError as exc:
            if rendered.fact("uses_half", False) and "cuda_fp16.h" in str(exc):
                raise CompilationError(_NO_FP16_HEADER, log=exc.log, source=rendered.source,
                                       target="cuda") from exc
            raise

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        grid, block = launch_config(global_size, local_size, self.max_grid_sizes())
        shared = launch_bytes(compiled, args, local_size, self)  # @localmem sized at launch
        self._enqueue(compiled, grid, block, args, *(shared,) * bool(shared))

    def timed_launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
                     local_size: tuple[int, ...]) -> Any:
        """CUDA events recorded on the launch's stream around the kernel."""
        cp = import_cupy()
        timer = getattr(cp.cuda, "get_elapsed_time", None)
        if timer is None:  # a CuPy stand-in without timers
            self.launch(compiled, args, global_size, local_size)
            return None
        with cp.cuda.Device(self.device):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            self.launch(compiled, args, global_size, local_size)
            end.record()

        def elapsed() -> float:
            end.synchronize()
            return float(timer(start, end)) * 1e-3  # milliseconds

        return elapsed

    def _enqueue(self, compiled: Any, grid: tuple, block: tuple, args: list,
                 shared: int = 0) -> None:
        cp = import_cupy()
        try:
            with cp.cuda.Device(self.device):
                stream = cp.cuda.get_current_stream()
                for n, a in enumerate(args):
                    if type(a) is ForeignArray:
                        args[n] = a.to_cupy(cp, self.device, stream)
                compiled.kernel(grid, block, tuple(args), **({"shared_mem": shared}
                                                              if shared else {}))
        except _cuda_errors(cp) as exc:
            raise LaunchError(
                f"CUDA launch of kernel {compiled.name!r} failed on {self!r} "
                f"(grid {grid}, block {block}): {exc}") from exc
        self._state.pending[stream.ptr] = (stream, compiled.name, grid, block)

    def synchronize(self) -> None:
        if not self.available():
            return  # nothing can have been launched
        cp = import_cupy()
        with cp.cuda.Device(self.device):
            self._wait(cp, cp.cuda.get_current_stream())

    def _wait(self, cp: Any, current: Any, *, others_only: bool = False) -> None:
        if others_only:
            pending = [v for k, v in self._state.pending.items() if k != current.ptr]
            for stream, *_ in pending:
                del self._state.pending[stream.ptr]
        else:
            pending = list(self._state.pending.values())
            self._state.pending.clear()
            if all(s.ptr != current.ptr for s, *_ in pending):
                pending.append((current, None, None, None))
        for stream, name, grid, block in pending:
            try:
                stream.synchronize()
            except _cuda_errors(cp) as exc:
                raise self._fault(exc, name, grid, block) from exc

    def _fault(self, exc: BaseException, name: str | None, grid: Any,
               block: Any) -> LaunchError:
        last = (f"; the last kernel launched on that stream was {name!r} (grid {grid}, "
                f"block {block})" if name else "")
        return LaunchError(
            f"a CUDA kernel on {self!r} failed: {exc}{last}. A kernel fault leaves the CUDA "
            f"context unusable: restart the process (run with CUDA_LAUNCH_BLOCKING=1 to "
            f"find the faulting launch)")

    # -- arrays -----------------------------------------------------------------------
    def array_info(self, array: Any) -> ArrayInfo | None:
        cp = sys.modules.get("cupy")
        if cp is not None and isinstance(array, cp.ndarray):
            if array.data.device_id != self.device:
                return None
            # CuPy arrays have no read-only flag; views carry their offset in .data.
            return ArrayInfo(array.dtype, array.shape, bool(array.flags.c_contiguous), True,
                             array, (int(array.data.ptr), int(array.nbytes)))
        info = cuda_array_info(array)
        if info is not None:
            try:
                device = _device_of(array)
            except BackendMismatchError:
                return None  # not CUDA memory: the launcher names the argument
            if device is not None and device != self.device:
                return None
            dtype, shape, contiguous, writable, pointer = info
            # A new wrapper per call: the no-alias check compares the memory instead.
            extent = (pointer, math.prod(shape) * dtype.itemsize)
            return ArrayInfo(dtype, shape, contiguous, writable, ForeignArray(array, False),
                             extent)
        dl = dlpack_device(array)
        if dl is None or dl[0] not in DLPACK_CUDA or dl[1] != self.device:
            return None
        # DLPack alone does not describe the array without a capsule: take the
        # (zero-copy) CuPy view now, which an array on a CUDA device allows.
        view = import_cupy().from_dlpack(array)
        return ArrayInfo(view.dtype, view.shape, bool(view.flags.c_contiguous), True, view,
                         (int(view.data.ptr), int(view.nbytes)))

    def _as_cupy(self, array: Any) -> Any:
        cp = import_cupy()
        if isinstance(array, cp.ndarray):
            return array
        if array_interface(array) is not None:
            return cp.asarray(array)
        return cp.from_dlpack(array)

    def allocate(self, shape: Any, dtype: Any) -> Any:
        self.check_available()
        cp = import_cupy()
        with cp.cuda.Device(self.device):
            return cp.empty(shape, dtype)

    def zeros(self, shape: Any, dtype: Any) -> Any:
        self.check_available()
        cp = import_cupy()
        with cp.cuda.Device(self.device):
            return cp.zeros(shape, dtype)

    def to_device(self, array: np.ndarray) -> Any:
        self.check_available()
        cp = import_cupy()
        with cp.cuda.Device(self.device):
            return cp.array(np.asarray(array), order="C", copy=True)

    def to_host(self, array: Any) -> np.ndarray:
        self.check_available()
        cp = import_cupy()
        with cp.cuda.Device(self.device):
            current = cp.cuda.get_current_stream()
            # The copy runs on the current stream, after the launches queued there;
            # launches made under other streams are waited for first.
            self._wait(cp, current, others_only=True)
            try:
                return cp.asnumpy(self._as_cupy(array))
            except _cuda_errors(cp) as exc:
                last = self._state.pending.get(cp.cuda.get_current_stream().ptr)
                raise self._fault(exc, *(last[1:] if last else (None, None, None))) from exc


def reset_state() -> None:
    """Forget what this process learnt about CUDA: availability, devices, compiled modules.

    For code that swaps the ``cupy`` module at run time (the CPU stand-in in
    :mod:`portakern.emulate.cupy`); launches afterwards start afresh.
    """
    from .base import forget_availability

    with _LOCK:
        _AVAILABILITY.clear()
        _STATES.clear()
        _INSTANCES.clear()
    forget_availability(CUDA)


def _current_device() -> int:
    if not CUDA.available():
        return 0
    return int(import_cupy().cuda.runtime.getDevice())


def _probe() -> Availability:
    try:
        cp = import_cupy()
    except BackendUnavailableError as exc:
        return Availability(False, str(exc))
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - no driver, wrong driver, no device
        return Availability(
            False, f"CuPy {cp.__version__} finds no usable CUDA device ({exc}); CUDA needs an "
                   f"NVIDIA GPU and driver, and a CuPy built for that driver's CUDA version: "
                   f"{INSTALL_HINT}")
    if count == 0:
        return Availability(False, f"no CUDA device found; {INSTALL_HINT} needs an NVIDIA GPU")
    return Availability(True)


def _build(cp: Any, device: int, rendered: Any, options: tuple[str, ...]) -> _Compiled:
    from ..checks.diagnostics import format_diagnostics, parse_diagnostics

    with cp.cuda.Device(device):
        module = cp.RawModule(code=rendered.source, options=options)
        try:
            # RawModule compiles lazily: getting the function and one of its
            # attributes compiles and loads it here, not at the first launch.
            kernel = module.get_function(rendered.name)
            max_threads = int(kernel.max_threads_per_block)
        except cp.cuda.compiler.CompileException as exc:
            log = exc.get_message()
            sources = {**_user_sources(rendered)}
            msg = format_diagnostics(parse_diagnostics(log), sources) or log.strip()
            raise CompilationError(
                f"CUDA compilation of kernel {rendered.name!r} failed:\n{msg}",
                log=log, source=rendered.source, target="cuda") from exc
        except _cuda_errors(cp) as exc:
            raise CompilationError(
                f"CUDA could not load kernel {rendered.name!r} on device {device}: {exc}",
                log=str(exc), source=rendered.source, target="cuda") from exc
    return _Compiled(module, kernel, rendered.name, max_threads, rendered.source,
                     sized_arrays(rendered))
