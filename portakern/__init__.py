"""portakern: write a GPU kernel once, run it on NumPy, CuPy, MLX and PyOpenCL arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from .version import __version__

if TYPE_CHECKING:  # loaded on first use at run time (__getattr__ below); typed here
    from .backends.base import Backend
    from .backends.cuda import CUDA
    from .backends.metal import MLXCUDA, Metal
    from .backends.opencl import CPU, OpenCL
    from .blocks import ElementwiseKernel, ReductionKernel
    from .blocks.copy_if import copy_if
    from .blocks.scan import ExclusiveScanKernel, InclusiveScanKernel
    from .kernels import Kernel, KernelFactory
    from .launch.launcher import Launcher
    from .launch.outputs import Output
    from .launch.resolve import get_backend
    from .launch.struct_arrays import struct_dtype
    from .launch.timing import Launch, Timings, timed
    from .registry import register_backend, registered_backends

# Annotated, not assigned: the name stays unbound here, so __getattr__ loads it.
kernel: KernelFactory
"""Make a :class:`Kernel`: ``pk.kernel(source, name=None, **constants)``.

Also ``pk.kernel.from_file(path, name=None, **constants)`` (a ``.pk`` file) and
``pk.kernel.from_resource(package, resource, name=None, **constants)`` (a kernel file
shipped inside a Python package, through :mod:`importlib.resources`).
"""

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

# Everything but the errors and the version loads on first use (PEP 562): `import
# portakern` stays within 20 ms of `import numpy` (DESIGN §4), and a library that imports
# portakern at its top pays for the pipeline only when it makes a kernel. The GPU
# launchers and the building blocks (docs/building-blocks.md) load on their own first use,
# so a CPU user who never calls one does not pay for them.
_LAZY = {"Backend": "portakern.backends.base",
         "CPU": "portakern.backends.opencl", "OpenCL": "portakern.backends.opencl",
         "CUDA": "portakern.backends.cuda", "Metal": "portakern.backends.metal",
         "MLXCUDA": "portakern.backends.metal",
         "Kernel": "portakern.kernels", "KernelFactory": "portakern.kernels",
         "kernel": "portakern.kernels",
         "Launcher": "portakern.launch.launcher", "Output": "portakern.launch.outputs",
         "get_backend": "portakern.launch.resolve",
         "struct_dtype": "portakern.launch.struct_arrays",
         "Launch": "portakern.launch.timing", "Timings": "portakern.launch.timing",
         "timed": "portakern.launch.timing",
         "register_backend": "portakern.registry",
         "registered_backends": "portakern.registry",
         "ElementwiseKernel": "portakern.blocks", "ReductionKernel": "portakern.blocks",
         "InclusiveScanKernel": "portakern.blocks.scan",
         "ExclusiveScanKernel": "portakern.blocks.scan", "copy_if": "portakern.blocks.copy_if"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'portakern' has no attribute {name!r}")
    import importlib

    from .cache.class_code import compiled_methods

    with compiled_methods():  # the dataclasses' methods from the disk cache, not compiled
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
