"""Which backend owns one array: the per-type answers of :mod:`portakern.launch.resolve`, found in
the documented order and remembered per type (one dict lookup and one call)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import registry
from ..backends.base import Backend, cached_instance, default_instance
from ..errors import BackendMismatchError, KernelTypeError

__all__ = ["BY_TYPE", "backend_name_of", "owner_of"]

#: type -> function(array) -> Backend or None (None: unknown). Filled on first sight.
BY_TYPE: dict[type, Callable[[Any], Backend | None]] = {}


def _class_resolver(name: str) -> Callable[[Any], Backend | None]:
    cls = registry.backend_class(name)
    if getattr(cls.for_array, "__func__", None) is not Backend.for_array.__func__:
        for_array = cls.for_array

        def per_array(array: Any) -> Backend | None:
            # The answer depends on the array (device, queue ...). A function, not the
            # bound method: reading its missing `by_type` costs 0.2 us, a method's 1.3.
            return for_array(array)

        return per_array

    def shared(_array: Any, _cls: type = cls) -> Backend:
        hit = cached_instance(_cls)
        return hit if hit is not None else default_instance(_cls)

    shared.by_type = True  # type: ignore[attr-defined]  # the type alone decides
    return shared


def _as_backend(value: Any, array: Any, origin: str) -> Backend:
    if isinstance(value, Backend):
        return value
    if isinstance(value, str):
        return registry.backend_by_name(value)
    if isinstance(value, type) and issubclass(value, Backend):
        return value.for_array(array)
    raise KernelTypeError(
        f"{origin} gave {value!r}; expected a portakern Backend object, a Backend subclass "
        f"or a registered backend name")


def _protocol_resolver(tp: type, proto: Any) -> Callable[[Any], Backend]:
    origin = f"{tp.__module__}.{tp.__qualname__}.__portakern_backend__"
    if isinstance(proto, (Backend, str)) or (isinstance(proto, type)
                                             and issubclass(proto, Backend)):
        return lambda array: _as_backend(proto, array, origin)
    if callable(proto):
        # A plain function on the class: called like a method, with the array.
        def ask(array: Any) -> Backend:
            try:
                value = proto(array)
            except Exception as exc:
                raise _protocol_failed(tp, exc) from exc
            return _as_backend(value, array, origin)

        return ask
    return lambda array: _as_backend(proto, array, origin)


def _protocol_failed(tp: type, exc: BaseException) -> BackendMismatchError:
    return BackendMismatchError(
        f"{tp.__module__}.{tp.__qualname__}.__portakern_backend__ raised "
        f"{type(exc).__name__}: {exc}; it must return a portakern Backend object, a Backend "
        f"subclass or a registered backend name (the original error is the __cause__)")


def _duck(array: Any) -> Backend | None:
    # Decided per array, not per type: torch.Tensor has both protocols on the class,
    # and only its CUDA tensors answer them.
    cuda = hasattr(array, "__cuda_array_interface__")
    if not cuda:
        dev = getattr(array, "__dlpack_device__", None)
        if dev is None:
            return None
        try:
            kind = int(dev()[0])
        except Exception:  # noqa: BLE001 - a foreign protocol; treat as unknown
            return None
        cuda = kind in (2, 13)  # kDLCUDA, kDLCUDAManaged
    if not cuda:
        return None
    return _class_resolver("CUDA")(array)


def _resolver_for(tp: type) -> Callable[[Any], Backend | None] | None:
    try:
        proto = getattr(tp, "__portakern_backend__", None)
    except Exception as exc:  # a property of a metaclass that raises
        raise _protocol_failed(tp, exc) from exc
    if proto is not None:
        return _protocol_resolver(tp, proto)
    name = registry.backend_for_type(tp)
    if name is not None:
        return _class_resolver(name)
    if hasattr(tp, "__cuda_array_interface__") or hasattr(tp, "__dlpack_device__"):
        return _duck
    return None


def owner_of(array: Any) -> Backend | None:
    tp = type(array)
    resolver = BY_TYPE.get(tp)
    if resolver is None:
        resolver = _resolver_for(tp)
        if resolver is None:
            # The CUDA Array Interface is an attribute of the *object* (Numba and
            # CuPy ask the object with getattr): an instance may carry it even where
            # its class does not. Instances of such a type are then asked one by one.
            if not (hasattr(array, "__cuda_array_interface__")
                    or hasattr(array, "__dlpack_device__")):
                return None
            resolver = _duck
        BY_TYPE[tp] = resolver
    return resolver(array)


def backend_name_of(array: Any) -> str | None:
    """A printable name of the backend owning ``array``, or None."""
    try:
        b = owner_of(array)
    except Exception:  # noqa: BLE001 - used only to word an error message
        return None
    return None if b is None else repr(b)
