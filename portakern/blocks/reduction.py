"""``pk.ReductionKernel``: CuPy's reduction kernel, on every backend, over any axes.

The inputs are broadcast, the axes split into *kept* ones (the output's) and *reduced*
ones, and adjacent axes merged within each group where every array steps through them as
one. Three generated kernels do the work (each a portakern ``@kernel``):

- ``row``: one work-item per output element, looping over the reduced elements with four
  accumulators (so the additions of a sum do not wait on each other);
- ``tile``: where the reduced axes are the slow ones in memory (a sum over the first axis)
  one work-item per 32 consecutive outputs, whose inner loop walks contiguous memory;
- a full reduction (no kept axis) runs ``row`` over chunks of the outermost reduced axis
  into partial results of ``_type_reduce``, then ``final`` combines them and applies
  ``post_map_expr``.

``reduce_expr`` must be associative and commutative (CuPy's assumption too): the order in
which elements are combined is not the sequential one.
"""

from __future__ import annotations

import operator
import os
from typing import Any

import numpy as np

from ..errors import KernelTypeError
from ..kernels import Kernel
from ..types import TYPE_DTYPES
from .arrays import aligned_strides, broadcast_shape, collapse, flat
from .common import (
    Recorder,
    allocate,
    backend_of,
    build_kernel,
    cast_scalar,
    check_name,
    dtype_getter,
    line_of,
    on_cpu_device,
    out_dtype,
    plan_key,
    preamble_names,
    replay,
    split_args,
)
from .fragments import Fragment, check_fragment, placed
from .params import REDUCTION_RESERVED, bind_types, check_unique, is_scalar, parse_params

__all__ = ["ReductionKernel"]

#: The fewest outputs per work-item of the ``tile`` kernel (CPU devices only: a GPU reads
#: a column reduction coalesced with one work-item per output, the ``row`` kernel). Wider
#: tiles read longer runs of each row, which the CPU's prefetcher follows; the width is
#: chosen per launch so that every core has a tile.
TILE = 256
#: Rows the ``tile`` kernel combines per pass over its accumulators.
ROWS = 4
#: Accumulators of the ``row`` kernel.
UNROLL = 8
_MAP, _REDUCE, _POST = "// -- map_expr --", "// -- reduce_expr --", "// -- post_map_expr --"
_PRE_MARK = "// -- preamble --"


def normalize_axis(axis: Any, ndim: int, kernel: str) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        try:
            k = operator.index(a)
        except TypeError:
            raise KernelTypeError(f"{kernel}: axis must be None, an int or a tuple of ints, "
                                  f"got {axis!r}") from None
        if not -ndim <= k < ndim:
            raise ValueError(f"{kernel}: axis {k} is out of bounds for the inputs' "
                             f"{ndim} dimension{'s' if ndim != 1 else ''}; use -{ndim} to "
                             f"{ndim - 1}" if ndim else f"{kernel}: axis {k} given, but "
                             f"the inputs are 0-dimensional; use axis=None")
        k %= ndim
        if k in out:
            raise ValueError(f"{kernel}: axis {k} is repeated in axis={axis!r}")
        out.append(k)
    return tuple(sorted(out))


