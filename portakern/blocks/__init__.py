"""The building blocks: CuPy's and PyOpenCL's algorithm layer, on every backend.

``ElementwiseKernel`` and ``ReductionKernel`` take CuPy's strings and generate portakern
kernels from them; the scans and ``copy_if`` (:mod:`.scan`, :mod:`.copy_if`) take
PyOpenCL's expressions (docs/building-blocks.md). The scans load on first use.
"""

from __future__ import annotations

from .elementwise import ElementwiseKernel
from .reduction import ReductionKernel

__all__ = ["ElementwiseKernel", "ReductionKernel"]
