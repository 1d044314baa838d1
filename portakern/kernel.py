"""The user-facing kernel object: specialise, render, check arguments, launch.

``pk.kernel(source)`` returns a :class:`Kernel`. Calling it with arrays and an
``ndrange`` launches on the backend the arrays belong to; calling it with a
backend (``kernel(backend, workgroupsize=256)``) returns a :class:`Launcher`,
KernelAbstractions' form.
"""

from __future__ import annotations

import math
import operator
import sys
import warnings
import weakref
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from . import resolve
from .backends.base import Backend
from .errors import (
    BackendMismatchError,
    CompilationError,
    KernelArgumentError,
    KernelTypeError,
    NativeFallbackWarning,
    NDRangeError,
    PortabilityWarning,
    PortakernError,
)
from .language import KernelDef, Module, parse
from .lower import infer_ndim, lower_kernel
from .render import (
    TARGETS,
    KernelTemplate,
    RenderedKernel,
    check_constants,
    lockstep_for,
    render_lowered,
)
from .types import KNOWN_TYPES, TYPE_DTYPES, as_type_name, type_name_of

__all__ = ["Kernel", "Launcher", "kernel"]


class Kernel:
    """A portable kernel: one ``@kernel`` function of a source, with bound constants.

    Parameters
    ----------
    source : str
        Kernel source: C-like code with ``@kernel`` functions; also a Jinja template.
    name : str, optional
        Which ``@kernel`` to use when the source defines several.
    filename : str, optional
        Shown in errors and ``#line`` directives (``from_file`` sets it).
    **constants
        Jinja constants (ints, floats, bools, type names); a name that is a type
        variable of the kernel binds it (``T="float"`` or a NumPy dtype).
    """

    def __init__(self, source: str, name: str | None = None, *, filename: str | None = None,
                 **constants: Any) -> None:
        self._init(KernelTemplate(source, filename or f"<kernel {name or 'source'}>"), name,
                   check_constants(constants))
        self._check_portability()

    def _init(self, template: KernelTemplate, name: str | None,
              constants: dict[str, Any]) -> None:
        self._template = template
        self._name = name
        self.constants = constants
        self._parsed: dict[str, tuple[Module, KernelDef]] = {}
        self._rendered: dict[tuple, RenderedKernel] = {}
        self._compiled: dict[tuple, Any] = {}
        self._launchers: dict[Any, Launcher] = {}
        self._by_types: dict[tuple, Launcher] = {}
        self._by_types_generation = -1
        #: Whether the portability scan ran (it waits for constants the source needs).
        self._portability_checked = False

    @classmethod
    def from_file(cls, path: str | Path, name: str | None = None, **constants: Any) -> Kernel:
        """Load a kernel from a ``.pk`` file; errors name the file and line."""
        p = Path(path)
        return cls(p.read_text(encoding="utf-8"), name, filename=str(p), **constants)

    @classmethod
    def from_resource(cls, package: str | ModuleType, resource: str, name: str | None = None,
                      **constants: Any) -> Kernel:
        """Load a kernel file shipped inside a Python package (:mod:`importlib.resources`).

        A library keeps its ``.pk`` files next to its code and loads them with
        ``pk.kernel.from_resource(__package__, "kernels/ops.pk")``; this works from a
        wheel, a zip and a checkout alike. Errors and ``#line`` directives name the file
        as ``<package>/<resource>``.

        Raises
        ------
        FileNotFoundError
            The package has no such resource; the message names both.
        """
        import importlib.resources

        pkg_name = package if isinstance(package, str) else package.__name__
        files = importlib.resources.files(package)
        target = files.joinpath(*[part for part in resource.split("/") if part])
        try:
            text = target.read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise FileNotFoundError(
                f"package {pkg_name!r} has no kernel file {resource!r} (looked in "
                f"{files}); ship it as package data and give its path relative to the "
                f"package") from exc
        return cls(text, name, filename=f"{pkg_name}/{resource}", **constants)

    def specialize(self, **constants: Any) -> Kernel:
        """A new kernel with more constants (or type variables) bound."""
        new = object.__new__(Kernel)
        merged = dict(self.constants)
        merged.update(check_constants(constants))
        new._init(self._template, self._name, merged)
        new._check_portability()
        return new

    def _check_portability(self) -> None:
        """Warn once about every use of something outside the portable subset.

        Each built-in target's rendering is scanned (:mod:`portakern.portability`),
        and each use is one :class:`~portakern.errors.PortabilityWarning` naming the
        targets that lack it. A source that does not render yet (a constant still
        unbound, an error) is scanned when it first does; its errors are raised
        where the kernel is used, as before.
        """
        if self._portability_checked:
            return
        from . import portability

        issues = []
        try:
            for target in portability.SCANNED_TARGETS:
                module, kdef = self._parse(target)
                issues += portability.scan(module, kdef, target)
        except PortakernError:
            return
        self._portability_checked = True
        if not issues:
            return
        level = _user_stacklevel()
        for issue in portability.merge(issues):
            warnings.warn(f"kernel {kdef.name!r}: {issue.describe()}", PortabilityWarning,
                          stacklevel=level)

    # -- parsing --------------------------------------------------------------------
    def _parse(self, target: str) -> tuple[Module, KernelDef]:
        hit = self._parsed.get(target)
        if hit is None:
            smap = self._template.render(target, self.constants)
            module = parse(smap)
            kdef = module.kernel(self._name)
            for tv in kdef.type_vars:
                if tv in self.constants and not isinstance(self.constants[tv], str):
                    raise KernelTypeError(
                        f"type variable {tv} must be bound to a type name or dtype, got "
                        f"{self.constants[tv]!r}")
            hit = (module, kdef)
            self._parsed[target] = hit
        return hit

    @property
    def name(self) -> str:
        """The kernel function's name."""
        return self._parse("opencl")[1].name

    @property
    def params(self) -> list:
        """The parameters, as parsed from the signature."""
        return self._parse("opencl")[1].params

    @property
    def type_vars(self) -> tuple[str, ...]:
        """Type variables still unbound by constants."""
        kdef = self._parse("opencl")[1]
        return tuple(tv for tv in kdef.type_vars if tv not in self.constants)

    def __repr__(self) -> str:
        try:
            sig = ", ".join(f"{p.describe()} {p.name}" for p in self.params)
            return f"<portakern.Kernel {self.name}({sig})>"
        except Exception:  # noqa: BLE001 - repr must not fail on an unrendered template
            return "<portakern.Kernel (not yet rendered)>"

    # -- pickling (by recipe: portakern._recipes) -----------------------------------------
    def __reduce__(self) -> tuple:
        """Pickle as source, name, file name and constants; rebuilt (interned) on arrival."""
        from ._recipes import intern_kernel, kernel_recipe, rebuild_kernel

        intern_kernel(self)  # a round trip in this process gives this very object
        return rebuild_kernel, kernel_recipe(self)

    def __dask_tokenize__(self) -> str:
        """Deterministic across processes; distinct per source, name and constants."""
        from ._recipes import kernel_token

        return kernel_token(self)

    # -- rendering ------------------------------------------------------------------
    def _bindings(self, kdef: KernelDef, given: dict[str, str]) -> dict[str, str]:
        out = {}
        for tv in kdef.type_vars:
            if tv in given:
                out[tv] = given[tv]
            elif tv in self.constants:
                out[tv] = str(self.constants[tv])
        return out

    def rendered(self, target: str, bindings: dict[str, str], ndim: int, *,
                 unmasked: bool = False, **extra: Any) -> RenderedKernel:
        """The :class:`RenderedKernel` for a target, type bindings and ndrange rank.

        ``unmasked`` renders the kernel without its implicit bounds mask (as
        ``@kernel(unsafe_indices)`` would), for launches whose workgroups tile the
        ndrange exactly; the masked kernel is lowered first all the same, so its
        errors (a ``return`` before ``@synchronize``) are never skipped.
        """
        key = (target, tuple(sorted(bindings.items())), ndim, tuple(sorted(extra.items())),
               unmasked)
        hit = self._rendered.get(key)
        if hit is None:
            self._check_portability()
            module, kdef = self._parse(target)
            full = self._bindings(kdef, bindings)
            missing = [tv for tv in kdef.type_vars if tv not in full]
            if missing:
                raise KernelTypeError(
                    f"kernel {kdef.name!r}: type variable(s) {', '.join(missing)} unbound; "
                    f"pass arrays that bind them or use "
                    f"kernel.specialize({missing[0]}='float')")
            # Targets whose backend runs a group's work-items in loops get barrier
            # kernels lowered into work-item loops (lower_kernel's ``lockstep``).
            lockstep = lockstep_for(target, kdef)
            lowered = lower_kernel(kdef, module, ndim, lockstep=lockstep)
            if unmasked:
                lowered = lower_kernel(replace(kdef, unsafe_indices=True), module, ndim,
                                       lockstep=lockstep)
            hit = render_lowered(lowered, module.helpers, target, full,
                                 self._template.filename, user_source=self._template.source,
                                 **extra)
            self._rendered[key] = hit
        return hit

    def render(self, target: str | None = None, /, *, ndim: int | None = None,
               **bindings: Any) -> str:
        """The generated source for ``target`` (``"cuda"``, ``"metal"``, ``"opencl"``).

        Type variables are bound by keyword (``T="float"`` or a NumPy dtype), a type
        variable named ``target`` too when the target is given first
        (``render("cuda", target="float")``); ``ndim`` defaults to the rank the
        kernel's NTuple indices imply, else 1.
        """
        if target is None:
            given = bindings.get("target")
            if type(given) is str and given not in KNOWN_TYPES:
                target = bindings.pop("target")  # render(target="cuda"), the keyword form
            else:
                target = "opencl"
        if target not in TARGETS:
            from .render import available_targets

            if target not in available_targets():
                raise KernelTypeError(
                    f"unknown target {target!r}; use one of {', '.join(available_targets())}")
        module, kdef = self._parse(target)
        # str.__str__: an exact str, so a subclass's __eq__ cannot pass for a type name.
        names = {k: as_type_name(str.__str__(v) if isinstance(v, str) else v,
                                 what=f"type variable {k}") for k, v in bindings.items()}
        unknown = [k for k in names if k not in kdef.type_vars]
        if unknown:
            raise KernelTypeError(
                f"{unknown[0]!r} is not a type variable of kernel {kdef.name!r} "
                f"(its type variables: {', '.join(kdef.type_vars) or 'none'})")
        if ndim is None:
            ndim = infer_ndim(kdef)
        return self.rendered(target, names, ndim).source

    # -- launching ------------------------------------------------------------------
    def __call__(self, *args: Any, ndrange: Any = None, workgroupsize: Any = None) -> Any:
        if args and isinstance(args[0], Backend):
            if len(args) > 3:
                raise KernelTypeError(
                    "kernel(backend, workgroupsize=None, ndrange=None) returns a launcher; "
                    "pass the kernel's arguments to that launcher")
            backend = args[0]
            wg = args[1] if len(args) > 1 else workgroupsize
            nd = args[2] if len(args) > 2 else ndrange
            return Launcher(self, backend, wg, nd)
        # Warm path: arguments of the same types as before go to the same launcher
        # when their types alone decided the backend (NumPy -> CPU), so a direct call
        # costs one tuple and one dict lookup more than a launcher call (DESIGN §4).
        key = tuple(map(type, args))
        launcher = self._by_types.get(key)
        if launcher is None or self._by_types_generation != resolve.generation:
            backend, by_type = resolve.resolve_args(self, args)
            launcher = self._launchers.get(backend)
            if launcher is None:
                launcher = self._launchers[backend] = Launcher(self, backend)
            if self._by_types_generation != resolve.generation or len(self._by_types) > 64:
                self._by_types.clear()
                self._by_types_generation = resolve.generation
            if by_type:
                self._by_types[key] = launcher
        launcher(*args, ndrange=ndrange, workgroupsize=workgroupsize)
        return None


