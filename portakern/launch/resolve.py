"""``get_backend``: which backend owns these arrays?

Resolution never imports an array library the caller has not imported: a
registered type path such as ``"cupy.ndarray"`` is only compared once
``"cupy"`` is in ``sys.modules`` (array-api-compat's technique), and a plugin's
backend class is imported only when one of its arrays is resolved. Once a type
has been resolved, the answer is remembered per type, so the common case is one
dict lookup and one call.

Order, for one array; the answer depends only on the array's own type (and,
for duck types, the array's device), never on which other libraries happen to
be imported, nor on the order they were imported or installed in:

1. ``type(array).__portakern_backend__``: a backend object, a backend class,
   a registered backend name, or a method returning one of those;
2. array types built in (``numpy.ndarray`` -> ``CPU``, ``pyopencl.array.Array``
   -> ``OpenCL(array.queue)``, ``cupy.ndarray`` -> ``CUDA``, ``mlx.core.array``
   -> ``Metal``) or registered with :func:`portakern.register_backend`; the most
   derived class of the type's MRO that is registered wins;
3. array types claimed by installed plugins (the ``portakern.backends`` entry
   points, read the first time resolution gets here), most derived first;
4. duck types: an array with ``__cuda_array_interface__``, or whose
   ``__dlpack_device__`` is CUDA, -> ``CUDA``. Both are looked up on the array
   object, as the CUDA Array Interface specifies (an instance attribute counts);
   an object of the same type without them is unknown;
5. otherwise ``TypeError`` naming the fix.

The backend class registered for a type turns the array into a backend
object with :meth:`~portakern.backends.base.Backend.for_array` (by default, one
shared instance per class).
"""

from __future__ import annotations

from typing import Any

from .. import registry
from ..backends.base import Backend
from ..errors import BackendMismatchError, KernelTypeError, PortakernError
from ..syntax.language import check_count
from ..targets import CANONICAL_TARGET
from .arguments import located, none_for_array, scalar_for_array
from .ownership import BY_TYPE, backend_name_of, owner_of

__all__ = ["get_backend", "backend_name_of", "backend_for_args", "clear_resolution_cache",
           "RESOLUTION_ORDER"]


#: The documented order, for listings (``portakern info``) and docs.
RESOLUTION_ORDER = (
    "type(array).__portakern_backend__",
    "built-in and pk.register_backend array types (most derived class first)",
    "array types of installed plugins (entry point group 'portakern.backends')",
    "duck types: __cuda_array_interface__ or a CUDA __dlpack_device__ -> CUDA",
)

#: Bumped whenever the per-type answers are forgotten, so caches built on them
#: (a kernel's argument-types -> launcher table) know to start again.
generation = 0


def clear_resolution_cache() -> None:
    """Forget per-type answers (registrations call this)."""
    global generation
    BY_TYPE.clear()
    generation += 1


registry.on_change(clear_resolution_cache)


def _unknown(array: Any, where: str) -> BackendMismatchError:
    """The error for an array of a type no backend claims."""
    tp = type(array)
    return BackendMismatchError(
        f"{where} has type {tp.__module__}.{tp.__qualname__}, which no backend handles "
        f"(registered: {', '.join(sorted(registry.registered_backends()))}); register one "
        f"with pk.register_backend(name, BackendClass, array_types=[{tp.__qualname__}]), "
        f"install a plugin for it, or give the type a __portakern_backend__ attribute")


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
        r = BY_TYPE.get(type(a))
        b = r(a) if r is not None else owner_of(a)
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
        b = owner_of(a)
        tp = type(a)
        lines.append(f"  {where}: {tp.__module__}.{tp.__qualname__} -> {b!r}")
    return BackendMismatchError(
        "arrays belong to different backends:\n" + "\n".join(lines)
        + "\nmove them to one backend (backend.to_device / backend.to_host) first")


def backend_for_args(kernel: Any, args: tuple) -> Backend:
    """Resolve the backend from a kernel call's array arguments."""
    return resolve_args(kernel, args)[0]


def _named(kernel: Any, p: Any) -> str:
    """``argument 0 'y'``, or the caller's name for it (``Kernel.relabel``)."""
    label = getattr(kernel, "labels", {}).get(p.name)
    return f"argument {p.index} {p.name!r}" if label is None else f"argument {label!r}"


def _at(kernel: Any, exc: PortakernError, p: Any) -> PortakernError:
    """``exc`` pointed at parameter ``p``'s declaration (the ``@kernel`` line without it)."""
    return located(exc, kernel.template, kernel.parsed(CANONICAL_TARGET)[1], p)


def resolve_args(kernel: Any, args: tuple) -> tuple[Backend, bool]:
    """The backend of a kernel call's arrays, and whether their types alone decided it.

    When the second item is true, any later call whose arguments have the same
    types resolves to the same backend (until a registration changes
    :data:`generation`), so the caller may cache by argument types.
    """
    params = kernel.signature
    try:
        check_count(kernel.name, params, len(args))
    except KernelTypeError as exc:
        raise _at(kernel, exc, None) from None
    first = None
    by_type = True
    for p, a in zip(params, args, strict=True):
        if not p.pointer:
            continue
        if a is None:
            if p.optional:
                continue  # a null array: it says nothing of the backend
            raise _at(kernel, none_for_array(_named(kernel, p), p), p)
        r = BY_TYPE.get(type(a))
        if r is None:
            b = owner_of(a)
            r = BY_TYPE.get(type(a))
        else:
            b = r(a)
        if b is None:
            named = _named(kernel, p)
            raise _at(kernel, scalar_for_array(f"{named} ({p.describe()})", p, a)
                      or _unknown(a, named), p)
        by_type = by_type and getattr(r, "by_type", False)
        if first is None:
            first = b
        elif b != first:
            raise _at(kernel, _mixed([(_named(kernel, q), x)
                                      for q, x in zip(params, args, strict=True) if q.pointer]), p)
    if first is None:
        # No array says: the CPU backend, as NumPy arrays would resolve to.
        return registry.backend_by_name("CPU"), True
    return first, by_type
