"""Compile checks of each built-in target, as ``portakern check`` runs them.

Each takes a :class:`~portakern.render.emit.RenderedKernel`, the user's sources
(for messages) and the :class:`~portakern.Kernel`, compiles it the way a launch
would (or as close as this machine allows), and returns one line saying what
ran; :class:`BackendUnavailableError` means the check cannot run here.
``BUILTIN`` lists them by target; a plugin's target names its own in its
:class:`~portakern.targets.TargetInfo` (``checker``, ``checker_status``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import BackendUnavailableError

__all__ = ["BUILTIN", "check_c", "check_cuda", "check_metal", "check_of", "check_opencl",
           "note_of", "status_of"]


def check_opencl(rendered: Any, sources: dict[str, str], kernel: Any) -> str:
    from ..backends.opencl import CPU

    status = CPU.opencl_available()
    if not status:
        raise BackendUnavailableError(status.reason)
    backend = CPU()
    # The prelude enables an extension exactly where the kernel's code uses its type.
    for pragma, feature, what in _OPENCL_FEATURES:
        if pragma in rendered.source and not backend.supports(feature):
            raise BackendUnavailableError(
                f"the CPU OpenCL device {backend.device.name.strip()} has no {what}; "
                f"the kernel is checked on the other lines")
    backend.compile(rendered)
    return f"built on {backend.device.name.strip()}"


#: An extension's pragma in the OpenCL prelude, the ``supports()`` feature, its words (half
#: needs none: without cl_khr_fp16 the device builds its half_storage variant).
_OPENCL_FEATURES = (
    ("cl_khr_fp64 : enable", "float64", "double arithmetic (cl_khr_fp64)"),
)


def check_c(rendered: Any, sources: dict[str, str], kernel: Any) -> str:
    """The compile ``CPU()`` makes: its own choice of path, rendering and build.

    ``CPU().executor(kernel)`` picks the native path (elementwise, or lockstep for a
    barrier kernel) or the OpenCL device, as a launch does; a kernel ``CPU()`` runs on
    OpenCL is SKIPPED here (its opencl line is the one that applies), and so is one
    whose C++ does not build while its OpenCL does (``CPU()`` runs it there, with a
    ``NativeFallbackWarning``). A C++ error is FAILED only where ``CPU()`` would raise
    it, that is when the OpenCL build fails too.
    """
    from ..backends.native import NativeCPU
    from ..backends.opencl import CPU
    from ..errors import CompilationError
    from ..lower.lowering import NotLockstep

    status = NativeCPU.available()
    if not status:
        raise BackendUnavailableError(status.reason)
    runner = CPU().executor(kernel)
    if not isinstance(runner, NativeCPU):
        facts = kernel.facts("c")
        why = (f"{facts.lockstep_blocker} in a kernel with @synchronize/@localmem"
               if facts.lockstep and facts.lockstep_blocker else "PORTAKERN_CPU=opencl")
        raise BackendUnavailableError(
            f"{why}: CPU() runs it on its OpenCL device, checked on the opencl line")
    # The variant a launch builds: the native elementwise path clips its loops at the
    # ndrange, so it compiles the kernel without the bounds mask (launch.py, _plan).
    unmasked = (runner.clips_ndrange and rendered.ndim > 0
                and not kernel.parsed(runner.target)[1].unsafe_indices)
    try:
        kernel.build(runner, (), rendered.ndim, unmasked=unmasked)
    except NotLockstep as exc:
        raise BackendUnavailableError(
            f"{_first_line(exc)}: CPU() runs it on its OpenCL device, checked on the "
            f"opencl line") from None
    except CompilationError as exc:
        if not _opencl_builds(kernel, rendered.ndim):
            raise
        raise BackendUnavailableError(
            f"its C++ does not compile, so CPU() runs it on its OpenCL device with a "
            f"NativeFallbackWarning, checked on the opencl line; "
            f"{Path(runner.toolchain.compiler).name} said: {_first_line(exc)}") from None
    path = "lockstep" if runner.lockstep else "elementwise"
    return (f"shared object built with {Path(runner.toolchain.compiler).name} "
            f"(CPU native path, {path})")


def _opencl_builds(kernel: Any, ndim: int) -> bool:
    """Whether ``CPU()``'s OpenCL device builds the kernel (where a failed C++ build goes)."""
    from ..backends.opencl import CPU
    from ..errors import PortakernError

    if not CPU.opencl_available():
        return False
    try:
        kernel.build(CPU(), (), ndim)
    except PortakernError:
        return False
    return True


def _first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln]
    return (errors or lines or [type(exc).__name__])[-1 if not errors else 0]


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
    if _names_word(rendered.source, "double"):
        # No Metal device has double: not an error in the kernel, a target it cannot use.
        raise BackendUnavailableError(
            "Metal has no double, which this kernel uses; it runs on CUDA, OpenCL and "
            "CPU(), checked on those lines")
    check_metal(rendered.source, sources=sources, name=f"{rendered.name}.metal")
    # Also the shape MLX compiles: header + body inside MLX's own signature.
    from ..backends.metal import mlx_source

    check_metal(mlx_source(rendered), sources=sources, name=f"{rendered.name}.mlx.metal")
    return f"syntax check with {detail.split(' (')[0]} (standalone and as MLX wraps it)"


_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"", re.DOTALL)


def _names_word(source: str, word: str) -> bool:
    """Whether the code of ``source`` (not its comments or strings) names ``word``."""
    return re.search(rf"\b{word}\b", _NOT_CODE.sub(" ", source)) is not None
def _cuda_status() -> tuple[bool, str]:
    from ..checks.cuda import cuda_check_available

    return cuda_check_available()


def _metal_status() -> tuple[bool, str]:
    from ..checks.metal import metal_check_available

    return metal_check_available()


Check = Callable[[Any, dict[str, str], Any], str]

#: The built-in targets' compile checks: target -> (check, whether it runs here, note).
BUILTIN: dict[str, tuple[Check, Callable[[], tuple[bool, str]] | None, str]] = {
    "opencl": (check_opencl, None, "built on the CPU OpenCL device when it is available"),
    "cuda": (check_cuda, _cuda_status, ""),
    "metal": (check_metal, _metal_status, ""),
    "c": (check_c, None, "built by the CPU native path's C++ compiler when it is available"),
}


def _resolve(path: str) -> Any:
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)


def check_of(info: Any) -> Check | None:
    """The compile check of a target (its :class:`~portakern.targets.TargetInfo`), or None."""
    if info.checker is not None:
        return _resolve(info.checker)
    hit = BUILTIN.get(info.name)
    return hit[0] if hit else None


def status_of(info: Any) -> tuple[bool, str] | None:
    """``(ok, detail)``: whether the target's compile check runs here, when it can say."""
    if info.checker_status is not None:
        return _resolve(info.checker_status)()
    hit = BUILTIN.get(info.name)
    return hit[1]() if hit and hit[1] else None


def note_of(info: Any) -> str:
    """How the compile check is built, for ``portakern info`` when there is no status."""
    hit = BUILTIN.get(info.name)
    return info.checker_note or (hit[2] if hit else "")

