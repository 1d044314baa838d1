"""CUDA's launch geometry and the foreign arrays it launches on: the grid of a launch, and
arrays found by ``__cuda_array_interface__`` or a CUDA ``__dlpack__``."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from ..errors import (
    BackendUnavailableError,
    KernelArgumentError,
    NDRangeError,
)

__all__ = ["INSTALL_HINT", "DEFAULT_MAX_GRID", "CUDA_MAX_BLOCK", "DLPACK_CUDA", "ForeignArray",
           "array_interface", "cuda_array_info", "dlpack_device", "import_cupy",
           "launch_config", "type_name"]

#: The command that makes this backend available (with an NVIDIA driver present).
INSTALL_HINT = 'pip install "portakern[cuda]"'

#: CUDA's grid limits (blocks per launch) along x, y, z on every GPU since Kepler.
DEFAULT_MAX_GRID = (2**31 - 1, 65535, 65535)

#: Threads per block along x, y, z on every GPU CUDA 12 supports (1024 in all).
CUDA_MAX_BLOCK = (1024, 1024, 64)

DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def import_cupy() -> Any:
    """Import CuPy, or raise :class:`BackendUnavailableError` with the install command."""
    cp = sys.modules.get("cupy")
    if cp is not None:
        return cp
    try:
        import cupy
    except Exception as exc:  # noqa: BLE001 - a broken CuPy install fails in many ways
        raise BackendUnavailableError(
            f"CUDA backend needs CuPy, which {_import_failure(exc)}; install it with: "
            f"{INSTALL_HINT}") from exc
    return cupy


def _import_failure(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name == "cupy":
        return "is not installed"
    return f"failed to import ({type(exc).__name__}: {exc})"


# -- launch configuration ---------------------------------------------------------------
def launch_config(global_size: tuple[int, ...], local_size: tuple[int, ...],
                  max_grid: tuple[int, ...] = DEFAULT_MAX_GRID,
                  ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """CUDA ``(grid, block)`` for a launch over hardware sizes in work-items.

    Parameters
    ----------
    global_size, local_size : tuple of int
        Work-items in total and per workgroup, hardware axis order (x first), as
        :class:`~portakern.Launcher` passes them: 1 to 3 axes.
    max_grid : tuple of int, optional
        The device's limit on blocks along x, y, z.

    Returns
    -------
    grid, block : tuple of three ints
        Blocks per axis (``ceil(global / local)``) and threads per block, padded
        with 1 to three axes.

    Raises
    ------
    NDRangeError
        The grid exceeds the device's limit along an axis; the message names the
        ndrange axis and the fix.
    """
    if len(global_size) != len(local_size) or not 1 <= len(global_size) <= 3:
        raise ValueError(f"global size {global_size} and local size {local_size} must have "
                         f"the same number of axes, 1 to 3")
    ndim = len(global_size)
    grid = []
    for hw, (g, w) in enumerate(zip(global_size, local_size, strict=True)):
        blocks = -(-int(g) // int(w))
        if blocks > max_grid[hw]:
            d = ndim - 1 - hw
            raise NDRangeError(
                f"ndrange axis {d} needs {blocks} workgroups of {w} work-items, more than "
                f"CUDA allows along hardware axis {'xyz'[hw]} ({max_grid[hw]}); use a larger "
                f"workgroupsize along that axis, or make the longest axis the last one (it "
                f"maps to x, which allows {max_grid[0]} workgroups)")
        grid.append(blocks)
    pad = [1] * (3 - ndim)
    return (tuple(grid + pad), tuple([int(w) for w in local_size] + pad))  # type: ignore[return-value]


# -- foreign CUDA arrays ---------------------------------------------------------------
def _c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...] | None,
                  itemsize: int) -> bool:
    if strides is None or any(n == 0 for n in shape):
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        # An axis of length 1 may carry any stride (NumPy's relaxed rule).
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def array_interface(array: Any) -> dict | None:
    try:
        return array.__cuda_array_interface__
    except AttributeError:
        return None
    except Exception as exc:  # noqa: BLE001 - the exporter's own refusal, e.g. torch grads
        raise KernelArgumentError(
            f"a {type_name(array)} refused to expose its CUDA memory: {exc}") from exc


def type_name(array: Any) -> str:
    tp = type(array)
    return f"{tp.__module__}.{tp.__qualname__}"


def cuda_array_info(array: Any) -> tuple[np.dtype, tuple[int, ...], bool, bool, int] | None:
    """Read ``__cuda_array_interface__`` without touching a device.

    Returns
    -------
    tuple or None
        ``(dtype, shape, c_contiguous, writable, pointer)``, or None if
        ``array`` has no such interface.

    Raises
    ------
    KernelArgumentError
        The interface describes a masked array, or the exporter refused.
    """
    cai = array_interface(array)
    if cai is None:
        return None
    if cai.get("mask") is not None:
        raise KernelArgumentError(
            f"a {type_name(array)} with a mask cannot be launched on; pass the data "
            f"without its mask")
    dtype = np.dtype(cai["typestr"])
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    strides = None if strides is None else tuple(int(s) for s in strides)
    if strides is not None and len(strides) != len(shape):
        raise KernelArgumentError(
            f"a {type_name(array)} has a malformed __cuda_array_interface__: shape {shape} "
            f"but strides {strides}")
    pointer, readonly = cai["data"]
    return (dtype, shape, _c_contiguous(shape, strides, dtype.itemsize), not readonly,
            int(pointer or 0))


class ForeignArray:
    """A CUDA array of another library, turned into a CuPy view at launch."""

    __slots__ = ("array", "dlpack")

    def __init__(self, array: Any, dlpack: bool) -> None:
        self.array = array
        self.dlpack = dlpack

    def to_cupy(self, cp: Any, device: int, stream: Any) -> Any:
        """A CuPy view of the array for a launch on ``stream``, with no host-side wait.

        ``cupy.asarray`` would honour the interface's stream (CAI v3) with a
        ``streamSynchronize``, blocking the host on every launch. Instead the view is
        built from the interface's pointer, and if the producer names a stream other
        than the launch stream, the launch stream waits on the device for an event
        recorded on the producer's stream: the kernel runs after the producer's
        queued work, and the host returns at once.
        """
        if self.dlpack:
            return cp.from_dlpack(self.array)  # a view; DLPack passes streams itself
        cai = array_interface(self.array)
        dtype = np.dtype(cai["typestr"])
        shape = tuple(int(n) for n in cai["shape"])
        strides = cai.get("strides")
        strides = None if strides is None else tuple(int(s) for s in strides)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes == 0:
            return cp.ndarray(shape, dtype)  # nothing to point at, nothing to wait for
        # The exporter stays alive as long as the view (the memory's owner).
        memory = cp.cuda.UnownedMemory(int(cai["data"][0]), nbytes, self.array, device)
        view = cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(memory, 0), strides)
        producer = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
        if producer is not None and int(producer) != stream.ptr:
            # 1 and 2 are CUDA's legacy and per-thread default stream handles.
            ready = cp.cuda.Event(disable_timing=True)
            ready.record(cp.cuda.ExternalStream(int(producer), device))
            stream.wait_event(ready)
        return view


def dlpack_device(array: Any) -> tuple[int, int] | None:
    get = getattr(array, "__dlpack_device__", None)
    if get is None:
        return None
    try:
        kind, index = get()
    except Exception:  # noqa: BLE001 - a foreign protocol; treat as absent
        return None
    return int(kind), int(index)
