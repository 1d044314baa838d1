"""The figures behind ``backend.limits`` (:class:`~portakern.backends.base.Limits`) for the
backends whose devices are asked at run time: an OpenCL device, the native CPU path,
and ``CPU()``, which may run a kernel on either."""

from __future__ import annotations

import os
import threading
from typing import Any

from ..syntax.vocabulary import LOCKSTEP_SIZE
from .base import Limits
from .host import STACK_MARGIN, thread_stack

__all__ = ["both_paths", "native_limits", "opencl_limits"]

#: The stack counted on where no limit is set (Linux's default ``ulimit -s``).
_DEFAULT_STACK = 8 << 20


def opencl_limits(device: Any, extensions: str, max_workgroup: int) -> Limits:
    """An OpenCL device's figures. Subgroups are portakern's own 32 where the device
    has no ``cl_khr_subgroups``, else the largest size it reports (Intel's
    ``sub_group_sizes``), 32 where it reports none."""
    size = LOCKSTEP_SIZE
    if "cl_khr_subgroups" in extensions:
        try:
            size = max(int(n) for n in device.sub_group_sizes_intel)
        except Exception:  # noqa: BLE001 - an extension query; absent on most devices
            size = LOCKSTEP_SIZE
    return Limits(max_workgroup, int(device.local_mem_size), size,
                  int(device.max_compute_units))


#: (main thread?, threading.stack_size(), OMP_STACKSIZE, max_workgroup) -> the figures: a
#: launch of a kernel whose @localmem is sized at launch asks on every launch.
_NATIVE: dict[tuple, Limits] = {}


def native_limits(max_workgroup: int) -> Limits:
    """The native path's figures: ``@localmem`` lives on the stack of the threads that run
    groups (the smallest of ``ulimit -s``, ``OMP_STACKSIZE`` and
    ``threading.stack_size()``, less the 1 MiB kept for the caller; 8 MiB where no limit
    is set), subgroups are the lockstep loops' 32, one compute unit per core this
    process may use."""
    key = (threading.current_thread() is threading.main_thread(), threading.stack_size(),
           os.environ.get("OMP_STACKSIZE"), max_workgroup)
    known = _NATIVE.get(key)
    if known is not None:  # ``ulimit -s`` is read once per process (setrlimit later is not seen)
        return known
    stack = thread_stack()[0] or _DEFAULT_STACK
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    made = _NATIVE[key] = Limits(max_workgroup, max(0, stack - STACK_MARGIN), LOCKSTEP_SIZE,
                                 cores)
    return made


def both_paths(device: Limits | None, native: Limits | None) -> Limits:
    """What holds on both of ``CPU()``'s paths: each figure the smaller one."""
    if device is None or native is None:
        known = device or native
        assert known is not None, "at least one CPU path reports its limits"
        return known
    return Limits(*(min(a, b) for a, b in zip(device, native, strict=True)))
