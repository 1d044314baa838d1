"""Backends by name and by array type: built-ins, ``register_backend`` and entry points.

Registrations are strings until they are needed: a backend class is a
``"package.module:Class"`` path and an array type a dotted path such as
``"torch.Tensor"`` (fsspec's ``known_implementations`` idea). Nothing of a plugin
is imported at ``import portakern``; its class is imported when one of its
arrays is resolved or its backend is asked for by name.

Three layers, looked up in this order (see :mod:`portakern.launch.resolve` for the
whole resolution order):

1. built-in backends (``CPU``, ``OpenCL``, ``CUDA``, ``Metal``);
2. :func:`register_backend` calls, which may replace a built-in with
   ``clobber=True``;
3. the ``portakern.backends`` entry points of installed distributions, read
   (as metadata only) the first time a type or a name is not found above.

Within a layer an array type belongs to exactly one backend: a second claim is
an error, never "last one wins", so which backend runs an array does not depend
on import or installation order. A registration by call always takes
precedence over an entry point; an entry point never takes a built-in's type or
name.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from os import PathLike
from types import MappingProxyType
from typing import Any

from .backends.base import Availability, Backend, default_instance
from .errors import BackendUnavailableError, KernelTypeError, PortakernError
from .patterns import lazy
from .subprocesses import fork_safe_lock

__all__ = ["BackendRecord", "BackendRegistrationError", "ENTRY_POINT_GROUP", "register_backend",
           "unregister_backend", "registered_backends", "backend_class", "backend_by_name",
           "backend_status", "backend_for_type"]

#: The entry-point group plugins declare their backends in.
ENTRY_POINT_GROUP = "portakern.backends"

_PATH_RE = lazy(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)?$")


class BackendRegistrationError(PortakernError, ValueError):
    """A registration clashes with another one, or cannot be loaded as registered."""


@dataclass(frozen=True)
class BackendRecord:
    """One registered backend, as strings (nothing here imports the plugin).

    Attributes
    ----------
    name : str
        The registry name (``pk.registry.backend_by_name(name)``).
    cls : str
        ``"package.module:Class"`` of the backend class.
    array_types : tuple of str
        Dotted paths of the array types this backend claims.
    install_hint : str
        What to run when the class cannot be imported.
    origin : str
        ``"built-in"``, ``"register_backend"`` or ``"entry point of <dist> <version>"``.
    templates : str or None
        A template folder registered with the backend, if any.
    """

    name: str
    cls: str
    array_types: tuple[str, ...] = ()
    install_hint: str = ""
    origin: str = "register_backend"
    templates: str | None = None
    _loaded: Any = field(default=None, repr=False, compare=False)

    def __getitem__(self, key: str) -> Any:
        # Records read like the plain dicts of the first registry, for callers written then.
        return getattr(self, key)


def _builtin(name: str, cls: str, types: tuple[str, ...], hint: str) -> BackendRecord:
    return BackendRecord(name, cls, types, hint, "built-in")


_BUILTINS = {
    r.name: r for r in (
        _builtin("CPU", "portakern.backends.opencl:CPU", ("numpy.ndarray",),
                 'pip install "pyopencl[pocl]"'),
        _builtin("OpenCL", "portakern.backends.opencl:OpenCL", ("pyopencl.array.Array",),
                 'pip install "pyopencl[pocl]" (or a GPU vendor\'s OpenCL driver)'),
        _builtin("CUDA", "portakern.backends.cuda:CUDA", ("cupy.ndarray",),
                 'pip install "portakern[cuda]" (CuPy for CUDA 12)'),
        _builtin("Metal", "portakern.backends.metal:Metal", ("mlx.core.array",),
                 'pip install "portakern[metal]" (on a Mac with Apple silicon)'),
    )
}

_LOCK = fork_safe_lock(reentrant=True)
#: Layers 1 and 2: built-ins and register_backend calls, by name.
_RECORDS: dict[str, BackendRecord] = dict(_BUILTINS)
#: Array type path -> backend name, for _RECORDS.
_TYPES: dict[str, str] = {t: r.name for r in _BUILTINS.values() for t in r.array_types}
#: Type objects given to register_backend directly (no sys.modules lookup needed).
_TYPE_OBJECTS: dict[str, type] = {}
#: Layer 3, filled once by _load_entry_points.
_EP_RECORDS: dict[str, BackendRecord] = {}
_EP_TYPES: dict[str, str] = {}
#: Entry-point names or types that two distributions claim: key -> message.
_EP_CLASHES: dict[str, str] = {}
_EP_LOADED = False


# -- registration -----------------------------------------------------------------------

def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _type_path(tp: type) -> str:
    return f"{tp.__module__}.{tp.__qualname__}"


def _normalize_types(array_types: Any) -> list[tuple[str, type | None]]:
    if isinstance(array_types, (str, type)):
        array_types = [array_types]
    if not isinstance(array_types, Iterable):
        raise KernelTypeError(
            f"array_types must be a type, a dotted type path such as 'torch.Tensor', or a "
            f"list of them, got {array_types!r}")
    out = []
    for t in array_types:
        if isinstance(t, type):
            out.append((_type_path(t), t))
        elif isinstance(t, str) and _PATH_RE.match(t) and ("." in t or ":" in t):
            out.append((t.replace(":", "."), None))
        else:
            raise KernelTypeError(
                f"array type {t!r} must be a type or a dotted path such as 'torch.Tensor'")
    return out


def register_backend(name: str, cls_or_path: Any, array_types: Any = (), *,
                     clobber: bool = False, install_hint: str | None = None,
                     templates: str | PathLike | None = None) -> None:
    """Register a backend under ``name``, optionally for some array types.

    Parameters
    ----------
    name : str
        The registry name; ``backend_by_name(name)`` returns a default instance.
    cls_or_path : type or str
        A :class:`~portakern.backends.base.Backend` subclass, or its
        ``"package.module:Class"`` path, imported only when first needed.
    array_types : type, str or iterable of them, optional
        Array types whose instances :func:`portakern.get_backend` resolves to this
        backend, as types or dotted paths (``"torch.Tensor"``). A path is never
        imported: it matches once its module is in ``sys.modules``. Subclasses
        match too; the most derived registered class wins.
    clobber : bool, default False
        Replace an existing backend of the same name (which keeps its array
        types unless ``array_types`` is given), and take over array types that
        another registered backend claims. Without it, either is an error.
    install_hint : str, optional
        What the user should run when the class cannot be imported.
    templates : str or os.PathLike, optional
        A folder with ``<target>/`` template folders, put ahead of portakern's
        own right away (see :func:`portakern.render.emit.add_template_dir`): a new
        target, or files overriding an existing target's for every backend.

    Raises
    ------
    BackendRegistrationError
        (a ``ValueError``) when ``name`` or one of ``array_types`` is already
        registered to something else and ``clobber`` is False.
    KernelTypeError
        (a ``TypeError``) when an argument has the wrong type.

    Notes
    -----
    Registering the same thing twice is harmless. A registration by call takes
    precedence over any plugin's entry point, whenever the entry points are read.
    """
    if not isinstance(name, str) or not name.strip():
        raise KernelTypeError(f"backend name must be a non-empty str, got {name!r}")
    if isinstance(cls_or_path, type):
        if not issubclass(cls_or_path, Backend):
            raise KernelTypeError(
                f"{_class_path(cls_or_path)} is not a portakern.Backend subclass; backends "
                f"derive from portakern.backends.base.Backend")
        path, loaded = _class_path(cls_or_path), cls_or_path
    elif isinstance(cls_or_path, str) and _PATH_RE.match(cls_or_path) and (
            ":" in cls_or_path or "." in cls_or_path):
        path = cls_or_path if ":" in cls_or_path else ":".join(cls_or_path.rsplit(".", 1))
        loaded = None
    else:
        raise KernelTypeError(
            f"register_backend({name!r}, ...) needs a Backend subclass or a "
            f"'package.module:Class' path, got {cls_or_path!r}")
    types = _normalize_types(array_types)
    record = BackendRecord(name, path, tuple(t for t, _ in types), install_hint or "",
                           "register_backend", None if templates is None else str(templates),
                           loaded)
    with _LOCK:
        old = _RECORDS.get(name)
        if old is not None and not clobber:
            if (old.cls, old.array_types, old.templates) == (
                    record.cls, record.array_types, record.templates):
                return
            raise BackendRegistrationError(
                f"a backend named {name!r} is already registered ({_describe(old)}); pass "
                f"clobber=True to replace it, or choose another name")
        taken = [(t, _TYPES[t]) for t, _ in types if _TYPES.get(t, name) != name]
        if taken and not clobber:
            t, other = taken[0]
            raise BackendRegistrationError(
                f"array type {t} is already handled by backend {other!r} "
                f"({_describe(_RECORDS[other])}); pass clobber=True to take it over")
        if old is not None and not types:
            # Replacing a backend by name (say, "CPU") keeps the arrays it ran.
            record = _replace(record, array_types=old.array_types)
        elif old is not None:
            _drop_types(old)
        for t, owner in taken:
            rec = _RECORDS[owner]
            _RECORDS[owner] = _replace(rec, array_types=tuple(x for x in rec.array_types
                                                              if x != t))
        _RECORDS[name] = record
        for t, obj in types:
            _TYPES[t] = name
            if obj is not None:
                _TYPE_OBJECTS[t] = obj
    if templates is not None:
        from .render.emit import add_template_dir

        add_template_dir(templates)
    _changed()


def unregister_backend(name: str) -> None:
    """Remove a backend registered by :func:`register_backend`.

    A built-in that the registration had replaced (``clobber=True``) comes back,
    with the array types it had. Built-ins and entry points cannot be removed.
    """
    with _LOCK:
        rec = _RECORDS.get(name)
        if rec is None or rec.origin != "register_backend":
            raise BackendRegistrationError(
                f"no backend named {name!r} was registered with register_backend "
                f"(registered by call: {', '.join(_by_call()) or 'none'})")
        _drop_types(rec)
        del _RECORDS[name]
        builtin = _BUILTINS.get(name)
        if builtin is not None:
            _RECORDS[name] = builtin
        # Built-in types the registration took over go back to their built-in.
        for b in _BUILTINS.values():
            for t in b.array_types:
                if t not in _TYPES and _RECORDS.get(b.name) is not None \
                        and _RECORDS[b.name].origin == "built-in":
                    _TYPES[t] = b.name
                    if t not in _RECORDS[b.name].array_types:
                        _RECORDS[b.name] = _replace(
                            _RECORDS[b.name], array_types=_RECORDS[b.name].array_types + (t,))
    _changed()


def _by_call() -> list[str]:
    return sorted(n for n, r in _RECORDS.items() if r.origin == "register_backend")


def _drop_types(rec: BackendRecord) -> None:
    for t in rec.array_types:
        if _TYPES.get(t) == rec.name:
            del _TYPES[t]
            _TYPE_OBJECTS.pop(t, None)


def _replace(rec: BackendRecord, **changes: Any) -> BackendRecord:
    values = {f: getattr(rec, f) for f in ("name", "cls", "array_types", "install_hint",
                                           "origin", "templates", "_loaded")}
    values.update(changes)
    return BackendRecord(**values)


def _describe(rec: BackendRecord) -> str:
    return f"{rec.cls}, {rec.origin}"


#: Called after every change of the table (resolution forgets its per-type answers).
_LISTENERS: list[Callable[[], None]] = []


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener()`` after every registration or removal (resolution's caches)."""
    _LISTENERS.append(listener)