class ReductionKernel:
    """A reduction kernel from CuPy's strings; runs on every backend.

    Parameters
    ----------
    in_params, out_params : str
        As :class:`~portakern.blocks.ElementwiseKernel`'s; the inputs are broadcast.
    map_expr : str
        A C expression of the inputs: the value each element contributes.
    reduce_expr : str
        A C expression combining two partial results ``a`` and ``b``; associative and
        commutative.
    post_map_expr : str
        C that sets the outputs from the result ``a`` (``"y = sqrt(a)"``).
    identity : str
        The reduction's identity, a C expression (``"0"``, ``"-INFINITY"``).
    name : str
        The generated kernels' name.
    reduce_type : str, optional
        The type of ``a`` and ``b`` (``_type_reduce`` in the fragments); by default the
        first output's type.
    preamble : str
        C source before the kernels.
    debug : bool, optional
        Debug mode for the generated kernels.

    Call it with the inputs (and optionally the outputs), ``axis=`` (None: every axis,
    an int or a tuple) and ``keepdims=``; it returns the outputs, allocated on the
    inputs' backend when not given.
    """

    def __init__(self, in_params: str, out_params: str, map_expr: str, reduce_expr: str,
                 post_map_expr: str, identity: str | None, name: str = "reduce_kernel",
                 reduce_type: str | None = None, reduce_dims: bool = True,
                 preamble: str = "", options: Any = (), *, debug: bool | None = None) -> None:
        self.name = check_name(name, "ReductionKernel")
        self.in_params = parse_params(in_params, False, "in_params", REDUCTION_RESERVED)
        self.out_params = parse_params(out_params, True, "out_params", REDUCTION_RESERVED)
        self.params = self.in_params + self.out_params
        check_unique(self.params)
        if not self.out_params:
            raise KernelTypeError(f"{self.name}: a reduction needs at least one output "
                                  f"parameter (out_params)")
        if identity is None:
            raise KernelTypeError(f"{self.name}: give identity, the reduction's neutral "
                                  f"value as C text ('0', '-INFINITY')")
        if reduce_type is None:
            self.reduce_type = self.out_params[0].ctype
        else:
            from .params import language_type

            self.reduce_type = language_type(reduce_type) or reduce_type
            if self.reduce_type not in {p.ctype for p in self.params} | set(TYPE_DTYPES):
                raise KernelTypeError(f"{self.name}: reduce_type {reduce_type!r} is neither "
                                      f"a type nor a type variable of the parameters")
        pre = preamble_names(preamble, self.name)
        tvars = {p.ctype for p in self.params if p.type_var} | {"_type_reduce"}
        ins = {p.name for p in self.in_params}
        types = frozenset(tvars)
        self.map_expr = check_fragment(map_expr, "map_expr", self.name, ins | tvars, pre,
                                       expression=True, types=types)
        self.reduce_expr = check_fragment(reduce_expr, "reduce_expr", self.name,
                                          {"a", "b"} | tvars, pre, expression=True,
                                          types=types)
        scalars_ok = {p.name for p in self.params if p.is_out} | ins | {"a"}
        self.post_map_expr = check_fragment(post_map_expr, "post_map_expr", self.name,
                                            scalars_ok | tvars, pre, expression=False,
                                            types=types)
        self.identity = check_fragment(str(identity), "identity", self.name, tvars, pre,
                                       expression=True, types=types)
        self.preamble = preamble
        self.debug = debug
        self._kernels: dict[tuple, tuple[Kernel, list]] = {}
        #: Like calls' launches (NumPy only; :class:`~portakern.blocks.common.Recorder`).
        self._plans: dict[tuple, tuple] = {}

    def __repr__(self) -> str:
        sig = ", ".join(p.describe() for p in self.params)
        return f"<portakern.ReductionKernel {self.name}({sig})>"

    # -- generating ------------------------------------------------------------------
    def _head(self, with_map: bool = True) -> list[str]:
        ins = self.in_params
        lines = [f"#define _type_reduce {self.reduce_type}"]
        if self.preamble.strip():
            lines += [_PRE_MARK, "{% raw %}", self.preamble, "{% endraw %}"]
        args = ", ".join(f"const {p.ctype}{'*' if p.raw else ''} {p.name}" for p in ins)
        lines += ["static inline _type_reduce _pk_reduce(_type_reduce a, _type_reduce b) {",
                  "    return (", _REDUCE, placed(self.reduce_expr), "    );", "}"]
        if with_map:  # the final pass has no inputs, so no type variable of theirs
            lines += [f"static inline _type_reduce _pk_map({args}) {{",
                      "    return (_type_reduce)(", _MAP, placed(self.map_expr), "    );", "}"]
        return lines

    def _identity(self) -> str:
        return f"(_type_reduce)({self.identity.text})"

    def _signature(self, kinds: tuple[str, ...], nk: int, nr: int, mode: str) -> list[str]:
        """Parameters; a contiguous input has no stride for its innermost loop (the last
        reduced axis, or in ``tile`` mode the last kept one)."""
        sig = []
        for p, kind in zip(self.in_params, kinds, strict=False):
            if kind == "S":
                sig.append(f"{p.ctype} {p.name}")
            elif kind == "R":
                sig.append(f"const {p.ctype}* {p.name}")
            else:
                sig += [f"const {p.ctype}* _{p.name}", f"long _{p.name}_o"]
                unit = kind == "C"
                sig += [f"long _{p.name}_k{d}" for d in range(nk)
                        if not (unit and mode == "tile" and d == nk - 1)]
                sig += [f"long _{p.name}_r{d}" for d in range(nr)
                        if not (unit and mode != "tile" and d == nr - 1)]
        if mode == "partial":
            sig.append(f"{self.reduce_type}* _part")
        else:
            for p, kind in zip(self.out_params, kinds[len(self.in_params):], strict=False):
                if kind == "R":
                    sig.append(f"{p.ctype}* {p.name}")
                else:
                    sig += [f"{p.ctype}* _{p.name}", f"long _{p.name}_o"]
                    sig += [f"long _{p.name}_k{d}" for d in range(nk)]
        sig += [f"long _kn{d}" for d in range(nk)] + [f"long _rn{d}" for d in range(nr)]
        if mode == "partial":
            sig.append("long _chunk")
        return sig

    def _map_call(self, kinds: tuple[str, ...], depth: str, inner: str,
                  row: tuple[str, str] | None = None) -> str:
        """``_pk_map(...)`` at the innermost element ``inner`` (an index expression), and
        ``row = (index, axis)`` steps along another axis too."""
        args = []
        for p, kind in zip(self.in_params, kinds, strict=False):
            if kind in "SR":
                args.append(p.name)
            else:
                step = inner if kind == "C" else f"({inner}) * _{p.name}_{depth}"
                if row is not None:
                    step += f" + ({row[0]}) * _{p.name}_{row[1]}"
                args.append(f"_{p.name}[_{p.name}_b + {step}]")
        return f"_pk_map({', '.join(args)})"

    def _post(self, kinds: tuple[str, ...], nk: int, last: str | None) -> list[str]:
        """Set the outputs from ``a`` and store them at the work-item's kept coordinates."""
        lines = []
        outs = list(zip(self.out_params, kinds[len(self.in_params):], strict=False))
        for p, kind in outs:
            if kind != "R":
                lines.append(f"        {p.ctype} {p.name} = ({p.ctype})0;")
        lines += ["        {", _POST, placed(self.post_map_expr), "        ;}"]
        for p, kind in outs:
            if kind == "R":
                continue
            at = [f"_{p.name}_o"] + [f"_k{d} * _{p.name}_k{d}" for d in range(nk)]
            if last is not None:
                at.append(f"{last} * _{p.name}_k{nk}")  # the axis after the nk others
            lines.append(f"        _{p.name}[{' + '.join(at)}] = {p.name};")
        return lines

    def _bases(self, kinds: tuple[str, ...], nk: int) -> list[str]:
        lines = []
        if nk:
            lines.append("    long _q = _w;")
            for d in range(nk - 1, 0, -1):
                lines.append(f"    const long _k{d} = _q % _kn{d}; _q /= _kn{d};")
            lines.append("    const long _k0 = _q;")
        for p, kind in zip(self.in_params, kinds, strict=False):
            if kind not in "SR":
                terms = [f"_{p.name}_o"] + [f"_k{d} * _{p.name}_k{d}" for d in range(nk)]
                lines.append(f"    long _{p.name}_b = {' + '.join(terms)};")
        return lines

    def _loops_open(self, kinds: tuple[str, ...], outer: int, bounds: dict[int, tuple]
                    ) -> list[str]:
        """Nested loops over reduced axes ``0 .. outer-1``, moving each array's base."""
        lines = []
        for d in range(outer):
            lo, hi = bounds.get(d, ("0", f"_rn{d}"))
            ind = "    " * (d + 1)
            lines.append(f"{ind}for (long _j{d} = {lo}; _j{d} < {hi}; ++_j{d}) {{")
            for p, kind in zip(self.in_params, kinds, strict=False):
                if kind not in "SR":
                    lines.append(f"{ind}    const long _{p.name}_b{d} = _{p.name}_b;")
                    lines.append(f"{ind}    _{p.name}_b += _j{d} * _{p.name}_r{d};")
        return lines

    def _loops_close(self, kinds: tuple[str, ...], outer: int) -> list[str]:
        lines = []
        for d in reversed(range(outer)):
            ind = "    " * (d + 1)
            for p, kind in zip(self.in_params, kinds, strict=False):
                if kind not in "SR":
                    lines.append(f"{ind}    _{p.name}_b = _{p.name}_b{d};")
            lines.append(f"{ind}}}")
        return lines

    def row_source(self, kinds: tuple[str, ...], nk: int, nr: int, mode: str) -> str:
        """One work-item per output (``mode="row"``) or per chunk (``"partial"``)."""
        body = ["    const long _w = @index(Global, Linear);", *self._bases(kinds, nk)]
        accs = [f"_a{u}" for u in range(UNROLL)]
        body.append(f"    _type_reduce {', '.join(f'{a} = {self._identity()}' for a in accs)};")
        bounds = {}
        if mode == "partial":
            body += ["    const long _lo = _w * _chunk;",
                     "    const long _hi = min(_lo + _chunk, _rn0);"]
            bounds[0] = ("_lo", "_hi")
        last = nr - 1
        body += self._loops_open(kinds, last, bounds)
        ind = "    " * (last + 1)
        lo, hi = bounds.get(last, ("0", f"_rn{last}"))
        body.append(f"{ind}long _j = {lo};")
        body.append(f"{ind}for (; _j + {UNROLL} <= {hi}; _j += {UNROLL}) {{")
        for u, a in enumerate(accs):
            call = self._map_call(kinds, f"r{last}", f"_j + {u}")
            body.append(f"{ind}    {a} = _pk_reduce({a}, {call});")
        body.append(f"{ind}}}")
        body.append(f"{ind}for (; _j < {hi}; ++_j) "
                    f"_a0 = _pk_reduce(_a0, {self._map_call(kinds, f'r{last}', '_j')});")
        body += self._loops_close(kinds, last)
        body.append("    {")
        body.append(f"        const _type_reduce a = {_tree(accs)};")
        if mode == "partial":
            body.append("        _part[_w] = a;")
        else:
            body += self._post(kinds, nk, None)
        body.append("    }")
        sig = self._signature(kinds, nk, nr, mode)
        return "\n".join([*self._head(), f"@kernel void {self.name}({', '.join(sig)}) {{",
                          *body, "}"]) + "\n"

    def tile_source(self, kinds: tuple[str, ...], nk: int, nr: int) -> str:
        """One work-item per ``_tile`` consecutive outputs along the last kept axis.

        The accumulators live in ``_acc`` (one per output, of ``_type_reduce``), so the
        tile's width is a launch parameter.
        """
        body = ["    const long _t = @index(Global, Linear) % _ntiles;",
                "    const long _w = @index(Global, Linear) / _ntiles;"]
        body += self._bases(kinds, nk - 1)
        body += ["    const long _c0 = _t * _tile;",
                 f"    const long _cw = min(_tile, _kn{nk - 1} - _c0);",
                 f"    const long _ab = _w * _kn{nk - 1} + _c0;"]
        for p, kind in zip(self.in_params, kinds, strict=False):
            if kind not in "SR":
                step = "" if kind == "C" else f" * _{p.name}_k{nk - 1}"
                body.append(f"    _{p.name}_b += _c0{step};")
        body += [f"    for (long _c = 0; _c < _cw; ++_c) _acc[_ab + _c] = {self._identity()};"]
        last = nr - 1
        body += self._loops_open(kinds, last, {})
        ind = "    " * (last + 1)
        depth = f"k{nk - 1}"
        # ROWS rows at a time: each accumulator is loaded and stored once per ROWS rows.
        rows = [self._map_call(kinds, depth, "_c", (f"_j + {u}", f"r{last}"))
                for u in range(ROWS)]
        body += [f"{ind}long _j = 0;",
                 f"{ind}for (; _j + {ROWS} <= _rn{last}; _j += {ROWS})",
                 f"{ind}    for (long _c = 0; _c < _cw; ++_c) _acc[_ab + _c] = "
                 f"_pk_reduce(_acc[_ab + _c], {_tree(rows)});",
                 f"{ind}for (; _j < _rn{last}; ++_j)",
                 f"{ind}    for (long _c = 0; _c < _cw; ++_c) _acc[_ab + _c] = "
                 f"_pk_reduce(_acc[_ab + _c], "
                 f"{self._map_call(kinds, depth, '_c', ('_j', f'r{last}'))});"]
        body += self._loops_close(kinds, last)
        body += ["    for (long _c = 0; _c < _cw; ++_c) {",
                 "        const _type_reduce a = _acc[_ab + _c];"]
        body += self._post(kinds, nk - 1, "(_c0 + _c)")
        body.append("    }")
        sig = self._signature(kinds, nk, nr, "tile") + [
            f"{self.reduce_type}* _acc", "long _tile", "long _ntiles"]
        return "\n".join([*self._head(), f"@kernel void {self.name}({', '.join(sig)}) {{",
                          *body, "}"]) + "\n"

    def final_source(self, kinds: tuple[str, ...]) -> str:
        """Combine the partial results of a full reduction and set the outputs."""
        sig = [f"const {self.reduce_type}* _part", "long _nparts"]
        for p, kind in zip(self.in_params, kinds, strict=False):
            if kind == "S":
                sig.append(f"{p.ctype} {p.name}")
        for p, kind in zip(self.out_params, kinds[len(self.in_params):], strict=False):
            sig += ([f"{p.ctype}* {p.name}"] if kind == "R"
                    else [f"{p.ctype}* _{p.name}", f"long _{p.name}_o"])
        body = ["    if (@index(Global, Linear) == 0) {",
                f"    _type_reduce _a0 = {self._identity()};",
                "    for (long _p = 0; _p < _nparts; ++_p) _a0 = _pk_reduce(_a0, _part[_p]);",
                "    {", "        const _type_reduce a = _a0;", *self._post(kinds, 0, None),
                "    }", "    }"]
        head = self._head(with_map=False)
        return "\n".join([*head, f"@kernel void {self.name}({', '.join(sig)}) {{",
                          *body, "}"]) + "\n"

    def kernel(self, form: str, kinds: tuple[str, ...], nk: int, nr: int,
               bindings: dict[str, str]) -> tuple[Kernel, list]:
        """The built kernel of one form (``row``, ``partial``, ``tile``, ``final``), with
        where its fragments are."""
        key = (form, kinds, nk, nr, tuple(sorted(bindings.items())))
        hit = self._kernels.get(key)
        if hit is None:
            if form == "tile":
                src = self.tile_source(kinds, nk, nr)
            elif form == "final":
                src = self.final_source(kinds)
            else:
                src = self.row_source(kinds, nk, nr, form)
            frags = [(self.reduce_expr, line_of(src, _REDUCE) + 1)]
            if _MAP in src:
                frags.append((self.map_expr, line_of(src, _MAP) + 1))
            if _POST in src:
                frags.append((self.post_map_expr, line_of(src, _POST) + 1))
            if _PRE_MARK in src:
                frags.append((Fragment(self.preamble, "preamble", self.name),
                              line_of(src, _PRE_MARK) + 1))
            hit = self._kernels[key] = (
                build_kernel(src, self.name, frags, bindings, self.debug), frags)
        return hit

    # -- launching -------------------------------------------------------------------
    def __call__(self, *args: Any, axis: Any = None, keepdims: bool = False,
                 **kwargs: Any) -> Any:
        """Reduce; return the output (a tuple for several)."""
        for key in kwargs:
            if key != "stream":
                raise TypeError(f"{self.name}() got an unexpected keyword argument {key!r}; "
                                f"it takes axis= and keepdims=, and outputs positionally")
        key = None if kwargs else plan_key(args, None)
        if key is not None:
            try:
                key = (*key, axis, bool(keepdims), hash(axis))
            except TypeError:  # an unhashable axis (a list): its error comes below
                key = None
        plan = self._plans.get(key) if key is not None else None
        if plan is not None:
            steps, allocs = plan
            results = list(args[len(self.in_params):]) or [np.empty(*a) for a in allocs]
            if replay(steps, [*args[:len(self.in_params)], *results]):
                return results[0] if len(results) == 1 else tuple(results)
        ins, outs = split_args(self.name, self.in_params, self.out_params, args)
        backend = backend_of(ins + outs)
        bound = bind_types(self.name, self.params, ins + outs, dtype_getter(backend))
        arrays = [(p, a) for p, a in zip(self.in_params, ins, strict=False)
                  if not p.raw and not is_scalar(a)]
        if not arrays:
            raise ValueError(f"{self.name}: no input is a (non-raw) array to reduce; pass "
                             f"one")
        shape = broadcast_shape([tuple(a.shape) for _, a in arrays],
                                [p.name for p, _ in arrays], self.name)
        axes = normalize_axis(axis, len(shape), self.name)
        kept = [k for k in range(len(shape)) if k not in axes]
        out_shape = tuple(1 if k in axes else n for k, n in enumerate(shape)) if keepdims \
            else tuple(shape[k] for k in kept)
        results = []
        for p, a in zip(self.out_params, outs, strict=False):
            if a is None:
                a = allocate(backend, out_shape, out_dtype(self.name, p, bound))
            elif not p.raw and tuple(a.shape) != out_shape:
                raise ValueError(f"{self.name}: output {p.name!r} has shape "
                                 f"{tuple(a.shape)}, but the reduction gives {out_shape}; "
                                 f"pass an output of shape {out_shape}")
            results.append(a)
        if int(np.prod(out_shape, dtype=np.int64)):
            rec = Recorder(ins + results)
            self._launch(rec, backend, shape, axes, kept, ins, results, bound, keepdims)
            steps = rec.plan()
            if key is not None and steps is not None and len(self._plans) < 64:
                allocs = [(out_shape, out_dtype(self.name, p, bound)) if a is None else None
                          for p, a in zip(self.out_params, outs, strict=True)]
                self._plans[key] = (steps, allocs)
        return results[0] if len(results) == 1 else tuple(results)

    def _launch(self, rec: Recorder, backend: Any, shape: tuple[int, ...],
                axes: tuple[int, ...],
                kept: list[int], ins: list[Any], results: list[Any], bound: dict[str, str],
                keepdims: bool) -> None:
        values = ins + results
        flats = {k: flat(a, backend)
                 for k, (p, a) in enumerate(zip(self.params, values, strict=False))
                 if not p.raw and not is_scalar(a)}
        nin = len(self.in_params)
        in_keys = [k for k in sorted(flats) if k < nin]
        out_keys = [k for k in sorted(flats) if k >= nin]
        kept_shape = tuple(shape[k] for k in kept)
        red_shape = tuple(shape[k] for k in axes)
        full = {k: aligned_strides(flats[k], shape) for k in in_keys}
        out_st = {}
        for k in out_keys:
            st = flats[k].strides
            out_st[k] = tuple(st[d] for d in kept) if keepdims else st
        kdims, kstr = collapse(kept_shape, [tuple(full[k][d] for d in kept) for k in in_keys]
                               + [out_st[k] for k in out_keys])
        rdims, rstr = collapse(red_shape, [tuple(full[k][d] for d in axes) for k in in_keys])
        kstride = dict(zip(in_keys + out_keys, kstr, strict=False))
        rstride = dict(zip(in_keys, rstr, strict=False))
        if not rdims:  # nothing to reduce over (or only extent-1 axes): one element each
            rdims = (1,)
            rstride = {k: (0,) for k in in_keys}
        total = int(np.prod(rdims, dtype=np.int64))
        if int(np.prod(red_shape, dtype=np.int64)) == 0:
            rdims, total = (0,), 0
            rstride = {k: (0,) for k in in_keys}
        nk, nr = len(kdims), len(rdims)
        lead = in_keys[0] if in_keys else None
        # PyOpenCL arrays on a CPU device (PoCL) are a CPU too: the column walk of ``row``
        # over the first axis took 70x NumPy's time there, the ``tile`` form reads rows.
        on_cpu = on_cpu_device(backend)
        # On CPU() one work-item per group: the native path runs a group's items as one
        # SIMD loop, which would gather across rows instead of running each row's loop.
        # A small reduction keeps the default (one group: no threads to wake).
        work = int(np.prod(kdims, dtype=np.int64)) * total
        wg = (1,) if on_cpu and work >= 1 << 16 else None
        tile = (on_cpu and nk and lead is not None and kdims[-1] > 1 and total > 1
                and abs(kstride[lead][-1]) < abs(rstride[lead][-1] or 1 << 62))
        form = "tile" if tile else ("row" if nk else "partial")
        kinds, in_args = [], []
        for k, (p, a) in enumerate(zip(self.in_params, ins, strict=False)):
            if p.raw:
                kinds.append("R")
                in_args.append(flat(a, backend).handle)
            elif k not in flats:
                kinds.append("S")
                in_args.append(rec.scalar(cast_scalar(a, bound.get(p.ctype, p.ctype),
                                                      self.name, p.name), k))
            else:
                inner = kstride[k][-1] if form == "tile" else rstride[k][-1]
                kinds.append("C" if inner == 1 else "N")
                st = list(kstride[k]) + list(rstride[k])
                if kinds[-1] == "C" and form != "tile":
                    st = st[:-1]
                elif kinds[-1] == "C":
                    del st[nk - 1]
                in_args += [flats[k].handle, flats[k].offset] + st
        out_args = []
        for k, (p, a) in enumerate(zip(self.out_params, results, strict=False), start=nin):
            kinds.append("R" if p.raw else "O")
            if p.raw:
                out_args.append(flat(a, backend).handle)
            else:
                out_args += [flats[k].handle, flats[k].offset, *kstride[k]]
        kinds_t = tuple(kinds)
        extents = list(kdims) + list(rdims)
        if form == "partial":
            # A few chunks per core on a CPU; on a GPU, enough work-items to fill it.
            most = 8 * (os.cpu_count() or 1) if on_cpu else 1 << 16
            parts = max(1, min(rdims[0], most, -(-total // (4096 if on_cpu else 256))))
            chunk = max(1, -(-rdims[0] // parts))
            parts = max(1, -(-rdims[0] // chunk))
            rtype = bound.get(self.reduce_type, self.reduce_type)
            part = rec.allocate(backend, (parts,), TYPE_DTYPES[rtype])
            k1 = self.kernel("partial", kinds_t, 0, nr, bound)
            rec.launch(k1, *in_args, part, *extents, chunk, ndrange=(parts,), workgroupsize=wg)
            scal = [rec.scalar(v, k) for k, (v, kind) in enumerate(
                zip(in_args_scalars(self, ins, bound), kinds_t, strict=False)) if kind == "S"]
            final_outs = []
            for k, (p, a) in enumerate(zip(self.out_params, results, strict=False), start=nin):
                final_outs += ([flat(a, backend).handle] if p.raw
                               else [flats[k].handle, flats[k].offset])
            k2 = self.kernel("final", kinds_t, 0, 0, bound)
            rec.launch(k2, part, parts, *scal, *final_outs, ndrange=(1,))
            return
        count = int(np.prod(kdims, dtype=np.int64))
        if form == "tile":
            outer = count // kdims[-1]
            cores = os.cpu_count() or 1
            width = max(TILE, -(-kdims[-1] * outer // cores) if outer < cores else TILE)
            width = min(-(-width // 16) * 16, kdims[-1])
            ntiles = -(-kdims[-1] // width)
            rtype = bound.get(self.reduce_type, self.reduce_type)
            acc = rec.allocate(backend, (count,), TYPE_DTYPES[rtype])
            k1 = self.kernel("tile", kinds_t, nk, nr, bound)
            rec.launch(k1, *in_args, *out_args, *extents, acc, width, ntiles,
                   ndrange=(count // kdims[-1] * ntiles,), workgroupsize=wg)
        else:
            k1 = self.kernel("row", kinds_t, nk, nr, bound)
            rec.launch(k1, *in_args, *out_args, *extents, ndrange=(count,), workgroupsize=wg)




def _tree(names: list[str]) -> str:
    """The accumulators combined pairwise: ``_pk_reduce(_pk_reduce(_a0, _a1), ...)``."""
    while len(names) > 1:
        names = [f"_pk_reduce({x}, {y})" if y else x
                 for x, y in zip(names[::2], names[1::2] + [""] * (len(names) % 2), strict=False)]
    return names[0]


def in_args_scalars(block: ReductionKernel, ins: list[Any], bound: dict[str, str]) -> list:
    """Each input as its scalar value where it is one (None elsewhere), in order."""
    return [cast_scalar(a, bound.get(p.ctype, p.ctype), block.name, p.name)
            if is_scalar(a) and not p.raw
            else None for p, a in zip(block.in_params, ins, strict=False)]
