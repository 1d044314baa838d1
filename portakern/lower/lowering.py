"""Lower the ``@`` constructs once, above the backends.

The result of lowering is a list of *parts*: the user's own tokens, generated
text (:class:`Gen`), and calls of target primitives (:class:`Call`) such as
``global_id(0)`` or ``barrier()``. Every target template folder defines the same
primitive macros, so the index arithmetic, the bounds mask, the row-major axis
order and the barrier-convergent segmentation are written here exactly once.

Axis order: ndrange axis ``d`` of ``D`` maps to hardware axis ``D - 1 - d``, so
the last (fastest) NumPy axis runs along hardware x and accesses coalesce.

Implicit bounds: unless the kernel says ``@kernel(unsafe_indices)``, work-items
outside the ndrange do nothing. A kernel without ``@synchronize`` is wrapped in
one ``if (pk_active)``. A kernel with barriers is cut at each barrier, each
segment between barriers is wrapped on its own, and declarations made in a
segment are hoisted above its ``if`` so that later segments still see them; this
keeps every barrier reached by every work-item of the group (the approach of
KernelAbstractions 0.9.34 and later). Control flow around a barrier is group-uniform:
the statements that set a loop's condition, and the ``@uniform`` declarations, are
found by :mod:`portakern.analysis.convergence` and stay outside the mask (per-item control
around a barrier is a ``KernelSyntaxError`` there).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from ..errors import NDRangeError
from ..syntax.language import (
    KERNEL_CONSTRUCTS,
    KernelDef,
    Module,
    Param,
    Token,
    hidden_params,
    significant,
)
from ..syntax.parts import Call, Gen, code, is_barrier, walk_parts
from .constructs import GROUPREDUCE_OPS
from .helper_functions import lower_helpers
from .lowerer import ATOMIC_OPS, Lowerer, NotLockstep
from .subscripts import DEBUG_RECORD, check_subscripts, localmem_names

__all__ = ["Gen", "Call", "LoweredKernel", "lower_kernel", "lower_helpers", "KERNEL_CONSTRUCTS",
           "NotLockstep", "ATOMIC_OPS", "GROUPREDUCE_OPS",
           "infer_ndim", "DEBUG_RECORD", "check_subscripts", "localmem_names"]



@dataclass
class LoweredKernel:
    """A kernel ready for any target's template."""

    name: str
    params: list
    type_vars: tuple[str, ...]
    ndim: int
    unsafe_indices: bool
    localmem: list[list] = field(default_factory=list)
    body: list = field(default_factory=list)
    masked: bool = True
    line: int = 0  # the user's line of the @kernel signature
    #: Lowered for a target that runs a group's work-items in loops (see lower_kernel).
    lockstep: bool = False
    #: Debug mode (see lower_kernel): ``params`` ends with the hidden record
    #: :data:`DEBUG_RECORD`, and :attr:`checked` is what renders instead of ``body``.
    debug: bool = False
    #: ``body`` with every subscript of an array parameter bounds-checked (debug mode).
    #: ``body`` itself stays as written, so analyses of it (MLX's write-back modes)
    #: see the same accesses in both modes.
    checked: list = field(default_factory=list)
    #: ``@kernel(workgroupsize=...)`` for this ndrange rank, in ndrange order (the
    #: templates render it in hardware order: x is the last axis), or None.
    workgroupsize: tuple[int, ...] | None = None
    #: False for ``@kernel(contract=false)``: the templates turn FMA contraction off.
    contract: bool = True
    #: The arrays whose ``@atomic_add``/``@atomic_sub`` a lockstep lowering turned into
    #: thread-private sums, each with its private size: ``((name, U), ...)``
    #: (:mod:`portakern.lower.private_atomics`; the ``c`` template decides per bound type).
    private_atomics: tuple[tuple[str, int], ...] = ()
    #: Debug mode: the struct methods that take the hidden record (:mod:`.debug_methods`).
    debug_methods: frozenset[str] = frozenset()

    @property
    def workgroup_items(self) -> int:
        """Work-items per group of the declared workgroup size (0 if none is declared)."""
        return math.prod(self.workgroupsize) if self.workgroupsize is not None else 0

    @property
    def group_bound(self) -> int | None:
        """The most elements of a ``@localmem`` array (0 without one), or None.

        None where a size is not a product of integer literals, or where a work-item
        keeps state in a group-sized array (text with ``pk_items``, which only the
        lockstep lowering writes): then the group a kernel runs in is not the native
        path's to grow (:mod:`portakern.backends.native_groups` reads this fact from
        the ``c`` rendering).
        """
        body = walk_parts(self.body)
        if any(isinstance(it, Gen) and "pk_items" in it.text for it in body):
            return None
        most = 0
        for decl in self.localmem:
            if not decl or not isinstance(decl[0], Call) or decl[0].macro != "localmem":
                continue  # a collective's hidden buffer (GPU dialects only)
            n = 1
            for it in code(decl[0].args[2]):
                if isinstance(it, Token) and it.kind == "num":
                    literal = re.fullmatch(r"(\d+)[uUlL]*", it.text)
                    if literal is None:
                        return None
                    n *= int(literal.group(1))
                elif not (isinstance(it, Gen) and it.text in ("[", "]")):
                    return None  # a macro or an expression
            most = max(most, n)
        return most

    @property
    def rendered_body(self) -> list:
        """The parts the target template renders."""
        return self.checked if self.debug else self.body


