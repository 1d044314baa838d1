"""What a launch returns, and ``pk.timed()``: per-kernel times for a block of code.

Every launch returns a :class:`Launch`. Outside ``pk.timed()`` it is one object per
launcher, made once (the warm launch path allocates nothing for it): ``wait()``
synchronizes the backend, and ``elapsed`` is None. Inside ``with pk.timed() as t:``
each launch goes through the backend's :meth:`~portakern.backends.base.Backend.timed_launch`
and returns a handle of its own whose ``elapsed`` is the kernel's time where the
backend can measure it: the wall clock of the call on a synchronous backend
(``CPU()``: the foreign call of the native path, or the OpenCL launch and wait),
profiling events on an OpenCL queue made with profiling enabled, CUDA events on
``CUDA``; None elsewhere (Metal, an OpenCL queue without profiling).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NamedTuple

from ..subprocesses import fork_safe_lock

if TYPE_CHECKING:
    from types import TracebackType

    from ..backends.base import Backend

__all__ = ["KernelTime", "Launch", "Timings", "note_workgroup", "private", "timed"]

#: What :meth:`Backend.timed_launch` returns: seconds, a callable that waits for the
#: launch and returns its seconds (or None), or None when the backend cannot measure.
Measurement = float | Callable[[], float | None] | None

#: How many ``timed()`` blocks are open in any thread; the launch path reads only this
#: while it is 0.
active = 0
_ACTIVE_LOCK = fork_safe_lock()
#: The collectors open in this thread (or asyncio task), innermost last.
_COLLECTORS: ContextVar[tuple[Timings, ...]] = ContextVar("portakern_timed", default=())


class Launch:
    """The handle a launch returns (an event): :meth:`wait`, and :attr:`elapsed`.

    Attributes
    ----------
    kernel : str
        The kernel's name.
    backend : Backend
        The backend it was launched on (``CPU()``, ``CUDA(device=0)``, ...).
    outputs : tuple
        The arrays the launch allocated for :class:`~portakern.launch.outputs.Output`
        arguments, in parameter order (empty when none was asked for).
    """

    __slots__ = ("kernel", "backend", "_measured", "outputs")

    def __init__(self, kernel: str, backend: Backend, measured: Measurement = None,
                 outputs: tuple = ()) -> None:
        self.kernel = kernel
        self.backend = backend
        self._measured = measured
        self.outputs = outputs

    @property
    def output(self) -> Any:
        """The one array the launch allocated (:attr:`outputs` holds several)."""
        if len(self.outputs) != 1:
            raise AttributeError(
                f"this launch of {self.kernel!r} allocated {len(self.outputs)} arrays: read "
                f"them from .outputs (in parameter order)")
        return self.outputs[0]

    def wait(self) -> Launch:
        """Wait until this launch has finished (at once on ``CPU()``); return the handle."""
        if callable(self._measured):
            self._measured = self._measured()
        else:
            self.backend.synchronize()
        return self

    @property
    def elapsed(self) -> float | None:
        """The kernel's time in seconds, waiting for it if needed; None if not measured.

        Measured for launches inside :func:`timed`, on backends that can measure
        (see :mod:`portakern.launch.timing`).
        """
        if callable(self._measured):
            self._measured = self._measured()
        return self._measured

    def __repr__(self) -> str:
        measured = self._measured
        if callable(measured):
            time = "pending"
        elif measured is None:
            time = "not measured"
        else:
            time = _fmt(measured)
        return f"<portakern.Launch {self.kernel} on {self.backend!r}: {time}>"


class KernelTime(NamedTuple):
    """One kernel's launches in a :class:`Timings` block (times in seconds)."""

    kernel: str
    backend: str
    launches: int
    #: Launches whose time the backend measured (the others count in ``launches`` only).
    measured: int
    total: float
    mean: float | None
    best: float | None
    #: The workgroup size ``workgroupsize="auto"`` chose for it in the block (the last
    #: one, ndrange order), or None where no launch asked for one.
    workgroupsize: tuple[int, ...] | None = None


