"""Backends by name and by array type: built-ins, ``register_backend`` and entry points.

Registration stores dotted paths and type names as strings, so nothing of a
plugin is imported until one of its arrays is resolved or its backend is asked
for by name (fsspec's ``known_implementations`` idea).
"""

from __future__ import annotations

import importlib
import sys
from types import MappingProxyType
from typing import Any, Callable

from .errors import BackendUnavailableError, KernelTypeError

__all__ = ["register_backend", "registered_backends", "backend_by_name", "resolver_for_type",
           "backend_class"]

#: name -> {"cls": class or dotted path, "array_types": [...], "install_hint": str}
_REGISTRY: dict[str, dict[str, Any]] = {
    "CPU": {"cls": "portakern.backends.opencl:CPU", "array_types": ["numpy.ndarray"],
            "install_hint": 'pip install "pyopencl[pocl]"'},
    "OpenCL": {"cls": "portakern.backends.opencl:OpenCL",
               "array_types": ["pyopencl.array.Array"],
               "install_hint": 'pip install "pyopencl[pocl]" (or a GPU vendor OpenCL driver)'},
    "CUDA": {"cls": "portakern.backends.cuda:CUDA", "array_types": ["cupy.ndarray"],
             "install_hint": 'pip install "portakern[cuda]" (CuPy for CUDA 12/13)'},
    "Metal": {"cls": "portakern.backends.metal:Metal", "array_types": ["mlx.core.array"],
              "install_hint": 'pip install "portakern[metal]" (on a Mac with Apple silicon)'},
}
_BUILTIN = frozenset(_REGISTRY)
_USER_TYPES: list[tuple[str, str]] = []  # (dotted type path, backend name), newest first


def registered_backends() -> MappingProxyType:
    """A read-only view: backend name -> registration record."""
    return MappingProxyType(_REGISTRY)


def register_backend(name: str, cls_or_path: Any, array_types: Any = (), *,
                     clobber: bool = False, install_hint: str | None = None) -> None:
    """Register a backend under ``name`` for the given array types.

    ``cls_or_path`` is a :class:`~portakern.backends.base.Backend` subclass or a
    ``"package.module:Class"`` string (imported only when needed). ``array_types``
    are types or dotted type names (``"torch.Tensor"``).
    """
    if not isinstance(name, str) or not name:
        raise KernelTypeError(f"backend name must be a non-empty str, got {name!r}")
    if name in _REGISTRY and not clobber:
        raise KernelTypeError(
            f"a backend named {name!r} is already registered; pass clobber=True to replace it")
    types = [t if isinstance(t, str) else f"{t.__module__}.{t.__qualname__}"
             for t in ([array_types] if isinstance(array_types, (str, type)) else array_types)]
    _REGISTRY[name] = {"cls": cls_or_path, "array_types": types,
                       "install_hint": install_hint or ""}
    _USER_TYPES[:0] = [(t, name) for t in types]
    from .resolve import clear_resolution_cache

    clear_resolution_cache()


def backend_class(name: str) -> type:
    """Import (if needed) and return the backend class registered as ``name``."""
    record = _REGISTRY.get(name)
    if record is None:
        raise KernelTypeError(
            f"no backend named {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    cls = record["cls"]
    if isinstance(cls, str):
        module_name, _, attr = cls.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise BackendUnavailableError(
                f"backend {name!r} cannot be imported ({exc}); {record['install_hint']}"
            ) from exc
        cls = getattr(module, attr)
        record["cls"] = cls
    return cls


def backend_by_name(name: str) -> Any:
    """A default instance of the backend registered as ``name``."""
    from .resolve import _singleton

    return _singleton(backend_class(name))


def resolver_for_type(tp: type) -> Callable[[Any], Any] | None:
    """A resolver for a registered (non built-in) array type, or None."""
    for path, name in _USER_TYPES:
        module_name, _, attr = path.rpartition(".")
        module = sys.modules.get(module_name)
        cls = getattr(module, attr, None) if module is not None else None
        if isinstance(cls, type) and issubclass(tp, cls):
            return lambda _array, _name=name: backend_by_name(_name)
    return None