def _masked_checks(lw: Lowerer, kernel: KernelDef, items: list, lockstep: bool,
                   debug: bool) -> None:
    """Raise what masking ``items`` (lowered by ``lw`` without the mask) for ``kernel``
    would: the masking pass of a lowerer with ``lw``'s findings, its result dropped."""
    if lockstep:
        from .lockstep import LockstepLowerer

        check: Lowerer = LockstepLowerer(kernel, lw.module, lw.ndim, debug=debug)
    else:
        check = Lowerer(kernel, lw.module, lw.ndim)
    check.localmem, check.local_dims = list(lw.localmem), dict(lw.local_dims)
    for name, value in vars(lw).items():
        vars(check).setdefault(name, value)  # what lower_tokens found (lockstep's too)
    check.mask(items)


def infer_ndim(kernel: KernelDef) -> int:
    """The ndrange rank a kernel's NTuple unpacking implies (1 if it has none)."""
    best = 0
    sig = significant(kernel.body)
    for i, t in enumerate(sig):
        if t.kind == "at" and t.text == "@index":
            j = i + 1
            args = []
            while j < len(sig) and not sig[j].is_punct(")"):
                if sig[j].kind == "id":
                    args.append(sig[j].text)
                j += 1
            if "NTuple" in args:
                names = _lookback_names(sig[:i])
                best = max(best, min(len(names), 3))
        if t.kind == "at" and t.text in ("@ndrange", "@groupsize"):
            if i + 2 < len(sig) and sig[i + 2].kind == "num":
                try:
                    best = max(best, min(int(sig[i + 2].text) + 1, 3))
                except ValueError:
                    pass
    if isinstance(kernel.workgroupsize, tuple):
        best = best or len(kernel.workgroupsize)
    return best or 1


def _lookback_names(sig: list[Token]) -> list[str]:
    # ... auto [ a , b ] =  (sig ends just before @index)
    if len(sig) < 4 or not sig[-1].is_punct("="):
        return []
    k = len(sig) - 2
    if not sig[k].is_punct("]"):
        return []
    names = []
    k -= 1
    while k >= 0 and not sig[k].is_punct("["):
        if sig[k].kind == "id":
            names.append(sig[k].text)
        k -= 1
    return names[::-1]


