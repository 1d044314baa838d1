"""Foreign CUDA arrays (``__cuda_array_interface__``): aliasing, resolution, and how a
launch turns them into CuPy views. No GPU needed: CuPy is replaced by a recording fake."""

from __future__ import annotations

import sys
import types
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from test_cuda import SAXPY, CudaDuck

import portakern as pk
from portakern.backends import cuda as cuda_backend
from portakern.backends.cuda import CUDA, _Compiled
from portakern.errors import KernelArgumentError
from portakern.launch.arguments import check_args

# -- the no-alias check on const parameters -------------------------------------------------

def _saxpy_def():
    return pk.kernel(SAXPY).parsed("cuda")[1]


def test_the_same_foreign_array_as_written_and_const_is_refused():
    y = CudaDuck((8,), np.float32)
    with pytest.raises(KernelArgumentError, match="argument 1 'x'.*shares memory with "
                                                  "argument 0 'y'"):
        check_args(_saxpy_def(), (y, y, 2.0), CUDA(0), {})


def test_overlapping_foreign_arrays_are_refused_and_disjoint_ones_accepted():
    base = 0x7F0000000000
    y = CudaDuck((8,), np.float32, ptr=base)
    inside = CudaDuck((4,), np.float32, ptr=base + 16)       # y[4:8], another object
    straddling = CudaDuck((8,), np.float32, ptr=base - 4)    # ends inside y
    after = CudaDuck((8,), np.float32, ptr=base + 32)        # starts where y ends
    before = CudaDuck((8,), np.float32, ptr=base - 32)       # ends where y starts
    for x in (inside, straddling):
        with pytest.raises(KernelArgumentError, match="shares memory"):
            check_args(_saxpy_def(), (y, x, 2.0), CUDA(0), {})
    for x in (after, before):
        check_args(_saxpy_def(), (y, x, 2.0), CUDA(0), {})


def test_empty_foreign_arrays_never_alias():
    y = CudaDuck((0,), np.float32)
    check_args(_saxpy_def(), (y, CudaDuck((0,), np.float32), 2.0), CUDA(0), {})


# -- resolution: the interface is an attribute of the object --------------------------------

class InstanceAttribute:
    """Sets the interface on the instance, as tests/test_cuda.py's ``Foreign`` does."""

    def __init__(self, cai: dict) -> None:
        self.__cuda_array_interface__ = cai


def test_interface_set_on_the_instance_resolves_to_cuda():
    duck = InstanceAttribute(CudaDuck((8,), np.float32).__cuda_array_interface__)
    assert isinstance(pk.get_backend(duck), CUDA)
    info = CUDA(0).array_info(duck)
    assert info.dtype == np.float32 and info.shape == (8,)
    args, _ = check_args(_saxpy_def(), (duck, CudaDuck((8,), np.float32, ptr=1 << 40), 2.0),
                          CUDA(0), {})
    assert args[0] is not None


def test_an_instance_without_the_interface_is_still_unknown():
    class Plain:
        pass

    duck = InstanceAttribute(CudaDuck((8,), np.float32).__cuda_array_interface__)
    assert isinstance(pk.get_backend(duck), CUDA)
    bare = InstanceAttribute.__new__(InstanceAttribute)  # same type, no attribute
    with pytest.raises(TypeError, match="no backend handles"):
        pk.get_backend(bare)
    with pytest.raises(TypeError, match="no backend handles"):
        pk.get_backend(Plain())


# -- launching foreign arrays without a host-blocking sync ----------------------------------

