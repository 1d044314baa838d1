"""portakern: write a GPU kernel once, run it on NumPy, CuPy, MLX and PyOpenCL arrays."""

from __future__ import annotations

from .backends.base import Backend
from .backends.opencl import CPU, OpenCL
from .errors import (
    BackendMismatchError,
    BackendUnavailableError,
    CompilationError,
    KernelArgumentError,
    KernelSyntaxError,
    KernelTypeError,
    LaunchError,
    NativeFallbackWarning,
    NDRangeError,
    PortabilityWarning,
    PortakernError,
)
from .kernels import Kernel, kernel
from .launch import Launcher
from .registry import register_backend, registered_backends
from .resolve import get_backend
from .version import __version__

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
    "NativeFallbackWarning",
    "OpenCL",
    "PortabilityWarning",
    "PortakernError",
    "__version__",
    "get_backend",
    "kernel",
    "register_backend",
    "registered_backends",
]

# The GPU launchers load on first use: `import portakern` stays cheap for CPU users
# (DESIGN §4: a ready kernel in a new process in under 50 ms).
_LAZY = {"CUDA": "portakern.backends.cuda", "Metal": "portakern.backends.metal",
         "MLXCUDA": "portakern.backends.metal"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'portakern' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

