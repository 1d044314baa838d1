"""Devices, streams, events, the runtime's queries and device memory of the CUDA
stand-in (:mod:`portakern.emulate.cupy`, which re-exports them under CuPy's names).

There is one device; its limits are the driver's (:data:`MAX_BLOCK`,
:data:`MAX_BLOCK_THREADS`, :data:`MAX_GRID`). "Device" memory is host memory, and
each :class:`Buffer` records its address range so that
``runtime.pointerGetAttributes`` can tell device pointers from host ones.
"""

from __future__ import annotations

import itertools
import threading
import time
import types
from typing import Any

import numpy as np

from ..subprocesses import fork_safe_lock

#: The driver's launch limits: threads per block axis, per block, and blocks per grid axis.
MAX_BLOCK = (1024, 1024, 64)
MAX_BLOCK_THREADS = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
_DEVICES = 1


# -- errors ---------------------------------------------------------------------------------------
class CUDARuntimeError(RuntimeError):
    """cudaError_t from the runtime API (stand-in)."""


class CUDADriverError(RuntimeError):
    """CUresult from the driver API (stand-in)."""


class CompileException(Exception):
    """The kernel did not compile (NVRTC's role is played by g++)."""

    def __init__(self, msg: str, source: str, name: str, options: tuple) -> None:
        super().__init__(msg)
        self._msg = msg
        self.source = source
        self.name = name
        self.options = options

    def get_message(self) -> str:
        return self._msg


# -- devices and streams --------------------------------------------------------------------------
_local = threading.local()
_ALLOCATIONS: dict[int, tuple[int, int]] = {}  # id(buffer) -> (start, end)
_ALLOC_LOCK = fork_safe_lock()


def current_device() -> int:
    return getattr(_local, "device", 0)


class Device:
    """A CUDA device ordinal, usable as a context manager that makes it current."""

    def __init__(self, device: int | None = None) -> None:
        self.id = current_device() if device is None else int(device)
        if not 0 <= self.id < _DEVICES:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self._saved: list[int] = []

    def __enter__(self) -> Device:
        self._saved.append(current_device())
        _local.device = self.id
        return self

    def __exit__(self, *exc: Any) -> None:
        _local.device = self._saved.pop()

    def synchronize(self) -> None:
        """Launches run to completion when called: nothing to wait for."""

    @property
    def compute_capability(self) -> str:
        return "90"


_STREAM_IDS = itertools.count(0x1000, 0x10)


class Stream:
    """A stream: launches on the stand-in finish before the call returns."""

    null: Stream

    def __init__(self, null: bool = False, non_blocking: bool = False,
                 ptds: bool = False) -> None:
        self.ptr = 0 if null else next(_STREAM_IDS)
        self.device_id = current_device()
        self._saved: list[Stream] = []

    def __enter__(self) -> Stream:
        self._saved.append(get_current_stream())
        _local.stream = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _local.stream = self._saved.pop()

    def use(self) -> Stream:
        _local.stream = self
        return self

    def synchronize(self) -> None:
        """Nothing is pending: launches complete before they return."""

    def wait_event(self, event: Event) -> None:
        """Orders later work after ``event``; here everything is already ordered."""

    def record(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event


Stream.null = Stream(null=True)


class ExternalStream(Stream):
    """A stream made elsewhere (another library's), known by its pointer."""

    def __init__(self, ptr: int, device_id: int = -1) -> None:
        super().__init__()
        self.ptr = int(ptr)
        self.device_id = current_device() if device_id < 0 else device_id


class Event:
    """A CUDA event; recorded work is always complete on the stand-in."""

    def __init__(self, block: bool = False, disable_timing: bool = False,
                 interprocess: bool = False) -> None:
        self.done = True
        self.time = time.perf_counter()

    def record(self, stream: Stream | None = None) -> None:
        self.done = True
        self.time = time.perf_counter()  # launches finish before they return

    def synchronize(self) -> None:
        """Complete already."""


def get_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (CuPy's ``cuda.get_elapsed_time``)."""
    return (end.time - start.time) * 1e3


def get_current_stream(device_id: int | None = None) -> Stream:
    return getattr(_local, "stream", Stream.null)


def _properties(device: int) -> dict[str, Any]:
    return {
        "name": b"portakern CUDA stand-in (CPU threads)", "major": 9, "minor": 0,
        "maxThreadsPerBlock": MAX_BLOCK_THREADS, "maxThreadsDim": MAX_BLOCK,
        "maxGridSize": MAX_GRID, "sharedMemPerBlock": 48 * 1024, "warpSize": 32,
        # An H100 SXM's figures (sm_90), the device the stand-in imitates.
        "multiProcessorCount": 132, "totalGlobalMem": 1 << 34,
    }


class _PointerAttributes:
    def __init__(self, type_: int, device: int, ptr: int) -> None:
        self.type = type_
        self.device = device
        self.devicePointer = ptr if type_ else 0


def _pointer_attributes(ptr: int) -> _PointerAttributes:
    with _ALLOC_LOCK:
        spans = list(_ALLOCATIONS.values())
    for start, end in spans:
        if start <= ptr < end or ptr == start:
            return _PointerAttributes(2, 0, ptr)
    return _PointerAttributes(0, -2, ptr)


runtime = types.SimpleNamespace(
    CUDARuntimeError=CUDARuntimeError,
    getDeviceCount=lambda: _DEVICES,
    getDevice=current_device,
    setDevice=lambda d: setattr(_local, "device", int(d)),
    getDeviceProperties=_properties,
    pointerGetAttributes=_pointer_attributes,
    runtimeGetVersion=lambda: 13000,
    driverGetVersion=lambda: 13000,
    deviceSynchronize=lambda: None,
)
driver = types.SimpleNamespace(CUDADriverError=CUDADriverError)
compiler = types.SimpleNamespace(CompileException=CompileException)


# -- memory -------------------------------------------------------------------------------------
class Buffer:
    """Host memory standing in for one device allocation."""

    def __init__(self, nbytes: int) -> None:
        self.host = np.empty(max(nbytes, 1), np.uint8)
        self.ptr = self.host.ctypes.data
        self.size = nbytes
        self.device_id = current_device()
        with _ALLOC_LOCK:
            _ALLOCATIONS[id(self)] = (self.ptr, self.ptr + nbytes)

    def __del__(self) -> None:
        lock = _ALLOC_LOCK
        if lock is None:  # interpreter shutdown: the module's globals are gone already
            return
        with lock:
            _ALLOCATIONS.pop(id(self), None)


class UnownedMemory:
    """Memory owned by someone else (another library's array), by pointer."""

    def __init__(self, ptr: int, size: int, owner: Any, device_id: int | None = None) -> None:
        self.ptr = int(ptr)
        self.size = int(size)
        self.owner = owner
        self.device_id = current_device() if device_id is None else device_id


class MemoryPointer:
    """A pointer into a buffer: ``mem`` plus a byte ``offset``."""

    def __init__(self, mem: Any, offset: int) -> None:
        self.mem = mem
        self.offset = int(offset)
        self.ptr = mem.ptr + self.offset
        self.device_id = mem.device_id
