"""The in-tree backends run the conformance suite (portakern.testing.ConformanceSuite).

CUDA and Metal run it on a GPU or a Mac, and elsewhere on the CPU stand-ins of
portakern.emulate (tests/conftest.py), which execute the CUDA and Metal renderings.
"""

from __future__ import annotations

import pytest

import portakern as pk
from portakern.testing import ConformanceSuite


class TestCPU(ConformanceSuite):
    backend = pk.CPU


class TestCPUOpenCLPath(ConformanceSuite):
    """CPU() with every kernel on its OpenCL device (PoCL), as PORTAKERN_CPU=opencl asks.

    TestCPU runs the suite on the native path, which takes every suite kernel.
    """

    backend = pk.CPU

    @pytest.fixture(autouse=True)
    def _opencl_path(self, monkeypatch):
        from portakern.testing.conformance import suite_kernel

        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
        suite_kernel.cache_clear()  # fresh kernels: no launcher routed before the switch
        yield
        suite_kernel.cache_clear()


class TestOpenCL(ConformanceSuite):
    backend = pk.OpenCL


# CUDA's suite is tests/test_cuda.py::TestCUDAConformance (a GPU, else the CPU stand-in).


@pytest.mark.metal
class TestMetal(ConformanceSuite):
    """On a Mac, or on the CPU stand-in for ``mx.fast.metal_kernel`` (tests/conftest.py).

    Metal has no float64 (``Metal()`` rejects it, so those tests skip) and no 64-bit
    integer atomics; MLX arrays have no read-only form and no visible strides.
    """

    backend = "Metal"


# The suite's kernels must be portable themselves: where CUDA and Metal cannot run, they
# are compile-checked (NVRTC to PTX; clang with the Metal shim) for every variant the
# suite launches on those targets.
_INDEX = [("global_linear", 1), ("global_linear_nd", 1), ("global_linear_nd", 2),
          ("global_linear_nd", 3), ("global_ntuple_2d", 2), ("global_ntuple_3d", 3),
          ("ids", 1), ("ids", 2), ("ids", 3), ("sizes", 1), ("sizes", 2), ("sizes", 3),
          ("one_item", 0), ("add_one", 1), ("twice", 1)]
_CASES = (
    [("index.pk", name, {"D": max(nd, 1)}, {"T": "float"} if name in ("add_one", "twice")
      else {}, nd) for name, nd in _INDEX]
    + [("localmem.pk", name, {"GROUP": 64, "TILE": 8}, {"T": t}, nd)
       for name, nd in (("group_sum", 1), ("transpose", 2)) for t in ("int", "float", "double")]
    + [("atomics.pk", name, {}, {"T": t}, 1)
       for name in ("atomic_arith", "cas_tickets", "xchg_chain")
       for t in ("int", "uint", "float", "long", "ulong", "double")]
    + [("atomics.pk", "local_count", {}, {}, 1), ("types.pk", "math", {}, {}, 1),
       ("types.pk", "saxpy", {}, {}, 1)]
    + [("types.pk", name, {}, {"T": t}, 1) for name in ("copy", "affine", "fill")
       for t in ("bool", "int8_t", "uint8_t", "int16_t", "uint16_t", "int", "uint", "long",
                 "ulong", "half", "float", "double") if (name, t) != ("affine", "bool")]
)


def _unsupported_on_metal(bindings: dict, file: str) -> bool:
    # Metal has no double, and no 64-bit atomics: the suite skips those there.
    t = bindings.get("T", "")
    return t == "double" or (file == "atomics.pk" and t in ("long", "ulong"))


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_suite_kernels_compile_for_gpu_targets(target: str) -> None:
    from portakern import checks
    from portakern.testing.conformance import suite_kernel

    ok, why = (checks.cuda_check_available() if target == "cuda"
               else checks.metal_check_available())
    if not ok:
        pytest.skip(f"no {target} compile check here: {why}")
    for file, name, constants, bindings, ndim in _CASES:
        if target == "metal" and _unsupported_on_metal(bindings, file):
            continue
        source = suite_kernel(file, name, **constants).render(target, ndim=ndim, **bindings)
        if target == "cuda":
            checks.compile_cuda_ptx(source)
        else:
            checks.check_metal(source)