def _changed() -> None:
    for listener in _LISTENERS:
        listener()


# -- entry points -----------------------------------------------------------------------

def _load_entry_points() -> None:
    """Read the ``portakern.backends`` entry points once, as strings.

    An entry point's name is the array type it claims (``"torch.Tensor"``), or,
    for a backend used by name only, a name without a dot; its value is the
    backend class (``"portakern_torchcpu:TorchCPU"``). The backend is registered
    under the class name. Nothing is imported here.
    """
    global _EP_LOADED
    if _EP_LOADED:
        return
    with _LOCK:
        if _EP_LOADED:
            return
        from importlib.metadata import entry_points

        try:
            eps = list(entry_points(group=ENTRY_POINT_GROUP))
        except Exception as exc:  # noqa: BLE001 - broken metadata must not break resolution
            warnings.warn(f"portakern could not read the {ENTRY_POINT_GROUP!r} entry points: "
                          f"{exc}", RuntimeWarning, stacklevel=3)
            eps = []
        for ep in eps:
            _add_entry_point(ep)
        _EP_LOADED = True


def _add_entry_point(ep: Any) -> None:
    dist = getattr(ep, "dist", None)
    where = (f"entry point of {dist.metadata['Name']} {dist.version}" if dist is not None
             else "entry point")
    value = ep.value.strip()
    if not _PATH_RE.match(value) or ":" not in value:
        warnings.warn(f"ignoring {where} {ep.name} = {value!r}: the value must be "
                      f"'package.module:BackendClass'", RuntimeWarning, stacklevel=4)
        return
    name = value.rpartition(":")[2].rpartition(".")[2]
    claims = (ep.name.replace(":", "."),) if "." in ep.name or ":" in ep.name else ()
    if name in _BUILTINS:
        warnings.warn(f"ignoring {where} for backend {name!r}: that name is a built-in "
                      f"backend; rename the plugin's class", RuntimeWarning, stacklevel=4)
        return
    old = _EP_RECORDS.get(name)
    if old is not None and old.cls != value:
        _EP_CLASHES[name] = (f"two installed plugins define a backend named {name!r}: "
                             f"{old.cls} ({old.origin}) and {value} ({where}); uninstall "
                             f"one, or choose with pk.register_backend({name!r}, "
                             f"'{value}', clobber=True)")
        return
    for t in claims:
        if t in _EP_TYPES and _EP_TYPES[t] != name:
            other = _EP_RECORDS[_EP_TYPES[t]]
            _EP_CLASHES[t] = (f"two installed plugins claim array type {t}: backend "
                              f"{other.name!r} ({other.cls}, {other.origin}) and {name!r} "
                              f"({value}, {where}); uninstall one, or choose with "
                              f"pk.register_backend(name, cls, array_types={t!r}, "
                              f"clobber=True)")
        _EP_TYPES.setdefault(t, name)
    types = (old.array_types if old is not None else ()) + claims
    hint = f"reinstall {dist.metadata['Name']}" if dist is not None else ""
    _EP_RECORDS[name] = BackendRecord(name, value, types, hint, where)


