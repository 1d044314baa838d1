"""Compile checks that run without the target's GPU or vendor toolchain.

:func:`check_metal` parses Metal Shading Language with clang in C++-for-OpenCL
mode; :func:`compile_cuda_ptx` compiles CUDA C++ to PTX with NVRTC or nvcc. Both
raise :class:`~portakern.errors.CompilationError` whose message quotes the user's
line, and :class:`~portakern.errors.BackendUnavailableError` when the tool is
missing; the ``*_available()`` functions say which beforehand.
"""

from __future__ import annotations

from portakern.checks import diagnostics
from portakern.checks.cuda import compile_cuda_ptx, cuda_check_available
from portakern.checks.metal import check_metal, metal_check_available

__all__ = [
    "check_metal",
    "compile_cuda_ptx",
    "cuda_check_available",
    "diagnostics",
    "metal_check_available",
]
