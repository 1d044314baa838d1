"""What the elementwise and reduction blocks share: arguments, backends, outputs, kernels."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..backends.base import Backend
from ..errors import CompilationError, KernelArgumentError, KernelSyntaxError, KernelTypeError
from ..kernels import Kernel
from ..launch.resolve import get_backend
from ..source.source_map import SourceMap
from ..syntax.tokens import significant, tokenize
from ..types import TYPE_DTYPES
from .fragments import Fragment, remap
from .params import BlockParam, is_scalar

__all__ = ["split_args", "backend_of", "out_dtype", "build_kernel", "preamble_names",
           "cast_scalar", "check_name", "plan_key", "Recorder"]


def check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
        raise KernelTypeError(f"{what} name must be a C identifier such as 'my_kernel', "
                              f"got {name!r}")
    return name


def preamble_names(preamble: object, kernel: str) -> set[str]:
    """The identifiers a preamble defines or uses (a fragment may name them)."""
    if not isinstance(preamble, str):
        raise KernelTypeError(f"preamble of {kernel!r} must be a str of C source, got "
                              f"{preamble!r}")
    if not preamble.strip():
        return set()
    smap = SourceMap(f"<{kernel}: preamble>", preamble,
                     list(range(1, preamble.count("\n") + 2)))
    names = set()
    for t in significant(tokenize(preamble, smap)):
        if t.kind == "id":
            names.add(t.text)
        elif t.kind == "pp":
            names.update(w for w in t.text.replace("(", " ").split()[1:3] if w.isidentifier())
    return names


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not is_scalar(value)


def split_args(kernel: str, ins: tuple[BlockParam, ...], outs: tuple[BlockParam, ...],
               args: tuple[Any, ...]) -> tuple[list[Any], list[Any]]:
    """The inputs and the given outputs (None where to allocate), checked one by one."""
    nin, nout = len(ins), len(outs)
    if len(args) not in (nin, nin + nout):
        names = ", ".join(p.name for p in ins)
        onames = ", ".join(p.name for p in outs)
        raise KernelTypeError(
            f"{kernel} takes {nin} input argument{'s' if nin != 1 else ''} ({names})"
            + (f", and optionally its {nout} output{'s' if nout != 1 else ''} ({onames})"
               if nout else "") + f"; got {len(args)}")
    given_in = list(args[:nin])
    given_out = list(args[nin:]) if len(args) > nin else [None] * nout
    for p, a in zip(ins, given_in, strict=False):
        if is_scalar(a):
            if p.raw:
                raise KernelTypeError(
                    f"{kernel}: argument {p.name!r} ({p.describe()}) is a raw array parameter "
                    f"and got the scalar {a!r}; pass an array")
        elif not _is_array(a):
            raise KernelTypeError(
                f"{kernel}: argument {p.name!r} ({p.describe()}) takes an array or a scalar, "
                f"got {type(a).__name__}; pass a NumPy, CuPy, MLX or PyOpenCL array")
    for p, a in zip(outs, given_out, strict=False):
        if a is not None and not _is_array(a):
            raise KernelTypeError(
                f"{kernel}: output {p.name!r} ({p.describe()}) takes an array to write, got "
                f"{type(a).__name__} {a!r}; pass an array, or leave it out to have it "
                f"allocated")
    return given_in, given_out


def backend_of(arrays: list[Any]) -> Backend:
    """The backend of the arrays passed (CPU() when there are only scalars)."""
    present = [a for a in arrays if a is not None and not is_scalar(a)]
    if not present:
        from ..backends.opencl import CPU

        return CPU()
    return get_backend(*present)


def dtype_getter(backend: Backend) -> Any:
    """``dtype_of(array)``: the NumPy dtype of an array of ``backend`` (MLX's included)."""
    def dtype_of(a: Any) -> np.dtype:
        if isinstance(a, np.ndarray):
            return a.dtype
        info = backend.array_info(a)
        return info.dtype if info is not None else np.dtype(a.dtype)
    return dtype_of


def allocate(backend: Backend, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """An output array; a 0-d one is a 1-element array reshaped (the CUDA stand-in's
    ``empty(())`` cannot fill a 0-d array)."""
    if shape:
        return backend.allocate(shape, dtype)
    return backend.allocate((1,), dtype).reshape(())


def out_dtype(kernel: str, p: BlockParam, bound: dict[str, str]) -> np.dtype:
    if not p.type_var:
        return TYPE_DTYPES[p.ctype]
    if p.ctype not in bound:
        raise KernelTypeError(
            f"{kernel}: the dtype of output {p.name!r} ({p.describe()}) is not known: no "
            f"input binds type variable {p.ctype}; pass the output array, or use a fixed "
            f"type such as 'float32 {p.name}'")
    return TYPE_DTYPES[bound[p.ctype]]


def cast_scalar(value: Any, type_name: str, kernel: str = "", name: str = "") -> Any:
    """A scalar as its parameter's type (CuPy's conversion), as a NumPy scalar.

    Raises
    ------
    KernelArgumentError
        The value does not fit the type (``300`` for an ``int8``); the message names the
        parameter.
    """
    dtype = TYPE_DTYPES[type_name]
    try:
        return dtype.type(value)
    except (OverflowError, ValueError) as exc:
        raise KernelArgumentError(
            f"{kernel}: argument {name!r} ({type_name}) cannot hold {value!r} ({exc}); pass "
            f"a value in range, or an array of a wider dtype") from None


def build_kernel(source: str, name: str, fragments: list[tuple[Fragment, int]],
                 bindings: dict[str, str], debug: bool | None) -> Kernel:
    """``pk.kernel`` on a generated source; a syntax error in a fragment is reported there."""
    try:
        return Kernel(source, name, filename=f"<{name}: generated>", debug=debug, **bindings)
    except KernelSyntaxError as exc:
        for frag, first in fragments:
            moved = remap(exc, frag, first)
            if moved is not exc:
                raise moved from None
        raise


def launch(kernel: Kernel, fragments: list[tuple[Fragment, int]], *args: Any,
           **kwargs: Any) -> Any:
    """Launch ``kernel``; a compiler error inside a fragment names the fragment's line.

    The parser checks a fragment's syntax, not its types: ``x +* y`` on a float is the C
    compiler's to refuse, and its message points at the generated source. The place is
    moved into the fragment (``<saxpy: operation>:1:7``); the generated source stays on
    the error as ``source``.
    """
    try:
        return kernel(*args, **kwargs)
    except KernelSyntaxError as exc:  # the body is parsed in full on its first launch
        for frag, first in fragments:
            moved = remap(exc, frag, first)
            if moved is not exc:
                raise moved from None
        raise
    except CompilationError as exc:
        text = str(exc.args[0]) if exc.args else ""
        generated = re.escape(kernel.template.filename)

        def move(m: re.Match) -> str:
            line = int(m.group(1))
            for frag, first in fragments:
                if first <= line < first + frag.text.count("\n") + 1:
                    return f"{frag.filename}:{line - first + 1}"
            return m.group(0)

        moved = re.sub(generated + r":(\d+)", move, text)
        if moved != text:
            exc.args = (moved, *exc.args[1:])
        raise


def line_of(source: str, marker: str) -> int:
    """The 1-based line of ``source`` just after the line holding ``marker``."""
    return source[: source.index(marker)].count("\n") + 2


def plan_key(args: tuple[Any, ...], size: int | None) -> tuple | None:
    """What decides a call's launch, where every argument is a contiguous NumPy array or
    a scalar (None otherwise): types, shapes, dtypes, which arguments are the same object."""
    parts: list[Any] = [size]
    for a in args:
        if isinstance(a, np.ndarray):
            if not a.flags.c_contiguous or not a.flags.writeable or not a.ndim:
                return None
            parts.append((a.shape, a.dtype.char))
        elif isinstance(a, (bool, int, float, np.generic)):
            parts.append(type(a))
        else:
            return None
    ids = [id(a) for a in args]
    parts.append(tuple(ids.index(i) for i in ids))
    return tuple(parts)


class Recorder:
    """A call's launches, recorded so that a call with like arguments replays them.

    ``values`` are the call's arrays and scalars in parameter order; each launch argument
    is recorded as a token: ``(0, k)`` value ``k`` itself (a NumPy array), ``(type, k)``
    value ``k`` converted, ``(2, v)`` the constant ``v``, ``(3, j)`` scratch array ``j``
    (allocated anew on each replay). Anything else (a view made for this call) makes the
    call unrecordable.
    """

    def __init__(self, values: list[Any]) -> None:
        self.values = values
        self.scalars: dict[int, int] = {}
        self.scratch: dict[int, tuple[int, tuple[int, ...], np.dtype, Any]] = {}
        self.steps: list[tuple] | None = []

    def scalar(self, value: Any, k: int) -> Any:
        self.scalars[id(value)] = k
        return value

    def allocate(self, backend: Backend, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        a = backend.allocate(shape, dtype)
        self.scratch[id(a)] = (len(self.scratch), shape, np.dtype(dtype), a)
        return a

    def launch(self, built: tuple[Kernel, list], *args: Any, **kwargs: Any) -> None:
        launch(*built, *args, **kwargs)
        if self.steps is None:
            return
        tokens = [self._token(a) for a in args]
        if any(t is None for t in tokens):
            self.steps = None
        else:
            self.steps.append((built, tokens, kwargs))

    def _token(self, obj: Any) -> tuple | None:
        for k, v in enumerate(self.values):
            if isinstance(v, np.ndarray) and obj is v:
                return (0, k)
        if id(obj) in self.scalars:
            return (type(obj), self.scalars[id(obj)])
        if id(obj) in self.scratch:
            return (3, self.scratch[id(obj)][0])
        if isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
            return (2, obj)
        return None

    def plan(self) -> tuple | None:
        """``(steps, scratch shapes and dtypes)``, or None when the call cannot replay."""
        if self.steps is None:
            return None
        specs = [(shape, dtype) for _, shape, dtype, _ in sorted(self.scratch.values(),
                                                                 key=lambda e: e[0])]
        return self.steps, specs


def replay(plan: tuple, values: list[Any]) -> bool:
    """Launch a :meth:`Recorder.plan` with new values (NumPy arrays on ``CPU()``).

    Returns False, launching nothing, when a scalar does not convert as before (out of
    range): the caller then takes the checked road, which names the argument.
    """
    steps, specs = plan
    scratch = [np.empty(shape, dtype) for shape, dtype in specs]
    try:
        calls = [(built, [values[v] if t == 0 else v if t == 2 else scratch[v] if t == 3
                          else t(values[v]) for t, v in tokens], kwargs)
                 for built, tokens, kwargs in steps]
    except (OverflowError, ValueError, TypeError):
        return False
    for built, args, kwargs in calls:
        launch(*built, *args, **kwargs)
    return True


def on_cpu_device(backend: Any) -> bool:
    """Whether ``backend`` runs on a CPU (:attr:`~portakern.backends.base.Backend.cpu_device`:
    ``CPU()``, or ``OpenCL`` on a CPU device such as PoCL)."""
    return bool(getattr(backend, "cpu_device", False))
