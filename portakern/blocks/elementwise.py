"""``pk.ElementwiseKernel``: CuPy's elementwise kernel, on every backend.

The parameter strings and the ``operation`` become a portakern ``@kernel`` source with
one work-item per element of the broadcast shape; it is built with ``pk.kernel`` and so
runs on every backend, in debug mode and on the stand-ins, through the same caches. One
source is generated per *layout*: the number of axes left after merging the axes every
array steps through as one, and for each parameter whether it is a scalar, a contiguous
array (indexed by the linear index), a strided one (offset and strides as scalar
parameters: views run without a copy) or raw.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import KernelTypeError
from ..kernels import Kernel
from .arrays import aligned_strides, broadcast_shape, c_strides, collapse, flat
from .common import (
    allocate,
    backend_of,
    build_kernel,
    cast_scalar,
    check_name,
    dtype_getter,
    launch,
    line_of,
    out_dtype,
    plan_key,
    preamble_names,
    split_args,
)
from .fragments import IND_SIZE, Fragment, check_fragment, placed
from .params import bind_types, check_unique, is_scalar, parse_params

__all__ = ["ElementwiseKernel", "coordinates", "index_expr"]

_OP_MARK = "// -- operation --"
_PRE_MARK = "// -- preamble --"
#: What :meth:`ElementwiseKernel._replay` returns when the call must take the checked road.
_FAILED = object()


def coordinates(ndim: int, extents: str = "_n") -> list[str]:
    """Lines that set ``_c0 ... _c{ndim-1}``, the work-item's coordinates (last fastest)."""
    if ndim == 1:
        return ["    const long _c0 = @index(Global, Linear);"]
    if ndim <= 3:
        names = ", ".join(f"_c{k}" for k in range(ndim))
        return [f"    auto [{names}] = @index(Global, NTuple);"]
    lead = ndim - 2
    out = ["    auto [_l, _ca, _cb] = @index(Global, NTuple);", "    long _r = _l;"]
    for k in range(lead - 1, 0, -1):
        out.append(f"    const long _c{k} = _r % {extents}{k}; _r /= {extents}{k};")
    out += ["    const long _c0 = _r;", f"    const long _c{lead} = _ca;",
            f"    const long _c{lead + 1} = _cb;"]
    return out


def index_expr(name: str, ndim: int, coords: str = "_c") -> str:
    return " + ".join([f"_{name}_o"] + [f"{coords}{k} * _{name}_s{k}" for k in range(ndim)])


