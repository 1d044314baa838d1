"""The variant key: what one rendered and compiled kernel is.

A kernel's source is a template; what a launch compiles is one *variant* of it:
the target dialect, the type variables' bindings, the ndrange rank, whether the
bounds mask is dropped (workgroups that tile the ndrange exactly), debug mode, and
any template options a backend renders with. :class:`Variant` is that value, frozen
and hashable, and every cache is keyed by it: the rendered sources a kernel keeps
(:meth:`portakern.Kernel.render_variant`), the disk cache of rendered sources
(:func:`portakern.cache.store.rendered`, which adds the kernel's recipe and a digest of
the package and templates) and the compiled variants (:meth:`portakern.Kernel.build`,
which adds the backend's ``cache_key``). The execution model (lockstep or not)
follows from the target and the kernel, so it is not a field of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

__all__ = ["Variant"]


def _pairs(items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(dict(items).items()))


class Variant(NamedTuple):
    """One rendering of a kernel: the key of every cache a launch goes through."""

    target: str
    #: ``(type variable, type name)`` pairs, sorted by name.
    bindings: tuple[tuple[str, str], ...]
    ndim: int
    unmasked: bool = False
    debug: bool = False
    #: Template options (``(name, value)`` pairs, sorted) a backend renders with.
    options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, target: str, bindings: Mapping[str, str] | Iterable[tuple[str, str]],
           ndim: int, *, unmasked: bool = False, debug: bool = False,
           **options: Any) -> Variant:
        """The variant, with bindings and options in their one canonical order."""
        return cls(target, _pairs(bindings), ndim, bool(unmasked), bool(debug), _pairs(options))
