"""The backend contract.

A backend turns a rendered kernel into something that runs, and runs it. The
kernel language is lowered once, above the backends (:mod:`portakern.lower`);
a backend only supplies primitives: how to compile a rendered source, how to
see an array, how to launch over a hardware grid.

Each method below says whether a backend **must**, **should** or **may**
implement it. A subclass that misses a *must* fails at class creation with a
message naming the method (see :meth:`Backend.__init_subclass__`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ..errors import BackendUnavailableError

__all__ = ["Backend", "ArrayInfo", "Availability", "MUST"]

#: Methods every backend must implement (checked when the subclass is created).
MUST = ("available", "compile", "launch", "array_info", "synchronize", "allocate",
        "to_device", "to_host")


class Availability(NamedTuple):
    """Whether a backend can run here; ``reason`` says why not and how to fix it."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class ArrayInfo:
    """What the launcher needs to know about one array argument."""

    dtype: np.dtype
    shape: tuple[int, ...]
    c_contiguous: bool
    writable: bool
    handle: Any  # what the backend passes to the device (buffer, pointer, array)


class Backend:
    """Base class of every backend. See the module docstring for the contract.

    Class attributes a backend **must** set: ``name`` (short, e.g. ``"CPU"``) and
    ``target`` (``"opencl"``, ``"cuda"``, ``"metal"`` or a plugin's own target).
    """

    name: ClassVar[str] = "backend"
    target: ClassVar[str] = ""
    #: Workgroup size (work-items) used to build a default workgroup shape.
    preferred_group_size: ClassVar[int] = 256
    #: True when a launch has finished by the time it returns.
    synchronous: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_abstract", False):
            return
        missing = [m for m in MUST if getattr(cls, m) is getattr(Backend, m)]
        if missing:
            raise TypeError(
                f"backend {cls.__qualname__} must implement {', '.join(missing)} "
                f"(see portakern.backends.base.Backend)")
        if not cls.target:
            raise TypeError(f"backend {cls.__qualname__} must set the class attribute 'target'")

    # -- must ---------------------------------------------------------------------
    @classmethod
    def available(cls) -> Availability:
        """**Must.** Whether this backend can run here, and if not, why and the fix."""
        raise NotImplementedError

    def compile(self, rendered: Any) -> Any:
        """**Must.** Compile a :class:`~portakern.render.RenderedKernel`; return a handle.

        Raise :class:`~portakern.errors.CompilationError` with the compiler log
        and the vendor exception as ``__cause__``. Caching is the caller's job.
        """
        raise NotImplementedError

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        """**Must.** Enqueue ``compiled`` over a hardware grid.

        ``args`` holds, in parameter order, :class:`ArrayInfo.handle` for arrays,
        NumPy scalars of the declared dtype for scalars, then one ``int64`` per
        ndrange axis. Sizes are in work-items, hardware axis order (x first), and
        ``global_size`` is already a multiple of ``local_size``.
        """
        raise NotImplementedError

    def array_info(self, array: Any) -> ArrayInfo | None:
        """**Must.** Describe ``array`` if this backend can launch on it, else None."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """**Must.** Wait until every launch enqueued by this backend has finished."""
        raise NotImplementedError

    def allocate(self, shape: Any, dtype: Any) -> Any:
        """**Must.** An uninitialised array of this backend."""
        raise NotImplementedError

    def to_device(self, array: np.ndarray) -> Any:
        """**Must.** Copy a NumPy array to a new array of this backend."""
        raise NotImplementedError

    def to_host(self, array: Any) -> np.ndarray:
        """**Must.** Copy an array of this backend to a new NumPy array."""
        raise NotImplementedError

    # -- should -------------------------------------------------------------------
    def zeros(self, shape: Any, dtype: Any) -> Any:
        """**Should.** A zero-filled array (the default copies zeros from the host)."""
        return self.to_device(np.zeros(shape, dtype))

    def max_workgroup_size(self, compiled: Any) -> int:
        """**Should.** The largest workgroup (in work-items) ``compiled`` may use."""
        return 256

    def max_workitem_sizes(self) -> tuple[int, ...]:
        """**Should.** The largest workgroup extent per hardware axis (x, y, z)."""
        return (1024, 1024, 64)

    def supports(self, feature: str) -> bool:
        """**Should.** Whether the device has ``feature`` (``"float64"``, ``"int64_atomics"``)."""
        return True

    @property
    def cache_key(self) -> Any:
        """**Should.** Identifies the device and context that compiled code is valid for."""
        return (type(self), id(self))

    # -- may ----------------------------------------------------------------------
    def default_workgroupsize(self, ndrange: tuple[int, ...], compiled: Any) -> tuple[int, ...]:
        """**May.** The workgroup shape used when the caller gives none.

        The default fills the last (fastest) axis first, up to
        :attr:`preferred_group_size` work-items, in powers of two.
        """
        budget = min(self.preferred_group_size, self.max_workgroup_size(compiled))
        limits = self.max_workitem_sizes()
        sizes = [1] * len(ndrange)
        for d in range(len(ndrange) - 1, -1, -1):
            want = 1
            while want < ndrange[d] and want * 2 <= budget:
                want *= 2
            hw = len(ndrange) - 1 - d
            want = min(want, limits[hw] if hw < len(limits) else 1)
            sizes[d] = max(1, want)
            budget = max(1, budget // sizes[d])
        return tuple(sizes)

    def check_available(self) -> None:
        """Raise :class:`BackendUnavailableError` with the reason if unavailable."""
        status = self.available()
        if not status:
            raise BackendUnavailableError(f"{self.name} backend unavailable: {status.reason}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


Backend._abstract = True  # type: ignore[attr-defined]