class ElementwiseKernel:
    """An elementwise kernel from CuPy's three strings; runs on every backend.

    Parameters
    ----------
    in_params, out_params : str
        ``"[raw] TYPE NAME, ..."``: a NumPy dtype name (``float32``), a language type
        (``float``) or a type variable (any other name, bound from the arguments).
        Non-raw parameters are broadcast together (NumPy's rules) and the operation sees
        one element of each by its name; ``raw`` ones are whole arrays it indexes.
    operation : str
        C statements run once per element; ``i`` is the element's linear index and
        ``_ind.size()`` the number of elements.
    name : str
        The generated kernel's name (in errors and renderings).
    preamble : str
        C source put before the kernel: helper functions, ``#define``\\ s.
    no_return, return_tuple : bool
        CuPy's: return None, or always a tuple of the outputs.
    options : tuple of str
        CuPy's compiler options: accepted and not used (each backend picks its own).
    reduce_dims : bool
        Accepted for CuPy compatibility; axes are always merged where that is exact.
    debug : bool, optional
        Debug mode for the generated kernels (default: ``PORTAKERN_DEBUG``).

    Calling it with the inputs (and optionally the outputs, positionally after them)
    launches on the arrays' backend and returns the outputs: allocated on that backend
    with the broadcast shape when not passed. ``size=`` gives the number of work-items
    when every parameter is raw.
    """

    def __init__(self, in_params: str, out_params: str, operation: str,
                 name: str = "kernel", reduce_dims: bool = True, preamble: str = "",
                 no_return: bool = False, return_tuple: bool = False, *,
                 debug: bool | None = None, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            if key not in ("options", "loop_prep", "after_loop"):
                raise TypeError(f"ElementwiseKernel() got an unexpected keyword argument "
                                f"{key!r}")
            if key != "options" and value:  # CuPy's code around its loop: no loop here
                raise KernelTypeError(
                    f"ElementwiseKernel({key}=...) is not supported: each element is its "
                    f"own work-item, so there is no loop; put shared code in preamble=")
        self.name = check_name(name, "ElementwiseKernel")
        self.in_params = parse_params(in_params, False, "in_params")
        self.out_params = parse_params(out_params, True, "out_params")
        self.params = self.in_params + self.out_params
        check_unique(self.params)
        self.preamble = preamble
        types = frozenset(p.ctype for p in self.params if p.type_var)
        known = {p.name for p in self.params} | types | {"i", IND_SIZE}
        self.operation = check_fragment(operation, "operation", self.name, known,
                                        preamble_names(preamble, self.name),
                                        expression=False, types=types)
        self.no_return, self.return_tuple = no_return, return_tuple
        #: CuPy's counts: inputs, outputs, both.
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        self.debug = debug
        self._kernels: dict[tuple, tuple[Kernel, list]] = {}
        #: Arguments' types, shapes and identities -> how the launch went (NumPy only).
        self._plans: dict[tuple, tuple] = {}

    def __repr__(self) -> str:
        sig = ", ".join(p.describe() for p in self.params)
        return f"<portakern.ElementwiseKernel {self.name}({sig})>"

    # -- generating ------------------------------------------------------------------
    def source(self, ndim: int, kinds: tuple[str, ...], load_outputs: bool) -> str:
        """The generated ``@kernel`` source for one layout.

        ``kinds`` has one letter per parameter: ``S`` scalar, ``C`` contiguous, ``N``
        strided, ``R`` raw; ``c`` and ``n`` are inputs that share memory with an output
        (``k(x, x)``, CuPy's in-place form), declared without ``const`` (no-alias).
        """
        sig, body = [], []
        for p, kind in zip(self.params, kinds, strict=False):
            const = "" if p.is_out or kind in "cn" else "const "
            if kind == "S":
                sig.append(f"{p.ctype} {p.name}")
            elif kind == "R":
                sig.append(f"{const}{p.ctype}* {p.name}")
            else:
                sig.append(f"{const}{p.ctype}* _{p.name}")
                sig.append(f"long _{p.name}_o")
                if kind in "Nn":
                    sig += [f"long _{p.name}_s{k}" for k in range(ndim)]
        sig += [f"long _n{k}" for k in range(ndim)] + [f"long {IND_SIZE}"]
        body += coordinates(ndim)
        linear = "_c0"
        for k in range(1, ndim):
            linear = f"({linear}) * _n{k} + _c{k}"
        body.append(f"    const long i = {linear};")
        stores = []
        for p, kind in zip(self.params, kinds, strict=False):
            if kind in "SR":
                continue
            at = f"_{p.name}_o + i" if kind in "Cc" else index_expr(p.name, ndim)
            if not p.is_out:
                body.append(f"    const {p.ctype} {p.name} = _{p.name}[{at}];")
            elif load_outputs:
                body.append(f"    {p.ctype} {p.name} = _{p.name}[{at}];")
                stores.append(f"    _{p.name}[{at}] = {p.name};")
            else:
                body.append(f"    {p.ctype} {p.name} = ({p.ctype})0;")
                stores.append(f"    _{p.name}[{at}] = {p.name};")
        lines = []
        if self.preamble.strip():
            lines += [_PRE_MARK, "{% raw %}", self.preamble, "{% endraw %}"]
        lines += [f"@kernel void {self.name}({', '.join(sig)}) {{", *body, "    {",
                  _OP_MARK, placed(self.operation), "    ;}", *stores, "}"]
        return "\n".join(lines) + "\n"

    def kernel(self, ndim: int, kinds: tuple[str, ...], load_outputs: bool,
               bindings: dict[str, str]) -> tuple[Kernel, list]:
        """The built kernel of one layout and type binding, with where its fragment is."""
        key = (ndim, kinds, load_outputs, tuple(sorted(bindings.items())))
        hit = self._kernels.get(key)
        if hit is None:
            src = self.source(ndim, kinds, load_outputs)
            frags = [(self.operation, line_of(src, _OP_MARK) + 1)]  # after "{% raw %}"
            if _PRE_MARK in src:
                frags.append((Fragment(self.preamble, "preamble", self.name),
                              line_of(src, _PRE_MARK) + 1))
            hit = self._kernels[key] = (
                build_kernel(src, self.name, frags, bindings, self.debug), frags)
        return hit

    # -- launching -------------------------------------------------------------------
    def __call__(self, *args: Any, size: int | None = None, **kwargs: Any) -> Any:
        """Launch on the arguments' backend; return the outputs (see the class)."""
        for key in kwargs:
            if key not in ("stream", "block_size", "shared_mem"):
                raise TypeError(f"{self.name}() got an unexpected keyword argument {key!r}; "
                                f"pass outputs positionally after the inputs, as in CuPy")
        key = None if kwargs else plan_key(args, size)
        plan = self._plans.get(key) if key is not None else None
        if plan is not None:
            done = self._replay(plan, args)
            if done is not _FAILED:
                return done
        ins, outs = split_args(self.name, self.in_params, self.out_params, args)
        backend = backend_of(ins + outs)
        bound = bind_types(self.name, self.params, ins + outs, dtype_getter(backend))
        arrays = [(p, a) for p, a in zip(self.params, ins + outs, strict=False)
                  if a is not None and not p.raw and not is_scalar(a)]
        in_arrays = [(p, a) for p, a in arrays if not p.is_out]
        if in_arrays:
            shape = broadcast_shape([tuple(a.shape) for _, a in in_arrays],
                                    [p.name for p, _ in in_arrays], self.name)
            if size is not None:
                raise ValueError(f"{self.name}: size= is for kernels whose parameters are "
                                 f"all raw or scalars; here the shape {shape} is broadcast "
                                 f"from the arguments")
        else:
            given = [tuple(a.shape) for p, a in arrays if p.is_out]
            if given:
                shape = given[0]
            elif size is None:
                raise ValueError(f"{self.name}: no array argument gives the shape; pass "
                                 f"size=N (the number of elements) or an output array")
            else:
                shape = (int(size),)
        for p, a in arrays:
            if p.is_out and tuple(a.shape) != shape:
                raise ValueError(
                    f"{self.name}: output {p.name!r} has shape {tuple(a.shape)}, but the "
                    f"inputs broadcast to {shape}; pass an output of shape {shape}")
        load = any(a is not None for a in outs)
        results = []
        for p, a in zip(self.out_params, outs, strict=False):
            if a is None:
                a = allocate(backend, shape, out_dtype(self.name, p, bound))
            results.append(a)
        values = ins + results
        total = int(np.prod(shape, dtype=np.int64))
        if total:
            recipe = self._launch(backend, shape, values, load, bound)
            if key is not None and recipe is not None and len(self._plans) < 64:
                allocs = [(shape, out_dtype(self.name, p, bound)) if a is None else None
                          for p, a in zip(self.out_params, outs, strict=True)]
                self._plans[key] = (*recipe, allocs)
        if self.no_return:
            return None
        if len(results) == 1 and not self.return_tuple:
            return results[0]
        return tuple(results)

    def _replay(self, plan: tuple, args: tuple[Any, ...]) -> Any:
        """Launch as a call with arguments of the same types, shapes and layout did.

        Only NumPy arrays that went to the kernel as themselves and scalars make a plan
        (:func:`~portakern.blocks.common.plan_key`), so the first call's checks still hold.
        """
        kernel, frags, recipe, ndrange, allocs = plan
        results = list(args[len(self.in_params):])
        if not results:
            results = [np.empty(*alloc) for alloc in allocs]
        values = [*args[:len(self.in_params)], *results]
        try:
            launch_args = [values[item] if kind == 0 else item if kind == 2 else
                           kind(values[item]) for kind, item in recipe]
        except (OverflowError, ValueError, TypeError):
            return _FAILED  # a scalar out of range: the checked road names it
        launch(kernel, frags, *launch_args, ndrange=ndrange)
        if self.no_return:
            return None
        if len(results) == 1 and not self.return_tuple:
            return results[0]
        return tuple(results)

    def _launch(self, backend: Any, shape: tuple[int, ...], values: list[Any], load: bool,
                bound: dict[str, str]) -> tuple | None:
        """Launch; return what replays it (:meth:`_replay`), or None where it cannot be."""
        flats: dict[int, Any] = {}
        for k, (p, a) in enumerate(zip(self.params, values, strict=False)):
            if not p.raw and not is_scalar(a):
                flats[k] = flat(a, backend)
        order = sorted(flats)
        dims, strides = collapse(shape, [aligned_strides(flats[k], shape) for k in order])
        if not dims:
            dims, strides = (1,), [(0,) for _ in order]
        stride_of = dict(zip(order, strides, strict=False))
        contiguous = c_strides(dims)
        kinds, launch_args = [], []
        # How to rebuild launch_args from the values: (0, k) the value itself, (2, v) the
        # constant v, (type, k) the value converted.
        recipe: list[tuple[Any, Any]] | None = []
        for k, (p, a) in enumerate(zip(self.params, values, strict=False)):
            if p.raw:
                kinds.append("R")
                f = flat(a, backend)
                if f.offset or f.strides != c_strides(f.shape):
                    if p.is_out:
                        raise ValueError(f"{self.name}: raw output {p.name!r} must be "
                                         f"C-contiguous; pass a contiguous array")
                launch_args.append(f.handle)
                recipe = recipe if f.handle is a and recipe is not None else None
                if recipe is not None:
                    recipe.append((0, k))
            elif k not in flats:
                kinds.append("S")
                value = cast_scalar(a, bound.get(p.ctype, p.ctype), self.name, p.name)
                launch_args.append(value)
                if recipe is not None:
                    recipe.append((type(value), k))
            else:
                st = stride_of[k]
                kind = "C" if st == contiguous else "N"
                aliased = not p.is_out and any(_may_alias(flats[k].handle, flats[o].handle)
                                               for o in order if self.params[o].is_out)
                if aliased and type(flats[k].handle).__module__.startswith("mlx"):
                    # MLX updates a written array by rebinding it to the kernel's result,
                    # so the input goes as its own (lazy) array.
                    import mlx.core as mx

                    flats[k] = replace(flats[k], handle=mx.array(flats[k].handle))
                elif aliased:
                    kind = kind.lower()
                kinds.append(kind)
                launch_args += [flats[k].handle, flats[k].offset]
                if kind in "Nn":
                    launch_args += list(st)
                if recipe is not None and flats[k].handle is a:
                    recipe += [(0, k), (2, flats[k].offset)]
                    recipe += [(2, s) for s in st] if kind in "Nn" else []
                else:
                    recipe = None
        tail = list(dims) + [int(np.prod(dims, dtype=np.int64))]
        launch_args += tail
        kernel, frags = self.kernel(len(dims), tuple(kinds), load, bound)
        ndrange = dims if len(dims) <= 3 else (int(np.prod(dims[:-2])), dims[-2], dims[-1])
        launch(kernel, frags, *launch_args, ndrange=tuple(ndrange))
        if recipe is None:
            return None
        return kernel, frags, recipe + [(2, v) for v in tail], tuple(ndrange)


def _may_alias(a: Any, b: Any) -> bool:
    """Whether two flat buffers may share memory (an input passed as an output too)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.may_share_memory(a, b))
    base_a, base_b = getattr(a, "base_data", None), getattr(b, "base_data", None)
    if base_a is not None and base_b is not None:
        return bool(base_a == base_b)
    ptr_a = getattr(getattr(a, "data", None), "ptr", None)
    return ptr_a is not None and ptr_a == getattr(getattr(b, "data", None), "ptr", None)

