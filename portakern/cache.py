"""The disk cache: what the vendor libraries do not keep between processes.

Three layers keep a kernel from being built twice:

1. in memory, per :class:`~portakern.kernel.Kernel`: the parsed source, the
   rendered source per (target, type bindings, ndrange rank) and the compiled
   handle per backend;
2. in memory, per OpenCL context: built programs by rendered source
   (:meth:`portakern.backends.opencl.OpenCL.compile`);
3. on disk, here: the rendered source of a kernel variant (so a new process
   skips Jinja) and OpenCL program binaries (so it skips the OpenCL compiler
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
two processes or threads writing the same entry at once both succeed. A
checksum in the entry's header detects a torn or corrupt file: it is deleted
and the caller rebuilds it. A cache folder that cannot be written falls back
to an in-memory cache for the process, with one :class:`CacheWarning`.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

__all__ = ["CacheWarning", "DiskCache", "cache_dir", "cache_enabled", "clear", "default_cache",
           "make_key", "templates_digest"]

#: Bumped when the entry layout changes; old entries are then simply not found.
FORMAT = 1
_MAGIC = b"PKC%d" % FORMAT
_HEADER = len(_MAGIC) + 32  # magic, then the SHA-256 of the payload
_OFF = ("0", "false", "no", "off")


class CacheWarning(UserWarning):
    """The disk cache cannot be used as configured; portakern carries on without it."""


def cache_enabled() -> bool:
    """False when ``PORTAKERN_CACHE`` is ``0``, ``false``, ``no`` or ``off``."""
    return os.environ.get("PORTAKERN_CACHE", "1").strip().lower() not in _OFF


def cache_dir() -> Path:
    """The cache folder: ``PORTAKERN_CACHE_DIR``, else the platform's user cache folder."""
    env = os.environ.get("PORTAKERN_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("portakern", appauthor=False))


def _version() -> str:
    from . import __version__

    return __version__


def make_key(kind: str, *parts: Any) -> str:
    """A stable digest of ``parts`` for an entry of ``kind``.

    Parts are turned into text with :func:`repr`, so use str, bytes, numbers,
    bools, None and tuples of them (dicts: pass ``sorted(d.items())``).
    """
    h = hashlib.sha256()
    for part in (_version(), FORMAT, kind, *parts):
        data = part if isinstance(part, bytes) else repr(part).encode()
        # Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


_TEMPLATES: dict[tuple[str, ...], str] = {}


def templates_digest() -> str:
    """A digest of every template file on the search path (computed once per path)."""
    from .render import template_dirs

    dirs = tuple(str(d) for d in template_dirs())
    hit = _TEMPLATES.get(dirs)
    if hit is None:
        h = hashlib.sha256()
        for d in dirs:
            root = Path(d)
            if not root.is_dir():
                continue
            for p in sorted(root.rglob("*")):
                if p.is_file():
                    h.update(str(p.relative_to(root)).encode() + b"\0")
                    h.update(hashlib.sha256(p.read_bytes()).digest())
        hit = _TEMPLATES[dirs] = h.hexdigest()
    return hit


class DiskCache:
    """Entries of bytes, by kind and key, in one folder (or in memory).

    Parameters
    ----------
    directory : path-like or None
        The cache folder, created on first write. None keeps entries in memory
        only (the disabled cache still deduplicates work within a process).
    """

    def __init__(self, directory: str | os.PathLike | None) -> None:
        self.directory = None if directory is None else Path(directory)
        self._memory: dict[tuple[str, str], bytes] = {}
        self._lock = threading.Lock()
        self._writable = self.directory is not None
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        where = self.directory if self._writable else "memory"
        return f"<portakern.cache.DiskCache {where}>"

    def _path(self, kind: str, key: str) -> Path:
        assert self.directory is not None
        return self.directory / f"v{FORMAT}" / kind / key[:2] / key

    def get(self, kind: str, key: str) -> bytes | None:
        """The payload stored under ``(kind, key)``, or None (missing or corrupt)."""
        data = self._memory.get((kind, key))
        if data is None and self.directory is not None:
            data = self._read(self._path(kind, key))
        if data is None:
            self.misses += 1
        else:
            self.hits += 1
        return data

    def _read(self, path: Path) -> bytes | None:
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        payload = raw[_HEADER:]
        if raw[:len(_MAGIC)] != _MAGIC or raw[len(_MAGIC):_HEADER] != \
                hashlib.sha256(payload).digest():
            # Torn or damaged: drop it, so the caller's rebuild writes a good one.
            try:
                path.unlink()
            except OSError:
                pass
            return None
        return payload

    def put(self, kind: str, key: str, data: bytes) -> None:
        """Store ``data`` under ``(kind, key)``; never raises for an unusable folder."""
        if not self._writable:
            with self._lock:
                self._memory[(kind, key)] = bytes(data)
            return
        path = self._path(kind, key)
        if not self._publish(path, _MAGIC + hashlib.sha256(data).digest() + data):
            with self._lock:
                self._memory[(kind, key)] = bytes(data)

    def _publish(self, path: Path, data: bytes) -> bool:
        """Write ``path`` atomically; False (after :meth:`fall_back`) if the folder fails."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError as exc:
            if path.is_file():
                # Another writer holds the same entry (Windows refuses to replace an
                # open file); theirs is as good as ours.
                return True
            self.fall_back(exc)
            return False
        return True

    def file_path(self, kind: str, name: str) -> Path | None:
        """Where an entry that must be a plain file (a shared object) lives, or None.

        None when the cache is off or could not be written: the caller then keeps
        its file in a temporary folder for the process. Such files carry no
        checksum header (``dlopen`` needs the bare file); the caller rebuilds one
        that fails to load, and :meth:`put_file` writes them atomically.
        """
        if not self._writable or self.directory is None:
            return None
        return self.directory / f"v{FORMAT}" / kind / name[:2] / name

    def put_file(self, kind: str, name: str, source: Path) -> Path | None:
        """Copy the file ``source`` in as ``(kind, name)``; its path, or None if unusable."""
        path = self.file_path(kind, name)
        if path is None or not self._publish(path, source.read_bytes()):
            return None
        return path

    def fall_back(self, exc: OSError) -> None:
        """Stop writing to the folder, with one :class:`CacheWarning` (after ``exc``)."""
        with self._lock:
            if not self._writable:
                return
            self._writable = False
        warnings.warn(
            f"portakern cannot write its kernel cache in {self.directory} ({exc}); compiled "
            f"kernels are cached in memory for this process only. Set PORTAKERN_CACHE_DIR to "
            f"a writable folder, or PORTAKERN_CACHE=0 to turn the disk cache off.",
            CacheWarning, stacklevel=4)

    def clear(self) -> int:
        """Delete every entry (of every portakern version); return how many files went."""
        with self._lock:
            self._memory.clear()
        if self.directory is None or not self.directory.is_dir():
            return 0
        removed = 0
        for p in sorted(self.directory.glob("v*/*/*/*")):
            try:
                p.unlink()
                removed += 1
            except OSError:
                pass
        return removed


_DEFAULT: dict[tuple[str, bool], DiskCache] = {}
_DEFAULT_LOCK = threading.Lock()


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


def _code_digest() -> str:
    """A digest of the modules whose output a rendered source depends on.

    The version alone is not enough: an editable install changes the lowering
    without a new version number.
    """
    if not _CODE:
        import jinja2

        h = hashlib.sha256(f"jinja2 {jinja2.__version__}".encode())
        here = Path(__file__).resolve().parent
        for name in ("language.py", "lower.py", "render.py", "types.py", "cache.py"):
            try:
                h.update(name.encode() + (here / name).read_bytes())
            except OSError:
                h.update(name.encode())
        _CODE.append(h.hexdigest())
    return _CODE[0]


def rendered(kernel: Any, target: str, bindings: tuple, ndim: int, *,
             unmasked: bool = False, disk: bool = True) -> Any:
    """The :class:`~portakern.render.RenderedKernel` of a kernel variant, cached.

    Looks in the kernel's memory cache, then (with ``disk``) on disk, and
    renders (:meth:`portakern.Kernel.rendered`) only on a miss.

    Parameters
    ----------
    kernel : portakern.Kernel
        The kernel (its template, name and constants are part of the key).
    target : str
        The dialect.
    bindings : tuple of (str, str)
        Type variable bindings, sorted by name.
    ndim : int
        The ndrange rank.
    unmasked : bool
        Render without the bounds mask.
    disk : bool
        Use the disk cache. An entry read from disk has no lowered tree, so a
        caller that re-renders variants (``Backend.renders_variants``) passes False.
    """
    # A key of its own, apart from Kernel.rendered's (target, bindings, ndim, extra):
    # an entry read from disk lacks the lowered tree, and Kernel.rendered's callers
    # may want it (RenderedKernel.variant).
    mem_key = ("launch", target, bindings, ndim, unmasked)
    hit = kernel._rendered.get(mem_key)
    if hit is not None:
        return hit
    store = default_cache() if disk else None
    key = data = None
    if store is not None:
        template = kernel._template
        key = make_key("render", _code_digest(), templates_digest(), template.source,
                       template.filename, kernel._name, sorted(kernel.constants.items()),
                       target, bindings, ndim, unmasked)
        data = store.get("render", key)
    hit = _decode_rendered(data) if data is not None else None
    if hit is None:
        hit = kernel.rendered(target, dict(bindings), ndim, unmasked=unmasked)
        encoded = _encode_rendered(hit) if store is not None and key is not None else None
        if encoded is not None:
            store.put("render", key, encoded)
    kernel._rendered[mem_key] = hit
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

    from .language import Param
    from .render import RenderedKernel

    try:
        d = json.loads(data)
        d["params"] = tuple(Param(**p) for p in d["params"])
        for name, value in d.items():
            if isinstance(value, list):  # JSON turned the tuples into lists
                d[name] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
        return RenderedKernel(**d)
    except (ValueError, KeyError, TypeError):
        return None  # written by other code: render again, which overwrites it
