"""The methods :mod:`dataclasses` writes for portakern's classes, compiled once per Python.

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__hash__``, ``__setattr__``, ``__delattr__``) as source text and compiles each text when
the class is made. A new process that makes a kernel makes about 60 of those classes,
and compiling their methods was a quarter of its way to a ready kernel (DESIGN section 4:
under 50 ms from the disk caches). Inside :func:`compiled_methods`, a text that
``dataclasses`` writes for a portakern module is compiled once and its code object kept in
the disk cache (one entry per Python build), so a later process loads it (``marshal``)
instead of compiling it again.

The code object is the one ``exec`` would have compiled from the same text (the text is
the lookup key; compiled with no inherited ``__future__`` flags, as ``dataclasses``' own
``exec`` compiles it), so every class is the class it was: only the compiling is skipped.
The entry lives in the cache folder and is read only under its rules (a private folder, a
digest over the entry: :class:`~portakern.cache.disk.DiskCache`); ``PORTAKERN_CACHE=0``
turns it off with the rest of the cache. Classes of other modules, and any ``exec`` of
other code while the scope is open (another thread), compile as always.
"""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..subprocesses import fork_safe_lock
from .disk import DiskCache, cache_dir, cache_enabled, make_key

__all__ = ["compiled_methods"]

_KIND = "class-code"
#: Past this many texts the entry is written with this process's texts only: edits of the
#: package's classes would otherwise grow it without end.
_MAX_TEXTS = 4000

_LOCK = fork_safe_lock()
#: Open scopes (nested, or in several threads): the hook is in place while above zero.
_depth = 0
#: Text -> code object: loaded from the entry once per process, then added to.
_codes: dict[str, Any] | None = None
#: Texts this process used (found or compiled), and whether any was compiled.
_used: set[str] = set()
_compiled = False
_MISSING = object()
_previous: Any = _MISSING


def _exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> Any:
    """``exec`` as ``dataclasses`` calls it, with the code of a portakern text kept."""
    global _compiled
    codes = _codes
    if (codes is not None and type(source) is str and type(globals) is dict
            and str(globals.get("__name__", "")).startswith("portakern.")):
        code = codes.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            codes[source] = code
            _compiled = True
        _used.add(source)
        source = code
    return builtins.exec(source, globals, locals, **kwargs)


def _store() -> tuple[DiskCache, str, str]:
    identity = f"{sys.version} {sys.implementation.cache_tag}"
    return DiskCache(cache_dir(), None, quiet=True), make_key(_KIND, identity), identity


def _load() -> dict[str, Any]:
    try:
        store, key, identity = _store()
        data = store.get(_KIND, key, identity)
        codes = marshal.loads(data) if data is not None else {}
    except Exception:  # noqa: BLE001 - an unreadable entry is only a slower start
        return {}
    if not isinstance(codes, dict):
        return {}
    return {k: v for k, v in codes.items()
            if type(k) is str and type(v) is type(_load.__code__)}


def _save(codes: dict[str, Any]) -> None:
    keep = codes if len(codes) <= _MAX_TEXTS else {t: codes[t] for t in _used if t in codes}
    try:
        store, key, identity = _store()
        store.put(_KIND, key, marshal.dumps(keep), identity)
    except Exception:  # noqa: BLE001 - not written: the next process compiles again
        pass


@contextmanager
def compiled_methods() -> Iterator[None]:
    """While open, ``dataclasses`` uses the kept code of portakern classes' methods."""
    global _depth, _codes, _previous, _compiled
    if not cache_enabled():
        yield
        return
    with _LOCK:
        if _codes is None:
            _codes = _load()
        if _depth == 0:
            _previous = dataclasses.__dict__.get("exec", _MISSING)
            dataclasses.exec = _exec  # type: ignore[attr-defined]
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0:
                if _previous is _MISSING:
                    dataclasses.__dict__.pop("exec", None)
                else:
                    dataclasses.exec = _previous  # type: ignore[attr-defined]
                if _compiled and _codes is not None:
                    _compiled = False
                    _save(_codes)
