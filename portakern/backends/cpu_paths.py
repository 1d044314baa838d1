"""``CPU()``'s two paths: which one ``PORTAKERN_CPU`` asks for, and the native path's
backends (one pair per process, or per ``CPU`` subclass whose arrays they launch)."""

from __future__ import annotations

import os
from typing import Any

from ..errors import BackendUnavailableError
from ..subprocesses import fork_safe_lock

__all__ = ["cpu_mode", "hosted_native", "native_backend"]

_LOCK = fork_safe_lock()
_NATIVE: list[Any] = []


def cpu_mode() -> str:
    """``PORTAKERN_CPU``: ``auto`` (the default), ``native`` or ``opencl``."""
    mode = os.environ.get("PORTAKERN_CPU", "auto").strip().lower() or "auto"
    if mode not in ("auto", "native", "opencl"):
        raise BackendUnavailableError(
            f"PORTAKERN_CPU={mode!r} is not a CPU path; use 'auto' (native where a C++ "
            f"compiler is found, else OpenCL), 'native' or 'opencl'")
    return mode


def native_backend() -> Any:
    """The native path's backends (elementwise, lockstep), or None when all is OpenCL."""
    mode = cpu_mode()
    if mode == "opencl":
        return None
    if not _NATIVE:
        from .native import NativeCPU

        with _LOCK:
            if not _NATIVE:
                _NATIVE.append((NativeCPU(), NativeCPU(lockstep=True))
                               if NativeCPU.available() else None)
    native = _NATIVE[0]
    if native is None and mode == "native":
        from .native import NativeCPU

        raise BackendUnavailableError(
            f"PORTAKERN_CPU=native, but {NativeCPU.available().reason}; unset PORTAKERN_CPU "
            f"to run on the CPU OpenCL device instead")
    return native


_HOSTED: dict[type, tuple] = {}


def hosted_native(owner: Any, native: tuple) -> Any:
    """The native path's backends for a ``CPU`` subclass: its arrays, the native launch."""
    pair = _HOSTED.get(type(owner))
    if pair is None:
        from .native import HostedNativeCPU

        with _LOCK:
            pair = _HOSTED.get(type(owner))
            if pair is None:
                pair = _HOSTED[type(owner)] = (HostedNativeCPU(owner),
                                               HostedNativeCPU(owner, lockstep=True))
    return pair
