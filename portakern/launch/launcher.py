"""Launching: a kernel bound to a backend, its launch plans, and the ndrange checks.

A :class:`Launcher` checks a call's arguments (:mod:`portakern.launch.arguments`),
compiles the variant the bindings and the ndrange need, and works out a
:class:`LaunchPlan` (the hardware grid and workgroup) once per combination of
bindings, ndrange and workgroup size; a warm launch is a dictionary lookup and
the backend's ``launch``, and the same arrays again are one closure's identity
checks and the backend's prepared launch (:func:`_hot_launch`).
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from .. import log
from ..analysis import bounds, local_bounds
from ..backends.base import Backend
from ..errors import (
    CompilationError,
    KernelTypeError,
    NativeFallbackWarning,
    NDRangeError,
    TargetRefusal,
    user_stacklevel,
)
from ..syntax.language import KernelDef, declared_workgroup
from . import auto, timing
from .arguments import check_args, located, prepare, recall, remember
from .fallback import fallback_message, with_compiler_error
from .outputs import Output, bind_named, with_outputs
from .timing import Launch

#: The kernel a launcher is made for (a :class:`portakern.Kernel`; portakern.kernels
#: imports this module, so the type is not imported back).
Kernel = Any

__all__ = ["LaunchPlan", "Launcher", "normalize_ndrange", "normalize_workgroup"]


class LaunchPlan(NamedTuple):
    """What a launch with given bindings, ndrange and workgroup size runs.

    ``global_size`` and ``local_size`` are in hardware order (x first); ``sizes``
    are the ndrange extents passed to the kernel as its trailing arguments.
    """

    compiled: Any
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    sizes: tuple[np.int64, ...]


def normalize_ndrange(nd: Any, what: str = "ndrange") -> tuple[int, ...]:
    if nd is None:
        raise NDRangeError(
            f"pass {what}=... (the shape of the index space, e.g. {what}=y.shape)")
    if isinstance(nd, (int, np.integer)) and not isinstance(nd, (bool, np.bool_)):
        nd = (nd,)
    if not isinstance(nd, (tuple, list)):
        raise NDRangeError(f"{what} must be an int or a tuple of 0-3 ints, got {nd!r}")
    if len(nd) > 3:
        raise NDRangeError(f"{what} has {len(nd)} axes; at most 3 are supported, got {tuple(nd)}")
    out = []
    for d, n in enumerate(nd):
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
            raise NDRangeError(f"{what}[{d}] must be an int, got {n!r}")
        if n < 0:
            raise NDRangeError(f"{what}[{d}] must be >= 0, got {int(n)}")
        out.append(operator.index(n))
    return tuple(out)


def normalize_workgroup(wg: Any, ndim: int) -> tuple[int, ...] | None:
    if wg is None or type(wg) is str and wg == "auto":  # "auto": chosen in launch/auto.py
        return None
    if isinstance(wg, (int, np.integer)) and not isinstance(wg, (bool, np.bool_)):
        # An int sizes the fastest (last) axis; the other axes get 1.
        if ndim == 0 and int(wg) != 1:
            raise NDRangeError("a 0-axis ndrange runs one work-item; workgroupsize must be 1")
        wg = (1,) * max(ndim - 1, 0) + (int(wg),) if ndim else ()
    if not isinstance(wg, (tuple, list)):
        raise NDRangeError(f'workgroupsize must be an int, a tuple of ints or "auto", got {wg!r}')
    if len(wg) != ndim:
        raise NDRangeError(
            f"workgroupsize {tuple(wg)} has {len(wg)} axes but the ndrange has {ndim}")
    out = []
    for d, w in enumerate(wg):
        if isinstance(w, (bool, np.bool_)) or not isinstance(w, (int, np.integer)) or w < 1:
            raise NDRangeError(f"workgroupsize[{d}] must be an int >= 1, got {w!r}")
        out.append(int(w))
    return tuple(out)


class Launcher:
    """A kernel bound to a backend (and optionally a static workgroup size / ndrange).

    Calling it checks every argument, then launches. On ``CPU()`` the call returns
    once the kernel has finished; on GPU backends it returns at once (call
    ``backend.synchronize()``).
    """

    def __init__(self, kernel: Kernel, backend: Backend, workgroupsize: Any = None,
                 ndrange: Any = None) -> None:
        if not isinstance(backend, Backend):
            raise KernelTypeError(f"expected a portakern backend, got {type(backend).__name__}")
        self.kernel = kernel
        self.backend = backend
        self.static_ndrange = None if ndrange is None else normalize_ndrange(ndrange)
        self.static_workgroupsize = workgroupsize
        self.plans: dict[tuple, tuple | None] = {}
        #: (bindings, rank) -> the kernel's facts for CPU()'s default workgroup.
        self._group_facts: dict[tuple, Any] = {}
        self._memo: tuple | None = None
        #: (kdef, its bounds fact, memo, ndrange) last checked (:func:`bounds.checked`).
        self._bounds: tuple = (None, frozenset(), None, None)
        # The backend that runs this kernel for ``backend``: itself, or the one its
        # ``executor(kernel)`` picks (CPU(): the native path or PoCL), on first launch.
        self.runner: Backend | None = None
        #: What an untimed launch returns (:meth:`_handle`).
        self._done: Launch | None = None
        #: (memo, plan, run, ndrange, workgroupsize, tried): the backend's prepared launch
        #: (:func:`~portakern.launch.arguments.prepare`) of the arrays ``memo`` remembers, with
        #: that plan; ``run`` is None until the second launch of the two in a row.
        self._prepared: tuple | None = None
        #: (memo, prepared, ndrange as passed, workgroupsize, ndrange args): the last
        #: launch that ran prepared, for the next with the same ndrange and workgroup
        #: size (see :meth:`warm`); valid while ``memo``/``prepared`` are current.
        self._fast: tuple | None = None
        #: ``hot(args, ndrange, workgroupsize)``: the launch ``_fast`` describes, as one
        #: closure over what it checks (:func:`_hot_launch`); None when there is none.
        self._hot: Any = None
        if workgroupsize is not None:
            ndim = len(self.static_ndrange) if self.static_ndrange is not None else None
            if ndim is not None:
                normalize_workgroup(workgroupsize, ndim)
            elif not isinstance(workgroupsize, (int, np.integer, tuple, list)):
                normalize_workgroup(workgroupsize, 1)

    def __repr__(self) -> str:
        return f"<portakern.Launcher {self.kernel.name} on {self.backend!r}>"

    def __reduce__(self) -> tuple:
        """Pickle as kernel, backend and static sizes; rebuilt (interned) on arrival."""
        from .recipes import intern_launcher, launcher_recipe, rebuild_launcher

        intern_launcher(self)
        return rebuild_launcher, (type(self), *launcher_recipe(self))

    def __dask_tokenize__(self) -> str:
        from .recipes import launcher_token

        return launcher_token(self)

    def _ndrange(self, ndrange: Any) -> tuple[int, ...]:
        if ndrange is None:
            if self.static_ndrange is None:
                return normalize_ndrange(None)
            return self.static_ndrange
        if type(ndrange) is tuple and len(ndrange) <= 3:
            # What launches pass (y.shape): already normal, as normalize_ndrange sees it.
            for n in ndrange:
                if type(n) is not int or n < 0:
                    break
            else:
                if self.static_ndrange is None or ndrange == self.static_ndrange:
                    return ndrange
        nd = normalize_ndrange(ndrange)
        if self.static_ndrange is not None and nd != self.static_ndrange:
            raise NDRangeError(
                f"ndrange={nd} conflicts with the static ndrange {self.static_ndrange} given "
                f"when the launcher was made; pass one or the other")
        return nd

    def _workgroup(self, wg: Any, ndim: int) -> tuple[int, ...] | None:
        static = normalize_workgroup(self.static_workgroupsize, ndim)
        dynamic = normalize_workgroup(wg, ndim)
        if static is not None and dynamic is not None and static != dynamic:
            raise NDRangeError(
                f"workgroupsize={dynamic} conflicts with the static workgroupsize {static} "
                f"given when the launcher was made; pass one or the other")
        return dynamic or static

    def _route(self) -> Backend:
        runner = self.backend.executor(self.kernel)
        log.path(self.kernel, self.backend, runner)
        self.runner = runner
        return runner

    def __call__(self, *args: Any, ndrange: Any = None, workgroupsize: Any = None,
                 **named: Any) -> Launch:
        """Check the arguments and launch; return the launch's handle (:class:`Launch`).

        Arguments may name their parameters (``y=y``); a :class:`~.outputs.Output` in an
        array's place is allocated by the launch and returned in ``Launch.outputs``.
        """
        if named:
            args = bind_named(self.kernel, args, named)
        hot = self._hot
        if hot is not None:
            done = hot(args, ndrange, workgroupsize)
            if done is not None:
                return done
        done = self._recalled(args, ndrange, workgroupsize)
        if done is not None:
            return done
        return self._run(args, ndrange, workgroupsize)

    def run_args(self, args: tuple, ndrange: Any = None, workgroupsize: Any = None) -> Launch:
        """``self(*args, ndrange=..., workgroupsize=...)`` with the arguments as one tuple.

        What a direct call (``kernel(*args, ndrange=...)``) forwards to, without
        packing the arguments again.
        """
        done = self.warm(args, ndrange, workgroupsize)
        if done is not None:
            return done
        return self._run(args, ndrange, workgroupsize)

    def _run(self, args: tuple, ndrange: Any, workgroupsize: Any) -> Launch:
        """:meth:`run_args` past the warm path: check, plan and launch."""
        if Output in map(type, args):  # arrays the launch allocates (launch.outputs)
            full, made = with_outputs(self.kernel, self.backend, args)
            done = self._run(full, ndrange, workgroupsize)
            return Launch(done.kernel, done.backend, done._measured, made)
        if type(workgroupsize) is str or type(self.static_workgroupsize) is str:
            workgroupsize = auto.chosen(self, args, ndrange, workgroupsize)  # "auto"
        nd = self._ndrange(ndrange)
        backend = self.runner or self._route()
        kdef = self.kernel.parsed(backend.target)[1]
        memo = self._memo
        debug = self.kernel.debug  # the record needs each array's shape: checked in full
        hit = recall(memo, args, backend) if memo is not None and not debug else None
        if hit is None:
            infos: dict = {}
            launch_args, bindings = check_args(kdef, args, backend, self.kernel.constants,
                                                infos, self.kernel.labels, self.kernel.template)
            self._hot = None
            self._memo = remember(kdef, args, launch_args, bindings, self.kernel.constants,
                                   infos)
        else:
            launch_args, bindings = hit
        seen = self._bounds  # an ndrange that provably overruns an array is refused
        if seen[0] is not kdef or seen[1] and (hit is None or seen[2] is not memo
                                               or seen[3] != nd):
            self._bounds = bounds.checked(self.kernel.parsed(backend.target), seen, args, nd,
                                          None if hit is None else memo)
        # The arrays, ndrange and workgroup size of the last launches (a recalled memo):
        # the backend's prepared launch, which took the arrays' pointers once (DESIGN
        # section 4: a warm CPU() launch under 3 us). The plan is the one they gave.
        prepared = self._prepared
        if hit is not None and prepared is not None and prepared[0] is memo \
                and prepared[2] is not None and prepared[3] == nd \
                and prepared[4] is workgroupsize and not timing.active:
            launch_args.extend(prepared[1].sizes)
            prepared[2](launch_args)
            given = ndrange if ndrange is None else nd
            fast = self._fast
            if self._hot is None or fast[0] is not memo or fast[1] is not prepared \
                    or fast[2] != given or fast[3] is not workgroupsize:
                # Prepared again for these very scalars: the hot path calls ``run()``.
                self._warm_up(prepare(backend, memo, prepared[1], launch_args), args,
                              given, workgroupsize)
            return self._done or self._handle()
        # What follows the argument checks depends only on the bindings, the ndrange
        # and the workgroup size, so it is worked out once per combination: a warm
        # launch costs a dict lookup here (DESIGN section 4: overhead <= 1.3x PyOpenCL).
        wg_key = workgroupsize
        if type(workgroupsize) is tuple and all(type(w) is int for w in workgroupsize):
            pass
        elif workgroupsize is not None and type(workgroupsize) is not int:
            wg_key = _UNCACHED  # floats, bools, lists: normalised (or refused) every call
        plan_key = (bindings, nd, wg_key)
        plan = self.plans.get(plan_key, _UNCACHED)
        if plan is _UNCACHED:
            # Not inside an ``except KeyError``: an error raised here (NDRangeError)
            # must not carry the lookup's KeyError as its context.
            try:
                plan = self._plan(backend, kdef, bindings, nd, workgroupsize)
            except (CompilationError, TargetRefusal) as exc:  # not built for that target
                if backend is self.backend:
                    raise
                self._fall_back(backend, exc, args, ndrange, workgroupsize)
                return self._done or self._handle()
            if wg_key is not _UNCACHED:
                if len(self.plans) >= _MAX_PLANS:
                    self.plans.clear()  # a launcher fed ever new sizes stays small
                self.plans[plan_key] = plan
        if plan is None:
            return self._done or self._handle()  # an empty ndrange: nothing to run
        compiled, global_size, local_size, sizes = plan
        if debug:
            from .debug import launch_checked

            launch_checked(backend, self.kernel, kdef, compiled, launch_args, infos, plan)
            return self._done or self._handle()
        launch_args.extend(sizes)
        if timing.active:  # a pk.timed() block is open (in some thread)
            handle = timing.launch_timed(backend, self.backend, self.kernel.name, compiled,
                                         launch_args, global_size, local_size)
            if handle is not None:
                return handle
        backend.launch(compiled, launch_args, global_size, local_size)
        if hit is not None and wg_key is not _UNCACHED:
            # Prepared on the second launch in a row of the same arrays and plan (a
            # launcher alternating between two never pays for preparing).
            if prepared is not None and prepared[0] is memo and prepared[1] is plan:
                if prepared[2] is None and not prepared[5]:
                    run = prepare(backend, memo, plan, launch_args)
                    self._prepared = (memo, plan, run, nd, workgroupsize, True)
                    self._warm_up(run, args, ndrange if ndrange is None else nd,
                                  workgroupsize)
            else:
                self._hot = None
                self._prepared = (memo, plan, None, nd, workgroupsize, False)
        return self._done or self._handle()

    def warm(self, args: tuple, ndrange: Any = None, workgroupsize: Any = None,
             ) -> Launch | None:
        """Relaunch what the last prepared launch ran, if ``args`` are the same; else None.

        The warm path (DESIGN section 4: under 3 us): the ndrange and workgroup size of
        the last prepared launch and the arrays it remembered. All that a launch with
        them decided (backend, kernel variant, plan, bounds check, argument block)
        holds; :func:`~portakern.launch.arguments.recall` re-checks each argument (an array's
        dtype, shape and flags can change in place). None means nothing ran: the
        caller launches the long way.
        """
        hot = self._hot
        if hot is not None:
            done = hot(args, ndrange, workgroupsize)
            if done is not None:
                return done
        return self._recalled(args, ndrange, workgroupsize)

    def _recalled(self, args: tuple, ndrange: Any, workgroupsize: Any) -> Launch | None:
        """:meth:`warm` for what ``_hot`` did not take: other scalars, or another dtype
        object equal to the remembered one; the arguments recalled and converted."""
        fast = self._fast
        if fast is not None and workgroupsize is fast[3] and (
                ndrange is fast[2] or type(ndrange) is tuple and ndrange == fast[2]
                and _all_int(ndrange)) \
                and fast[0] is self._memo and fast[1] is self._prepared \
                and not timing.active:
            hit = recall(fast[0], args, self.runner)
            if hit is not None:
                launch_args = hit[0]
                launch_args.extend(fast[4])
                fast[1][2](launch_args)
                return self._done or self._handle()
        return None

    def _warm_up(self, run: Any, args: tuple, given: Any, workgroupsize: Any) -> None:
        """Make ``_fast`` and ``_hot`` for ``run``, prepared with ``args`` (None: no
        prepared launch, both stay as they are)."""
        if run is None:
            return
        prepared = self._prepared
        self._fast = (self._memo, prepared, given, workgroupsize, prepared[1].sizes)
        self._hot = _hot_launch(self._memo, args, run, given, workgroupsize,
                                self._done or self._handle())

    def _handle(self) -> Launch:
        """The handle untimed launches return: one per launcher, made on first use."""
        self._done = Launch(self.kernel.name, self.backend)
        return self._done

    def _fall_back(self, runner: Backend, exc: CompilationError, args: tuple, ndrange: Any,
                   workgroupsize: Any) -> None:
        """Run on ``self.backend`` itself after its executor ``runner`` failed to compile.

        ``CPU()``'s native path renders the kernel as C++; code that only compiles as
        OpenCL (an ``else`` branch of a target escape written for OpenCL) still runs,
        on the OpenCL device, with a :class:`NativeFallbackWarning`. If that build
        fails too, the executor's error is raised and nothing is remembered.
        """
        import warnings

        from ..lower.lowering import NotLockstep

        self.runner, self._memo, self._hot = self.backend, None, None
        self.plans.clear()
        try:
            self(*args, ndrange=ndrange, workgroupsize=workgroupsize)
        except (CompilationError, TargetRefusal) as theirs:
            self.runner, self._memo, self._hot = None, None, None
            self.plans.clear()
            if isinstance(exc, NotLockstep):
                # The lowering's limit is not the user's error: the compiler's is.
                raise with_compiler_error(exc, theirs, self.backend) from theirs
            raise exc from None
        if isinstance(exc, NotLockstep):
            return  # a documented limit of lockstep lowering (docs/cpu.md), not a user error
        warnings.warn(fallback_message(self.kernel.name, self.backend, runner.target, exc),
                      NativeFallbackWarning, stacklevel=user_stacklevel())

    def _plan(self, backend: Backend, kdef: KernelDef, bindings: tuple, nd: tuple[int, ...],
              workgroupsize: Any) -> tuple | None:
        """Compile and size a launch: ``(compiled, global, local, ndrange args)``."""
        ndim = len(nd)
        if math.prod(nd) > _INDEX_MAX or max(nd, default=0) > _INDEX_MAX:
            # Sizes are passed as int64 and @index(Global, Linear) is a long.
            raise NDRangeError(
                f"ndrange {nd} is too large: each axis and the total number of work-items "
                f"must be at most 2**63 - 1 (the kernel's indices are 64-bit)")
        backend.check_available()
        # A backend that sets ``unmask_exact`` (PoCL: a masked body is not vectorised,
        # 2-4x slower) gets the kernel without its bounds mask when the workgroups
        # cover the ndrange exactly, so no work-item falls outside it.
        exact_ok = (backend.unmask_exact and not kdef.unsafe_indices
                    and ndim > 0 and math.prod(nd) > 0)
        # A backend that ``clips_ndrange`` (CPU's native path) runs exactly the
        # work-items of the ndrange whatever the groups: it never needs the mask.
        clips = backend.clips_ndrange and not kdef.unsafe_indices
        if clips:
            compiled = self._compile(backend, bindings, ndim, ndim > 0 and math.prod(nd) > 0)
        elif not exact_ok:
            compiled = self._compile(backend, bindings, ndim, False)
        wg = _with_declared(kdef, ndim, self._workgroup(workgroupsize, ndim),
                            self.kernel.template)
        # A size the caller or the kernel gives is checked against the device's
        # limits; the backend's own default is its to size (Backend.default_workgroupsize).
        given = wg is not None
        if clips:
            wg = wg or self._default_group(backend, nd, compiled, bindings)
        elif exact_ok:
            shape = wg or self._default_group(backend, nd, None, bindings)
            compiled = self._compile(backend, bindings, ndim, _covers(nd, shape))
            if wg is None and math.prod(shape) > backend.max_workgroup_size(compiled):
                # This kernel cannot use the device-wide default (much private memory).
                shape = self._default_group(backend, nd, compiled, bindings)
                compiled = self._compile(backend, bindings, ndim, _covers(nd, shape))
            wg = shape
        elif wg is None:
            wg = self._default_group(backend, nd, compiled, bindings)
        if given:
            _check_workgroup(wg, backend, compiled, kdef.name)
        if ndim and math.prod(nd) == 0:
            return None
        if not self.kernel.debug:  # debug mode checks each access as it runs instead
            parsed = self.kernel.parsed(backend.target)
            local_bounds.check_workgroup(kdef, local_bounds.local_overruns(*parsed), nd, wg,
                                         self.kernel.template.filename,
                                         self.kernel.template.source)
        if clips:
            global_size = tuple(reversed(nd)) or (1,)
        else:
            global_size = tuple(-(-n // w) * w for n, w in
                                zip(reversed(nd), reversed(wg), strict=True)) or (1,)
        local_size = tuple(reversed(wg)) or (1,)
        return LaunchPlan(compiled, global_size, local_size,
                          tuple(np.int64(n) for n in nd))

    def _default_group(self, backend: Backend, nd: tuple[int, ...], compiled: Any,
                       bindings: tuple) -> tuple[int, ...]:
        """The workgroup of a launch that gives none: the backend's to choose.

        ``CPU()``'s two paths choose by one rule (``cpu_workgroupsize``, from
        :func:`portakern.backends.native_groups.cpu_workgroup`) that reads facts of the
        kernel, found here once per type bindings and rank, so a kernel that can tell
        its group's shape sees the same one on the native path and on PoCL.
        """
        pick = getattr(backend, "cpu_workgroupsize", None)
        if pick is None:
            return backend.default_workgroupsize(nd, compiled)
        key = (bindings, len(nd))
        facts = self._group_facts.get(key)
        if facts is None:
            from ..backends.native_groups import group_facts

            facts = self._group_facts[key] = group_facts(self.kernel, bindings, len(nd))
        return pick(nd, facts, compiled)

    def _compile(self, backend: Backend, bindings: tuple, ndim: int, unmasked: bool) -> Any:
        return self.kernel.build(backend, bindings, ndim, unmasked=unmasked)


_UNCACHED = object()
_MAX_PLANS = 256
_INDEX_MAX = 2**63 - 1


def _hot_launch(memo: tuple, args: tuple, run: Any, given: Any, workgroupsize: Any,
                done: Launch) -> Any:
    """The warm launch of ``args`` as one closure: ``hot(args, ndrange, workgroupsize)``.

    It checks what :meth:`Launcher.warm` checks, in the fewest operations: the very
    workgroup size object and an equal ndrange of Python ints, the very scalar
    objects of this call (so their converted values are those ``run`` was prepared
    with), and for each array its identity, dtype, shape and flags (``flags.num``
    holds writeability and contiguity in one int). Then it calls ``run()``, the
    prepared launch of exactly those arguments. None means it launched nothing
    (anything else, even an equal scalar of another object, goes the long way,
    which says what changed). It holds no array: the arrays are weak references,
    as in ``memo``.
    """
    entries = memo[0]
    arrays = tuple((i, e[0], e[1], e[2], args[i].flags.num)
                   for i, e in enumerate(entries) if e[0] is not None)
    scalars = tuple((i, args[i]) for i, e in enumerate(entries) if e[0] is None)
    count = len(entries)

    def hot(args: tuple, ndrange: Any, wg: Any) -> Launch | None:
        if wg is not workgroupsize or len(args) != count:
            return None
        if ndrange is not given:
            if type(ndrange) is tuple:
                if ndrange != given:
                    return None
                for n in ndrange:  # (4.0,) == (4,), but an ndrange of 4.0 is refused
                    if type(n) is not int:
                        return None
            elif type(ndrange) is not int or (ndrange,) != given:
                return None
        for i, value in scalars:
            if args[i] is not value:
                return None
        for i, ref, dtype, shape, flags in arrays:
            a = args[i]
            if ref() is not a or a.dtype is not dtype and a.dtype != dtype \
                    or a.shape != shape or a.flags.num != flags:
                return None
        if timing.active:  # a pk.timed() block is open: the long way times the launch
            return None
        run()
        return done

    return hot


def _all_int(nd: tuple) -> bool:
    """Whether every extent is a Python int (``(4.0,) == (4,)``, but 4.0 is refused)."""
    for n in nd:
        if type(n) is not int:
            return False
    return True


def _with_declared(kdef: KernelDef, ndim: int, wg: tuple[int, ...] | None,
                   source: Any = None) -> tuple[int, ...] | None:
    """The launch's workgroup size given the kernel's ``@kernel(workgroupsize=...)``.

    A declared size is the default; a launch asking for another is an NDRangeError,
    pointed at the declaration in ``source`` (the kernel's template).
    """
    try:
        declared = declared_workgroup(kdef, ndim)
        if declared is None:
            return wg
        if wg is not None and wg != declared:
            raise NDRangeError(
                f"workgroupsize={wg} conflicts with workgroupsize={declared}, which kernel "
                f"{kdef.name!r} declares (@kernel(workgroupsize=...) on line {kdef.line}); "
                f"launch without workgroupsize= or with {declared}")
    except NDRangeError as exc:
        if source is not None:
            located(exc, source, kdef)
        raise
    return declared


def _covers(nd: tuple[int, ...], wg: tuple[int, ...]) -> bool:
    """True when workgroups of shape ``wg`` tile the ndrange with no work-item left over."""
    return all(n % w == 0 for n, w in zip(nd, wg, strict=True))


def _check_workgroup(wg: tuple[int, ...], backend: Backend, compiled: Any, name: str) -> None:
    limit = backend.max_workgroup_size(compiled)
    total = math.prod(wg)
    if total > limit:
        raise NDRangeError(
            f"workgroupsize {wg} has {total} work-items, more than the {limit} that kernel "
            f"{name!r} may use on {backend!r}; use a smaller workgroupsize")
    items = backend.max_workitem_sizes()
    for d, w in enumerate(wg):
        hw = len(wg) - 1 - d
        if hw < len(items) and w > items[hw]:
            raise NDRangeError(
                f"workgroupsize[{d}]={w} exceeds the device limit {items[hw]} for that axis "
                f"on {backend!r}")