class FakeCupy(types.ModuleType):
    """Just enough of CuPy for ``CUDA._enqueue``; records every call made."""

    def __init__(self, current_stream: int = 0x5000) -> None:
        super().__init__("cupy")
        self.calls: list[tuple] = []
        fake = self

        class Stream:
            def __init__(self, ptr: int) -> None:
                self.ptr = ptr

            def synchronize(self) -> None:
                fake.calls.append(("stream.synchronize", self.ptr))

            def wait_event(self, event: Any) -> None:
                fake.calls.append(("stream.wait_event", self.ptr, event.recorded_on))

        class ExternalStream(Stream):
            def __init__(self, ptr: int, device_id: int = -1) -> None:
                super().__init__(ptr)
                fake.calls.append(("ExternalStream", ptr, device_id))

        class Event:
            def __init__(self, block: bool = False, disable_timing: bool = False,
                         interprocess: bool = False) -> None:
                self.recorded_on = None
                fake.calls.append(("Event", disable_timing))

            def record(self, stream: Any = None) -> None:
                self.recorded_on = stream.ptr
                fake.calls.append(("event.record", stream.ptr))

            def synchronize(self) -> None:
                fake.calls.append(("event.synchronize",))

        class UnownedMemory:
            def __init__(self, ptr: int, size: int, owner: Any, device_id: int = None) -> None:
                self.ptr, self.size, self.owner = ptr, size, owner
                fake.calls.append(("UnownedMemory", ptr, size, device_id))

        class MemoryPointer:
            def __init__(self, mem: Any, offset: int) -> None:
                self.mem, self.ptr = mem, mem.ptr + offset
                fake.calls.append(("MemoryPointer", offset))

        class ndarray:  # noqa: N801 - CuPy's name
            def __init__(self, shape, dtype=float, memptr=None, strides=None) -> None:
                self.shape, self.dtype, self.data, self.strides = shape, dtype, memptr, strides
                fake.calls.append(("ndarray", tuple(shape), np.dtype(dtype).str, strides))

        @contextmanager
        def device(index: int):
            yield

        self.current = Stream(current_stream)
        self.ndarray = ndarray
        self.cuda = types.SimpleNamespace(
            Stream=Stream, ExternalStream=ExternalStream, Event=Event,
            UnownedMemory=UnownedMemory, MemoryPointer=MemoryPointer, Device=device,
            get_current_stream=lambda: self.current,
            runtime=types.SimpleNamespace(CUDARuntimeError=RuntimeError,
                                          streamSynchronize=self._forbidden("streamSynchronize"),
                                          deviceSynchronize=self._forbidden("deviceSynchronize")),
            driver=types.SimpleNamespace(CUDADriverError=RuntimeError),
        )
        self.asarray = self._forbidden("asarray")
        self.from_dlpack = self._forbidden("from_dlpack")

    def _forbidden(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name,))
            raise AssertionError(f"cupy.{name} must not be called for a foreign array")
        return call


class StreamDuck(CudaDuck):
    def __init__(self, *args: Any, stream: int | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cai["stream"] = stream


def _launch(fake: FakeCupy, *arrays: Any) -> list:
    backend = CUDA(0)
    backend._state = cuda_backend._DeviceState()  # launches of this test stay here
    launched: list = []
    compiled = _Compiled(None, lambda grid, block, args: launched.append(args), "k", 1024, "")
    backend._enqueue(compiled, (1, 1, 1), (8, 1, 1),
                     [backend.array_info(a).handle for a in arrays])
    return launched


@pytest.mark.parametrize("stream", [None, 0x5000], ids=["no-stream", "launch-stream"])
def test_foreign_array_is_wrapped_without_any_sync(monkeypatch, stream):
    fake = FakeCupy(current_stream=0x5000)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    duck = StreamDuck((2, 4), np.float32, ptr=0x7F0000001000, stream=stream)
    [args] = _launch(fake, duck)
    view = args[0]
    assert isinstance(view, fake.ndarray)
    assert view.data.ptr == 0x7F0000001000 and view.data.mem.owner is duck
    names = [c[0] for c in fake.calls]
    assert ("UnownedMemory", 0x7F0000001000, 32, 0) in fake.calls
    assert ("ndarray", (2, 4), "<f4", None) in fake.calls
    assert not any("ynchronize" in n or n in ("asarray", "Event", "event.record")
                   for n in names), fake.calls


@pytest.mark.parametrize("stream", [0x9000, 1, 2], ids=["stream", "legacy", "per-thread"])
def test_foreign_array_on_another_stream_is_ordered_on_the_device(monkeypatch, stream):
    fake = FakeCupy(current_stream=0x5000)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    duck = StreamDuck((8,), np.float32, stream=stream)
    _launch(fake, duck)
    # The launch stream waits for an event recorded on the producer's stream: an
    # ordering on the device, never a host-side synchronize.
    assert ("event.record", stream) in fake.calls
    assert ("stream.wait_event", 0x5000, stream) in fake.calls
    assert not any("ynchronize" in c[0] or c[0] == "asarray" for c in fake.calls), fake.calls
    record = fake.calls.index(("event.record", stream))
    assert record < fake.calls.index(("stream.wait_event", 0x5000, stream))
