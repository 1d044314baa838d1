"""A native launch's argument block and geometry, built once and refreshed in place.

Split from :mod:`portakern.backends.native`: ``pk_argv`` (each array's data pointer
or a scalar's copy) and ``pk_geom`` (the ndrange, then per hardware axis the group
size, the group count and the extent) for ``pk_launch``, kept with the compiled
kernel so that a launch with the same arguments builds neither again.
"""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from .host import arg_key, check_stack

if TYPE_CHECKING:
    from .native_build import Compiled

__all__ = ["argument_block", "geometry_for", "refreshed", "stopped"]


def stopped(compiled: Compiled) -> None:
    """A launch that a SIGINT stopped between workgroups: its results are partial.

    In the main thread Python's own handler raises ``KeyboardInterrupt`` as this
    function is entered; elsewhere (or with a handler that does not raise) the
    launch fails rather than return half-written arrays.
    """
    from ..errors import LaunchError
    from .native_runtime import RUNTIME

    ctl = RUNTIME[0][1] if RUNTIME else None
    if ctl is None or ctypes.c_int.from_address(ctl.value).value == 0:
        # No SIGINT has come to this process: the kernel's own code said "stopped".
        raise LaunchError(
            f"the launch of kernel {compiled.name!r} (CPU, native path) reported that it "
            f"stopped between workgroups, but no SIGINT (Ctrl-C) has come: its compiled code "
            f"did something undefined, most often a helper that can reach its end without "
            f"'return' (g++ -Wreturn-type names it) or a subscript out of bounds (rerun with "
            f"PORTAKERN_DEBUG=1); its output arrays may be partly written")
    raise LaunchError(f"the launch (CPU, native path, {os.path.basename(compiled.path)}) was "
                      "stopped by Ctrl-C (SIGINT) before every workgroup ran; its output "
                      "arrays are partly written")


def _geometry(sizes: list, global_size: tuple[int, ...], local_size: tuple[int, ...]) -> Any:
    """``pk_geom``: the ndrange, then per hardware axis group size, group count, extent."""
    groups = [-(-g // w) for g, w in zip(global_size, local_size, strict=True)]
    values = [int(s) for s in sizes] + list(local_size) + groups + list(global_size)
    return (ctypes.c_longlong * len(values))(*values)


def geometry_for(compiled: Compiled, sizes: list, global_size: tuple[int, ...],
                  local_size: tuple[int, ...]) -> Any:
    """``pk_geom`` for a launch shape, once per shape (the stack check with it)."""
    key = (global_size, local_size, *sizes)
    geom = compiled.geoms.get(key)
    if geom is None:
        if compiled.arrays:
            items = 1
            for w in local_size:
                items *= w
            check_stack(compiled.name, compiled.arrays, items, "CPU, native path")
        geom = _geometry(sizes, global_size, local_size)
        if len(compiled.geoms) > 64:
            compiled.geoms.clear()
        compiled.geoms[key] = geom
    return geom


def argument_block(compiled: Compiled, args: list) -> tuple:
    """``pk_argv`` for ``args``, and the record :func:`refreshed` compares with.

    Returns ``(keys, argv, buffers)``: per argument, an array's key is
    :func:`~.host.arg_key`'s (a weak reference that drops the record when the array
    dies, so a new array at the same address never meets a stale entry), a scalar's
    its value and bytes; ``buffers[i]`` is the NumPy buffer scalar ``i`` is copied into.
    """
    n = compiled.nparams
    argv = (ctypes.c_void_p * max(n, 1))()
    keys: list = [None] * n
    keep: list = [None] * n
    for i in range(n):
        a = args[i]
        keys[i] = arg_key(a, compiled)
        if isinstance(a, np.ndarray):
            argv[i] = a.ctypes.data
        elif a is None:  # an optional array passed None: a null pointer
            argv[i] = None
        else:
            buf = keep[i] = np.array(a, dtype=compiled.scalars[i])
            argv[i] = buf.ctypes.data
    return keys, argv, keep


def refreshed(compiled: Compiled, record: tuple, args: list, n: int) -> tuple:
    """``record``, or a new record for ``args`` where any argument changed.

    The same array or a scalar of the same type and bytes (not ==: 0.0 == -0.0, and
    NaN != NaN) costs a comparison. A
    published record is never written to (another thread's launch may be reading
    it while the GIL is released): a change copies the block and rewrites only the
    arguments that changed.
    """
    keys = record[0]
    new = None
    for i in range(n):
        k = keys[i]
        a = args[i]
        ref = k[0]
        if ref is None:
            if a is k[1] or (type(a) is type(k[1]) and (
                    a.tobytes() if isinstance(a, np.generic) else a) == k[2]):
                continue
        elif ref() is a:
            continue
        if new is None:
            new = (list(keys), type(record[1]).from_buffer_copy(record[1]), list(record[2]))
        new[0][i] = arg_key(a, compiled)
        if isinstance(a, np.ndarray) or a is None:
            new[1][i] = None if a is None else a.ctypes.data
            new[2][i] = None
        else:
            buf = new[2][i] = np.array(a, dtype=compiled.scalars[i])
            new[1][i] = buf.ctypes.data
    return record if new is None else new
