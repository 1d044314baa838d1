"""Compile checks of each built-in target, as ``portakern check`` runs them.

Each takes a :class:`~portakern.render.RenderedKernel`, the user's sources
(for messages) and the :class:`~portakern.Kernel`, compiles it the way a launch
would (or as close as this machine allows), and returns one line saying what
ran; :class:`BackendUnavailableError` means the check cannot run here.
:mod:`portakern.targets` names them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import BackendUnavailableError

__all__ = ["check_c", "check_cuda", "check_metal", "check_opencl"]


def check_opencl(rendered: Any, sources: dict[str, str], kernel: Any) -> str:
    from ..backends.opencl import CPU

    status = CPU.opencl_available()
    if not status:
        raise BackendUnavailableError(status.reason)
    backend = CPU()
    backend.compile(rendered)
    return f"built on {backend.device.name.strip()}"


def check_c(rendered: Any, sources: dict[str, str], kernel: Any) -> str:
    from ..backends.native import NativeCPU

    status = NativeCPU.available()
    if not status:
        raise BackendUnavailableError(status.reason)
    lowered = rendered.lowered
    jump = lowered.lockstep and kernel.facts("c").lockstep_blocker
    if jump:
        raise BackendUnavailableError(
            f"{jump} in a kernel with @synchronize/@localmem: CPU() runs it on its OpenCL "
            f"device, checked on the opencl line")
    backend = NativeCPU(lockstep=lowered.lockstep)
    backend.compile(rendered)
    return f"shared object built with {Path(backend.toolchain.compiler).name} (CPU native path)"


def check_cuda(rendered: Any, sources: dict[str, str], kernel: Any) -> str:
    from ..backends.cuda import CUDA  # imports without CuPy
    from ..checks.cuda import cuda_check_available

    ok, detail = cuda_check_available()
    if not ok:
        raise BackendUnavailableError(detail)
    # The launcher's own check compiles with the options a launch would use.
    CUDA.compile_check(rendered)
    return f"PTX for compute_90 ({detail.split(' (')[0]})"


def check_metal(rendered: Any, sources: dict[str, str], kernel: Any) -> str:
    from ..checks.metal import check_metal, metal_check_available

    ok, detail = metal_check_available()
    if not ok:
        raise BackendUnavailableError(detail)
    check_metal(rendered.source, sources=sources, name=f"{rendered.name}.metal")
    # Also the shape MLX compiles: header + body inside MLX's own signature.
    from ..backends.metal import mlx_source

    check_metal(mlx_source(rendered), sources=sources, name=f"{rendered.name}.mlx.metal")
    return f"syntax check with {detail.split(' (')[0]} (standalone and as MLX wraps it)"
