"""Arguments by parameter name, and written arrays the launch allocates (DESIGN §2a).

``kernel(y=y, x=x, a=2.0, ndrange=n)`` names parameters; positional and named
arguments mix as in Python (positions first). :class:`Output` stands in the place of a
written array parameter that the launch should allocate on the backend of the other
arrays, with the shape and dtype given or taken from another argument
(``Output(like="x")``); the launch's handle returns the arrays it made
(:attr:`~portakern.launch.timing.Launch.outputs`, :attr:`~portakern.launch.timing.Launch.output`),
so a library function does not write its allocation once per array library.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import KernelTypeError
from ..types import STORAGE_TYPES, TYPE_DTYPES, dtype_of

__all__ = ["Output", "bind_named", "outputs_backend", "with_outputs"]

_MISSING = object()


class Output:
    """A written array the launch allocates: pass it in the array's place.

    Parameters
    ----------
    shape : int or tuple of int, optional
        The array's shape (default: ``like``'s).
    dtype : dtype-like, optional
        Its dtype (default: ``like``'s, else the parameter's declared element type, else
        the dtype of another array bound to the same type variable).
    like : str, optional
        The name of another parameter whose array gives the shape and dtype.
    fill : number, optional
        Fill the array with this value before the launch (``fill=0`` for a kernel that
        adds into its output); by default it is uninitialised, like ``numpy.empty``.
    """

    __slots__ = ("shape", "dtype", "like", "fill")

    def __init__(self, shape: Any = None, dtype: Any = None, *, like: str | None = None,
                 fill: Any = None) -> None:
        if shape is None and like is None:
            raise KernelTypeError(
                "pk.Output needs a shape, or like='<parameter>' to take another argument's "
                "shape and dtype")
        if like is not None and not isinstance(like, str):
            raise KernelTypeError(f"pk.Output(like=...) takes a parameter name, got {like!r}")
        self.shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.like = like
        self.fill = fill

    def __repr__(self) -> str:
        what = f"like={self.like!r}" if self.shape is None else f"{tuple(self.shape)}"
        return f"pk.Output({what}{'' if self.dtype is None else f', {self.dtype}'})"


def _names(kernel: Any) -> list[str]:
    return [p.name for p in kernel.signature]


def bind_named(kernel: Any, args: tuple, named: dict[str, Any]) -> tuple:
    """``args`` with the ``named`` arguments put in their parameters' places.

    A relabelled kernel (:meth:`portakern.Kernel.relabel`) takes the caller's names too.

    Raises
    ------
    KernelTypeError
        A name that is no parameter, a parameter given twice, or one left out.
    """
    names = _names(kernel)
    labels = {label: name for name, label in kernel.labels.items()}
    out = list(args) + [_MISSING] * max(0, len(names) - len(args))
    for key, value in named.items():
        name = key if key in names else labels.get(key)
        if name is None:
            raise KernelTypeError(
                f"kernel {kernel.name!r} has no parameter {key!r}; its parameters are "
                f"{', '.join(names) or 'none'}")
        at = names.index(name)
        if out[at] is not _MISSING:
            raise KernelTypeError(
                f"kernel {kernel.name!r}: argument {key!r} is given twice, as argument "
                f"{at} and by name; pass it once")
        out[at] = value
    missing = [n for n, v in zip(names, out, strict=False) if v is _MISSING]
    if missing:
        raise KernelTypeError(
            f"kernel {kernel.name!r}: no value for {', '.join(map(repr, missing))} "
            f"(its parameters are {', '.join(names)}); pass each by position or by name")
    return tuple(out)


def _dtype_of(backend: Any, array: Any) -> np.dtype | None:
    info = backend.array_info(array)
    return None if info is None else np.dtype(info.dtype)


def _dtype(kernel: Any, backend: Any, param: Any, spec: Output, args: tuple,
           like: Any) -> np.dtype:
    if spec.dtype is not None:
        return spec.dtype
    if like is not None and _dtype_of(backend, like) is not None:
        return _dtype_of(backend, like)
    if param.type in TYPE_DTYPES or param.type in STORAGE_TYPES:
        return dtype_of(param.type)
    for p, a in zip(kernel.signature, args, strict=False):
        if p.pointer and p.type == param.type and type(a) is not Output:
            found = _dtype_of(backend, a)
            if found is not None:
                return found
    bound = kernel.constants.get(param.type)
    if isinstance(bound, str) and (bound in TYPE_DTYPES or bound in STORAGE_TYPES):
        return dtype_of(bound)
    raise KernelTypeError(
        f"kernel {kernel.name!r}: pk.Output for {param.name!r} ({param.describe()}) cannot "
        f"tell its dtype: give dtype=, like='<parameter>', or pass an array that binds "
        f"{param.type}")


def with_outputs(kernel: Any, backend: Any, args: tuple) -> tuple[tuple, tuple]:
    """``args`` with each :class:`Output` replaced by an array allocated on ``backend``,
    and those arrays in parameter order.

    Raises
    ------
    KernelTypeError
        An ``Output`` for a scalar or ``const`` parameter, an unknown ``like`` name, or a
        dtype that cannot be told.
    """
    params = kernel.signature
    names = _names(kernel)
    out = list(args)
    made = []
    for n, (p, a) in enumerate(zip(params, args, strict=False)):
        if type(a) is not Output:
            continue
        if not p.pointer or p.const:
            raise KernelTypeError(
                f"kernel {kernel.name!r}: pk.Output for {p.name!r} ({p.describe()}): only a "
                f"written array parameter (T* {p.name}) can be allocated by the launch")
        like = None
        if a.like is not None:
            if a.like not in names:
                raise KernelTypeError(
                    f"kernel {kernel.name!r}: pk.Output(like={a.like!r}) for {p.name!r} names "
                    f"no parameter; its parameters are {', '.join(names)}")
            like = args[names.index(a.like)]
            if type(like) is Output or not hasattr(like, "shape"):
                raise KernelTypeError(
                    f"kernel {kernel.name!r}: pk.Output(like={a.like!r}) for {p.name!r} needs "
                    f"an array passed for {a.like!r}, got {like!r}")
        shape = tuple(int(s) for s in (a.shape if a.shape is not None else like.shape))
        dtype = _dtype(kernel, backend, p, a, args, like)
        if a.fill is None:
            array = backend.allocate(shape, dtype)
        elif a.fill == 0:
            array = backend.zeros(shape, dtype)
        else:
            array = backend.to_device(np.full(shape, a.fill, dtype))
        out[n] = array
        made.append(array)
    return tuple(out), tuple(made)


def outputs_backend(kernel: Any, args: tuple) -> Any:
    """The backend of a call's arrays other than its :class:`Output` places (``CPU()`` if
    every array is one)."""
    from .. import registry
    from .resolve import get_backend

    arrays = [a for p, a in zip(kernel.signature, args, strict=False)
              if p.pointer and type(a) is not Output]
    return get_backend(*arrays) if arrays else registry.backend_by_name("CPU")
