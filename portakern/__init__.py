"""portakern: write a GPU kernel once, run it on NumPy, CuPy, MLX and PyOpenCL arrays."""

from __future__ import annotations

from .backends.base import Backend
from .backends.cuda import CUDA
from .backends.metal import MLXCUDA, Metal
from .backends.opencl import CPU, OpenCL
from .errors import (
    BackendMismatchError,
    BackendUnavailableError,
    CompilationError,
    KernelArgumentError,
    KernelSyntaxError,
    KernelTypeError,
    LaunchError,
    NDRangeError,
    PortakernError,
)
from .kernel import Kernel, Launcher, kernel
from .registry import register_backend, registered_backends
from .resolve import get_backend

__version__ = "0.1.0"

__all__ = [
    "Backend",
    "BackendMismatchError",
    "BackendUnavailableError",
    "CPU",
    "CUDA",
    "CompilationError",
    "Kernel",
    "KernelArgumentError",
    "KernelSyntaxError",
    "KernelTypeError",
    "Launcher",
    "LaunchError",
    "MLXCUDA",
    "Metal",
    "NDRangeError",
    "OpenCL",
    "PortakernError",
    "__version__",
    "get_backend",
    "kernel",
    "register_backend",
    "registered_backends",
]
