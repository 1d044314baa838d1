"""The user-facing kernel object: specialise, render, launch.

``pk.kernel(source)`` returns a :class:`Kernel`. Calling it with arrays and an
``ndrange`` launches on the backend the arrays belong to; calling it with a
backend (``kernel(backend, workgroupsize=256)``) returns a
:class:`~portakern.launch.launcher.Launcher`, KernelAbstractions' form.

The signature is fixed when the kernel is made (:attr:`Kernel.signature`); only
the bodies differ per target. Rendered sources are memoised per variant here and
on disk by :func:`portakern.cache.store.rendered`.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, overload

from .analysis import portability
from .analysis.atomic_checks import check_atomic_pointers
from .analysis.definition_checks import check_definitions
from .backends.base import Backend
from .errors import (
    KernelSyntaxError,
    KernelTypeError,
    PortabilityWarning,
    PortakernError,
    user_stacklevel,
)
from .launch import resolve
from .launch.debug import enabled as debug_enabled
from .launch.launcher import Launcher
from .launch.outputs import Output, bind_named, outputs_backend
from .launch.timing import Launch
from .lower.barrier_helpers import inline_barrier_helpers
from .render.emit import (
    KernelTemplate,
    RenderedKernel,
    check_constants,
    lockstep_for,
    render_lowered,
)
from .syntax.language import KernelDef, Module, Param, parse
from .targets import CANONICAL_TARGET, builtin_targets, target_info
from .types import KNOWN_TYPES, as_type_name
from .variant import Variant

if TYPE_CHECKING:
    from .syntax.tree import BodyFacts

__all__ = ["Kernel", "KernelFactory", "kernel"]



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
    debug : bool, optional
        Debug mode (docs/debugging.md): every array subscript is bounds-checked and
        an out-of-bounds one raises :class:`~portakern.errors.KernelFaultError` after
        the launch. Default: on when the environment sets ``PORTAKERN_DEBUG=1``.
    **constants
        Jinja constants (ints, floats, bools, type names); a name that is a type
        variable of the kernel binds it (``T="float"`` or a NumPy dtype).
    """

    def __init__(self, source: str, name: str | None = None, *, filename: str | None = None,
                 debug: bool | None = None, **constants: Any) -> None:
        self._init(KernelTemplate(source, filename or f"<kernel {name or 'source'}>"), name,
                   check_constants(constants), debug_enabled(debug))
        self._check_portability()

    def _init(self, template: KernelTemplate, name: str | None,
              constants: dict[str, Any], debug: bool = False) -> None:
        self._template = template
        self._name = name
        self.constants = constants
        #: Debug mode: a variant of its own in every cache (see docs/debugging.md).
        self.debug = debug
        self._parsed: dict[str, tuple[Module, KernelDef]] = {}
        #: Rendered text and line map -> its parse: a source that does not branch on
        #: ``target`` renders alike for every target and is parsed once (DESIGN section 7).
        self._parsed_text: dict[tuple[str, tuple[int, ...]], tuple[Module, KernelDef]] = {}
        self._facts: dict[str, BodyFacts] = {}
        #: One memo per stage boundary, each keyed by the Variant (portakern.variant).
        self._rendered: dict[Variant, RenderedKernel] = {}
        self._compiled: dict[tuple[Any, Variant], Any] = {}
        self._launchers: dict[Any, Launcher] = {}
        self._by_types: dict[tuple, Launcher] = {}
        self._by_types_generation = -1
        #: The launcher of the last call whose types alone chose it (see __call__).
        self._warm: Launcher | None = None
        #: Whether the portability scan ran (it waits for constants the source needs).
        self._portability_checked = False
        #: Parameter name -> the caller's name for it, in argument errors (:meth:`relabel`).
        self.labels: dict[str, str] = {}
        #: A workgroup size given at instantiation (``kernel(backend, workgroupsize=...)``)
        #: that this kernel treats as declared (:meth:`sized`), and the kernel without it.
        self._groupsize: int | tuple[int, ...] | None = None
        self._unsized: Kernel | None = None
        self._sized: dict[Any, Kernel] = {}

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
        new._init(self._template, self._name, merged, self.debug)
        new.labels = dict(self.labels)
        new._check_portability()
        return new

    def relabel(self, **labels: str) -> Kernel:
        """A kernel whose argument errors call parameters by the caller's names.

        ``blur = kernel.relabel(src="image", dst="out")``: an error then reads
        ``argument 'image' (const T*) has dtype float64, ...``. Everything else (source,
        constants, compiled variants through the caches) is this kernel's.

        Raises
        ------
        KernelTypeError
            A name that is not one of the kernel's parameters (the message lists them).
        """
        try:
            names = [p.name for p in self.signature]
        except KernelSyntaxError:
            names = None  # needs constants first: checked when it launches
        unknown = sorted(set(labels) - set(names)) if names is not None else []
        if unknown:
            raise KernelTypeError(
                f"kernel {self.name!r} has no parameter {', '.join(map(repr, unknown))} to "
                f"relabel; its parameters are {', '.join(names or ())}")
        for key, value in labels.items():
            if not isinstance(value, str) or not value:
                raise KernelTypeError(
                    f"relabel({key}=...) takes the caller's name for it, a non-empty str; "
                    f"got {value!r}")
        new = self.specialize()
        new.labels.update(labels)
        return new

    def _check_portability(self) -> None:
        """Warn once about every use of something outside the portable subset.

        Each built-in target's rendering is scanned (:mod:`portakern.analysis.portability`),
        and each use is one :class:`~portakern.errors.PortabilityWarning` naming the
        targets that lack it. A source that does not parse is a
        :class:`~portakern.errors.KernelSyntaxError` here, at its line; one that does
        not render yet (a constant still unbound) is scanned when it first does.
        """
        if self._portability_checked:
            return
        issues = []
        try:
            for target in portability.SCANNED_TARGETS:
                module, kdef = self.parsed(target)
                issues += portability.scan(module, kdef, target, lambda t=target: self.facts(t))
            check_atomic_pointers(lambda: self.facts(CANONICAL_TARGET),
                                  *self.parsed(CANONICAL_TARGET))
        except (KernelSyntaxError, KernelTypeError) as exc:
            # A source that parses wrong (or binds a type variable to no type) is refused
            # here, at its line; one that waits for a constant (.specialize(TILE=16) later)
            # is scanned when it first renders.
            if getattr(exc, "unbound", None) is None:
                raise
            return
        except PortakernError:
            return
        self._portability_checked = True
        if not issues:
            return
        level = user_stacklevel()
        for issue in portability.merge(issues):
            warnings.warn(f"kernel {kdef.name!r}: {issue.describe()}", PortabilityWarning,
                          stacklevel=level)

    # -- parsing --------------------------------------------------------------------
    def parsed(self, target: str) -> tuple[Module, KernelDef]:
        """The module and kernel definition of ``target``'s rendering, parsed once.

        Every target's signature must be the one :attr:`signature` gives (a
        signature behind ``{% if target == ... %}`` would make launches check
        arguments against parameters the kernel does not have): a difference is a
        :class:`~portakern.errors.KernelSyntaxError`.
        """
        hit = self._parsed.get(target)
        if hit is None:
            smap = self._template.render(target, self.constants, self._name)
            text_key = (smap.rendered, tuple(smap.line_of))
            hit = self._parsed_text.get(text_key)
            if hit is not None:  # the same text as a target parsed before: one parse
                self._parsed[target] = hit
                return hit
            module = parse(smap)
            check_definitions(module)  # helpers that end without return, keyword type names
            kdef = module.kernel(self._name)
            if self._groupsize is not None and kdef.workgroupsize is None:
                kdef = replace(kdef, workgroupsize=self._groupsize)
            # A helper with @synchronize() becomes part of the body that calls it.
            module, kdef = inline_barrier_helpers(module, kdef)
            for tv in kdef.type_vars:
                if tv in self.constants and not isinstance(self.constants[tv], str):
                    raise KernelTypeError(
                        f"type variable {tv} must be bound to a type name or dtype, got "
                        f"{self.constants[tv]!r}")
            if target != CANONICAL_TARGET:
                fixed = self.parsed(CANONICAL_TARGET)[1]
                if (kdef.name, kdef.params) != (fixed.name, fixed.params):
                    raise KernelSyntaxError(
                        f"kernel {fixed.name!r} has another signature when rendered for "
                        f"{target!r} ({_signature_text(kdef)}) than for "
                        f"{CANONICAL_TARGET!r} ({_signature_text(fixed)}); keep the "
                        f"signature outside {{% if target == ... %}} blocks: only bodies "
                        f"may differ per target", self._template.filename, kdef.line, kdef.col)
            hit = (module, kdef)
            self._parsed[target] = self._parsed_text[text_key] = hit
        return hit

    def facts(self, target: str) -> BodyFacts:
        """What the body rendered for ``target`` holds (:func:`portakern.syntax.tree.body_facts`),
        found once from the statement tree; the choice of a CPU path reads it."""
        hit = self._facts.get(target)
        if hit is None:
            from .syntax.tree import body_facts, parse_body

            parsed = module, kdef = self.parsed(target)
            # Targets that share a parse share its facts (and the typed tree cached there).
            hit = next((self._facts[t] for t, p in self._parsed.items()
                        if p is parsed and t in self._facts), None)
            if hit is None:
                hit = body_facts(parse_body(kdef.body, module.source_map))
            self._facts[target] = hit
        return hit

    @property
    def signature(self) -> tuple[Param, ...]:
        """The parameters, in order: the same for every target (see :meth:`parsed`)."""
        return tuple(self.parsed(CANONICAL_TARGET)[1].params)

    @property
    def template(self) -> KernelTemplate:
        """The source as a Jinja template (with its file name)."""
        return self._template

    @property
    def recipe(self) -> tuple:
        """``(source, requested name, file name, sorted constants)``: what rebuilds it."""
        t = self._template
        return (t.source, self._name, t.filename, tuple(sorted(self.constants.items())))

    @property
    def name(self) -> str:
        """The kernel function's name."""
        return self.parsed(CANONICAL_TARGET)[1].name

    @property
    def params(self) -> list[Param]:
        """The parameters, as a list (:attr:`signature` as a tuple)."""
        return list(self.signature)

    @property
    def type_vars(self) -> tuple[str, ...]:
        """Type variables still unbound by constants."""
        kdef = self.parsed(CANONICAL_TARGET)[1]
        return tuple(tv for tv in kdef.type_vars if tv not in self.constants)

    def __repr__(self) -> str:
        try:
            sig = ", ".join(f"{p.describe()} {p.name}" for p in self.params)
            return f"<portakern.Kernel {self.name}({sig})>"
        except Exception:  # noqa: BLE001 - repr must not fail on an unrendered template
            return "<portakern.Kernel (not yet rendered)>"

    def __reduce__(self) -> tuple:
        """Pickle as source, name, file name and constants; rebuilt (interned) on arrival."""
        from .launch.recipes import intern_kernel, kernel_recipe, rebuild_kernel

        if self._unsized is not None:  # the kernel without the size, sized on arrival
            return _resized, (self._unsized, self._groupsize)
        if self.labels:  # the kernel without them, relabelled on arrival
            base = self.specialize()
            base.labels = {}
            return _relabeled, (base, dict(self.labels))
        if self.debug:  # not part of the recipe: rebuilt in debug mode, never interned
            from .launch.debug import rebuild_kernel as rebuild_debug

            return rebuild_debug, (type(self), *kernel_recipe(self))
        intern_kernel(self)  # a round trip in this process gives this very object
        return rebuild_kernel, (type(self), *kernel_recipe(self))

    def __dask_tokenize__(self) -> str:
        """Deterministic across processes; distinct per source, name, constants and debug mode."""
        from .launch.recipes import kernel_token

        sized = "" if self._groupsize is None else f"-groupsize{self._groupsize}"
        return kernel_token(self) + ("-debug" if self.debug else "") + sized

    # -- rendering ------------------------------------------------------------------
    def _bindings(self, kdef: KernelDef, given: dict[str, str]) -> dict[str, str]:
        out = {}
        for tv in kdef.type_vars:
            if tv in given:
                out[tv] = given[tv]
            elif tv in self.constants:
                out[tv] = str(self.constants[tv])
        return out

    def _options(self) -> dict[str, Any]:
        """The variant options every rendering of this kernel has (a size from :meth:`sized`)."""
        return {} if self._groupsize is None else {"groupsize": self._groupsize}

    def sized(self, workgroupsize: Any) -> Kernel:
        """This kernel with a size given at instantiation taken as declared.

        ``kernel(backend, workgroupsize=16)`` of a kernel that reads ``@groupsize`` and
        declares no size launches this: ``@groupsize`` is a compile-time constant there,
        usable in ``@localmem`` sizes, one variant per size (:mod:`.launch.sizes`).
        Any other kernel is returned as it is."""
        from .launch.sizes import sized_kernel

        return sized_kernel(self, workgroupsize)

    def rendered(self, target: str, bindings: dict[str, str], ndim: int, *,
                 unmasked: bool = False, **extra: Any) -> RenderedKernel:
        """The :class:`RenderedKernel` for a target, type bindings and ndrange rank.

        ``unmasked`` renders the kernel without its implicit bounds mask (as
        ``@kernel(unsafe_indices)`` would), for launches whose workgroups tile the
        ndrange exactly; the masked kernel is lowered first all the same, so its
        errors (a ``return`` before ``@synchronize``) are never skipped. Other
        keywords are template options.
        """
        return self.render_variant(Variant.of(target, bindings, ndim, unmasked=unmasked,
                                              debug=self.debug, **self._options(), **extra))

    def render_variant(self, v: Variant) -> RenderedKernel:
        """Parse, lower and render one :class:`~portakern.variant.Variant`, memoised by it.

        It keeps its lowered tree: :meth:`RenderedKernel.variant` renders it with other options.
        """
        hit = self._rendered.get(v)
        if hit is None or hit.lowered is None:
            target, bindings, ndim, unmasked = v.target, dict(v.bindings), v.ndim, v.unmasked
            extra = dict(v.options)
            extra.pop("groupsize", None)  # in the parse already (parsed)
            self._check_portability()
            module, kdef = self.parsed(target)
            full = self._bindings(kdef, bindings)
            missing = [tv for tv in kdef.type_vars if tv not in full]
            if missing:
                raise KernelTypeError(
                    f"kernel {kdef.name!r}: type variable(s) {', '.join(missing)} unbound; "
                    f"pass arrays that bind them or use kernel.specialize({missing[0]}='float')")
            from .analysis.atomic_checks import check_atomic_types
            from .analysis.portability import refuse_cxx_constructs, refuse_methods
            from .lower.complex_ops import complex_rewrite
            from .lower.lowering import lower_kernel

            facts, info = self.facts(target), target_info(target)
            check_atomic_types(facts, module, kdef, target, full)
            refuse_methods(module, kdef, target)  # OpenCL C has no struct methods
            refuse_cxx_constructs(module, kdef, target, self.debug)  # nor overloads, ...
            module, kdef = complex_rewrite(facts, module, kdef, full, info)  # operators: calls
            lowered = lower_kernel(kdef, module, ndim, lockstep=lockstep_for(target, facts),
                                   debug=self.debug, unmasked=unmasked, initcheck=info.initcheck)
            hit = render_lowered(lowered, module.helpers, target, full,
                                 self._template.filename, user_source=self._template.source,
                                 **extra)
            self._rendered[v] = hit
        return hit

    def variant(self, target: str, bindings: tuple, ndim: int, *,
                unmasked: bool = False) -> RenderedKernel:
        """The rendering a launch compiles: memoised here, and on disk.

        ``bindings`` is the sorted tuple of ``(type variable, type name)`` pairs the
        argument checks return. An entry read from disk has no lowered tree; asked to
        render itself again with other options (:meth:`RenderedKernel.variant`, as
        the Metal launcher does), it renders this variant first.
        """
        v = Variant.of(target, bindings, ndim, unmasked=unmasked, debug=self.debug,
                       **self._options())
        hit = self._rendered.get(v)
        if hit is None:
            from .cache import store as cache

            hit = cache.rendered(self.recipe, v, render=lambda: self.render_variant(v))
            if hit.lowered is None:
                hit = replace(hit, rerender=lambda: self.render_variant(v))
            self._rendered[v] = hit
        return hit

    def build(self, backend: Backend, bindings: tuple, ndim: int, *,
              unmasked: bool = False) -> Any:
        """The variant compiled by ``backend`` (its ``compile`` result), built once.

        Keyed by the backend's ``cache_key`` and the :class:`~portakern.variant.Variant`,
        whose target is the backend's: a backend subclass may render another dialect
        on the same device (and so share ``cache_key``) as its parent.
        """
        v = Variant.of(backend.target, bindings, ndim, unmasked=unmasked, debug=self.debug,
                       **self._options())
        key = (backend.cache_key, v)
        compiled = self._compiled.get(key)
        if compiled is None:
            rendered = self.variant(backend.target, bindings, ndim, unmasked=unmasked)
            compiled = self._compiled[key] = backend.compile(rendered)
        return compiled

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
                target = CANONICAL_TARGET
        if target not in builtin_targets():
            from .render.emit import available_targets

            if target not in available_targets():
                raise KernelTypeError(
                    f"unknown target {target!r}; use one of {', '.join(available_targets())}")
        module, kdef = self.parsed(target)
        # str.__str__: an exact str, so a subclass's __eq__ cannot pass for a type name.
        names = {k: as_type_name(str.__str__(v) if isinstance(v, str) else v,
                                 what=f"type variable {k}") for k, v in bindings.items()}
        unknown = [k for k in names if k not in kdef.type_vars]
        if unknown:
            raise KernelTypeError(
                f"{unknown[0]!r} is not a type variable of kernel {kdef.name!r} "
                f"(its type variables: {', '.join(kdef.type_vars) or 'none'})")
        if ndim is None:
            from .lower.lowering import infer_ndim

            ndim = infer_ndim(kdef)
        return self.rendered(target, names, ndim).source

    # -- launching ------------------------------------------------------------------
    @overload
    def __call__(self, backend: Backend, workgroupsize: Any = None, ndrange: Any = None,
                 /) -> Launcher: ...

    @overload
    def __call__(self, backend: Backend, /, *, workgroupsize: Any = None,
                 ndrange: Any = None) -> Launcher: ...

    @overload
    def __call__(self, *args: Any, ndrange: Any = None,
                 workgroupsize: Any = None) -> Launch: ...

    def __call__(self, *args: Any, ndrange: Any = None, workgroupsize: Any = None,
                 **named: Any) -> Launcher | Launch:
        """Launch on the arrays' backend, or (given a backend) return a :class:`Launcher`.

        ``kernel(*arrays_and_scalars, ndrange=..., workgroupsize=None)`` checks the
        arguments and launches; it returns a :class:`~portakern.launch.timing.Launch` handle.
        ``kernel(backend, workgroupsize=None, ndrange=None)`` returns a launcher with
        those sizes static (KA's form). Arguments may name parameters; ``pk.Output`` stands
        for an array the launch allocates (:mod:`.launch.outputs`)."""
        if named:
            args = bind_named(self, args, named)
        # Warm path first (DESIGN §4): arguments of the types of a call whose types alone
        # decided the backend (NumPy -> CPU) go to the same launcher; the very arrays of
        # the last such call need no type lookup. A backend argument is never remembered.
        warm = self._warm
        if warm is not None and self._by_types_generation == resolve.generation:
            done = warm.warm(args, ndrange, workgroupsize)
            if done is not None:
                return done
        key = tuple(map(type, args))
        launcher = self._by_types.get(key)
        if launcher is not None and self._by_types_generation == resolve.generation:
            self._warm = launcher
            return launcher.run_args(args, ndrange, workgroupsize)
        if args and isinstance(args[0], Backend):
            if len(args) > 3:
                raise KernelTypeError(
                    "kernel(backend, workgroupsize=None, ndrange=None) returns a launcher; "
                    "pass the kernel's arguments to that launcher")
            backend = args[0]
            wg = args[1] if len(args) > 1 else workgroupsize
            nd = args[2] if len(args) > 2 else ndrange
            return Launcher(self.sized(wg), backend, wg, nd)
        # The types were not remembered, or a registration changed resolution.
        backend, by_type = (resolve.resolve_args(self, args) if Output not in key
                            else (outputs_backend(self, args), False))
        launcher = self._launchers.get(backend)
        if launcher is None:
            launcher = self._launchers[backend] = Launcher(self, backend)
        if self._by_types_generation != resolve.generation or len(self._by_types) > 64:
            self._by_types.clear()
            self._by_types_generation = resolve.generation
            self._warm = None
        if by_type:
            self._by_types[key] = launcher
        return launcher(*args, ndrange=ndrange, workgroupsize=workgroupsize)