def _reset_entry_points() -> None:
    """Forget the entry points read so far (tests install plugins at run time)."""
    global _EP_LOADED
    with _LOCK:
        _EP_RECORDS.clear()
        _EP_TYPES.clear()
        _EP_CLASHES.clear()
        _EP_LOADED = False
    _changed()


# -- lookup -----------------------------------------------------------------------------

def registered_backends() -> MappingProxyType:
    """A read-only view of every backend known here: name -> :class:`BackendRecord`.

    Includes installed plugins (their entry points are read, nothing imported).
    Registrations by call shadow plugins of the same name.
    """
    _load_entry_points()
    with _LOCK:
        view = dict(_RECORDS)
        for n, r in _EP_RECORDS.items():
            if n not in _EP_CLASHES and n not in view:
                view[n] = r
    return MappingProxyType(view)


def _record(name: str) -> BackendRecord:
    rec = _RECORDS.get(name)
    if rec is not None:
        return rec
    _load_entry_points()
    if name in _EP_CLASHES:
        raise BackendRegistrationError(_EP_CLASHES[name])
    rec = _EP_RECORDS.get(name)
    if rec is None:
        names = ", ".join(sorted(set(_RECORDS) | set(_EP_RECORDS)))
        raise KernelTypeError(
            f"no backend named {name!r}; registered: {names}. Register one with "
            f"pk.register_backend({name!r}, 'package.module:Class', array_types=[...])")
    return rec


