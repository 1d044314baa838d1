"""The disk cache: what the vendor libraries do not keep between processes.

Three layers keep a kernel from being built twice:

1. in memory, per :class:`~portakern.Kernel`: the parsed source, the
   rendered source per (target, type bindings, ndrange rank) and the compiled
   handle per backend;
2. in memory, per OpenCL context: built programs by rendered source
   (:meth:`portakern.backends.opencl.OpenCL.compile`);
3. on disk, here: the rendered source of a kernel variant (so a new process
   skips Jinja), the native path's and the GPU stand-ins' shared objects, and
   OpenCL program binaries (so it skips the OpenCL compiler
   front end; PoCL's own kernel cache still saves the code generation, but its
   cache lookup from source costs ~25 ms a kernel, loading a binary ~2 ms).
   CuPy keeps its own disk cache of compiled CUDA modules, so nothing of CUDA
   is stored here.

Entries live under ``platformdirs.user_cache_dir("portakern")``, or under
``PORTAKERN_CACHE_DIR``; ``PORTAKERN_CACHE=0`` turns the disk cache off (the
in-memory layers stay). Keys are SHA-256 digests of everything the entry
depends on: the portakern version, the inputs of the step (source, constants,
bindings, template files, compiler options) and, for binaries, the device and
driver. Each entry is written to a temporary file in the same folder and moved
into place with :func:`os.replace`, so a reader sees a whole entry or none, and
two processes or threads writing the same entry at once both succeed.

The folder is private (docs/rendering.md, "Security"): folders are made 0700 and
files 0600; a folder that another user owns or can write is not used at all (one
:class:`CacheWarning`, memory only), nor is an entry file of another user. Every
entry, shared objects included, records the kind, key and identity (compiler,
device, or the code and templates that rendered it) it was written for, and starts
with the SHA-256 of that record and the payload, both checked before the payload is
used: a torn or damaged entry, or one written for another key (copied over this one)
or by another compiler, is deleted and the caller rebuilds it. A shared object
without portakern's entry points is refused the same way, with a warning. A
shared object is loaded from a private copy of the bytes that were
checked (:meth:`DiskCache.load_library`). The folder is kept under a size limit
(``PORTAKERN_CACHE_SIZE``), least recently used entries first. A cache folder that
cannot be written falls back to an in-memory cache for the process, with one
:class:`CacheWarning`; a folder removed while an entry is written (a concurrent
``portakern cache clear``) is made again, and the cache stays on.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import log
from ..subprocesses import fork_safe_lock
from ..variant import Variant
from .disk import (
    DEFAULT_SIZE,
    FORMAT,
    CacheWarning,
    DiskCache,
    cache_dir,
    cache_enabled,
    load_bytes,
    make_key,
    size_limit,
)

__all__ = ["CacheWarning", "DiskCache", "DEFAULT_SIZE", "FORMAT", "cache_dir", "cache_enabled",
           "chosen_workgroup", "keep_workgroup",
           "clear", "default_cache", "load_bytes", "make_key", "size_limit", "templates_digest"]


_DEFAULT: dict[tuple[str, bool], DiskCache] = {}
_DEFAULT_LOCK = fork_safe_lock()


def default_cache() -> DiskCache:
    """The process's cache, for the current ``PORTAKERN_CACHE_DIR`` / ``PORTAKERN_CACHE``."""
    enabled = cache_enabled()
    where = str(cache_dir()) if enabled else ""
    config = (where, enabled)
    hit = _DEFAULT.get(config)
    if hit is None:
        with _DEFAULT_LOCK:
            hit = _DEFAULT.get(config)
            if hit is None:
                hit = _DEFAULT[config] = DiskCache(where if enabled else None)
    return hit


def clear() -> int:
    """Delete every entry of the default cache folder; return how many files went."""
    return DiskCache(cache_dir()).clear()


# -- rendered kernels ---------------------------------------------------------------

_CODE: list[str] = []


_TEMPLATES: dict[tuple[str, ...], str] = {}


def templates_digest() -> str:
    """A digest of every template file on the search path (computed once per path)."""
    from ..render.emit import template_dirs

    dirs = tuple(str(d) for d in template_dirs())
    hit = _TEMPLATES.get(dirs)
    if hit is None:
        h = hashlib.sha256()
        for d in dirs:
            for parts, path in _template_files(d):
                h.update(os.sep.join(parts).encode() + b"\0")
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
        hit = _TEMPLATES[dirs] = h.hexdigest()
    return hit


def _template_files(root: str) -> list[tuple[tuple[str, ...], str]]:
    """(relative path's parts, path) of every file below ``root``, in ``Path`` order.

    What ``sorted(Path(root).rglob("*"))`` keeping ``is_file()`` gives (the order of the
    parts, symbolic links to folders not entered), through ``os.walk``: pathlib's walk
    cost a warm start a millisecond.
    """
    found = []
    skip = len(root.rstrip(os.sep)) + 1
    for top, _dirs, names in os.walk(root):
        rel = tuple(top[skip:].split(os.sep)) if len(top) >= skip else ()
        for name in names:
            path = os.path.join(top, name)
            if os.path.isfile(path):
                found.append((rel + (name,), path))
    found.sort()
    return found


