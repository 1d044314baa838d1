"""Argument checks: every launch argument against the kernel's signature.

:func:`check_args` turns a call's arguments into what the backend launches (array
handles and exactly-typed scalars) and the type-variable bindings, or raises an
error naming the argument, what was expected and the fix; nothing is launched or
written before it returns, so a rejected call changes no array. :func:`remember`
and :func:`recall` let a launcher skip the full checks when the same arrays (same
dtype, shape and flags) come again.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..backends.base import Backend
from ..errors import (
    BackendMismatchError,
    KernelArgumentError,
    KernelTypeError,
    PortakernError,
    locate,
    source_line,
)
from ..syntax.language import KernelDef, check_count
from ..syntax.vectors import VECTOR_TYPES, element_dtype
from ..syntax.vectors import check_array as check_vector_array
from ..types import KNOWN_TYPES, STORAGE_TYPES, TYPE_DTYPES, dtype_of, type_name_of
from .layouts import contiguous_fix as _contiguous
from .layouts import library_of as _library
from .layouts import nd_layout, span_view
from .struct_arrays import check_struct_array

__all__ = ["check_args", "convert_scalar", "located", "none_for_array", "recall", "remember",
           "scalar_for_array"]


def remember(kdef: KernelDef, args: tuple, launch_args: list, bindings: tuple,
              constants: dict[str, Any], infos: dict) -> tuple | None:
    """What :func:`recall` needs to pass the same arrays again without the full checks.

    ``infos`` holds the ``ArrayInfo`` the checks got for each array. A NumPy array
    the backend passes as itself (``CPU()``) is compared by dtype, shape and flags
    on recall; any other array is described again by ``backend.array_info`` (a
    fraction of the checks' cost) and compared with what it was. Arrays are held
    weakly and handles not at all, so a launcher never keeps an array or its device
    memory alive.
    """
    for i, p in enumerate(kdef.params):
        if p.axes and launch_args[i] is not args[i] and not (
                type(args[i]) is np.ndarray and type(launch_args[i]) is np.ndarray):
            return None  # a PyOpenCL array's buffer and offset: checked on every launch
    by_arrays = {p.type for p in kdef.params if p.pointer}
    bound = dict(bindings)
    entries: list = []
    for i, (p, a) in enumerate(zip(kdef.params, args, strict=True)):
        if p.pointer and a is None:  # an optional array passed None: its null handle
            entries.append((None, None, launch_args[i], None, p))
        elif p.pointer:
            try:
                ref = weakref.ref(a)
            except TypeError:
                return None
            if type(a) is np.ndarray and launch_args[i] is a:
                flags = a.flags
                entries.append((ref, a.dtype, a.shape, flags.writeable, flags.c_contiguous,
                                True))
            elif p.axes and type(a) is np.ndarray:
                # An N-d view with gaps or negative steps passes the span of its memory,
                # a new view each launch (never held): its length is remembered.
                flags = a.flags
                entries.append((ref, a.dtype, a.shape, flags.writeable, flags.c_contiguous,
                                False, launch_args[i].size))
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
    n = len(kdef.params)
    # The N-d arrays' extents, strides and offsets follow from the dtype, shape and
    # flags the entries compare, so they are remembered as they are.
    template = [None if p.pointer and a is not None else v
                for p, a, v in zip(kdef.params, args, launch_args[:n], strict=True)] \
        + launch_args[n:]
    return tuple(entries), template, bindings


def prepare(backend: Backend, memo: tuple, plan: Any, launch_args: list) -> Any:
    """``backend.prepare_launch`` for a launch of the arrays ``memo`` remembers, or None.

    Only where every array is passed as itself (a NumPy array on ``CPU()``): then a
    :func:`recall` hit of ``memo`` means the very arrays, alive and unchanged, which
    is what a prepared launch asks of its caller. Another backend's handles are
    described anew on each call, so they are never prepared.
    """
    if not all(e[5] for e in memo[0] if e[0] is not None):
        return None
    return backend.prepare_launch(plan.compiled, launch_args, plan.global_size,
                                  plan.local_size)


def recall(memo: tuple, args: tuple, backend: Backend) -> tuple[list, tuple] | None:
    """The checked launch arguments for ``args`` if they match the remembered call."""
    entries, template, bindings = memo
    if len(args) != len(entries):
        return None
    out = template.copy()
    for i, e in enumerate(entries):
        a = args[i]
        ref = e[0]
        if ref is not None:
            if ref() is not a:
                return None
            if e[5]:
                # (A dtype is most often the very object remembered: `is` first.)
                dtype = a.dtype
                if dtype is not e[1] and dtype != e[1] or a.shape != e[2]:
                    return None
                flags = a.flags
                if flags.writeable is not e[3] or flags.c_contiguous is not e[4]:
                    return None
                out[i] = a
            elif len(e) > 6:  # an N-d NumPy view passed as its span (see remember)
                flags = a.flags
                if a.dtype != e[1] or a.shape != e[2] or flags.writeable is not e[3] \
                        or flags.c_contiguous is not e[4]:
                    return None
                out[i] = span_view(a, e[6])
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
            try:
                out[i] = convert_scalar(a, e[3], i, e[4])
            except PortakernError:
                return None  # the full checks say it, with the labels and the binding
    return out, bindings


def _describe(i: int, p: Any, label: str | None = None, origin: str | None = None) -> str:
    """``argument 2 'a' (T)``; a label replaces the position and name (the caller's API).

    ``origin`` says where the parameter's type variable got its type
    (``T is int32, bound by argument 0 'x'``).
    """
    kind = p.describe() if origin is None else f"{p.describe()}; {origin}"
    if label is not None:
        return f"argument {label!r} ({kind})"
    return f"argument {i} {p.name!r} ({kind})"


def check_args(kdef: KernelDef, args: tuple, backend: Backend,
                constants: dict[str, Any], infos: dict | None = None,
                labels: Mapping[str, str] | None = None,
                source: Any = None) -> tuple[list, tuple]:
    """Check every argument against the signature; return launch args and bindings.

    Nothing is launched or written here, so a rejected call changes no array.
    ``infos``, if given, receives each array argument's ``ArrayInfo`` by position.
    ``labels`` maps parameter names to the names the caller's API gives them
    (:meth:`portakern.Kernel.relabel`); messages use those. ``source``, the
    kernel's template (its ``filename`` and ``source``), points each error at the
    declaration of the parameter it is about (:func:`located`).
    """
    at: list = [None]  # the parameter being checked, for the error's place
    try:
        return _check_args(kdef, args, backend, constants, infos, labels, at)
    except (KernelTypeError, KernelArgumentError, BackendMismatchError) as exc:
        if source is None:
            raise
        raise located(exc, source, kdef, at[0]) from exc.__cause__


def located(exc: PortakernError, source: Any, kdef: KernelDef, p: Any = None) -> PortakernError:
    """``exc`` pointed at parameter ``p``'s declaration in ``source`` (the kernel's
    template: ``filename`` and ``source``), or at the ``@kernel`` line without ``p``."""
    line = p.line if p is not None and p.line else kdef.line
    where = f"in kernel {kdef.name!r}" + (f", parameter {p.name!r}" if p is not None else "")
    return locate(exc, source.filename, line, source_line(source.source, line), where)


def _check_args(kdef: KernelDef, args: tuple, backend: Backend, constants: dict[str, Any],
                infos: dict | None, labels: Mapping[str, str] | None,
                at: list) -> tuple[list, tuple]:
    params = kdef.params
    lab = (labels or {}).get
    check_count(kdef.name, params, len(args))
    bindings: dict[str, str] = {tv: str(constants[tv]) for tv in kdef.type_vars
                                if tv in constants}
    bound_by: dict[str, str] = {tv: "specialize()" for tv in bindings}
    out: list = [None] * len(params)
    extents: list = [None] * len(params)
    hidden: dict[str, list] = {}  # per N-d array: its extents, strides and offset
    nulls = []  # the optional arrays passed None
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        if not p.pointer:
            continue
        at[0] = p
        if a is None:
            if not p.optional:
                raise none_for_array(f"argument {lab(p.name)!r}" if lab(p.name) else
                                     f"argument {i} {p.name!r}", p)
            out[i] = backend.null_array()
            extents[i] = (0, 0)  # overlaps nothing
            nulls.append(p)
            continue
        info = backend.array_info(a)
        if info is None:
            _wrong_array(i, p, a, backend, lab(p.name))
        if infos is not None:
            infos[i] = info
        extents[i] = info.extent
        name = type_name_of(info.dtype)
        if p.type in VECTOR_TYPES:
            check_vector_array(_describe(i, p, lab(p.name)), p.type, info)
        elif p.type in kdef.structs:
            check_struct_array(_describe(i, p, lab(p.name)), p.type, kdef.structs,
                               backend.target, info, backend)
        elif p.type in KNOWN_TYPES:
            expected = TYPE_DTYPES.get(p.type) or _storage_dtype(p.type, info.dtype)
            if info.dtype != expected:
                raise KernelTypeError(
                    f"{_describe(i, p, lab(p.name))} must have dtype {expected}, got "
                    f"{info.dtype}; convert it ({_astype(a, lab(p.name) or p.name, expected)})")
        elif name is None:
            raise KernelTypeError(
                f"{_describe(i, p, lab(p.name))} has dtype {info.dtype}, which no kernel "
                f"type matches")
        elif p.type in bindings:
            if bindings[p.type] != name:
                raise KernelTypeError(
                    f"{_describe(i, p, lab(p.name))} has dtype {info.dtype}, but {p.type} is "
                    f"already {bindings[p.type]} ({_storage_dtype(bindings[p.type], None)}) from "
                    f"{bound_by[p.type]}")
        else:
            bindings[p.type] = name
            bound_by[p.type] = _source(i, p, lab(p.name))
        if p.axes:
            out[i], extents[i], hidden[p.name] = nd_layout(_describe(i, p, lab(p.name)), p, a,
                                                           info, lab(p.name))
            continue
        if not info.c_contiguous:
            axes = ", ".join(":" * max(len(info.shape), 1))
            raise KernelArgumentError(
                f"{_describe(i, p, lab(p.name))} must be C-contiguous; pass a contiguous copy "
                f"({_contiguous(a, lab(p.name) or p.name)}), or declare the parameter "
                f"'{'const ' if p.const else ''}{p.type} {p.name}[{axes}]' to take strided "
                f"views")
        if p.writable and not info.writable:
            raise KernelArgumentError(
                f"{_describe(i, p, lab(p.name))} is read-only but the kernel may write it; "
                f"pass a writable array, or declare the parameter 'const {p.type}*' if the "
                f"kernel only reads it")
        if info.handle is None and math.prod(info.shape) != 0:
            # (An empty array may have no buffer at all: it is passed as a null pointer.)
            raise KernelArgumentError(
                f"{_describe(i, p, lab(p.name))} is a view with an offset into its buffer; "
                f"pass a copy")
        out[i] = info.handle
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        if p.pointer:
            continue
        at[0] = p
        t = bindings.get(p.type, p.type)
        if t not in KNOWN_TYPES:
            if isinstance(a, np.generic) and type_name_of(a.dtype):
                t = type_name_of(a.dtype)
                bindings[p.type] = t
                bound_by[p.type] = _source(i, p, lab(p.name))
            else:
                raise KernelTypeError(
                    f"{_describe(i, p, lab(p.name))}: cannot infer {p.type} from a Python "
                    f"{type(a).__name__}; pass a NumPy scalar (e.g. numpy.float32(...)) or "
                    f"bind it with kernel.specialize({p.type}='float')")
        out[i] = convert_scalar(a, t, i, p, lab(p.name), bound_by.get(p.type))
    for p in nulls:
        if p.type not in KNOWN_TYPES and p.type not in bindings and p.type not in kdef.structs:
            at[0] = p
            raise KernelTypeError(
                f"{_describe(p.index, p, lab(p.name))} is None, so it cannot bind {p.type}; "
                f"pass another argument of type {p.type}, or bind it with "
                f"kernel.specialize({p.type}='float')")
    for i, p in enumerate(params):
        at[0] = p
        if p.type in kdef.structs or bindings.get(p.type, p.type) in STORAGE_TYPES:
            continue  # (a struct's half fields: the target's compiler says; bfloat16 is
            # stored as 16 bits everywhere)
        feature = _FEATURES.get(element_dtype(bindings.get(p.type, p.type)))
        if feature is not None and not backend.supports(feature):
            fix = (_astype(args[i], lab(p.name) or p.name, np.dtype(np.float32)) if p.pointer
                   else f"numpy.float32({lab(p.name) or p.name})")
            raise KernelTypeError(
                f"{_describe(i, p, lab(p.name))} is {feature}, which {backend!r} does not "
                f"support; convert it ({fix}) or use another backend")
    at[0] = None
    _check_no_alias(params, out, extents, lab, at)
    for p in params:
        if p.axes:
            out += hidden[p.name]  # the order of syntax.language.hidden_params
    return out, tuple(sorted((tv, bindings[tv]) for tv in kdef.type_vars))


def _source(i: int, p: Any, label: str | None) -> str:
    """What bound a type variable, for messages: ``argument 0 'x'``."""
    return f"argument {label!r}" if label is not None else f"argument {i} {p.name!r}"


def _check_no_alias(params: list, handles: list, extents: list,
                    lab: Any = lambda name: None, at: list | None = None) -> None:
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
            if ea == (0, 0) or eb == (0, 0):
                continue  # a null array (an optional one passed None)
            if ea is not None and eb is not None:
                overlap = (ea[1] > 0 and eb[1] > 0 and ea[0] < eb[0] + eb[1]
                           and eb[0] < ea[0] + ea[1])
            else:
                overlap = (a is b and a is not None) or (
                    both_numpy and a.size > 0 and b.size > 0 and np.may_share_memory(a, b))
            if overlap:
                if at is not None:
                    at[0] = pc
                shown = lab(pc.name) or pc.name
                raise KernelArgumentError(
                    f"{_describe(c, pc, lab(pc.name))} shares memory with "
                    f"{_describe(w, pw, lab(pw.name))}, which the kernel writes; const "
                    f"parameters are declared no-alias (restrict), so pass a copy "
                    f"({shown}.copy()) or drop 'const' from {pc.name!r}")


_FEATURES = {np.dtype(np.float64): "float64", np.dtype(np.float16): "float16"}


def _wrong_array(i: int, p: Any, a: Any, backend: Backend, label: str | None = None) -> None:
    from .ownership import backend_name_of

    scalar = scalar_for_array(_describe(i, p, label), p, a)
    if scalar is not None:
        raise scalar
    other = backend_name_of(a)
    if other is None:
        raise KernelTypeError(
            f"{_describe(i, p, label)} must be an array, got {type(a).__module__}."
            f"{type(a).__qualname__}")
    raise BackendMismatchError(
        f"{_describe(i, p, label)} is a {type(a).__module__}.{type(a).__qualname__} on "
        f"{other}, but the launch runs on {backend!r}; move it with "
        f"{_move(a, backend, label or p.name)} or launch on its own backend")


def none_for_array(where: str, p: Any) -> KernelTypeError:
    """The error for None passed for array parameter ``p``, which is not optional."""
    return KernelTypeError(
        f"{where} ({p.describe()}) is None, but the kernel does not declare it optional; "
        f"pass an array, or declare it 'const {p.type}* {p.name} = null' and test "
        f"'if ({p.name})' in the kernel")


def scalar_for_array(where: str, p: Any, a: Any) -> KernelTypeError | None:
    """The error for a number passed for array parameter ``p`` (None if ``a`` is not one)."""
    if not isinstance(a, (int, float, complex, np.generic)) and not (
            isinstance(a, np.ndarray) and a.ndim == 0):
        return None
    kind = (f"a NumPy {a.dtype} scalar" if isinstance(a, (np.generic, np.ndarray))
            else f"a Python {type(a).__name__}")
    value = a.item() if isinstance(a, (np.generic, np.ndarray)) else a
    return KernelTypeError(
        f"{where} expects an array, got {kind} {value!r}; pass an array (e.g. "
        f"numpy.full(n, {value!r}, numpy.{_dtype_word(p)})), or declare the parameter "
        f"'{p.type} {p.name}' to take a number")


def _dtype_word(p: Any) -> str:
    dtype = TYPE_DTYPES.get(p.type)
    return dtype.name if dtype is not None else "float32"


def _astype(a: Any, name: str, dtype: np.dtype) -> str:
    """How the array's own library converts ``name`` to ``dtype``."""
    lib, word = _library(a), dtype.name
    if lib == "mlx":
        return (f"{name}.astype(mx.{word}), or make it with "
                f"mx.array(..., dtype=mx.{word})")
    if lib == "torch":
        return f"{name}.to(torch.{word})"
    if lib == "cupy":
        return f"{name}.astype(cupy.{word})"
    lib = "ml_dtypes" if word == "bfloat16" else "numpy"  # NumPy has no bfloat16
    return f"{name}.astype({lib}.{word})"  # NumPy, PyOpenCL (its astype takes NumPy's)


#: How each built-in backend's own library takes a NumPy array (``backend.name``).
_TO_DEVICE = {"OpenCL": "pyopencl.array.to_device(queue, {x})", "CUDA": "cupy.asarray({x})",
              "Metal": "mx.array({x})", "MLX-CUDA": "mx.array({x})"}
#: How each library's array comes back to NumPy, for a launch on CPU().
_TO_HOST = {"cupy": "cupy.asnumpy({x})", "pyopencl": "{x}.get()", "mlx": "numpy.array({x})",
            "torch": "{x}.numpy()"}


def _move(a: Any, backend: Backend, name: str) -> str:
    """How to move ``name`` to ``backend``, in portakern's and the libraries' own words."""
    target, lib = getattr(backend, "name", ""), _library(a)
    host = name if lib == "numpy" else _TO_HOST.get(lib, "numpy.asarray({x})").format(x=name)
    if target == "CPU":
        return host
    own = _TO_DEVICE.get(target)
    spelled = f"backend.to_device({host})"
    return f"{spelled} or {own.format(x=host)}" if own else spelled


_FMAX = {dt: float(np.finfo(dt).max) for dt in TYPE_DTYPES.values() if dt.kind == "f"}
_FTINY = {dt: float(np.finfo(dt).tiny) for dt in TYPE_DTYPES.values() if dt.kind == "f"}
_IMIN = {dt: int(np.iinfo(dt).min) for dt in TYPE_DTYPES.values() if dt.kind in "iu"}
_IMAX = {dt: int(np.iinfo(dt).max) for dt in TYPE_DTYPES.values() if dt.kind in "iu"}


def _storage_dtype(type_name: str, given: Any) -> Any:
    """The dtype of a storage type (bfloat16): ``given`` where it is one already (no
    import needed), else ``ml_dtypes``' (:func:`portakern.types.dtype_of`)."""
    if given is not None and type_name_of(given) == type_name:
        return given
    return dtype_of(type_name)


def convert_scalar(value: Any, type_name: str, i: int, p: Any, label: str | None = None,
                   bound_by: str | None = None) -> np.generic:
    """Convert a Python or NumPy scalar to the parameter's dtype, or say why not.

    Integers must be in range, floats must not overflow, an integer passed for a
    float parameter must be exactly representable, and a float is never silently
    truncated to an integer. ``label`` is the caller's name for the parameter;
    ``bound_by`` what bound its type variable (named in the message, so a refusal
    says where the type came from).
    """
    dtype = TYPE_DTYPES.get(type_name)
    if dtype is None:  # a storage type (bfloat16): arrays only
        origin = f" ({p.type} bound by {bound_by})" if bound_by and p.type != type_name else ""
        raise KernelTypeError(
            f"{_describe(i, p, label)} is a {type_name} scalar{origin}; "
            f"{type_name} is a storage type for arrays, computed in float: declare the "
            f"parameter float")
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
    origin = None
    if bound_by is not None and p.type not in KNOWN_TYPES:
        origin = f"{p.type} is {dtype}, bound by {bound_by}"
    where = _describe(i, p, label, origin)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    elif hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, np.generic):
        tp = type(value)
        raise KernelTypeError(
            f"{where} takes a number, got a {tp.__module__}.{tp.__qualname__} of shape "
            f"{tuple(value.shape)}; pass one value, or declare the parameter "
            f"'const {p.type}* {p.name}' to take an array")
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