def backend_class(name: str) -> type[Backend]:
    """Import (if needed) and return the backend class registered as ``name``.

    Raises
    ------
    BackendUnavailableError
        (an ``ImportError``) when its module cannot be imported, with the install hint.
    """
    rec = _record(name)
    if rec._loaded is not None:
        return rec._loaded
    module_name, _, qualname = rec.cls.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        hint = f"; install it with: {rec.install_hint}" if rec.install_hint else ""
        raise BackendUnavailableError(
            f"backend {name!r} ({rec.cls}, {rec.origin}) cannot be imported: {exc}{hint}"
        ) from exc
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not (isinstance(obj, type) and issubclass(obj, Backend)):
        raise BackendRegistrationError(
            f"backend {name!r} is registered as {rec.cls} ({rec.origin}), but that is "
            f"{'missing' if obj is None else repr(obj)}, not a portakern.Backend subclass")
    with _LOCK:
        table = _RECORDS if _RECORDS.get(name) is rec else _EP_RECORDS
        if table.get(name) is rec:
            table[name] = _replace(rec, _loaded=obj)
    return obj


def backend_by_name(name: str) -> Backend:
    """The default instance of the backend registered as ``name``."""
    return default_instance(backend_class(name))


def backend_status(name: str) -> Availability:
    """Whether backend ``name`` can run here; the reason and the fix if not.

    Imports the backend's module (not its array library, unless the module does).
    """
    try:
        cls = backend_class(name)
    except (ImportError, BackendRegistrationError) as exc:
        return Availability(False, str(exc))
    try:
        return cls.available()
    except Exception as exc:  # noqa: BLE001 - available() must not raise; report if it does
        return Availability(False, f"{cls.__qualname__}.available() raised {exc!r}")