def _code_digest() -> str:
    """A digest of every module of the package (path, size, modification time), and Jinja.

    The version alone is not enough: an editable install changes the lowering
    without a new version number, and a hand-kept list of "the modules rendering
    depends on" goes stale as soon as a module is added, so every ``.py`` file of
    the package is in it. Their ``stat`` is taken rather than their text: reading
    and hashing a megabyte of source doubled the time a new process takes to its
    first launch, while a ``stat`` of each file costs well under a millisecond (an
    edit changes the modification time; a touched file only costs a re-render).
    """
    if not _CODE:
        # Jinja's version from its __init__.py (which spells it), not from an import:
        # a launch from the disk cache does not load Jinja (DESIGN section 4, startup).
        import importlib.util

        spec = importlib.util.find_spec("jinja2")
        try:
            jinja = Path(spec.origin).read_bytes() if spec and spec.origin else b""
        except OSError:
            jinja = b""
        h = hashlib.sha256(b"jinja2 " + jinja)
        here = Path(__file__).resolve().parent.parent  # the whole package
        files = []
        for root, dirs, names in os.walk(here):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            files += [os.path.join(root, n) for n in names if n.endswith(".py")]
        skip = len(str(here)) + 1
        for path in sorted(files):
            name = path[skip:].replace(os.sep, "/")
            try:
                st = os.stat(path)
                h.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
            except OSError:
                h.update(name.encode())
        _CODE.append(h.hexdigest())
    return _CODE[0]


def rendered(recipe: tuple, variant: Variant, *, render: Callable[[], Any]) -> Any:
    """The :class:`~portakern.render.emit.RenderedKernel` of a variant, from disk or ``render``.

    Parameters
    ----------
    recipe : tuple
        :attr:`portakern.Kernel.recipe`: source, name, file name and constants, all
        part of the key.
    variant : Variant
        What is rendered (:class:`portakern.variant.Variant`): target, bindings,
        ndrange rank, mask, debug mode and template options, all part of the key,
        with digests of the package's code and templates.
    render : callable
        Renders the variant on a miss (:meth:`portakern.Kernel.render_variant`).
    """
    start = log.clock()
    store = default_cache()
    source, name, filename, constants = recipe
    # The entry records the digests it was rendered with, and is used only for this key.
    identity = f"{_code_digest()} {templates_digest()}"
    key = make_key("render", _code_digest(), templates_digest(), source, filename, name,
                   list(constants), *variant)
    data = store.get("render", key, identity)
    hit = _decode_rendered(data) if data is not None else None
    log.found(f"{variant.target} source", hit, start)
    if hit is None:
        hit = log.timed("rendered", variant.target, render)
        encoded = _encode_rendered(hit)
        if encoded is not None:
            store.put("render", key, encoded, identity)
    return hit


def _encode_rendered(r: Any) -> bytes | None:
    """The JSON of a RenderedKernel's data fields (not the lowered tree it keeps)."""
    import json
    from dataclasses import asdict, fields

    out: dict[str, Any] = {}
    for f in fields(r):
        if not f.compare:
            continue  # the lowered tree and helpers: for re-rendering only
        value = getattr(r, f.name)
        out[f.name] = [asdict(p) for p in value] if f.name == "params" else value
    try:
        return json.dumps(out).encode()
    except (TypeError, ValueError):
        return None  # template options that are not plain data: keep it in memory only


def _decode_rendered(data: bytes) -> Any:
    import json

    from ..render.emit import RenderedKernel
    from ..syntax.language import Param

    try:
        d = json.loads(data)
        d["params"] = tuple(Param(**p) for p in d["params"])
        for name, value in d.items():
            if isinstance(value, list):  # JSON turned the tuples into lists
                d[name] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
        return RenderedKernel(**d)
    except (ValueError, KeyError, TypeError):
        return None  # written by other code: render again, which overwrites it


# -- workgroup sizes chosen by timing (workgroupsize="auto", portakern.launch.auto) ----

def chosen_workgroup(parts: tuple) -> tuple[bool, tuple[int, ...] | None]:
    """``(stored, size)``: the size kept for ``parts`` (kernel variant, device, shape class);
    ``size`` None when the backend's default won. ``(False, None)`` when none is kept."""
    import json

    store = default_cache()
    data = store.get("groups", make_key("groups", _code_digest(), *parts))
    if data is None:
        return False, None
    try:
        wg = json.loads(data)["workgroupsize"]
        if wg is not None and not (isinstance(wg, list) and all(
                type(w) is int and w >= 1 for w in wg)):
            raise ValueError(wg)
    except (ValueError, KeyError, TypeError):
        return False, None  # written by other code: timed again, which overwrites it
    return True, None if wg is None else tuple(wg)


def keep_workgroup(parts: tuple, workgroupsize: tuple[int, ...] | None) -> None:
    """Keep the size chosen for ``parts`` (None: the backend's default)."""
    import json

    payload = json.dumps({"workgroupsize": None if workgroupsize is None
                          else list(workgroupsize)}).encode()
    default_cache().put("groups", make_key("groups", _code_digest(), *parts), payload)