class Timings:
    """The launches of a ``with pk.timed() as t:`` block, and their times.

    Leaving the block waits for the launches made in it (their times are then
    known). Launches made by other threads are not collected.
    """

    def __init__(self, alone: bool = False) -> None:
        #: Every launch made in the block, in order.
        self.launches: list[Launch] = []
        #: Kernel name -> the workgroup size ``workgroupsize="auto"`` chose in the block.
        self.workgroupsizes: dict[str, Any] = {}
        self._token: Any = None
        self._alone = alone

    def __enter__(self) -> Timings:
        global active
        outer = () if self._alone else _COLLECTORS.get()
        self._token = _COLLECTORS.set((*outer, self))
        with _ACTIVE_LOCK:
            active += 1
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        global active
        _COLLECTORS.reset(self._token)
        with _ACTIVE_LOCK:
            active -= 1
        if kind is None:
            self.wait()

    def wait(self) -> Timings:
        """Wait for every launch of the block (their times become known)."""
        for launch in self.launches:
            launch.elapsed  # noqa: B018 - resolves a pending measurement
        return self

    @property
    def total(self) -> float:
        """Seconds, summed over every measured launch."""
        return sum(launch.elapsed or 0.0 for launch in self.launches)

    def per_kernel(self) -> dict[str, KernelTime]:
        """Per kernel (and backend, when one kernel ran on several): launches and times."""
        groups: dict[tuple[str, str], list[float | None]] = {}
        for launch in self.launches:
            groups.setdefault((launch.kernel, repr(launch.backend)), []).append(launch.elapsed)
        several = {k for k, _ in groups if sum(1 for k2, _ in groups if k2 == k) > 1}
        out = {}
        for (kernel, backend), times in groups.items():
            got = [t for t in times if t is not None]
            key = f"{kernel} on {backend}" if kernel in several else kernel
            out[key] = KernelTime(kernel, backend, len(times), len(got), sum(got),
                                  sum(got) / len(got) if got else None,
                                  min(got) if got else None, self.workgroupsizes.get(kernel))
        return out

    def summary(self) -> str:
        """A table: each kernel's launches, total, mean and best time, slowest first."""
        rows = sorted(self.per_kernel().values(), key=lambda r: -r.total)
        width = max([len("kernel"), *(len(r.kernel) for r in rows)])
        lines = [f"{'kernel':<{width}}  {'backend':<16} {'launches':>8} {'total':>10} "
                 f"{'mean':>10} {'best':>10}"]
        for r in rows:
            if r.measured:
                times = f"{_fmt(r.total):>10} {_fmt(r.mean):>10} {_fmt(r.best):>10}"
                if r.measured < r.launches:
                    times += f"  ({r.launches - r.measured} not measured)"
            else:
                times = f"{'not measured on this backend':>32}"
            lines.append(f"{r.kernel:<{width}}  {r.backend:<16} {r.launches:>8} {times}")
        lines.append(f"{len(self.launches)} launches, {_fmt(self.total)} measured in all")
        for kernel, wg in self.workgroupsizes.items():
            lines.append(f'{kernel}: workgroupsize="auto" chose {wg}')
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<portakern.Timings: {len(self.launches)} launches>"


def timed() -> Timings:
    """Collect the launches of a block of code and their times.

    ``with pk.timed() as t: ...`` then ``print(t.summary())``, ``t.per_kernel()`` or
    ``t.total``. Launches inside the block each return a handle of their own, whose
    ``elapsed`` the backend measures (:mod:`portakern.launch.timing` says how, per backend);
    leaving the block waits for them. Blocks nest: an inner block's launches are
    collected by the outer block too.
    """
    return Timings()


def private() -> Timings:
    """A block that collects its own launches only: outer ``timed()`` blocks do not see
    them (the candidate launches of ``workgroupsize="auto"``, :mod:`.auto`)."""
    return Timings(alone=True)


def note_workgroup(kernel: str, workgroupsize: Any) -> None:
    """Record, in the blocks open here, the size ``workgroupsize="auto"`` chose."""
    for collector in _COLLECTORS.get():
        collector.workgroupsizes[kernel] = workgroupsize


def launch_timed(backend: Backend, user_backend: Backend, name: str, compiled: Any,
                 args: list[Any], global_size: tuple[int, ...],
                 local_size: tuple[int, ...]) -> Launch | None:
    """Launch through ``backend.timed_launch`` if a ``timed()`` block is open here.

    Returns None (and launches nothing) when none is: the caller launches as usual.
    """
    collectors = _COLLECTORS.get()
    if not collectors:
        return None  # a block is open, in another thread
    handle = Launch(name, user_backend,
                    backend.timed_launch(compiled, args, global_size, local_size))
    for collector in collectors:
        collector.launches.append(handle)
    return handle


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"
