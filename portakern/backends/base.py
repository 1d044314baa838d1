"""The backend contract.

A backend turns a rendered kernel into something that runs, and runs it. The
kernel language is lowered once, above the backends (:mod:`portakern.lower.lowering`);
a backend only supplies primitives: how to compile a rendered source, how to
see an array, how to launch over a hardware grid. The dialect itself (index
functions, barriers, atomics) lives in ``templates/<target>/``; a backend names
its dialect with :attr:`Backend.target`.

Each member below says whether a backend **must**, **should** or **may**
provide it, as KernelAbstractions.jl documents its backend interface:

must
    ``name``, ``target``, :meth:`~Backend.available`, :meth:`~Backend.compile`,
    :meth:`~Backend.launch`, :meth:`~Backend.array_info`,
    :meth:`~Backend.synchronize`, :meth:`~Backend.allocate`,
    :meth:`~Backend.to_device`, :meth:`~Backend.to_host`. A subclass that misses
    one fails when the class is created, with a ``TypeError`` naming each
    missing member (see :meth:`Backend.__init_subclass__`).
should
    :meth:`~Backend.zeros`, :meth:`~Backend.max_workgroup_size`,
    :meth:`~Backend.max_workitem_sizes`, :attr:`~Backend.limits`, :meth:`~Backend.supports`,
    :attr:`~Backend.cache_key`, ``__eq__``/``__hash__`` (two objects that launch on
    the same device and queue compare equal, so arrays from both are not
    reported as mixed backends). The defaults work but are conservative or slow.
may
    :meth:`~Backend.for_array`, :meth:`~Backend.default_workgroupsize`,
    :attr:`~Backend.templates`, :attr:`~Backend.preferred_group_size`,
    :attr:`~Backend.synchronous`, :attr:`~Backend.unmask_exact`, :attr:`~Backend.cpu_device`,
    :attr:`~Backend.clips_ndrange`,
    :meth:`~Backend.pickle_recipe`, :meth:`~Backend.timed_launch`,
    :meth:`~Backend.prepare_launch`.

An intermediate base class that is not meant to be used on its own opts out of
the check with ``class MyBase(Backend, abstract=True)``.
"""

from __future__ import annotations

import math
import time
from os import PathLike
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ..errors import BackendUnavailableError
from ..subprocesses import fork_safe_lock

__all__ = ["Backend", "ArrayInfo", "Availability", "Limits", "MUST", "SHOULD", "MAY", "FEATURES",
           "cpu_groups", "default_instance", "exact_groups", "pow2_groups"]

#: Members every backend must provide (checked when the subclass is created).
MUST = ("available", "compile", "launch", "array_info", "synchronize", "allocate",
        "to_device", "to_host")
#: Members a backend should override; the defaults are conservative.
SHOULD = ("zeros", "max_workgroup_size", "max_workitem_sizes", "limits", "supports", "cache_key",
          "__eq__", "__hash__")
#: Members a backend may override.
MAY = ("for_array", "executor", "describe", "default_workgroupsize", "templates",
       "preferred_group_size", "synchronous", "unmask_exact", "cpu_device", "clips_ndrange",
       "pickle_recipe", "timed_launch", "prepare_launch")
#: Feature names :meth:`Backend.supports` is asked about.
FEATURES = ("float64", "float16", "int64_atomics")

_INSTANCES: dict[type, Backend] = {}
_AVAILABLE: set[type] = set()
_LOCK = fork_safe_lock()


def forget_availability(cls: type) -> None:
    """Forget a remembered positive :meth:`Backend.check_available` answer for ``cls``.

    For code that changes what a backend can reach at run time (installing a
    stand-in runtime, tests); the next launch asks :meth:`Backend.available` again.
    """
    with _LOCK:
        _AVAILABLE.discard(cls)


#: ``cached_instance(cls)``: the shared instance :func:`default_instance` made for
#: ``cls``, or None (creates nothing; a dict lookup, for resolution's hot path).
cached_instance = _INSTANCES.get


def default_instance(cls: type[Backend]) -> Backend:
    """The one shared ``cls()`` of this process, created on first use.

    Resolution hands out this instance for every array of a type, so compiled
    kernels (cached per :attr:`Backend.cache_key`) are reused between calls.
    """
    hit = _INSTANCES.get(cls)
    if hit is None:
        # Constructed outside the lock: a constructor may resolve other backends.
        # Two racing threads may both construct; the first one stored is kept.
        made = cls()
        with _LOCK:
            hit = _INSTANCES.setdefault(cls, made)
    return hit


