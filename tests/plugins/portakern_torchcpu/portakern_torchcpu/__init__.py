"""A portakern backend for PyTorch CPU tensors.

Tensors run on portakern's ``CPU()`` backend without a copy: a CPU tensor's
``numpy()`` view shares its memory, and ``CPU()`` wraps host memory in OpenCL
buffers (``USE_HOST_PTR``). Compiled kernels are shared with ``CPU()``, whose
context this backend reuses.

A CUDA tensor is handed to portakern's ``CUDA`` backend, so ``get_backend`` on
a tensor works whatever its device. ``torch`` is never imported here: a tensor
exists only once the caller has imported it.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any, ClassVar

import numpy as np

from portakern import CPU, registry
from portakern.backends.base import ArrayInfo, Availability, Backend, default_instance
from portakern.errors import BackendMismatchError, KernelTypeError
from portakern.types import bfloat16_dtype

__all__ = ["TorchCPU"]
__version__ = "0.1.0"


def _torch() -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        import torch
    return torch


class TorchCPU(CPU):
    """PyTorch CPU tensors on the CPU OpenCL device, zero-copy, finished on return."""

    name: ClassVar[str] = "TorchCPU"

    @classmethod
    def available(cls) -> Availability:
        if importlib.util.find_spec("torch") is None:
            return Availability(False, "PyTorch is not installed: pip install torch")
        return CPU.available()

    @classmethod
    def for_array(cls, array: Any) -> Backend:
        device = array.device.type
        if device == "cpu":
            return default_instance(cls)
        if device == "cuda":
            # CUDA tensors carry __cuda_array_interface__: portakern's CUDA backend runs them.
            return registry.backend_class("CUDA").for_array(array)
        raise BackendMismatchError(
            f"torch tensors on device {array.device} have no portakern backend; move them "
            f"with .cpu() (or .cuda() where CUDA is available)")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return "TorchCPU()"

    def array_info(self, array: Any) -> ArrayInfo | None:
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(array, torch.Tensor) or array.device.type != "cpu":
            return None
        try:
            # detach(): a kernel writes memory directly, outside autograd, as an
            # in-place NumPy operation on .numpy() would.
            view = _numpy_view(array.detach(), torch)
        except TypeError as exc:
            raise KernelTypeError(
                f"torch dtype {array.dtype} has no NumPy equivalent, so no kernel type; "
                f"convert the tensor (e.g. .float())") from exc
        return ArrayInfo(view.dtype, tuple(array.shape), view.flags.c_contiguous,
                         view.flags.writeable, view)

    def allocate(self, shape: Any, dtype: Any) -> Any:
        return _torch().from_numpy(np.empty(shape, dtype))

    def zeros(self, shape: Any, dtype: Any) -> Any:
        return _torch().from_numpy(np.zeros(shape, dtype))

    def to_device(self, array: np.ndarray) -> Any:
        return _torch().from_numpy(np.array(array, order="C", copy=True))

    def to_host(self, array: Any) -> np.ndarray:
        return np.array(_numpy_view(array.detach().cpu(), _torch()), copy=True)


def _numpy_view(tensor: Any, torch: Any) -> np.ndarray:
    """A CPU tensor's memory as a NumPy array. NumPy has no bfloat16: a torch.bfloat16
    tensor is viewed through its 16 bits as ``ml_dtypes.bfloat16`` (no copy)."""
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.uint16).numpy().view(bfloat16_dtype())
    return tensor.numpy()
