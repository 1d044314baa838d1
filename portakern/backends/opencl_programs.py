"""OpenCL programs: built from a rendered kernel, or loaded from the disk cache as a binary;
and the check of a launch's stack use."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import log
from ..subprocesses import fork_safe_lock
from .host import stack_arrays
from .local_sizes import local_bytes, sized_arrays

__all__ = ["Compiled", "build_program", "check_stack_use", "local_memory"]


class Compiled:
    """A built program's kernel, with its scalar dtypes fixed once."""

    __slots__ = ("kernel", "program", "max_wg", "source", "lock", "last", "name", "checked",
                 "arrays", "sized", "__weakref__")

    def __init__(self, program: Any, kernel: Any, max_wg: int, source: str,
                 arrays: tuple = ()) -> None:
        self.program = program
        self.kernel = kernel
        self.max_wg = max_wg
        self.source = source
        #: The rendering's ``arrays`` fact (:attr:`~portakern.render.emit.RenderedKernel.meta`).
        self.arrays = arrays
        # One cl.Kernel holds one set of arguments: setting them and enqueueing
        # must not interleave with another thread's launch of the same kernel.
        self.lock = fork_safe_lock()
        # CPU(): what the arguments were last set to (see CPU.launch).
        self.last: tuple | None = None
        self.name = kernel.function_name
        #: CPU(): the workgroup sizes whose stack need has been checked (see check_stack_use).
        self.checked: set | None = None
        #: The @localmem arrays sized at launch (:mod:`.local_sizes`): the kernel's last
        #: argument is their __local buffer.
        self.sized: tuple = ()


def build_program(cl: Any, context: Any, device: Any, rendered: Any,
                  options: list[str]) -> Compiled:
    from ..cache import store as cache

    start = log.clock()
    store = cache.default_cache()
    identity = "\n".join(_device_id(device))
    key = cache.make_key("opencl", rendered.source, tuple(options), _device_id(device))
    # Used only if written for this key and device (DiskCache.get checks the record).
    program = _cached_program(cl, context, device, store.get("opencl", key, identity), options)
    log.found("OpenCL program binary", None if program is None else rendered, start)
    if program is not None:
        try:
            return _finish(cl, program, device, rendered)
        except cl.Error:
            # A binary without this kernel in it: not ours after all. Built from source
            # below, which overwrites the entry.
            store.discard("opencl", key)
    try:
        program = log.compiling(rendered.name, "opencl", lambda: cl.Program(
            context, rendered.source).build(options=options, devices=[device]))
    except cl.RuntimeError as exc:
        from ..checks.diagnostics import compilation_error

        raise compilation_error(f"OpenCL compilation of kernel {rendered.name!r} failed",
                                str(exc), rendered, "opencl") from exc
    _store_program(cl, program, device, store, key, identity)
    return _finish(cl, program, device, rendered)


def _finish(cl: Any, program: Any, device: Any, rendered: Any) -> Compiled:
    kernel = cl.Kernel(program, rendered.name)
    # Typed scalars let PyOpenCL pack arguments in ~0.5 us; untyped, each NumPy
    # scalar costs ~7 us in set_args, more than the rest of a launch.
    sized = sized_arrays(rendered)
    # A kernel with @localmem sized at launch takes its __local buffer last.
    kernel.set_scalar_arg_dtypes(_scalar_dtypes(rendered) + [None] * bool(sized))
    max_wg = kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device)
    compiled = Compiled(program, kernel, int(max_wg), rendered.source,
                        stack_arrays(rendered.fact("arrays", ())))
    compiled.sized = sized
    return compiled


def local_memory(cl: Any, compiled: Compiled, args: list, local_size: tuple[int, ...],
                 limit: int, device: str) -> list:
    """The ``pyopencl.LocalMemory`` argument of a kernel with @localmem arrays sized at
    launch (checked against ``limit``), else nothing."""
    if not compiled.sized:
        return []
    nbytes = local_bytes(compiled.sized, args, local_size, limit, compiled.name, device)
    return [cl.LocalMemory(max(nbytes, 1))]


