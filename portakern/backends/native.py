"""``CPU()``'s native path: kernels compiled to C++ with OpenMP by the system compiler.

PoCL runs a kernel's work-items in vectorised loops, but calls the C library's
scalar math per work-item, so a kernel calling ``sin`` or ``exp`` ran 6-17x
slower than NumPy's SIMD loops (docs/performance.md). This path renders the
kernel for the ``c`` target (``templates/c/``): the kernel body becomes an inline
function of one work-item, called from ``pk_launch``, which runs the workgroups
in parallel (``#pragma omp parallel for``) and each group's work-items in a SIMD
loop (``#pragma omp simd``). The math functions are declared with their vector
variants (glibc's libmvec) where a probe found them, so those loops vectorise too.

The work-item loops are clipped to the ndrange, so the kernel is rendered without
its bounds mask (a kernel with ``unsafe_indices`` runs every item of its groups,
as on a GPU). Kernels with ``@synchronize`` or ``@localmem`` are lowered with
``lockstep`` (:mod:`portakern.lower.lockstep`): their body runs once per group with a
loop over the items between barriers, each stopping at the ndrange and vectorised
across items where nothing orders them; a ``NativeCPU(lockstep=True)`` launches
them over whole groups. :meth:`portakern.backends.opencl.CPU.executor` decides which
kernels come here. The runtime library (Ctrl-C, integer division faults) is in
:mod:`.native_runtime`, the argument block and geometry of a launch in
:mod:`.native_args`.

The compiler is ``$CXX`` or the first of ``g++``, ``clang++``, ``c++`` found on
``PATH`` that builds a probe with ``-fopenmp`` (:mod:`.native_build`, which also
builds and loads the shared objects, kept in the disk cache).
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any, ClassVar

import numpy as np

from ..errors import BackendUnavailableError, CompilationError
from . import native_runtime
from .base import Availability, Backend, Limits
from .host import NumPyArrays, stack_arrays
from .native_args import argument_block, geometry_for, refreshed, stopped
from .native_build import BUILD_LOCK, Compiled, Toolchain, build, find_toolchain
from .native_crash import watch
from .native_groups import UNKNOWN, GroupFacts, cpu_workgroup
from .native_runtime import (  # noqa: F401  (re-exported: tests and opencl.py)
    RT_LOCK,
    RUNTIME,
    load_runtime,
    runtime_file_name,
    runtime_install,
)

__all__ = ["NativeCPU", "native_toolchain"]


#: The most work-items a workgroup may hold (PoCL's limit, so a launch that works
#: on one CPU path works on the other).
MAX_WORKGROUP = 4096
#: Default workgroup extent along the fastest axis: a unit of parallel work.
_CHUNK = 1024

_TOOLCHAIN: list[Toolchain | str] = []


def native_toolchain() -> Toolchain | str:
    """The toolchain, or a string saying why there is none (probed once, cached on disk)."""
    if _TOOLCHAIN:
        return _TOOLCHAIN[0]
    with BUILD_LOCK:
        if not _TOOLCHAIN:
            _TOOLCHAIN.append(find_toolchain())
    return _TOOLCHAIN[0]


def runtime_guard() -> Any:
    """The runtime (or None) whose ``pk_rt_enter``/``pk_rt_leave`` bracket a PoCL launch."""
    return native_runtime.runtime_guard(native_toolchain)


class NativeCPU(NumPyArrays, Backend):
    """NumPy arrays, run by C++ compiled for this CPU; used by ``CPU()``, not directly.

    It reports itself as ``CPU()``: it is the same backend to the user, and
    ``CPU().executor(kernel)`` decides per kernel which path runs it.
    """

    name: ClassVar[str] = "CPU"
    target: ClassVar[str] = "c"
    synchronous: ClassVar[bool] = True
    cpu_device: ClassVar[bool] = True
    def __init__(self, lockstep: bool = False) -> None:
        toolchain = native_toolchain()
        if isinstance(toolchain, str):
            raise BackendUnavailableError(f"CPU native path unavailable: {toolchain}")
        self.toolchain = toolchain
        #: Runs kernels with barriers (lowered into work-item loops, every item of a
        #: group present), rather than elementwise ones.
        self.lockstep = lockstep
        #: Elementwise kernels: the work-item loops stop at the ndrange, so no bounds
        #: mask and any workgroup shape. Barrier kernels run whole groups, masked.
        self.clips_ndrange = not lockstep
        #: Weak: a library goes (dlclose) with the last kernel that uses it.
        self._programs: weakref.WeakValueDictionary[str, Compiled] = \
            weakref.WeakValueDictionary()
        self._failed: dict[str, CompilationError] = {}

    @classmethod
    def available(cls) -> Availability:
        toolchain = native_toolchain()
        if isinstance(toolchain, str):
            return Availability(False, toolchain)
        return Availability(True)

    def __eq__(self, other: object) -> bool:
        return type(other) is NativeCPU

    def __hash__(self) -> int:
        return hash(NativeCPU)

    def __repr__(self) -> str:
        return "CPU()"

    @property
    def cache_key(self) -> Any:
        return ("native", self.toolchain.identity, self.lockstep)

    def compile(self, rendered: Any) -> Compiled:
        hit = self._programs.get(rendered.source)
        if hit is None:
            failed = self._failed.get(rendered.source)
            if failed is not None:
                raise failed  # the same source fails the same way: no second compile
            try:
                hit = build(self.toolchain, rendered)
            except CompilationError as exc:
                self._failed[rendered.source] = exc
                raise
            # Facts of the lowering, beside the source (RenderedKernel.meta).
            hit.arrays = stack_arrays(rendered.fact("arrays", ()))
            hit.bound = rendered.fact("group_bound")
            runtime, ctl = load_runtime(self.toolchain)
            if ctl is not None:
                hit.lib.pk_attach.restype = None
                hit.lib.pk_attach(ctl)
                watch(runtime, hit.lib)  # the crash report names this kernel (once per load)
            self._programs[rendered.source] = hit
        return hit

    def max_workgroup_size(self, compiled: Any) -> int:
        return MAX_WORKGROUP

    def max_workitem_sizes(self) -> tuple[int, ...]:
        return (MAX_WORKGROUP,) * 3

    @property
    def limits(self) -> Limits:
        """The native path's figures (:func:`.limits.native_limits`)."""
        from .limits import native_limits

        return native_limits(MAX_WORKGROUP)

    def supports(self, feature: str) -> bool:
        if feature == "float16":
            return self.toolchain.float16
        return True

    def default_workgroupsize(self, ndrange: tuple[int, ...], compiled: Any) -> tuple[int, ...]:
        """:meth:`cpu_workgroupsize` for a kernel whose facts are not known (base shape)."""
        return self.cpu_workgroupsize(ndrange, UNKNOWN, compiled)

    def cpu_workgroupsize(self, ndrange: tuple[int, ...], facts: GroupFacts,
                          compiled: Any) -> tuple[int, ...]:
        """``CPU()``'s default (:func:`.native_groups.cpu_workgroup`), as on PoCL.

        A kernel that cannot tell its group's shape runs in rows of up to 1024 items
        along the fastest axis: the items of a group run one after another in a SIMD
        loop and the groups are the unit the OpenMP threads share, so a group is a
        chunk of work, not a hardware shape, and the loops stop at the ndrange. Any
        other gets the shape the OpenCL path gives it.
        """
        blind = None
        if ndrange and not self.lockstep:
            blind = (1,) * (len(ndrange) - 1) + (max(1, min(ndrange[-1], _CHUNK)),)
        return cpu_workgroup(ndrange, facts, MAX_WORKGROUP, self.max_workitem_sizes(), blind)

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        # A warm launch (DESIGN section 4: under 3 us) is the foreign call and the
        # comparison that shows the argument block and the geometry still hold: the
        # very objects of the last launch (by id: each is alive, the arrays in
        # ``compiled.last`` drop it when they die, the rest is held by ``warm``). An
        # array's memory cannot move meanwhile: NumPy refuses to resize an array
        # that has weak references, and the record holds one.
        warm = compiled.warm
        if warm is not None and warm[0] is compiled.last and warm[1] is global_size \
                and warm[2] is local_size and warm[3] == [*map(id, args)]:
            if compiled.fn(warm[4], warm[5]):
                stopped(compiled)
            return
        compiled.warm = None
        n = compiled.nparams
        if compiled.sized:
            from .local_sizes import local_bytes

            local_bytes(compiled.sized, args, local_size, self.limits.local_memory,
                        compiled.name, "the native path's thread stack")
        last = compiled.last
        if last is None:
            last = compiled.last = argument_block(compiled, args)
        else:
            fresh = refreshed(compiled, last, args, n)
            if fresh is not last:
                last = compiled.last = fresh
        sizes = args[n:]
        geom = compiled.geom
        if geom is None or geom[0] is not global_size or geom[1] is not local_size \
                or geom[2] != sizes:
            geom = compiled.geom = (global_size, local_size, sizes,
                                    geometry_for(compiled, sizes, global_size, local_size))
        compiled.warm = (last, global_size, local_size, [*map(id, args)], last[1], geom[3],
                         [a for a in args if not isinstance(a, np.ndarray)])
        if compiled.fn(last[1], geom[3]):
            stopped(compiled)

    def prepare_launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
                       local_size: tuple[int, ...]) -> Any:
        """The argument block and geometry of ``args``, built once; ``run`` is one call.

        Pointers are taken here, so ``run`` is the foreign call alone (the launcher
        has checked that the arrays are these, alive and unchanged; their memory
        cannot move while its records hold weak references to them); a scalar that
        is not the object seen here goes through :meth:`launch`; ``run()`` launches
        ``args`` as given here.
        """
        n = compiled.nparams
        argv = (ctypes.c_void_p * max(n, 1))()
        keep: list = []
        scalars: list = []
        for i in range(n):
            a = args[i]
            if isinstance(a, np.ndarray):
                argv[i] = a.ctypes.data
            else:
                buf = np.array(a, dtype=compiled.scalars[i])
                keep.append(buf)
                argv[i] = buf.ctypes.data
                scalars.append((i, a))
        geom = geometry_for(compiled, args[n:], global_size, local_size)
        fn, launch = compiled.fn, self.launch

        def run(args: list | None = None, _keep: list = keep) -> None:
            if args is not None:
                for i, value in scalars:
                    if args[i] is not value:
                        launch(compiled, args, global_size, local_size)
                        return
            if fn(argv, geom):
                stopped(compiled)

        return run

    def synchronize(self) -> None:
        pass  # every launch has finished when it returns