def _type_object(path: str) -> type | None:
    hit = _TYPE_OBJECTS.get(path)
    if hit is not None:
        return hit
    # Never import: the longest prefix already in sys.modules, then attributes.
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        obj: Any = module
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        return obj if isinstance(obj, type) else None
    return None


def _match(tp: type, types: dict[str, str]) -> tuple[str, str] | None:
    """``(type path, backend name)`` of the most derived registered class of ``tp``."""
    if not types:
        return None
    by_object: dict[type, str] = {}
    for path in types:
        obj = _type_object(path)
        if obj is not None:
            by_object.setdefault(obj, path)
    for klass in tp.__mro__:
        path = by_object.get(klass)
        if path is None and _type_path(klass) in types:
            path = _type_path(klass)
        if path is not None:
            return path, types[path]
    return None


def backend_for_type(tp: type) -> str | None:
    """The name of the backend registered for array type ``tp`` (or a base), or None.

    Looks at built-ins and :func:`register_backend` first, then at entry points
    (read now if they have not been). The most derived registered class of
    ``tp.__mro__`` wins within a layer.

    Raises
    ------
    BackendRegistrationError
        When two installed plugins claim the matching type.
    """
    with _LOCK:
        hit = _match(tp, _TYPES)
    if hit is not None:
        return hit[1]
    _load_entry_points()
    with _LOCK:
        hit = _match(tp, {t: n for t, n in _EP_TYPES.items() if t not in _TYPES})
    if hit is None:
        return None
    path, name = hit
    for key in (path, name):
        if key in _EP_CLASHES and key not in _RECORDS:
            raise BackendRegistrationError(_EP_CLASHES[key])
    return name
