"""``get_backend``: which backend owns these arrays?

Resolution never imports an array library the caller has not imported: a type
is only compared with ``cupy.ndarray`` when ``"cupy"`` is already in
``sys.modules`` (array-api-compat's technique). Once a type has been resolved,
the answer is remembered per type, so the common case is one dict lookup.

Order, for one array (stable whatever else is imported):

1. ``type(array).__portakern_backend__`` (a backend, a factory, or a name);
2. registered array types (``pk.register_backend``, then entry points);
3. built-in types: ``numpy.ndarray`` -> ``CPU``, ``pyopencl.array.Array`` ->
   ``OpenCL(array.queue)``, ``cupy.ndarray`` -> ``CUDA``, ``mlx.core.array`` ->
   ``Metal``;
4. duck types: ``__cuda_array_interface__`` or a CUDA ``__dlpack_device__`` -> ``CUDA``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from .backends.base import Backend
from .errors import BackendMismatchError

__all__ = ["get_backend", "backend_name_of", "backend_for_args", "clear_resolution_cache"]

#: type -> function(array) -> Backend. Filled on first sight of each type.
_BY_TYPE: dict[type, Callable[[Any], Backend]] = {}


def clear_resolution_cache() -> None:
    """Forget per-type answers (after registering a backend)."""
    _BY_TYPE.clear()


def _cpu(_: Any) -> Backend:
    from .backends.opencl import CPU

    return _singleton(CPU)


def _opencl(array: Any) -> Backend:
    from .backends.opencl import OpenCL

    queue = array.queue
    cache = _SINGLETONS.setdefault(OpenCL, {})
    key = queue.int_ptr
    backend = cache.get(key)
    if backend is None:
        backend = cache[key] = OpenCL(queue)
    return backend


def _cuda(array: Any) -> Backend:
    from .backends.cuda import CUDA  # type: ignore[import-not-found]

    return CUDA.for_array(array)


def _metal(_: Any) -> Backend:
    from .backends.metal import Metal  # type: ignore[import-not-found]

    return _singleton(Metal)


_SINGLETONS: dict[Any, Any] = {}


def _singleton(cls: type) -> Backend:
    hit = _SINGLETONS.get(cls)
    if hit is None:
        hit = _SINGLETONS[cls] = cls()
    return hit


#: (module that must already be imported, attribute path of the type, resolver)
BUILTIN_TYPES: list[tuple[str, str, Callable[[Any], Backend]]] = [
    ("numpy", "ndarray", _cpu),
    ("pyopencl.array", "Array", _opencl),
    ("cupy", "ndarray", _cuda),
    ("mlx.core", "array", _metal),
]


def _resolver_for(tp: type, array: Any) -> Callable[[Any], Backend] | None:
    proto = getattr(tp, "__portakern_backend__", None)
    if proto is not None:
        return _protocol_resolver(proto)
    from . import registry

    hit = registry.resolver_for_type(tp)
    if hit is not None:
        return hit
    for module_name, attr, resolver in BUILTIN_TYPES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        cls = getattr(module, attr, None)
        if isinstance(cls, type) and issubclass(tp, cls):
            return resolver
    if hasattr(tp, "__cuda_array_interface__"):
        return _cuda
    dev = getattr(array, "__dlpack_device__", None)
    if dev is not None:
        try:
            kind = int(dev()[0])
        except Exception:  # noqa: BLE001 - a foreign protocol; treat as unknown
            kind = -1
        if kind in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return _cuda
    return None


def _protocol_resolver(proto: Any) -> Callable[[Any], Backend]:
    def resolve(array: Any) -> Backend:
        value = proto
        if isinstance(value, str):
            from . import registry

            return registry.backend_by_name(value)
        if isinstance(value, Backend):
            return value
        if isinstance(value, type) and issubclass(value, Backend):
            return _singleton(value)
        result = value(array) if callable(value) else value
        if isinstance(result, str):
            from . import registry

            return registry.backend_by_name(result)
        return result

    return resolve


def _resolve_one(array: Any) -> Backend | None:
    tp = type(array)
    resolver = _BY_TYPE.get(tp)
    if resolver is None:
        resolver = _resolver_for(tp, array)
        if resolver is None:
            return None
        _BY_TYPE[tp] = resolver
    return resolver(array)


def _unknown(array: Any, where: str) -> BackendMismatchError:
    tp = type(array)
    return BackendMismatchError(
        f"{where} has type {tp.__module__}.{tp.__qualname__}, which no backend handles; "
        f"register one with pk.register_backend(name, backend_class, array_types=[...]) or "
        f"give the type a __portakern_backend__ attribute")


def get_backend(*arrays: Any) -> Backend:
    """The backend that owns ``arrays`` (all must agree).

    Raises
    ------
    TypeError
        (:class:`~portakern.errors.BackendMismatchError`) for an unknown array type,
        or arrays of different backends, naming each argument and its backend.
    """
    if not arrays:
        raise BackendMismatchError("get_backend() needs at least one array")
    first = None
    for n, a in enumerate(arrays):
        r = _BY_TYPE.get(type(a))
        b = r(a) if r is not None else _resolve_one(a)
        if b is None:
            raise _unknown(a, f"argument {n}")
        if first is None:
            first = b
        elif b != first:
            raise _mixed([(f"argument {k}", x) for k, x in enumerate(arrays)])
    return first  # type: ignore[return-value]


def _mixed(named: list[tuple[str, Any]]) -> BackendMismatchError:
    lines = []
    for where, a in named:
        b = _resolve_one(a)
        tp = type(a)
        lines.append(f"  {where}: {tp.__module__}.{tp.__qualname__} -> {b!r}")
    return BackendMismatchError(
        "arrays belong to different backends:\n" + "\n".join(lines)
        + "\nmove them to one backend (backend.to_device / backend.to_host) first")


def backend_name_of(array: Any) -> str | None:
    """A printable name of the backend owning ``array``, or None."""
    try:
        b = _resolve_one(array)
    except Exception:  # noqa: BLE001 - used only to word an error message
        return None
    return None if b is None else repr(b)


def backend_for_args(kernel: Any, args: tuple) -> Backend:
    """Resolve the backend from a kernel call's array arguments."""
    params = kernel._parse("opencl")[1].params
    if len(args) != len(params):
        from .kernel import _check_args

        _check_args(kernel._parse("opencl")[1], args, None, {})  # raises the count error
    first = None
    for p, a in zip(params, args):
        if not p.pointer:
            continue
        r = _BY_TYPE.get(type(a))
        b = r(a) if r is not None else _resolve_one(a)
        if b is None:
            raise _unknown(a, f"argument {p.index} {p.name!r}")
        if first is None:
            first = b
        elif b != first:
            raise _mixed([(f"argument {q.index} {q.name!r}", x)
                          for q, x in zip(params, args) if q.pointer])
    if first is None:
        from .backends.opencl import CPU

        return _singleton(CPU)
    return first
