"""A stand-in for the parts of CuPy that ``pk.CUDA`` uses, running kernels on the CPU.

Installed as ``sys.modules["cupy"]`` (see :func:`installed`), it lets the CUDA
backend run unchanged on a machine without a GPU: ``RawModule`` compiles the CUDA
rendering with g++ against ``include/pk_cuda_emu.hpp`` (CUDA's device API on CPU
threads, see :mod:`portakern.emulate.build`) instead of NVRTC, and a kernel call
launches it over a grid of blocks. "Device" memory is host memory
(:mod:`portakern.emulate.cupy_device` holds the devices, streams and memory).

What is reproduced exactly, because a kernel's result depends on it:

* launch geometry: grid in blocks, block in threads, and the driver's limits
  (at most 1024 threads per block, block z at most 64, grid y and z at most
  65535) as ``CUDADriverError``;
* argument marshalling as ``RawKernel.__call__`` does it: an array passes its
  data pointer, a NumPy scalar its own bytes, a Python ``bool`` one byte, a
  Python ``int`` 8 bytes (int64), a Python ``float`` 8 bytes (double);
* and, stricter than CuPy (which hands the bytes to the driver unchecked), the
  arguments are checked against the compiled kernel's parameter list: count,
  pointer or value, byte size. A mismatch that a GPU would silently misread is a
  ``TypeError`` here.

Arrays refuse implicit conversion to NumPy (``numpy.asarray(a)`` raises), as
CuPy's do. ``asarray`` of an object with a version-3 ``__cuda_array_interface__``
that names a stream counts a host-blocking stream synchronisation
(:data:`counters`), as CuPy performs one.
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import sys
import types
from collections.abc import Iterator
from typing import Any

import numpy as np

from .build import INCLUDE, BuildError, Unit, build, compiler_for
from .cupy_device import (
    MAX_BLOCK,
    MAX_BLOCK_THREADS,
    MAX_GRID,
    Buffer,
    CompileException,
    CUDADriverError,
    Device,
    Event,
    ExternalStream,
    MemoryPointer,
    Stream,
    UnownedMemory,
    compiler,
    driver,
    get_current_stream,
    get_elapsed_time,
    runtime,
)

__version__ = "13.6.0+portakern.standin"

#: Counts of what the stand-in did, for tests: launches, stream syncs by asarray.
counters: dict[str, int] = {"launches": 0, "asarray_stream_syncs": 0}

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128


# -- arrays -------------------------------------------------------------------------------------
class _Flags:
    def __init__(self, a: np.ndarray) -> None:
        self.c_contiguous = bool(a.flags.c_contiguous)
        self.f_contiguous = bool(a.flags.f_contiguous)
        self.owndata = False

    def __getitem__(self, key: str) -> bool:
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous}[key]


def _view(ptr: int, nbytes: int, dtype: np.dtype, shape: tuple, strides: tuple | None,
          keep: Any) -> np.ndarray:
    raw = (ctypes.c_char * max(nbytes, 1)).from_address(ptr) if nbytes else bytearray(1)
    base = np.frombuffer(raw, np.uint8, count=nbytes)
    a = np.lib.stride_tricks.as_strided(base.view(dtype) if nbytes else
                                        np.empty(0, dtype), shape=shape,
                                        strides=strides) if strides is not None else (
        base.view(dtype).reshape(shape) if nbytes else np.empty(shape, dtype))
    return a


class ndarray:  # noqa: N801 - CuPy's name
    """A CUDA array of the stand-in: NumPy storage in a :class:`Buffer`."""

    __array_priority__ = 100

    def __init__(self, shape: Any, dtype: Any = float, memptr: MemoryPointer | None = None,
                 strides: Any = None, order: str = "C") -> None:
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if memptr is None:
            memptr = MemoryPointer(Buffer(nbytes), 0)
        self.data = memptr
        if strides is not None:
            strides = tuple(int(s) for s in strides)
            span = sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + dtype.itemsize
            nbytes = max(span, 0) if all(shape) else 0
        self._a = _view(memptr.ptr, nbytes, dtype, shape, strides, memptr)

    @classmethod
    def _wrap(cls, a: np.ndarray, memptr: MemoryPointer) -> ndarray:
        obj = cls.__new__(cls)
        obj.data = memptr
        obj._a = a
        return obj

    # -- attributes ----------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a))
    device = property(lambda self: Device(self.data.device_id))
    T = property(lambda self: self._derived(self._a.T))

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        a = self._a
        return {"shape": a.shape, "typestr": a.dtype.str, "descr": a.dtype.descr,
                "data": (a.ctypes.data if a.size else 0, False), "version": 3,
                "strides": None if a.flags.c_contiguous else a.strides,
                "stream": get_current_stream().ptr or 1}

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    def __repr__(self) -> str:
        return f"array({self._a!r}) [CUDA stand-in]"

    # -- conversions ---------------------------------------------------------------------
    def get(self, stream: Any = None) -> np.ndarray:
        return np.array(self._a, copy=True)

    def set(self, arr: np.ndarray) -> None:
        self._a[...] = arr

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __len__(self) -> int:
        return len(self._a)

    def item(self) -> Any:
        return self._a.item()

    def tolist(self) -> Any:
        return self._a.tolist()

    # -- views and copies ----------------------------------------------------------------
    def _derived(self, a: np.ndarray) -> ndarray:
        if np.shares_memory(a, self._a):
            # A view starts where its first element is, as CuPy's data.ptr does.
            offset = a.ctypes.data - self.data.ptr if a.size else 0
            return ndarray._wrap(a, MemoryPointer(self.data.mem, self.data.offset + offset))
        return _from_host(a)

    def __getitem__(self, key: Any) -> ndarray:
        return self._derived(np.asarray(self._a[_unwrap(key)]))

    def __setitem__(self, key: Any, value: Any) -> None:
        self._a[_unwrap(key)] = _unwrap(value)

    def reshape(self, *shape: Any, order: str = "C") -> ndarray:
        return self._derived(self._a.reshape(*shape, order=order))

    def ravel(self) -> ndarray:
        return self._derived(self._a.ravel())

    def view(self, dtype: Any = None) -> ndarray:
        return self._derived(self._a.view(dtype))

    def astype(self, dtype: Any, copy: bool = True) -> ndarray:
        return _from_host(self._a.astype(dtype))

    def copy(self, order: str = "C") -> ndarray:
        return _from_host(self._a.copy(order=order))

    def fill(self, value: Any) -> None:
        self._a.fill(value)

    def sum(self, *args: Any, **kwargs: Any) -> ndarray:
        return _from_host(np.asarray(self._a.sum(*args, **kwargs)))

    # -- arithmetic (elementwise on the host, as a convenience for tests) ---------------
    def _binary(self, other: Any, op: Any) -> ndarray:
        return _from_host(np.asarray(op(self._a, _unwrap(other))))

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        result = getattr(ufunc, method)(*[_unwrap(i) for i in inputs], **kwargs)
        return _from_host(np.asarray(result))

    def __eq__(self, other: Any) -> ndarray:  # type: ignore[override]
        return self._binary(other, np.equal)

    __hash__ = None  # type: ignore[assignment]

    def __neg__(self) -> ndarray:
        return _from_host(-self._a)


for _name, _op in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                   ("mod", np.mod), ("pow", np.power), ("lt", np.less), ("le", np.less_equal),
                   ("gt", np.greater), ("ge", np.greater_equal), ("ne", np.not_equal),
                   ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)]:
    setattr(ndarray, f"__{_name}__", lambda self, o, _op=_op: self._binary(o, _op))
    if _name not in ("lt", "le", "gt", "ge", "ne"):
        setattr(ndarray, f"__r{_name}__",
                lambda self, o, _op=_op: _from_host(np.asarray(_op(_unwrap(o), self._a))))
        setattr(ndarray, f"__i{_name}__",
                lambda self, o, _op=_op: (_op(self._a, _unwrap(o), out=self._a), self)[1])


def _unwrap(obj: Any) -> Any:
    if isinstance(obj, ndarray):
        return obj._a
    if isinstance(obj, tuple):
        return tuple(_unwrap(o) for o in obj)
    return obj


def _from_host(a: np.ndarray) -> ndarray:
    a = np.asarray(a)
    out = ndarray(a.shape, a.dtype)
    out._a[...] = a
    return out


def empty(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    out = ndarray(shape, dtype)
    # Uninitialised device memory is not zeros; reshape(-1) lets a 0-d array be viewed
    # as bytes too (a fresh C-contiguous array, so it is a view).
    out._a.reshape(-1).view(np.uint8).fill(0xA5)
    return out


def zeros(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    out = ndarray(shape, dtype)
    out._a.fill(0)
    return out


def ones(shape: Any, dtype: Any = float) -> ndarray:
    return full(shape, 1, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> ndarray:
    return _from_host(np.full(shape, fill_value, dtype))


def arange(*args: Any, dtype: Any = None) -> ndarray:
    return _from_host(np.arange(*args, dtype=dtype))


def empty_like(a: Any, dtype: Any = None) -> ndarray:
    return empty(a.shape, dtype or a.dtype)


def zeros_like(a: Any, dtype: Any = None) -> ndarray:
    return zeros(a.shape, dtype or a.dtype)


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K") -> ndarray:
    if isinstance(obj, ndarray):
        return _from_host(np.array(obj._a, dtype=dtype, order="C"))
    return _from_host(np.array(obj, dtype=dtype, order="C"))


def broadcast_to(a: ndarray, shape: Any) -> ndarray:
    """A view of ``a`` with stride 0 along the broadcast axes (CuPy's: writable)."""
    view = np.lib.stride_tricks.as_strided(a._a, shape=np.broadcast_shapes(a.shape, shape),
                                           strides=np.broadcast_to(a._a, shape).strides)
    return a._derived(view)


def asarray(obj: Any, dtype: Any = None) -> ndarray:
    """A view of a stand-in or ``__cuda_array_interface__`` array; a copy of host data."""
    if isinstance(obj, ndarray):
        return obj if dtype is None or np.dtype(dtype) == obj.dtype else obj.astype(dtype)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        return array(obj, dtype=dtype)
    if cai.get("version", 0) >= 3 and cai.get("stream") is not None:
        # CuPy synchronises the producer's stream on the host here.
        counters["asarray_stream_syncs"] += 1
    dt = np.dtype(cai["typestr"])
    shape = tuple(cai["shape"])
    ptr = int(cai["data"][0] or 0)
    strides = cai.get("strides")
    count = int(np.prod(shape, dtype=np.int64))
    mem = UnownedMemory(ptr, count * dt.itemsize, obj)
    out = ndarray(shape, dt, MemoryPointer(mem, 0), strides=strides)
    return out if dtype is None else out.astype(dtype)


def asnumpy(a: Any, stream: Any = None, order: str = "C") -> np.ndarray:
    if isinstance(a, ndarray):
        return a.get()
    return np.asarray(a)


def from_dlpack(obj: Any) -> ndarray:
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError("the CUDA stand-in takes DLPack capsules only from objects that also "
                        "expose __cuda_array_interface__")
    return asarray(obj)


def get_cuda_path() -> str | None:
    return None


# -- kernels ------------------------------------------------------------------------------------
class RawModule:
    """CUDA source compiled for the CPU stand-in (lazily, per kernel name)."""

    def __init__(self, code: str | None = None, *, path: str | None = None,
                 options: tuple = (), backend: str = "nvrtc", translate_cucomplex: bool = False,
                 enable_cooperative_groups: bool = False, name_expressions: Any = None,
                 jitify: bool = False) -> None:
        if code is None:
            raise ValueError("the CUDA stand-in compiles source code only (code=...)")
        self.code = code
        self.options = tuple(options)
        self._functions: dict[str, RawKernel] = {}

    def get_function(self, name: str) -> RawKernel:
        hit = self._functions.get(name)
        if hit is None:
            hit = self._functions[name] = RawKernel(self.code, name, self.options)
            hit.compile()
        return hit


class RawKernel:
    """One ``extern "C" __global__`` function, launched on CPU threads."""

    def __init__(self, code: str, name: str, options: tuple = (), **kwargs: Any) -> None:
        self.code = code
        self.name = name
        self.options = tuple(options)
        self._lib: Any = None
        self._params: list[tuple[int, bool]] = []

    max_threads_per_block = MAX_BLOCK_THREADS
    num_regs = 32
    shared_size_bytes = 0

    def compile(self) -> None:
        if self._lib is not None:
            return
        gxx = compiler_for("g++")
        if gxx is None:
            raise CUDADriverError("the CUDA stand-in needs g++ to compile kernels "
                                  "(apt-get install g++)")
        std = next((o for o in self.options if o.startswith("-std=")), "-std=c++17")
        # NVRTC's --fmad=false (@kernel(contract=false)) is g++'s -ffp-contract=off.
        fmad = ("-ffp-contract=off",) if "--fmad=false" in self.options else ()
        source = f"{_dynamic_shared(self.code)}\nPK_EMU_CUDA_ENTRY({self.name})\n"
        unit = Unit(source, f"{self.name}.cu", gxx,
                    (std, "-O1", "-x", "c++", "-w", "-I", str(INCLUDE),
                     "-include", "pk_cuda_emu.hpp", *fmad))
        try:
            self._lib = build((unit,))
        except BuildError as exc:
            raise CompileException(exc.log, self.code, self.name, self.options) from None
        self._params = self._lib.params() or []

    def __call__(self, grid: Any, block: Any, args: tuple, *, shared_mem: int = 0,
                 stream: Any = None, enable_cooperative_groups: bool = False) -> None:
        self.compile()
        grid3, block3 = _dims(grid, "grid"), _dims(block, "block")
        threads = block3[0] * block3[1] * block3[2]
        over = any(b > m for b, m in zip(block3, MAX_BLOCK, strict=True))
        if threads > MAX_BLOCK_THREADS or over:
            raise CUDADriverError(
                f"CUDA_ERROR_INVALID_VALUE: invalid argument (block {block3}: at most "
                f"{MAX_BLOCK_THREADS} threads, and {MAX_BLOCK} per axis)")
        if any(g > m for g, m in zip(grid3, MAX_GRID, strict=True)):
            raise CUDADriverError(
                f"CUDA_ERROR_INVALID_VALUE: invalid argument (grid {grid3}: at most "
                f"{MAX_GRID} blocks per axis)")
        values = [self._marshal(n, a) for n, a in enumerate(args)]
        if len(values) != len(self._params):
            raise TypeError(
                f"CUDA stand-in: kernel {self.name!r} takes {len(self._params)} parameters, "
                f"the launch passed {len(values)}")
        counters["launches"] += 1
        if 0 in grid3 or 0 in block3:
            raise CUDADriverError("CUDA_ERROR_INVALID_VALUE: invalid argument (a zero "
                                  "grid or block dimension)")
        if shared_mem > SHARED_PER_BLOCK:
            raise CUDADriverError(
                f"CUDA_ERROR_INVALID_VALUE: invalid argument (shared_mem={shared_mem} bytes "
                f"of dynamic shared memory: at most {SHARED_PER_BLOCK} per block)")
        # Dynamic shared memory: one buffer for the launch (blocks run one at a time).
        dynamic = np.empty(max(int(shared_mem), 1) + 16, np.uint8)
        start = dynamic.ctypes.data + (-dynamic.ctypes.data) % 16
        ctypes.c_void_p.in_dll(self._lib.lib, "pk_emu_dynamic_shared").value = start
        ctypes.c_ulong.in_dll(self._lib.lib, "pk_emu_dynamic_bytes").value = int(shared_mem)
        try:
            self._lib.launch(grid3, block3, values, self.name)
        except RuntimeError as exc:
            raise CUDADriverError(f"CUDA_ERROR_LAUNCH_FAILED (stand-in): {exc}") from None

    def _marshal(self, n: int, arg: Any) -> Any:
        size, pointer = self._params[n] if n < len(self._params) else (0, False)
        if isinstance(arg, ndarray):
            value, what = ctypes.c_void_p(arg.data.ptr), "an array"
        elif isinstance(arg, MemoryPointer):
            value, what = ctypes.c_void_p(arg.ptr), "a pointer"
        elif arg is None:  # CuPy passes None as a null pointer
            value, what = ctypes.c_void_p(None), "a pointer"
        elif isinstance(arg, np.generic):
            raw = np.array(arg).tobytes()
            value, what = (ctypes.c_char * len(raw)).from_buffer_copy(raw), \
                f"a {len(raw)}-byte numpy.{type(arg).__name__}"
        elif isinstance(arg, bool):
            value, what = ctypes.c_bool(arg), "a 1-byte Python bool"
        elif isinstance(arg, int):
            value, what = ctypes.c_int64(arg), "an 8-byte Python int (int64)"
        elif isinstance(arg, float):
            value, what = ctypes.c_double(arg), "an 8-byte Python float (double)"
        else:
            raise TypeError(f"Unsupported type {type(arg)}")
        if n < len(self._params):
            is_ptr = isinstance(value, ctypes.c_void_p) and what != "a pointer" or \
                what == "a pointer"
            if is_ptr != pointer or (not pointer and ctypes.sizeof(value) != size):
                want = "a pointer" if pointer else f"a {size}-byte value"
                raise TypeError(
                    f"CUDA stand-in: argument {n} of kernel {self.name!r} is {what}, but "
                    f"parameter {n} is {want}; CuPy would pass these bytes unchecked and "
                    f"the kernel would misread them")
        return value


def _dims(value: Any, what: str) -> tuple[int, int, int]:
    dims = (int(value),) if np.isscalar(value) else tuple(int(v) for v in value)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must have 1 to 3 dimensions, got {value!r}")
    return (*dims, *([1] * (3 - len(dims))))  # type: ignore[return-value]


cuda = types.SimpleNamespace(
    runtime=runtime, driver=driver, compiler=compiler, Device=Device, Stream=Stream,
    ExternalStream=ExternalStream, Event=Event, get_current_stream=get_current_stream,
    get_elapsed_time=get_elapsed_time,
    get_cuda_path=get_cuda_path,
    UnownedMemory=UnownedMemory, MemoryPointer=MemoryPointer, is_available=lambda: True,
)


def available() -> tuple[bool, str]:
    """Whether the stand-in can compile kernels here: ``(True, "")`` or ``(False, why)``."""
    if compiler_for("g++") is None:
        return False, "the CUDA stand-in needs g++ (apt-get install g++)"
    return True, ""


@contextlib.contextmanager
def installed() -> Iterator[types.ModuleType]:
    """Install this stand-in as ``cupy`` for the duration, with fresh backend state."""
    from ..backends import cuda as cuda_backend

    saved = {name: sys.modules.get(name) for name in ("cupy",)}
    sys.modules["cupy"] = sys.modules[__name__]
    cuda_backend.reset_state()
    try:
        yield sys.modules[__name__]
    finally:
        for name, mod in saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod
        cuda_backend.reset_state()


#: CUDA's dynamic shared memory per block without an opt-in (cudaFuncSetAttribute).
SHARED_PER_BLOCK = 48 * 1024

_EXTERN_SHARED = re.compile(
    r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?([A-Za-z_][\w\s]*?)\s+"
    r"([A-Za-z_]\w*)\s*\[\s*\]\s*;")


def _dynamic_shared(code: str) -> str:
    """``code`` with each ``extern __shared__ T a[];`` a pointer to the launch's buffer of
    dynamic shared memory (what NVRTC's linker does, for g++)."""
    return _EXTERN_SHARED.sub(
        lambda m: f"{m.group(1)}* const {m.group(2)} = ({m.group(1)}*)pk_emu_dynamic_shared;",
        code)