class KernelFactory:
    """``pk.kernel``: make a :class:`Kernel` from source text, a file or a package resource.

    ``pk.kernel(source, name=None, **constants)``, ``pk.kernel.from_file(path, ...)`` and
    ``pk.kernel.from_resource(package, resource, ...)``. An object rather than a function
    with attributes, so type checkers see all three.
    """

    def __call__(self, source: str, name: str | None = None, **constants: Any) -> Kernel:
        """Create a :class:`Kernel` from source text (see :class:`Kernel`)."""
        return Kernel(source, name, **constants)

    def from_file(self, path: str | Path, name: str | None = None,
                  **constants: Any) -> Kernel:
        """Load a kernel from a ``.pk`` file (:meth:`Kernel.from_file`)."""
        return Kernel.from_file(path, name, **constants)

    def from_resource(self, package: str | ModuleType, resource: str,
                      name: str | None = None, **constants: Any) -> Kernel:
        """Load a kernel file shipped inside a package (:meth:`Kernel.from_resource`)."""
        return Kernel.from_resource(package, resource, name, **constants)

    def __repr__(self) -> str:
        return "portakern.kernel"

    def __reduce__(self) -> str:
        return "kernel"  # the module's one instance


kernel = KernelFactory()
"""Make a :class:`Kernel`: ``pk.kernel(source, name=None, **constants)``, or
``pk.kernel.from_file(path, ...)`` / ``pk.kernel.from_resource(package, resource, ...)``."""


def _relabeled(kernel: Kernel, labels: dict[str, str]) -> Kernel:
    """Unpickle a relabelled kernel (:meth:`Kernel.relabel`)."""
    return kernel.relabel(**labels)


def _resized(kernel: Kernel, workgroupsize: Any) -> Kernel:
    """Unpickle a kernel with a size given at instantiation (:meth:`Kernel.sized`)."""
    return kernel.sized(workgroupsize)


def _signature_text(kdef: KernelDef) -> str:
    return ", ".join(f"{p.describe()} {p.name}" for p in kdef.params)