def lower_kernel(kernel: KernelDef, module: Module, ndim: int, *,
                 lockstep: bool = False, debug: bool = False,
                 unmasked: bool = False, initcheck: bool = False) -> LoweredKernel:
    """Lower one kernel for an ndrange of ``ndim`` axes.

    ``lockstep`` lowers a kernel with ``@synchronize`` or ``@localmem`` for a target
    that runs each workgroup's work-items one after another (one whose ``macros.j2``
    sets ``lockstep = true``: the ``c`` target of CPU()'s native path), the way
    KernelAbstractions' CPU backend does: the body is cut at each barrier into runs,
    each run becomes a loop over the group's work-items (``items_begin``/``items_end``
    macros), a barrier is the end of one loop and the start of the next, and a
    variable declared in a run lives on as one element per work-item
    (``pk_priv_<name>[pk_items]``, bound by reference in every later loop). A loop
    around ``@synchronize`` runs once per group, and so do the group-uniform
    statements that update what it depends on (:mod:`portakern.analysis.convergence`; on
    other targets every work-item runs them, unmasked). The caller checks first that
    no jump leaves a work-item loop (:attr:`portakern.syntax.tree.BodyFacts.lockstep_blocker`).

    ``debug`` adds the hidden parameter :data:`DEBUG_RECORD` and bounds-checks every
    subscript of an array parameter (:func:`check_subscripts`); the analyses above
    run on the same parts as without it. With ``lockstep``, or with ``initcheck`` (a
    target whose ``macros.j2`` defines the initcheck primitives: OpenCL), debug mode
    also checks reads of ``@localmem`` (:mod:`.initcheck`) and races on it
    (:mod:`.racecheck`).

    ``unmasked`` lowers the kernel without its bounds mask (as ``unsafe_indices`` does),
    for a launch whose groups cover the ndrange exactly, in one lowering: the errors
    only the masked lowering finds (a ``return`` before ``@synchronize``, a declaration
    it would hoist) are still raised, by the masking pass alone run over the same
    lowered parts, so an exact launch never accepts what a partial one refuses.
    """
    if debug:  # debug mode checks the subscripts that #define macros write, where used
        from ..syntax.macros import expand_macros

        kernel = replace(kernel, body=expand_macros(kernel.body, module.helpers, kernel.line))
    if unmasked and not kernel.unsafe_indices:
        masked_kernel, kernel = kernel, replace(kernel, unsafe_indices=True)
    else:
        masked_kernel = None
    if isinstance(ndim, bool) or not isinstance(ndim, int) or not 0 <= ndim <= 3:
        raise NDRangeError(f"kernel {kernel.name!r}: the ndrange rank must be 0, 1, 2 or 3, "
                           f"got {ndim!r}")
    written = kernel
    if lockstep:
        from ..syntax.pointer_checks import references_as_pointers  # no arrays of references
        from .lockstep import LockstepLowerer  # imports this module

        kernel = replace(kernel, body=references_as_pointers(kernel.body))
        lw: Lowerer = LockstepLowerer(kernel, module, ndim, debug=debug)
    else:
        lw = Lowerer(kernel, module, ndim)
    items = lw.lower_tokens(kernel.body)
    try:
        if masked_kernel is not None and any(is_barrier(it) for it in items):
            _masked_checks(lw, masked_kernel, items, lockstep, debug)
        body, masked = lw.mask(items)
    except RecursionError:
        raise module.source_map.error_at(
            f"kernel {kernel.name!r} nests blocks around @synchronize too deeply to lower",
            Token("at", "@kernel", kernel.line, kernel.col)) from None
    if masked and not lockstep:
        body = [Gen("const bool pk_active = ")] + lw.active() + [Gen(";\n")] + body
    params = [*kernel.params, *hidden_params(kernel.params)]
    checked: list = []
    localmem = lw.localmem
    methods: frozenset[str] = frozenset()
    if debug:
        params = [*params, Param(DEBUG_RECORD, "long", True, False, len(params))]
        arrays = {p.name for p in kernel.params if p.pointer and not p.axes}
        from .debug_helpers import helper_pointers, pass_extents
        from .debug_methods import struct_scan
        from .debug_views import check_private, debug_targets, rewrite_views
        from .subscripts import item_ids

        views, private = debug_targets(written, module,
                                       struct_scan(expand_macros(module.helpers)).arrays)
        flat = {p.name: p.index for p in kernel.params if p.pointer and not p.axes}
        helpers = helper_pointers(expand_macros(module.helpers))
        # Pointers into 1-d @localmem and private arrays are checked like views of
        # parameters, and a helper given one checks it against the array's extent.
        local = {n: (d[0], -1 - 16 * k) for k, (n, d) in enumerate(lw.local_dims.items())
                 if len(d) == 1}
        local.update({n: (d[0], -1 - 16 * (len(lw.local_dims) + k))
                      for k, (n, d) in enumerate(private.items()) if len(d) == 1})
        if lockstep:  # a view living across a barrier whose private array does not
            hoisted = {m for it in walk_parts(body) if isinstance(it, Gen)  # (unchecked)
                       for m in re.findall(r"pk_priv_(\w+)\[pk_items\]", it.text)}
            views = {v: o for v, o in views.items()
                     if not (o in private and v in hoisted and o not in hoisted)}
        # Pointers into multi-dimensional ones are checked against the flat extent.
        from .debug_rows import FLAT_DIMENSION, check_rows, flat_size, flat_text, rewrite_rows

        ranked = {**lw.local_dims, **private}  # the k-th array's codes: -1 - 16 * k - d
        rows = {n: (flat_size(d), -1 - 16 * k - FLAT_DIMENSION)
                for k, (n, d) in enumerate(ranked.items()) if len(d) > 1}
        row_views = {v: o for v, o in views.items() if o in rows}
        views = {v: o for v, o in views.items() if o not in rows}
        body = rewrite_rows(body, {n: ranked[n] for n in rows}, row_views, set(helpers))
        body = rewrite_views(body, arrays | set(local), views)
        local.update({flat_text(n, len(ranked[n])): r for n, r in rows.items()})
        views.update({v: flat_text(o, len(ranked[o])) for v, o in row_views.items()})
        checked = pass_extents(body, helpers, flat, views,
                               lambda line, inside: item_ids(ndim, line, inside),
                               not lockstep, local, _shadowed(lw, lockstep, initcheck),
                               lockstep, {flat_text(n, len(ranked[n])): n for n in rows})
        from .debug_helpers import known_places
        from .debug_method_pointers import method_pointers
        from .debug_methods import checkable_methods, methods_in, pass_to_methods

        expanded = expand_macros(module.helpers)
        methods = checkable_methods(expanded, kernel.body)
        epoch = any(_shadowed(lw, lockstep, initcheck).values())
        checked = pass_to_methods(
            checked, methods, lambda line, inside: item_ids(ndim, line, inside), not lockstep,
            lambda here: Call("helper_context", (("loop" if here else "group") if lockstep
                                                 else "any", epoch), 0),
            pointers=method_pointers(expanded, methods_in(expanded, methods) if methods else []),
            known=known_places(flat, views, local, _shadowed(lw, lockstep, initcheck),
                               {flat_text(n, len(ranked[n])): n for n in rows}))
        checked = check_subscripts(checked, arrays, ndim,
                                   inside_item=not lockstep, local=lw.local_dims)
        checked = check_private(checked, private, len(lw.local_dims), ndim,
                                inside_item=not lockstep)
        checked = check_rows(checked, rows, ndim, inside_item=not lockstep)
        if lockstep:  # the group runs once here: its @localmem reads are initchecked
            from .initcheck import check_reads, fast_runs, seal_barriers, shadows
            from .racecheck import bump_epochs, quiet_reads

            decls, have = shadows(lw.local_dims, race=True)
            checked = quiet_reads(check_reads(checked, have, lw.local_dims, ndim,
                                              inside_item=False, race=frozenset(have)), ndim)
            checked = decls + seal_barriers(bump_epochs(fast_runs(checked)), have)
        elif initcheck and lw.local_dims:
            from .initcheck import check_reads, group_shadows
            from .racecheck import bump_epochs, group_race_shadows

            clear, have, extra = group_shadows(lw.local_dims, lw.localmem)
            race_clear, race_extra = group_race_shadows(have, lw.localmem)
            # Only arrays declared with a constant size have race shadows (not those sized
            # at launch); without any, no epoch is kept.
            raced = frozenset(d[0].args[1][len("pk_rcs_"):] for d in race_extra)
            checked = check_reads(checked, have, lw.local_dims, ndim, race=raced)
            checked = race_clear + clear + (bump_epochs(checked) if raced else checked)
            localmem = [*lw.localmem, *extra, *race_extra]
    return LoweredKernel(kernel.name, params, kernel.type_vars, ndim,
                         kernel.unsafe_indices, localmem, body, masked, kernel.line,
                         lockstep, debug, checked, workgroupsize=lw.declared,
                         contract=kernel.contract,
                         private_atomics=tuple(sorted(getattr(lw, "private", {}).items())),
                         debug_methods=methods)


def _shadowed(lw: Lowerer, lockstep: bool, initcheck: bool) -> dict[str, bool]:
    """The ``@localmem`` arrays the initcheck below gives shadows, each with whether it has a
    race shadow too: a helper function given one checks its accesses with them."""
    if lockstep:
        from .initcheck import shadows

        return dict.fromkeys(shadows(lw.local_dims)[1], True)
    if initcheck and lw.local_dims:
        from .initcheck import group_shadows
        from .racecheck import group_race_shadows

        have = group_shadows(lw.local_dims, lw.localmem)[1]
        raced = {d[0].args[1][len("pk_rcs_"):] for d in group_race_shadows(have, lw.localmem)[1]}
        return {n: n in raced for n in have}
    return {}
