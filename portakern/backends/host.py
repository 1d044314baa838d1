"""What CPU()'s two paths share: NumPy arrays as device arrays, and the launch record.

Both paths (``opencl.CPU`` on PoCL, ``native.NativeCPU``) take NumPy arrays
in place, and both skip re-marshalling a launch's arguments when they are the
arrays and scalar values of the kernel's previous launch. The record they keep
for that holds the arrays weakly: when one dies, the record is dropped, so a new
array at the same address never meets a stale entry.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np

from .base import ArrayInfo

__all__ = ["NumPyArrays", "arg_key", "keys_match"]


class NumPyArrays:
    """The array half of the Backend contract, for C-contiguous NumPy arrays in place."""

    def array_info(self, array: Any) -> ArrayInfo | None:
        if type(array) is not np.ndarray and not isinstance(array, np.ndarray):
            return None  # subclasses (np.memmap) pass
        flags = array.flags
        return ArrayInfo(array.dtype, array.shape, flags.c_contiguous, flags.writeable, array)

    def allocate(self, shape: Any, dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype)

    def zeros(self, shape: Any, dtype: Any) -> np.ndarray:
        return np.zeros(shape, dtype)

    def to_device(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, order="C", copy=True)

    def to_host(self, array: np.ndarray) -> np.ndarray:
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