_PACKAGE_DIR = str(Path(__file__).resolve().parent)


def _user_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` that names the first frame outside portakern."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(
            _PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def _normalize_ndrange(nd: Any, what: str = "ndrange") -> tuple[int, ...]:
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


def _normalize_wg(wg: Any, ndim: int) -> tuple[int, ...] | None:
    if wg is None:
        return None
    if isinstance(wg, (int, np.integer)) and not isinstance(wg, (bool, np.bool_)):
        # An int sizes the fastest (last) axis; the other axes get 1.
        if ndim == 0 and int(wg) != 1:
            raise NDRangeError("a 0-axis ndrange runs one work-item; workgroupsize must be 1")
        wg = (1,) * max(ndim - 1, 0) + (int(wg),) if ndim else ()
    if not isinstance(wg, (tuple, list)):
        raise NDRangeError(f"workgroupsize must be an int or a tuple of ints, got {wg!r}")
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
        self.static_ndrange = None if ndrange is None else _normalize_ndrange(ndrange)
        self._static_wg_raw = workgroupsize
        self._plans: dict[tuple, tuple | None] = {}
        self._memo: tuple | None = None
        # The backend that runs this kernel for ``backend``: itself, or the one its
        # ``executor(kernel)`` picks (CPU(): the native path or PoCL), on first launch.
        self._runner: Backend | None = None
        if workgroupsize is not None:
            ndim = len(self.static_ndrange) if self.static_ndrange is not None else None
            if ndim is not None:
                _normalize_wg(workgroupsize, ndim)
            elif not isinstance(workgroupsize, (int, np.integer, tuple, list)):
                _normalize_wg(workgroupsize, 1)

    def __repr__(self) -> str:
        return f"<portakern.Launcher {self.kernel.name} on {self.backend!r}>"

    def __reduce__(self) -> tuple:
        """Pickle as kernel, backend and static sizes; rebuilt (interned) on arrival."""
        from ._recipes import intern_launcher, launcher_recipe, rebuild_launcher

        intern_launcher(self)
        return rebuild_launcher, launcher_recipe(self)

    def __dask_tokenize__(self) -> str:
        from ._recipes import launcher_token

        return launcher_token(self)

    def _ndrange(self, ndrange: Any) -> tuple[int, ...]:
        if ndrange is None:
            if self.static_ndrange is None:
                return _normalize_ndrange(None)
            return self.static_ndrange
        nd = _normalize_ndrange(ndrange)
        if self.static_ndrange is not None and nd != self.static_ndrange:
            raise NDRangeError(
                f"ndrange={nd} conflicts with the static ndrange {self.static_ndrange} given "
                f"when the launcher was made; pass one or the other")
        return nd

    def _workgroup(self, wg: Any, ndim: int) -> tuple[int, ...] | None:
        static = _normalize_wg(self._static_wg_raw, ndim)
        dynamic = _normalize_wg(wg, ndim)
        if static is not None and dynamic is not None and static != dynamic:
            raise NDRangeError(
                f"workgroupsize={dynamic} conflicts with the static workgroupsize {static} "
                f"given when the launcher was made; pass one or the other")
        return dynamic or static

    def _route(self) -> Backend:
        runner = self.backend.executor(self.kernel)
        self._runner = runner
        return runner

    def __call__(self, *args: Any, ndrange: Any = None, workgroupsize: Any = None) -> None:
        nd = self._ndrange(ndrange)
        backend = self._runner or self._route()
        kdef = self.kernel._parse(backend.target)[1]
        memo = self._memo
        hit = _recall(memo, args, backend) if memo is not None else None
        if hit is None:
            infos: dict = {}
            launch_args, bindings = _check_args(kdef, args, backend, self.kernel.constants,
                                                infos)
            self._memo = _remember(kdef, args, launch_args, bindings, self.kernel.constants,
                                   infos)
        else:
            launch_args, bindings = hit
        # What follows the argument checks depends only on the bindings, the ndrange
        # and the workgroup size, so it is worked out once per combination: a warm
        # launch costs a dict lookup here (DESIGN section 4: overhead <= 1.3x PyOpenCL).
        wg_key = workgroupsize
        if type(workgroupsize) is tuple and all(type(w) is int for w in workgroupsize):
            pass
        elif workgroupsize is not None and type(workgroupsize) is not int:
            wg_key = _UNCACHED  # floats, bools, lists: normalised (or refused) every call
        plan_key = (bindings, nd, wg_key)
        plan = self._plans.get(plan_key, _UNCACHED)
        if plan is _UNCACHED:
            # Not inside an ``except KeyError``: an error raised here (NDRangeError)
            # must not carry the lookup's KeyError as its context.
            try:
                plan = self._plan(backend, kdef, bindings, nd, workgroupsize)
            except CompilationError as exc:
                if backend is self.backend:
                    raise
                self._fall_back(backend, exc, args, ndrange, workgroupsize)
                return
            if wg_key is not _UNCACHED:
                if len(self._plans) >= _MAX_PLANS:
                    self._plans.clear()  # a launcher fed ever new sizes stays small
                self._plans[plan_key] = plan
        if plan is None:
            return  # an empty ndrange: everything checked, nothing to run
        compiled, global_size, local_size, sizes = plan
        launch_args.extend(sizes)
        backend.launch(compiled, launch_args, global_size, local_size)

    def _fall_back(self, runner: Backend, exc: CompilationError, args: tuple, ndrange: Any,
                   workgroupsize: Any) -> None:
        """Run on ``self.backend`` itself after its executor ``runner`` failed to compile.

        ``CPU()``'s native path renders the kernel as C++; code that only compiles as
        OpenCL (an ``else`` branch of a target escape written for OpenCL) still runs,
        on the OpenCL device, with a :class:`NativeFallbackWarning`. If that build
        fails too, the executor's error is raised and nothing is remembered.
        """
        import warnings

        from .lower import NotLockstep

        self._runner, self._memo = self.backend, None
        self._plans.clear()
        try:
            self(*args, ndrange=ndrange, workgroupsize=workgroupsize)
        except CompilationError:
            self._runner, self._memo = None, None
            self._plans.clear()
            raise exc from None
        if isinstance(exc, NotLockstep):
            return  # a documented limit of lockstep lowering (docs/cpu.md), not a user error
        ours, theirs = self.backend.target, runner.target
        warnings.warn(
            f"kernel {self.kernel.name!r} runs on {self.backend!r} as {ours!r}: its "
            f"{theirs!r} rendering does not compile. If the kernel has {ours!r}-only code, "
            f"put it under {{% if target == \"{ours}\" %}} to run it as {theirs!r}; if not, "
            f"this is a portakern bug (please report it). The compiler said:\n{exc}",
            NativeFallbackWarning, stacklevel=_user_stacklevel())

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
        exact_ok = (getattr(backend, "unmask_exact", False) and not kdef.unsafe_indices
                    and ndim > 0 and math.prod(nd) > 0)
        # A backend that ``clips_ndrange`` (CPU's native path) runs exactly the
        # work-items of the ndrange whatever the groups: it never needs the mask.
        clips = getattr(backend, "clips_ndrange", False) and not kdef.unsafe_indices
        if clips:
            compiled = self._compile(backend, bindings, ndim, ndim > 0 and math.prod(nd) > 0)
        elif not exact_ok:
            compiled = self._compile(backend, bindings, ndim, False)
        wg = self._workgroup(workgroupsize, ndim)
        if clips:
            wg = wg or backend.default_workgroupsize(nd, compiled)
        elif exact_ok:
            shape = wg or backend.default_workgroupsize(nd, None)
            compiled = self._compile(backend, bindings, ndim, _covers(nd, shape))
            if wg is None and math.prod(shape) > backend.max_workgroup_size(compiled):
                # This kernel cannot use the device-wide default (much private memory).
                shape = backend.default_workgroupsize(nd, compiled)
                compiled = self._compile(backend, bindings, ndim, _covers(nd, shape))
            wg = shape
        elif wg is None:
            wg = backend.default_workgroupsize(nd, compiled)
        _check_workgroup(wg, backend, compiled, kdef.name)
        if ndim and math.prod(nd) == 0:
            return None
        if clips:
            global_size = tuple(reversed(nd)) or (1,)
        else:
            global_size = tuple(-(-n // w) * w for n, w in
                                zip(reversed(nd), reversed(wg), strict=True)) or (1,)
        local_size = tuple(reversed(wg)) or (1,)
        return compiled, global_size, local_size, tuple(np.int64(n) for n in nd)

    def _compile(self, backend: Backend, bindings: tuple, ndim: int, unmasked: bool) -> Any:
        from . import cache

        kernel = self.kernel
        # The target is in the key: a backend subclass may render another dialect
        # on the same device (and so share cache_key) as its parent.
        key = (backend.cache_key, backend.target, bindings, ndim, unmasked)
        compiled = kernel._compiled.get(key)
        if compiled is None:
            rendered = cache.rendered(kernel, backend.target, bindings, ndim, unmasked=unmasked,
                                      disk=not backend.renders_variants)
            compiled = backend.compile(rendered)
            kernel._compiled[key] = compiled
        return compiled


_UNCACHED = object()
_MAX_PLANS = 256
_INDEX_MAX = 2**63 - 1


def _remember(kdef: KernelDef, args: tuple, launch_args: list, bindings: tuple,
              constants: dict[str, Any], infos: dict) -> tuple | None:
    """What :func:`_recall` needs to pass the same arrays again without the full checks.

    ``infos`` holds the ``ArrayInfo`` the checks got for each array. A NumPy array
    the backend passes as itself (``CPU()``) is compared by dtype, shape and flags
    on recall; any other array is described again by ``backend.array_info`` (a
    fraction of the checks' cost) and compared with what it was. Arrays are held
    weakly and handles not at all, so a launcher never keeps an array or its device
    memory alive.
    """
    by_arrays = {p.type for p in kdef.params if p.pointer}
    bound = dict(bindings)
    entries: list = []
    for i, (p, a) in enumerate(zip(kdef.params, args, strict=True)):
        if p.pointer:
            try:
                ref = weakref.ref(a)
            except TypeError:
                return None
            if type(a) is np.ndarray and launch_args[i] is a:
                flags = a.flags
                entries.append((ref, a.dtype, a.shape, flags.writeable, flags.c_contiguous,
                                True))
            else:
                info = infos[i]
                entries.append((ref, info.dtype, info.shape, info.writable, info.c_contiguous,
                                False))
        else:
            if isinstance(a, np.ndarray):
                return None  # a 0-d array is mutable: its value is read on every call
            # A scalar whose type variable only it binds is checked in full each time.
            fixed = p.type in KNOWN_TYPES or p.type in by_arrays or p.type in constants
            entries.append((None, a, launch_args[i],
                            bound.get(p.type, p.type) if fixed else None, p))
    template = [None if p.pointer else v
                for p, v in zip(kdef.params, launch_args, strict=True)]
    return tuple(entries), template, bindings


def _recall(memo: tuple, args: tuple, backend: Backend) -> tuple[list, tuple] | None:
    """The checked launch arguments for ``args`` if they match the remembered call."""
    entries, template, bindings = memo
    if len(args) != len(entries):
        return None
    out = template.copy()
    for i, (e, a) in enumerate(zip(entries, args, strict=False)):
        ref = e[0]
        if ref is not None:
            if ref() is not a:
                return None
            if e[5]:
                flags = a.flags
                if a.dtype != e[1] or a.shape != e[2] or flags.writeable != e[3] \
                        or flags.c_contiguous != e[4]:
                    return None
                out[i] = a
            else:
                info = backend.array_info(a)
                if info is None or info.handle is None or info.dtype != e[1] \
                        or info.shape != e[2] or info.writable != e[3] \
                        or info.c_contiguous != e[4]:
                    return None
                out[i] = info.handle
        elif a is not e[1]:
            if e[3] is None:
                return None
            out[i] = convert_scalar(a, e[3], i, e[4])
    return out, bindings


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


def _describe(i: int, p: Any) -> str:
    return f"argument {i} {p.name!r} ({p.describe()})"


def _check_args(kdef: KernelDef, args: tuple, backend: Backend,
                constants: dict[str, Any], infos: dict | None = None) -> tuple[list, tuple]:
    """Check every argument against the signature; return launch args and bindings.

    Nothing is launched or written here, so a rejected call changes no array.
    ``infos``, if given, receives each array argument's ``ArrayInfo`` by position.
    """
    params = kdef.params
    if len(args) != len(params):
        sig = ", ".join(f"{p.describe()} {p.name}" for p in params)
        raise KernelTypeError(
            f"kernel {kdef.name!r} takes {len(params)} argument"
            f"{'' if len(params) == 1 else 's'} ({sig}), got {len(args)}")
    bindings: dict[str, str] = {tv: str(constants[tv]) for tv in kdef.type_vars
                                if tv in constants}
    bound_by: dict[str, str] = {tv: "specialize()" for tv in bindings}
    out: list = [None] * len(params)
    extents: list = [None] * len(params)
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        if not p.pointer:
            continue
        info = backend.array_info(a)
        if info is None:
            _wrong_array(i, p, a, backend)
        if infos is not None:
            infos[i] = info
        extents[i] = info.extent
        name = type_name_of(info.dtype)
        if p.type in KNOWN_TYPES:
            expected = TYPE_DTYPES[p.type]
            if info.dtype != expected:
                raise KernelTypeError(
                    f"{_describe(i, p)} must have dtype {expected}, got {info.dtype}")
        elif name is None:
            raise KernelTypeError(
                f"{_describe(i, p)} has dtype {info.dtype}, which no kernel type matches")
        elif p.type in bindings:
            if bindings[p.type] != name:
                raise KernelTypeError(
                    f"{_describe(i, p)} has dtype {info.dtype}, but {p.type} is already "
                    f"{bindings[p.type]} ({TYPE_DTYPES[bindings[p.type]]}) from "
                    f"{bound_by[p.type]}")
        else:
            bindings[p.type] = name
            bound_by[p.type] = f"argument {i} {p.name!r}"
        if not info.c_contiguous:
            raise KernelArgumentError(
                f"{_describe(i, p)} must be C-contiguous; pass a contiguous copy "
                f"(numpy.ascontiguousarray or .copy())")
        if p.writable and not info.writable:
            raise KernelArgumentError(
                f"{_describe(i, p)} is read-only but the kernel may write it; pass a writable "
                f"array, or declare the parameter 'const {p.type}*' if the kernel only reads it")
        if info.handle is None and math.prod(info.shape) != 0:
            # (An empty array may have no buffer at all: it is passed as a null pointer.)
            raise KernelArgumentError(
                f"{_describe(i, p)} is a view with an offset into its buffer; pass a copy")
        out[i] = info.handle
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        if p.pointer:
            continue
        t = bindings.get(p.type, p.type)
        if t not in KNOWN_TYPES:
            if isinstance(a, np.generic) and type_name_of(a.dtype):
                t = type_name_of(a.dtype)
                bindings[p.type] = t
                bound_by[p.type] = f"argument {i} {p.name!r}"
            else:
                raise KernelTypeError(
                    f"{_describe(i, p)}: cannot infer {p.type} from a Python "
                    f"{type(a).__name__}; pass a NumPy scalar (e.g. numpy.float32(...)) or "
                    f"bind it with kernel.specialize({p.type}='float')")
        out[i] = convert_scalar(a, t, i, p)
    for i, p in enumerate(params):
        feature = _FEATURES.get(TYPE_DTYPES[bindings.get(p.type, p.type)])
        if feature is not None and not backend.supports(feature):
            raise KernelTypeError(
                f"{_describe(i, p)} is {feature}, which {backend!r} does not support; "
                f"convert it (e.g. .astype(numpy.float32)) or use another backend")
    _check_no_alias(params, out, extents)
    return out, tuple(sorted((tv, bindings[tv]) for tv in kdef.type_vars))


def _check_no_alias(params: list, handles: list, extents: list) -> None:
    """A ``const T*`` is rendered no-alias (restrict): it must not overlap a written array.

    Memory ranges decide where the backend gives them (``ArrayInfo.extent``): a
    handle may be a new wrapper on every call (a foreign CUDA array), so the same
    array passed twice is not the same handle.
    """
    for c, pc in enumerate(params):
        if not (pc.pointer and pc.const):
            continue
        for w, pw in enumerate(params):
            if not pw.writable:
                continue
            a, b = handles[c], handles[w]
            ea, eb = extents[c], extents[w]
            both_numpy = isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
            if ea is not None and eb is not None:
                overlap = (ea[1] > 0 and eb[1] > 0 and ea[0] < eb[0] + eb[1]
                           and eb[0] < ea[0] + ea[1])
            else:
                overlap = (a is b and a is not None) or (
                    both_numpy and a.size > 0 and b.size > 0 and np.may_share_memory(a, b))
            if overlap:
                raise KernelArgumentError(
                    f"{_describe(c, pc)} shares memory with {_describe(w, pw)}, which the "
                    f"kernel writes; const parameters are declared no-alias (restrict), so "
                    f"pass a copy ({pc.name}.copy()) or drop 'const' from {pc.name!r}")


_FEATURES = {np.dtype(np.float64): "float64", np.dtype(np.float16): "float16"}


def _wrong_array(i: int, p: Any, a: Any, backend: Backend) -> None:
    from .resolve import backend_name_of

    other = backend_name_of(a)
    if other is None:
        raise KernelTypeError(
            f"{_describe(i, p)} must be an array, got {type(a).__module__}."
            f"{type(a).__qualname__}")
    raise BackendMismatchError(
        f"{_describe(i, p)} is a {type(a).__module__}.{type(a).__qualname__} on {other}, but "
        f"the launch runs on {backend!r}; move it with backend.to_device(...) or launch on "
        f"its own backend")


_FMAX = {dt: float(np.finfo(dt).max) for dt in TYPE_DTYPES.values() if dt.kind == "f"}
_FTINY = {dt: float(np.finfo(dt).tiny) for dt in TYPE_DTYPES.values() if dt.kind == "f"}
_IMIN = {dt: int(np.iinfo(dt).min) for dt in TYPE_DTYPES.values() if dt.kind in "iu"}
_IMAX = {dt: int(np.iinfo(dt).max) for dt in TYPE_DTYPES.values() if dt.kind in "iu"}


def convert_scalar(value: Any, type_name: str, i: int, p: Any) -> np.generic:
    """Convert a Python or NumPy scalar to the parameter's dtype, or say why not.

    Integers must be in range, floats must not overflow, an integer passed for a
    float parameter must be exactly representable, and a float is never silently
    truncated to an integer.
    """
    dtype = TYPE_DTYPES[type_name]
    # Fast paths for what launches pass most, skipping NumPy's slow scalar
    # checks (4 us, a tenth of a launch): a scalar of the parameter's own dtype,
    # and a Python float or int well inside the type's range.
    kind = type(value)
    if kind is dtype.type:
        return value
    if kind is float and dtype.kind == "f" and (
            _FTINY[dtype] <= abs(value) <= _FMAX[dtype] or value == 0.0):
        return dtype.type(value)
    if kind is int and dtype.kind in "iu" and _IMIN[dtype] <= value <= _IMAX[dtype]:
        return dtype.type(value)
    where = _describe(i, p)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if dtype.kind == "b":
        if isinstance(value, (bool, np.bool_)):
            return np.bool_(value)
        raise KernelTypeError(f"{where} must be a bool, got {type(value).__name__}")
    if isinstance(value, (bool, np.bool_, np.timedelta64)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        # (np.timedelta64 is an np.integer that int() refuses.)
        raise KernelTypeError(
            f"{where} must be a number, got {type(value).__name__} {value!r}")
    if dtype.kind in "iu":
        if isinstance(value, (float, np.floating)):
            raise KernelTypeError(
                f"{where} must be an integer, got {type(value).__name__} {value!r}; "
                f"convert it explicitly (int(...)) if truncation is intended")
        info = np.iinfo(dtype)
        v = int(value)
        if not info.min <= v <= info.max:
            raise KernelArgumentError(
                f"{where} = {v} is out of range for {dtype} [{info.min}, {info.max}]")
        return dtype.type(v)
    # floating parameter
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if abs(v) > int(np.finfo(dtype).max):
            # Checked first: converting 10**400 raises OverflowError, 70000 -> half warns.
            raise KernelArgumentError(
                f"{where} = {v} overflows {dtype} (largest {np.finfo(dtype).max})")
        converted = dtype.type(v)
        if int(converted) != v:
            raise KernelArgumentError(
                f"{where} = {v} cannot be represented exactly as {dtype}; pass a float "
                f"explicitly if rounding is intended")
        return converted
    with np.errstate(over="ignore", under="ignore"):
        converted = dtype.type(value)
    if np.isinf(converted) and np.isfinite(value):
        raise KernelArgumentError(
            f"{where} = {value!r} overflows {dtype} (largest {np.finfo(dtype).max})")
    if converted == 0 and value != 0:
        raise KernelArgumentError(
            f"{where} = {value!r} underflows to 0 in {dtype} (smallest nonzero "
            f"{np.finfo(dtype).smallest_subnormal}); pass 0.0 explicitly if that is intended")
    return converted


def kernel(source: str, name: str | None = None, **constants: Any) -> Kernel:
    """Create a :class:`Kernel` from source text (see :class:`Kernel`)."""
    return Kernel(source, name, **constants)


kernel.from_file = Kernel.from_file  # type: ignore[attr-defined]
kernel.from_resource = Kernel.from_resource  # type: ignore[attr-defined]