class Availability(NamedTuple):
    """Whether a backend can run here; ``reason`` says why not and how to fix it."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


class Limits(NamedTuple):
    """What a device allows one launch, for a library that sizes its launches per device.

    Attributes
    ----------
    max_workgroup_size : int
        Work-items in one workgroup, at most (a kernel may get less:
        :meth:`Backend.max_workgroup_size` asks for one compiled kernel).
    local_memory : int
        Bytes of ``@localmem`` one workgroup may use, at most.
    subgroup_size : int
        Work-items in a subgroup (``@subgroupsize()``): a warp, a SIMD-group.
    compute_units : int
        Units that run workgroups at once (CUDA multiprocessors, OpenCL compute
        units, CPU cores); 0 where the runtime does not say (MLX).
    """

    max_workgroup_size: int
    local_memory: int
    subgroup_size: int
    compute_units: int


class ArrayInfo(NamedTuple):
    """What the launcher needs to know about one array argument.

    An immutable record (a named tuple: a launch makes one per array argument, and
    a frozen dataclass cost ~1 us each, a tenth of a warm OpenCL launch's overhead).

    Attributes
    ----------
    dtype : numpy.dtype
        The element type, as a NumPy dtype (checked against the parameter's type).
    shape : tuple of int
        The array's shape (for messages; kernels see only a pointer).
    c_contiguous : bool
        Whether the elements are laid out in C order with no gaps.
    writable : bool
        False for read-only arrays; a non-``const`` parameter rejects them.
    handle : object
        What :meth:`Backend.launch` receives for this argument (a buffer, a device
        pointer, the array itself). ``None`` means "cannot be passed as is" (a
        view at an offset the device cannot address); the launcher then asks for
        a copy.
    extent : tuple of (int, int), optional
        ``(address, nbytes)``: the device memory the elements occupy, where the
        backend can tell (CUDA arrays). The launcher refuses a ``const T*``
        argument whose extent overlaps that of an array the kernel writes; without
        an extent, only the same ``handle`` object (or NumPy arrays that may share
        memory) counts as aliasing.
    """

    dtype: np.dtype
    shape: tuple[int, ...]
    c_contiguous: bool
    writable: bool
    handle: Any
    extent: tuple[int, int] | None = None


def _defined_by(cls: type, member: str) -> type | None:
    for klass in cls.__mro__:
        if member in klass.__dict__:
            return klass
    return None


class Backend:
    """Base class of every backend. See the module docstring for the contract.

    Class attributes a backend **must** set: :attr:`name` (short, e.g. ``"CPU"``)
    and :attr:`target` (``"opencl"``, ``"cuda"``, ``"metal"`` or a plugin's own
    target, for which the plugin supplies ``templates/<target>/``).
    """

    #: **Must.** A short name shown in messages and listings (``"CPU"``, ``"CUDA"``).
    name: ClassVar[str] = "backend"
    #: **Must.** The dialect the kernel is rendered to: a folder of the template path.
    target: ClassVar[str] = ""
    #: **May.** Work-items per group used to build a default workgroup shape.
    preferred_group_size: ClassVar[int] = 256
    #: **May.** True when a launch has finished by the time it returns.
    synchronous: ClassVar[bool] = False
    #: **May.** True to get kernels without the bounds mask when the workgroups tile
    #: the ndrange exactly (CPU devices vectorise an unmasked body; on GPUs the mask
    #: is free). ``default_workgroupsize`` is then also called with ``compiled=None``.
    unmask_exact: ClassVar[bool] = False
    #: **May.** True when the device is a CPU (``CPU()``, an OpenCL CPU device such as
    #: PoCL): code above the backends that shapes work for the device (the building
    #: blocks' per-work-item chunks) reads this instead of asking for backend classes.
    cpu_device: ClassVar[bool] = False
    #: **May.** True when :meth:`launch` runs exactly the work-items of the ndrange,
    #: whatever the workgroup shape (``global_size`` is then the ndrange itself, in
    #: hardware order, and kernels come without the bounds mask): a host loop that
    #: clips its last group, like the CPU's native path. An instance may set it.
    clips_ndrange: bool = False
    #: **May.** A folder holding ``<target>/`` template folders (``macros.j2``,
    #: ``prelude.j2``, ``module.j2``). It is put ahead of portakern's own folder
    #: when the class is created: a new target, or single files overriding an
    #: existing target's (for every backend of that target, not only this one).
    templates: ClassVar[str | PathLike | None] = None

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("templates") is not None:
            from ..render.emit import add_template_dir

            add_template_dir(str(cls.__dict__["templates"]))
        if abstract or cls.__dict__.get("_abstract", False):
            return
        missing = [m for m in MUST if _defined_by(cls, m) is Backend]
        if missing:
            raise TypeError(
                f"backend {cls.__module__}.{cls.__qualname__} must implement "
                f"{', '.join(missing)} (the backend contract: portakern.backends.base.Backend)")
        unset = [a for a in ("name", "target") if _defined_by(cls, a) is Backend]
        if unset:
            raise TypeError(
                f"backend {cls.__module__}.{cls.__qualname__} must set the class attribute"
                f"{'s' if len(unset) > 1 else ''} {' and '.join(repr(a) for a in unset)} "
                f"(e.g. name = 'MyGPU', target = 'opencl')")

    # -- must ---------------------------------------------------------------------
    @classmethod
    def available(cls) -> Availability:
        """**Must.** Whether this backend can run here, and if not, why and the fix.

        A classmethod: it must not need an instance, and must not raise. The
        reason names what is missing and the command that installs it.
        """
        raise NotImplementedError

    def compile(self, rendered: Any) -> Any:
        """**Must.** Compile a :class:`~portakern.render.emit.RenderedKernel`; return a handle.

        Raise :class:`~portakern.errors.CompilationError` with the compiler log
        and the vendor exception as ``__cause__``. The launcher caches the handle
        per ``(cache_key, type bindings, ndim)``, so this runs once per variant.
        """
        raise NotImplementedError

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        """**Must.** Enqueue ``compiled`` over a hardware grid.

        ``args`` holds, in parameter order, :attr:`ArrayInfo.handle` for arrays,
        NumPy scalars of the declared dtype for scalars, then one ``int64`` per
        ndrange axis. Sizes are in work-items, hardware axis order (x first), and
        ``global_size`` is already a multiple of ``local_size``. Return at once on
        an asynchronous device; block until done if :attr:`synchronous`.
        """
        raise NotImplementedError

    def array_info(self, array: Any) -> ArrayInfo | None:
        """**Must.** Describe ``array`` if this backend can launch on it, else None.

        Return None (never raise) for an object of another library: the launcher
        turns that into an error naming the argument and the backend it belongs to.
        """
        raise NotImplementedError

    def synchronize(self) -> None:
        """**Must.** Wait until every launch enqueued by this backend has finished."""
        raise NotImplementedError

    def allocate(self, shape: Any, dtype: Any) -> Any:
        """**Must.** An uninitialised C-contiguous array of this backend."""
        raise NotImplementedError

    def to_device(self, array: np.ndarray) -> Any:
        """**Must.** Copy a NumPy array to a new C-contiguous array of this backend."""
        raise NotImplementedError

    def to_host(self, array: Any) -> np.ndarray:
        """**Must.** Copy an array of this backend to a new NumPy array.

        Waits for pending launches that write ``array``, so the copy is current.
        """
        raise NotImplementedError

    # -- should -------------------------------------------------------------------
    def null_array(self) -> Any:
        """**Should.** The launch handle of an optional array passed None (a null pointer).

        The default, None, is what :meth:`launch` gets for an empty array with no
        buffer; a backend that launches handles of another kind returns its own.
        """
        return None

    def zeros(self, shape: Any, dtype: Any) -> Any:
        """**Should.** A zero-filled array (the default copies zeros from the host)."""
        return self.to_device(np.zeros(shape, dtype))

    def max_workgroup_size(self, compiled: Any) -> int:
        """**Should.** The largest workgroup (in work-items) ``compiled`` may use.

        The default, 256, is safe on every current GPU but wastes larger devices.
        """
        return 256

    def max_workitem_sizes(self) -> tuple[int, ...]:
        """**Should.** The largest workgroup extent per hardware axis (x, y, z)."""
        return (1024, 1024, 64)

    @property
    def limits(self) -> Limits:
        """**Should.** The device's :class:`Limits` (``backend.limits.local_memory``).

        The default is what every OpenCL 1.2 GPU guarantees: the workgroup size of
        :meth:`max_workgroup_size`, 32 KiB of local memory, subgroups of 32, one
        compute unit. Backends report their device's own figures.
        """
        return Limits(Backend.max_workgroup_size(self, None), 32 * 1024, 32, 1)

    def supports(self, feature: str) -> bool:
        """**Should.** Whether the device has ``feature`` (one of :data:`FEATURES`).

        Asked before launch (``"float64"``, ``"float16"`` for array and scalar
        types) and by the conformance suite (``"int64_atomics"``). The default
        claims everything, so a device without float64 fails in its compiler
        instead of with a clear message.
        """
        return True

    @property
    def cache_key(self) -> Any:
        """**Should.** Identifies the device and context that compiled code is valid for.

        Backends that share a context should return equal keys, so they share
        compiled kernels; backends with different :attr:`target` must not (a
        plugin subclassing an in-tree backend for a new target adds its target to
        the key). The default is per object, which is always safe.
        """
        return (type(self), id(self))

    # -- may ----------------------------------------------------------------------
    @classmethod
    def for_array(cls, array: Any) -> Backend:
        """**May.** The backend object that owns ``array``.

        Resolution (:func:`portakern.get_backend`) calls this on the class
        registered for the array's type. The default returns one shared instance
        (:func:`default_instance`); override it when the answer depends on the
        array (its device, stream or queue), or to hand an array the class
        cannot run on to another backend.
        """
        return default_instance(cls)

    def timed_launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
                     local_size: tuple[int, ...]) -> Any:
        """**May.** Launch as :meth:`launch` does, and measure the kernel's time.

        Called instead of :meth:`launch` inside ``pk.timed()`` (never on the
        untimed path, so it may cost more). Return the kernel's elapsed seconds,
        or a callable that waits for the launch and returns them (an asynchronous
        device: an event pair or a profiling event), or None when this backend
        cannot measure. The default times the call on a :attr:`synchronous`
        backend (the launch has finished when it returns) and returns None on
        others; a backend with device-side timers should override it.
        """
        if not self.synchronous:
            self.launch(compiled, args, global_size, local_size)
            return None
        start = time.perf_counter()
        self.launch(compiled, args, global_size, local_size)
        return time.perf_counter() - start

    def prepare_launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
                       local_size: tuple[int, ...]) -> Any:
        """**May.** A function ``run(args)`` that launches as :meth:`launch` would, cheaper.

        A launcher calls it once after a launch, and then calls ``run`` instead of
        :meth:`launch` for a later launch of the same ``compiled`` and sizes whose
        arrays it has checked to be the very arrays of ``args`` (the same objects,
        alive, with the same dtype, shape and flags); scalars and the ndrange
        arguments may be other objects, and ``run`` must launch with them; ``run()``
        without arguments launches ``args`` as given here (the launcher has checked
        that the scalars too are the very objects). So
        everything ``run`` derives from the arrays (pointers, buffers) can be worked
        out here, once. It must hold no reference that keeps an array alive. The
        default, None, means every launch goes through :meth:`launch`.
        """
        return None

    def executor(self, kernel: Any) -> Backend:
        """**May.** The backend that compiles and launches ``kernel`` for this one.

        A launcher asks once, on its first launch, and then checks arguments,
        compiles (in the executor's :attr:`target`) and launches through the
        answer. The default is ``self``; ``CPU()`` answers with its native C++
        path or itself (PoCL), per kernel. An executor takes this backend's arrays.
        """
        return self

    @classmethod
    def describe(cls, start: bool = True) -> str:
        """**May.** What runs this backend's kernels, for ``portakern info`` and ``demo``.

        ``start=False`` asks for an answer that starts no runtime. Default: empty.
        """
        return ""

    def default_workgroupsize(self, ndrange: tuple[int, ...], compiled: Any) -> tuple[int, ...]:
        """**May.** The workgroup shape used when the caller gives none.

        ``compiled`` is None when the shape decides which variant to compile
        (:attr:`unmask_exact`); use the device's limits then. The default fills
        the last (fastest) axis first, up to :attr:`preferred_group_size`
        work-items, in powers of two. A launcher checks the sizes a caller or a
        kernel gives against :meth:`max_workgroup_size` and
        :meth:`max_workitem_sizes`, not this answer: a backend may choose a group
        larger than it lets a caller ask for (the native CPU path does, docs/cpu.md).
        """
        limit = 256 if compiled is None else self.max_workgroup_size(compiled)
        return pow2_groups(ndrange, min(self.preferred_group_size, limit),
                           self.max_workitem_sizes())

    # -- provided -----------------------------------------------------------------
    def check_available(self) -> None:
        """Raise :class:`~portakern.errors.BackendUnavailableError` if unavailable.

        Called before every launch, so a positive answer is remembered per
        class: probing drivers costs far more than a launch.
        """
        cls = type(self)
        if cls in _AVAILABLE:
            return
        status = self.available()
        if not status:
            raise BackendUnavailableError(f"{self.name} backend unavailable: {status.reason}")
        _AVAILABLE.add(cls)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    # -- pickling (by recipe) ---------------------------------------------------------
    def pickle_recipe(self) -> tuple[tuple, dict] | None:
        """**May.** The constructor arguments ``(args, kwargs)`` that rebuild this backend.

        A backend pickles as its class and this recipe, and is rebuilt (one object
        per recipe and process) where it arrives: ``CPU()`` as ``()``,
        ``CUDA(device)`` by its ordinal. ``None`` (the default for a plugin
        backend) pickles the object's state the ordinary way. Raise ``TypeError``
        naming the fix when the backend cannot travel (``OpenCL(queue)``).
        """
        return None

    def __reduce_ex__(self, protocol: Any) -> Any:
        recipe = self.pickle_recipe()
        if recipe is None:
            return object.__reduce_ex__(self, protocol)
        from .recipes import rebuild_backend

        args, kwargs = recipe
        return rebuild_backend, (type(self), tuple(args), tuple(sorted(kwargs.items())))

    def __dask_tokenize__(self) -> str:
        from .recipes import backend_token

        return backend_token(self)


def pow2_groups(ndrange: tuple[int, ...], budget: int,
                items: tuple[int, ...]) -> tuple[int, ...]:
    """A workgroup shape of powers of two, at most ``budget`` work-items.

    The last (fastest) axis is filled first, never beyond its extent rounded up
    to a power of two, nor beyond the device's per-axis limit ``items`` (in
    hardware order, x first).
    """
    sizes = [1] * len(ndrange)
    for d in range(len(ndrange) - 1, -1, -1):
        want = 1
        while want < ndrange[d] and want * 2 <= budget:
            want *= 2
        hw = len(ndrange) - 1 - d
        sizes[d] = max(1, min(want, items[hw] if hw < len(items) else 1))
        budget = max(1, budget // sizes[d])
    return tuple(sizes)


#: Group extents exact_groups tries, largest first: powers of two and their multiples of
#: 5 and 3, which divide the sizes people use. A short fixed list also bounds how many
#: work-group functions PoCL compiles (one per local size).
_EXACT_SIZES = (2048, 2000, 1600, 1536, 1280, 1250, 1024, 1000, 800, 768, 640, 625, 600, 512,
                500, 400, 384, 320, 300, 256, 250, 200, 192, 160, 150, 128, 125, 120, 100, 96,
                80, 75, 64, 60, 50, 48, 40, 32, 25, 24, 20, 16, 15, 12, 10, 8, 6, 5, 4, 3, 2, 1)


def exact_groups(ndrange: tuple[int, ...], limit: int, items: tuple[int, ...],
                 cores: int) -> tuple[int, ...] | None:
    """A workgroup shape that divides every ndrange axis, or None if only tiny ones do.

    For CPUs, which run one work-group as a loop on one core (PoCL, and the
    native path's barrier kernels): large groups amortise the
    per-group cost (up to 2048 items measured best), while at least four groups
    per core keep the cores busy. The last (fastest) axis is filled first, so
    the loop walks contiguous memory.
    """
    total = math.prod(ndrange)
    budget = min(limit, 2048, max(64, total // (4 * max(cores, 1))))
    sizes = [1] * len(ndrange)
    for d in range(len(ndrange) - 1, -1, -1):
        hw = len(ndrange) - 1 - d
        cap = min(budget, items[hw] if hw < len(items) else 1)
        n = ndrange[d]
        sizes[d] = next((s for s in _EXACT_SIZES if s <= cap and n % s == 0), 1)
        budget = max(1, budget // sizes[d])
    if math.prod(sizes) < min(total, 64):
        return None  # e.g. a prime length: thousands of one-item groups cost more than a mask
    return tuple(sizes)


def cpu_groups(ndrange: tuple[int, ...], limit: int, items: tuple[int, ...], cores: int,
               preferred: int) -> tuple[int, ...]:
    """A CPU's default workgroup: :func:`exact_groups`, else :func:`pow2_groups`."""
    return (exact_groups(ndrange, limit, items, cores)
            or pow2_groups(ndrange, min(preferred, limit), items))
