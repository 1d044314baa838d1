"""``CPU()``'s OpenCL path on host memory: NumPy arrays wrapped in zero-copy buffers, and
the probe and write-back for a driver that works on a copy (PoCL never does)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .host import arg_key, host_memory
from .opencl_programs import Compiled

__all__ = ["host_buffers", "sync_host", "writes_reach_host"]


def host_buffers(cl: Any, context: Any, args: list, compiled: Compiled) -> tuple:
    """Wrap each NumPy array of ``args`` in a zero-copy buffer, in place.

    Returns the record :func:`~.host.same_args` compares the next launch with: per
    array a weak reference, its shape and writability; per scalar its bytes;
    and the buffers, which the kernel's arguments point at. The buffers wrap
    the arrays' memory without referencing the arrays (PyOpenCL would keep a
    ``hostbuf`` alive), so the record never keeps an array alive; when an array
    dies, its weak reference drops the record and the buffers before the memory
    goes, so a later array at the same address never meets a stale buffer.
    """
    mf = cl.mem_flags
    keys = [arg_key(a, compiled) for a in args]
    for n, a in enumerate(args):
        if isinstance(a, np.ndarray):  # subclasses too (np.memmap): array_info takes them
            flag = mf.READ_WRITE if a.flags.writeable else mf.READ_ONLY
            # An empty array has no memory to wrap: a one-element stand-in, which the
            # buffer keeps alive, takes its place (the kernel never reads it).
            host = np.empty(1, a.dtype) if a.size == 0 else host_memory(a)
            args[n] = cl.Buffer(context, flag | mf.USE_HOST_PTR, hostbuf=host)
    return tuple(keys), tuple(args)


def writes_reach_host(cl: Any, context: Any, queue: Any) -> bool:
    program = cl.Program(context, "__kernel void pk_probe(__global uchar* a) "
                                  "{ a[get_global_id(0)] = 7; }").build()
    host = np.zeros(65, np.uint8)[1:]  # misaligned on purpose, like many NumPy views
    buf = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR, hostbuf=host)
    program.pk_probe(queue, host.shape, None, buf).wait()
    return bool((host == 7).all())


def sync_host(cl: Any, queue: Any, args: list) -> None:
    """Map and unmap each writable buffer, so a copying driver writes the host memory."""
    for a in args:
        if isinstance(a, cl.Buffer) and a.flags & cl.mem_flags.READ_WRITE:
            mapped, _ = cl.enqueue_map_buffer(queue, a, cl.map_flags.READ, 0, (a.size,),
                                              np.uint8)
            mapped.base.release(queue)