class HostedNativeCPU(NativeCPU):
    """The native path for a ``CPU`` subclass (a plugin's arrays over host memory).

    The plugin's ``array_info`` describes its arrays and hands out NumPy views of
    their memory (what ``CPU.launch`` takes too); this runs them natively and
    reports itself as the plugin's backend.
    """

    def __init__(self, owner: Any, lockstep: bool = False) -> None:
        super().__init__(lockstep)
        self.owner = owner
        self.name = owner.name  # type: ignore[misc]

    def array_info(self, array: Any) -> Any:
        info = self.owner.array_info(array)
        if info is not None and not isinstance(info.handle, np.ndarray):
            return None  # not host memory after all: refused as a foreign array
        return info

    def allocate(self, shape: Any, dtype: Any) -> Any:
        return self.owner.allocate(shape, dtype)

    def zeros(self, shape: Any, dtype: Any) -> Any:
        return self.owner.zeros(shape, dtype)

    def to_device(self, array: np.ndarray) -> Any:
        return self.owner.to_device(array)

    def to_host(self, array: Any) -> np.ndarray:
        return self.owner.to_host(array)

    def __eq__(self, other: object) -> bool:
        return (type(other) is HostedNativeCPU and type(other.owner) is type(self.owner)
                and other.lockstep == self.lockstep)

    def __hash__(self) -> int:
        return hash((HostedNativeCPU, type(self.owner), self.lockstep))

    def __repr__(self) -> str:
        return repr(self.owner)