def _scalar_dtypes(rendered: Any) -> list:
    """The argument dtypes PyOpenCL should pack: None for buffers, then int64 per axis."""
    from ..types import TYPE_DTYPES

    bindings = dict(rendered.bindings)
    dtypes: list = [None if p.pointer else TYPE_DTYPES[bindings.get(p.type, p.type)]
                    for p in rendered.params]
    return dtypes + [np.dtype(np.int64)] * rendered.ndim


def _device_id(device: Any) -> tuple[str, ...]:
    """What a program binary depends on besides its source: device and driver."""
    platform_ = device.platform
    return (platform_.name, platform_.version, device.vendor, device.name, device.version,
            device.driver_version)


def _cached_program(cl: Any, context: Any, device: Any, binary: bytes | None,
                    options: list[str]) -> Any:
    """A program built from a binary of the disk cache, or None."""
    if binary is None:
        return None
    try:
        return cl.Program(context, [device], [binary]).build(options=options, devices=[device])
    except cl.Error:
        # A driver update can reject an older binary: build from source, which
        # overwrites the entry.
        return None


def _store_program(cl: Any, program: Any, device: Any, store: Any, key: str,
                   identity: str) -> None:
    try:
        devices = program.get_info(cl.program_info.DEVICES)
        binary = program.get_info(cl.program_info.BINARIES)[devices.index(device)]
    except (cl.Error, ValueError):
        return  # a driver that cannot hand out binaries: its own cache is all there is
    if binary:
        store.put("opencl", key, bytes(binary), identity)


def check_stack_use(compiled: Compiled, local_size: tuple[int, ...], device: Any = None,
                    ) -> None:
    """Refuse what the device cannot hold: private arrays larger than a PoCL worker
    thread's stack, and ``@localmem`` beyond the device's local memory (both a SIGSEGV).

    PoCL keeps ``@localmem`` off the stack, in a buffer of the device's
    ``LOCAL_MEM_SIZE`` (512 KiB for PoCL 3.0's CPU device); its worker threads have the
    process's default thread stack (``ulimit -s``).
    """
    from .host import check_stack

    arrays = compiled.arrays
    check_stack(compiled.name, arrays, 1, "CPU, OpenCL path", omp=False, count_local=False)
    if device is not None:
        _check_local_memory(compiled, arrays, device)
    if compiled.checked is None:
        compiled.checked = set()
    compiled.checked.add(local_size)


def _check_local_memory(compiled: Compiled, arrays: list, device: Any) -> None:
    limit = int(getattr(device, "local_mem_size", 0) or 0)
    need = sum(a.nbytes for a in arrays if a.local)
    if not limit or need <= limit:
        return
    from ..errors import LaunchError
    from .host import describe_bytes

    shown = ", ".join(f"{a.name!r} ({describe_bytes(a.nbytes)})" for a in arrays if a.local)
    raise LaunchError(
        f"kernel {compiled.name!r} (CPU, OpenCL path) declares {describe_bytes(need)} of "
        f"@localmem ({shown}); the device {device.name.strip()!r} has "
        f"{describe_bytes(limit)} of local memory a group. Make the @localmem arrays "
        f"smaller (or use a global array), or run the kernel on the native path")



def half_storage_variant(rendered: Any, extensions: str) -> Any:
    """``rendered``, or its ``half_storage`` variant on a device without ``cl_khr_fp16``
    (:mod:`portakern.lower.half_storage`): half arrays there are read and written with
    ``vload_half``/``vstore_half`` and computed in float."""
    if "cl_khr_fp16" in extensions or not rendered.fact("uses_half", False) \
            or dict(rendered.extra).get("half_storage"):
        return rendered
    lowered = rendered.with_lowered().lowered
    if lowered is not None and lowered.debug:
        from ..errors import KernelTypeError

        raise KernelTypeError(
            f"kernel {rendered.name!r} stores half values, and debug mode's checked "
            "accesses are not yet rewritten as half storage (vload_half/vstore_half) for an "
            "OpenCL device without cl_khr_fp16; run it in debug mode on the native path "
            "(PORTAKERN_CPU=native) or on a device with half arithmetic")
    return rendered.variant(half_storage=True)
