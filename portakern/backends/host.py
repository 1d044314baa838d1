"""What CPU()'s two paths share: NumPy arrays as device arrays, and the launch record.

Both paths (``opencl.CPU`` on PoCL, ``native.NativeCPU``) take NumPy arrays
in place, and both skip re-marshalling a launch's arguments when they are the
arrays and scalar values of the kernel's previous launch. The record they keep
for that holds the arrays weakly: when one dies, the record is dropped, so a new
array at the same address never meets a stale entry.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import threading
import weakref
from typing import Any

import numpy as np

from .base import ArrayInfo

__all__ = ["NumPyArrays", "arg_key", "keys_match", "StackArray", "stack_arrays",
           "thread_stack", "check_stack"]


class NumPyArrays:
    """The array half of the Backend contract, for C-contiguous NumPy arrays in place."""

    def array_info(self, array: Any) -> ArrayInfo | None:
        """Dtype, shape and layout of a NumPy array (None for anything else)."""
        if type(array) is not np.ndarray and not isinstance(array, np.ndarray):
            return None  # subclasses (np.memmap) pass
        flags = array.flags
        return ArrayInfo(array.dtype, array.shape, flags.c_contiguous, flags.writeable, array)

    def allocate(self, shape: Any, dtype: Any) -> np.ndarray:
        """An uninitialised C-contiguous NumPy array."""
        return np.empty(shape, dtype)

    def zeros(self, shape: Any, dtype: Any) -> np.ndarray:
        """A zero-filled C-contiguous NumPy array."""
        return np.zeros(shape, dtype)

    def to_device(self, array: np.ndarray) -> np.ndarray:
        """A C-contiguous copy of ``array`` (host memory is this backend's memory)."""
        return np.array(array, order="C", copy=True)

    def to_host(self, array: np.ndarray) -> np.ndarray:
        """A copy of ``array`` as a NumPy array."""
        return np.array(array, copy=True)


def arg_key(a: Any, compiled: Any) -> tuple:
    """One argument's entry in a launch record; an array's drops ``compiled.last`` on death."""
    if isinstance(a, np.ndarray):
        return (weakref.ref(a, functools.partial(_forget, weakref.ref(compiled))),
                a.shape, a.flags.writeable)
    return (None, a, a.tobytes() if isinstance(a, np.generic) else a)


def keys_match(keys: tuple, args: list, n: int) -> bool:
    """True when ``args[:n]`` are the arrays and scalar values that ``keys`` recorded."""
    for i in range(n):
        k = keys[i]
        a = args[i]
        ref = k[0]
        if ref is None:
            # Bytes, not ==: 0.0 == -0.0, and NaN != NaN.
            if a is not k[1] and (type(a) is not type(k[1]) or (
                    a.tobytes() if isinstance(a, np.generic) else a) != k[2]):
                return False
        elif ref() is not a or a.shape != k[1] or a.flags.writeable != k[2]:
            return False
    return True


def _forget(compiled_ref: Any, _dead: Any) -> None:
    compiled = compiled_ref()
    if compiled is not None:
        compiled.last = None


# -- arrays on the stack ------------------------------------------------------------------
#
# A kernel's @localmem (native path: once per group, on the thread's stack) and @private
# arrays (per work-item; in a barrier kernel, one per item of the group) live on the
# stack of the thread that runs the group. Larger than that stack, they overflow it
# (SIGSEGV). Their sizes are compile-time constants that the lowering finds before the
# kernel is rendered (portakern.lower.stack_facts), carried beside the source as the
# rendering's ``arrays`` fact, so a launch can be refused before it runs.


class StackArray:
    """One array declared in a kernel: its name, its bytes, and whether that is per work-item."""

    __slots__ = ("name", "nbytes", "per_item", "local")

    def __init__(self, name: str, nbytes: int, per_item: bool, local: bool) -> None:
        self.name, self.nbytes, self.per_item, self.local = name, nbytes, per_item, local

    def __repr__(self) -> str:
        return f"StackArray({self.name!r}, {self.nbytes}, per_item={self.per_item})"


def stack_arrays(facts: Any) -> list[StackArray]:
    """The rendering's ``arrays`` fact (``(name, bytes, per_item, local)`` each) as
    :class:`StackArray` objects (:func:`portakern.lower.stack_facts.declared_arrays`)."""
    return [StackArray(str(n), int(b), bool(p), bool(loc)) for n, b, p, loc in facts]


_STACK_UNITS = {"": 1024, "B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}


def _omp_stacksize() -> int | None:
    value = os.environ.get("OMP_STACKSIZE", "").strip().upper()
    m = re.fullmatch(r"(\d+)\s*([BKMG]?)", value)
    return int(m.group(1)) * _STACK_UNITS[m.group(2)] if m else None


def thread_stack(omp: bool = True) -> tuple[int | None, str]:
    """The stack a launch's groups can count on, and where that figure comes from.

    The launching thread runs groups too: the main thread has ``ulimit -s``
    (``RLIMIT_STACK``), another Python thread ``threading.stack_size()`` (or the
    same default). OpenMP's worker threads have ``OMP_STACKSIZE``. None: unknown.
    """
    limits: list[tuple[int, str]] = []
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    except (ImportError, OSError, ValueError):
        soft = -1
    main = threading.current_thread() is threading.main_thread()
    own = 0 if main else threading.stack_size()
    if own:
        limits.append((own, "threading.stack_size()"))
    elif soft not in (-1, getattr(__import__("resource"), "RLIM_INFINITY", -1)) and soft > 0:
        limits.append((soft, "the launching thread's stack, ulimit -s"))
    if omp:
        omp_size = _omp_stacksize()
        if omp_size:
            limits.append((omp_size, f"OMP_STACKSIZE={os.environ.get('OMP_STACKSIZE')}"))
    if not limits:
        return None, ""
    return min(limits)


#: Stack left for what the launching thread already uses (Python's frames, the launch).
STACK_MARGIN = 1 << 20


def describe_bytes(n: int) -> str:
    """``n`` bytes as MiB or KiB, for messages."""
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.1f} KiB"


_mib = describe_bytes


def check_stack(kernel_name: str, arrays: list[StackArray], items: int, path: str,
                omp: bool = True, count_local: bool = True) -> None:
    """Raise :class:`~portakern.errors.LaunchError` when the arrays cannot fit on a stack.

    ``items``: work-items per group (per-item copies in a barrier kernel).
    ``count_local``: False where ``@localmem`` is not on the stack (PoCL).
    """
    if not arrays:
        return
    need = 0
    parts = []
    for a in arrays:
        if a.local and not count_local:
            continue
        n = a.nbytes * (items if a.per_item else 1)
        need += n
        parts.append((n, f"{a.name!r} ({_mib(a.nbytes)}"
                      + (f" per work-item x {items})" if a.per_item else ")")))
    limit, source = thread_stack(omp)
    if limit is None or need + STACK_MARGIN <= limit:
        return
    from ..errors import LaunchError

    parts.sort(key=lambda p: -p[0])
    shown = ", ".join(text for _, text in parts[:4]) + (", ..." if len(parts) > 4 else "")
    raise LaunchError(
        f"kernel {kernel_name!r} ({path}) needs {_mib(need)} of stack per thread for its "
        f"arrays: {shown}; a thread here has {_mib(limit)} ({source}), less "
        f"{_mib(STACK_MARGIN)} kept for the caller. The launch would overflow the stack "
        f"(SIGSEGV): make @localmem/@private arrays smaller (or use a global array), use "
        f"smaller workgroups for a barrier kernel, or give threads more stack (ulimit -s, "
        f"OMP_STACKSIZE) before portakern starts")


def host_memory(a: np.ndarray) -> Any:
    """A buffer over ``a``'s memory that holds no reference to ``a``."""
    try:
        address = ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):  # read-only: the slower way to the address
        address = a.ctypes.data
    return (ctypes.c_char * a.nbytes).from_address(address)


def same_args(record: tuple, args: list) -> bool:
    """True when ``args`` are the arrays and scalar values of the recorded launch."""
    keys, buffers = record
    if len(keys) != len(args) or not keys_match(keys, args, len(args)):
        return False
    args[:] = buffers
    return True
