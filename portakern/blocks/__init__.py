"""The building blocks: CuPy's and PyOpenCL's algorithm layer, on every backend.

``ElementwiseKernel`` and ``ReductionKernel`` take CuPy's strings and generate portakern
kernels from them (docs/building-blocks.md).
"""

from __future__ import annotations

from .elementwise import ElementwiseKernel
from .reduction import ReductionKernel

__all__ = ["ElementwiseKernel", "ReductionKernel"]
