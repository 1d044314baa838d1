"""portakern: write a GPU kernel once, run it on NumPy, CuPy, MLX and PyOpenCL arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .backends.base import Backend
from .backends.opencl import CPU, OpenCL
from .errors import (
    BackendMismatchError,
    BackendUnavailableError,
    CompilationError,
    KernelArgumentError,
    KernelFaultError,
    KernelSyntaxError,
    KernelTypeError,
    LaunchError,
    NativeFallbackWarning,
    NDRangeError,
    PortabilityWarning,
    PortakernError,
)
from .kernels import Kernel, KernelFactory
from .kernels import kernel as _kernel
from .launch.launcher import Launcher
from .launch.outputs import Output
from .launch.resolve import get_backend
from .launch.struct_arrays import struct_dtype
from .launch.timing import Launch, Timings, timed
from .registry import register_backend, registered_backends
from .version import __version__

kernel: KernelFactory = _kernel
"""Make a :class:`Kernel`: ``pk.kernel(source, name=None, **constants)``.

Also ``pk.kernel.from_file(path, name=None, **constants)`` (a ``.pk`` file) and
``pk.kernel.from_resource(package, resource, name=None, **constants)`` (a kernel file
shipped inside a Python package, through :mod:`importlib.resources`).
"""

if TYPE_CHECKING:  # loaded on first use at run time (__getattr__ below); typed here
    from .backends.cuda import CUDA
    from .backends.metal import MLXCUDA, Metal
    from .blocks import ElementwiseKernel, ReductionKernel
    from .blocks.copy_if import copy_if
    from .blocks.scan import ExclusiveScanKernel, InclusiveScanKernel

__all__ = [
    "Backend",
    "BackendMismatchError",
    "BackendUnavailableError",
    "CPU",
    "CUDA",
    "CompilationError",
    "ElementwiseKernel",
    "ExclusiveScanKernel",
    "InclusiveScanKernel",
    "Kernel",
    "KernelArgumentError",
    "KernelFaultError",
    "KernelSyntaxError",
    "KernelTypeError",
    "Launcher",
    "Launch",
    "LaunchError",
    "MLXCUDA",
    "Metal",
    "NDRangeError",
    "NativeFallbackWarning",
    "OpenCL",
    "Output",
    "PortabilityWarning",
    "PortakernError",
    "ReductionKernel",
    "Timings",
    "__version__",
    "copy_if",
    "get_backend",
    "kernel",
    "register_backend",
    "registered_backends",
    "struct_dtype",
    "timed",
]

# The GPU launchers load on first use: `import portakern` stays cheap for CPU users
# (DESIGN §4: a ready kernel in a new process in under 50 ms).
_LAZY = {"CUDA": "portakern.backends.cuda", "Metal": "portakern.backends.metal",
         "MLXCUDA": "portakern.backends.metal",
         # The building blocks (docs/building-blocks.md) load on first use too: a CPU
         # user who never calls one does not pay for them.
         "ElementwiseKernel": "portakern.blocks", "ReductionKernel": "portakern.blocks",
         "InclusiveScanKernel": "portakern.blocks.scan",
         "ExclusiveScanKernel": "portakern.blocks.scan", "copy_if": "portakern.blocks.copy_if"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'portakern' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

