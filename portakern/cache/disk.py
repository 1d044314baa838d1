"""The on-disk store: one folder per format version and kind, entries checked on read,
shared objects loaded from private copies."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..subprocesses import fork_safe_lock
from .shared_objects import dlopen_copy, load_bytes, private_copy, sweep_copies

__all__ = ["CacheWarning", "DiskCache", "DEFAULT_SIZE", "FORMAT", "cache_dir", "cache_enabled",
           "load_bytes", "make_key", "private_copy", "size_limit"]


#: Bumped when the entry layout changes; old entries are then simply not found.
#: 2: shared objects are stored as entries (with a digest), folders are private.
#: 3: each entry records the kind, key and identity it was written for (:func:`_encode`).
FORMAT = 3

#: The default size limit (PORTAKERN_CACHE_SIZE).
DEFAULT_SIZE = 256 * 2**20

_MAGIC = b"PKC%d" % FORMAT

_PREFIX = len(_MAGIC) + 32 + 4  # magic, the SHA-256, the length of the record


def _encode(kind: str, key: str, identity: str, payload: bytes) -> bytes:
    """An entry: magic, SHA-256, the record's length, the record, the payload.

    The record (JSON: kind, key, identity) says what the entry was written for; the
    digest covers the record and the payload, so an entry copied to another key's
    path (a sync tool, a restored backup) is recognised as foreign, not loaded.
    """
    record = json.dumps({"kind": kind, "key": key, "identity": identity},
                        sort_keys=True).encode()
    size = len(record).to_bytes(4, "little")
    return _MAGIC + hashlib.sha256(size + record + payload).digest() + size + record + payload


def _decode(raw: bytes) -> tuple[dict, bytes] | None:
    """(record, payload) of an entry, or None when it is torn, damaged or not an entry."""
    if len(raw) < _PREFIX or raw[:len(_MAGIC)] != _MAGIC:
        return None
    size = raw[_PREFIX - 4:_PREFIX]
    n = int.from_bytes(size, "little")
    if len(raw) < _PREFIX + n or raw[len(_MAGIC):_PREFIX - 4] != \
            hashlib.sha256(raw[_PREFIX - 4:]).digest():
        return None
    try:
        record = json.loads(raw[_PREFIX:_PREFIX + n])
    except ValueError:
        return None
    return (record, raw[_PREFIX + n:]) if isinstance(record, dict) else None

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


_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20,
          "MIB": 2**20, "G": 2**30, "GB": 2**30, "GIB": 2**30}


def size_limit() -> int | None:
    """``PORTAKERN_CACHE_SIZE`` in bytes (``500M``, ``2G``, ``1048576``); None for ``none``.

    Unset or unreadable: :data:`DEFAULT_SIZE` (an unreadable value warns once).
    """
    text = os.environ.get("PORTAKERN_CACHE_SIZE", "").strip().upper()
    if not text:
        return DEFAULT_SIZE
    if text in ("NONE", "UNLIMITED"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]?I?B?)", text)
    if m is None or m.group(2) not in _UNITS:
        warnings.warn(
            f"PORTAKERN_CACHE_SIZE={os.environ['PORTAKERN_CACHE_SIZE']!r} is not a size "
            f"(use bytes or K/M/G, e.g. 500M, or 'none'); using {DEFAULT_SIZE // 2**20}M",
            CacheWarning, stacklevel=3)
        return DEFAULT_SIZE
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def _version() -> str:
    from ..version import __version__

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


_POSIX = hasattr(os, "geteuid")


def _untrusted(st: os.stat_result, what: str) -> str | None:
    """Why a folder or file with status ``st`` must not be trusted, or None."""
    if not _POSIX:
        return None  # Windows: the user profile's ACLs decide; nothing to compare here
    if st.st_uid != os.geteuid():
        return f"{what} is owned by user id {st.st_uid}, not by this user ({os.geteuid()})"
    if st.st_mode & 0o022:
        return f"{what} is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


class DiskCache:
    """Entries of bytes, by kind and key, in one private folder (or in memory).

    Parameters
    ----------
    directory : path-like or None
        The cache folder, created (mode 0700) on first write. None keeps entries in
        memory only (the disabled cache still deduplicates work within a process).
    limit : int or None, optional
        The most bytes the folder may hold before the least recently used entries
        are deleted; None for no limit. Default: :func:`size_limit`.
    """

    def __init__(self, directory: str | os.PathLike | None, limit: Any = "env", *,
                 quiet: bool = False) -> None:
        self.directory = None if directory is None else Path(directory)
        #: No CacheWarning: a store that is only a shortcut (portakern.cache.class_code)
        #: leaves the warnings to the kernel cache in the same folder.
        self.quiet = quiet
        self.limit: int | None = size_limit() if limit == "env" else limit
        self._memory: dict[tuple[str, str], bytes] = {}
        self._lock = fork_safe_lock()
        self._writable = self.directory is not None
        #: Whether the folder may be read: None until checked, then True, or the
        #: reason it is refused (another user can write it).
        self._trust: bool | str | None = None if self.directory is not None else "off"
        self._checked: set[Path] = set()
        self._size: int | None = None  # bytes on disk, as this process believes
        self.hits = 0
        self.misses = 0
        #: Entries found written for another key or compiler (copied over), rebuilt.
        self.foreign = 0
        self._vanish_warned = False
        self._load_swept = False

    def __repr__(self) -> str:
        where = self.directory if self._writable else "memory"
        return f"<portakern.cache.store.DiskCache {where}>"

    def _path(self, kind: str, key: str) -> Path:
        assert self.directory is not None
        return self.directory / f"v{FORMAT}" / kind / key[:2] / key

    # -- trust ------------------------------------------------------------------------
    def _trusted(self) -> bool:
        """True if the folder may be read: checked once, refused with one warning."""
        trust = self._trust
        if trust is None:
            trust = self._check_folder(self.directory)  # type: ignore[arg-type]
        return trust is True

    def _check_folder(self, path: Path) -> bool | str:
        """Check one folder of the cache (the root, or one below it) once per process."""
        if path in self._checked:
            return self._trust if self._trust is not None else True
        try:
            st = os.stat(path, follow_symlinks=path == self.directory)
        except FileNotFoundError:
            return True  # created by us, 0700, on first write (and checked if another was first)
        except OSError as exc:
            return self._refuse(f"{path} cannot be examined ({exc})")
        reason = _untrusted(st, f"{path}") if stat.S_ISDIR(st.st_mode) else \
            f"{path} is not a folder"
        if reason is not None:
            return self._refuse(reason)
        self._checked.add(path)
        if path == self.directory:
            self._trust = True
        return True

    def _refuse(self, reason: str) -> str:
        with self._lock:
            first = not isinstance(self._trust, str)
            self._trust = reason
            self._writable = False
        if first and not self.quiet:
            warnings.warn(
                f"portakern does not use its kernel cache in {self.directory}: {reason}, so "
                f"a cached shared object there could run someone else's code. Compiled "
                f"kernels are cached in memory for this process only. Use a folder only you "
                f"can write (chmod 700 it, or set PORTAKERN_CACHE_DIR), or PORTAKERN_CACHE=0.",
                CacheWarning, stacklevel=5)
        return reason

    def _folders_ok(self, path: Path) -> bool:
        """Every folder from the root down to ``path``'s is ours and private."""
        assert self.directory is not None
        if not self._trusted():
            return False
        rel = path.parent.relative_to(self.directory)
        folder = self.directory
        for part in rel.parts:
            folder = folder / part
            if self._check_folder(folder) is not True:
                return False
        return True

    # -- entries ------------------------------------------------------------------------
    def get(self, kind: str, key: str, identity: str | None = None) -> bytes | None:
        """The payload stored under ``(kind, key)``, or None (missing, corrupt or foreign).

        An entry on disk is used only when its digest holds and its record says it was
        written for this ``kind``, this ``key`` and (unless ``identity`` is None) this
        ``identity`` (the compiler or device it was built with): another key's entry
        copied over it, or one of another compiler, is deleted and None returned, so the
        caller rebuilds it.
        """
        data = self._memory.get((kind, key))
        if data is None and self.directory is not None:
            path = self._path(kind, key)
            if self._folders_ok(path):
                data = self._read(path, kind, key, identity)
        if data is None:
            self.misses += 1
        else:
            self.hits += 1
        return data

    def _read(self, path: Path, kind: str, key: str, identity: str | None) -> bytes | None:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or _untrusted(st, "entry") is not None:
                return None  # not ours: never read; our rebuild replaces it
            entry = _decode(f.read())
            record = entry[0] if entry is not None else {}
            if entry is None or record.get("kind") != kind or record.get("key") != key \
                    or (identity is not None and record.get("identity") != identity):
                # Torn, damaged, or written for another key or compiler (copied here, or
                # stale): drop it, so the caller's rebuild writes a good one.
                self.foreign += entry is not None
                self._unlink(path)
                return None
            try:
                # Least recently used goes first: the access time says when, set here
                # since file systems mounted noatime or relatime do not keep it.
                os.utime(fd if os.utime in os.supports_fd else path,
                         ns=(time.time_ns(), st.st_mtime_ns))
            except (OSError, ValueError):
                pass
        return entry[1]

    @staticmethod
    def _unlink(path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            pass

    def put(self, kind: str, key: str, data: bytes, identity: str = "") -> None:
        """Store ``data`` under ``(kind, key)``, recording both and ``identity``.

        Never raises for an unusable folder: the entry is then kept in memory.
        """
        if not self._writable or (self.directory is not None and not self._trusted()):
            with self._lock:
                self._memory[(kind, key)] = bytes(data)
            return
        path = self._path(kind, key)
        entry = _encode(kind, key, identity, data)
        if not self._publish(path, entry):
            with self._lock:
                self._memory[(kind, key)] = bytes(data)
            return
        self._grew(len(entry))

    def discard(self, kind: str, key: str) -> None:
        """Forget ``(kind, key)``: an entry whose payload turned out unusable."""
        with self._lock:
            self._memory.pop((kind, key), None)
        if self.directory is not None and self._writable:
            self._unlink(self._path(kind, key))

    def _makedirs(self, folder: Path) -> None:
        """Create ``folder`` and missing parents, each mode 0700 whatever the umask."""
        missing = []
        p = folder
        while not p.is_dir():
            missing.append(p)
            if p.parent == p:
                break
            p = p.parent
        for p in reversed(missing):
            try:
                p.mkdir(mode=0o700)
            except FileExistsError:
                continue  # another process made it: checked like any other folder
            os.chmod(p, 0o700)  # mkdir's mode is masked by the umask (0o700 & ~umask)
            self._checked.add(p)
            if p == self.directory:
                self._trust = True

    def _publish(self, path: Path, data: bytes) -> bool:
        """Write ``path`` atomically; False if the folder fails (:meth:`fall_back`), or
        vanished twice while writing (:meth:`_vanished`: the cache stays on)."""
        for attempt in range(3):
            try:
                return self._write(path, data)
            except FileNotFoundError as exc:
                # The folder, or our temporary, was removed under us: a concurrent
                # ``portakern cache clear`` or ``rm -r``. Make the folders again.
                with self._lock:
                    self._checked.clear()
                if attempt == 2:
                    self._vanished(path, exc)
                    return False
            except OSError as exc:
                if path.is_file():
                    # Another writer holds the same entry (Windows refuses to replace an
                    # open file); theirs is as good as ours.
                    return True
                self.fall_back(exc)
                return False
        return False  # pragma: no cover - the loop returns

    def _write(self, path: Path, data: bytes) -> bool:
        self._makedirs(path.parent)
        if not self._folders_ok(path):
            return False  # refused, with its warning (_refuse)
        # mkstemp creates the file 0600.
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
        return True

    def _vanished(self, path: Path, exc: OSError) -> None:
        """One warning: the folder kept disappearing while an entry was written."""
        with self._lock:
            first = not self._vanish_warned
            self._vanish_warned = True
        if first and not self.quiet:
            warnings.warn(
                f"portakern's kernel cache folder {self.directory} was removed while an entry "
                f"was written to {path.parent} ({exc}): a 'portakern cache clear' or a removal "
                f"running at the same time? That entry is kept in memory for this process; "
                f"the disk cache stays on and later entries are written again.",
                CacheWarning, stacklevel=4)

    # -- shared objects -------------------------------------------------------------------
    def put_library(self, kind: str, name: str, built: Path, identity: str = "") -> None:
        """Store the file ``built`` (a shared object or an object file) as ``(kind, name)``."""
        self.put(kind, name, built.read_bytes(), identity)

    def load_library(self, kind: str, name: str, check: Callable[[Any], Any] | None = None,
                     identity: str | None = None) -> Any | None:
        """The cached shared object ``(kind, name)``, loaded; None if missing or unusable.

        The entry is read once, and its digest and record (written for this ``kind``,
        ``name`` and ``identity``) checked; those same bytes are then written to a new
        file in a folder only this user can write (:func:`load_bytes`), loaded with
        :class:`ctypes.CDLL`, and deleted. No other user can change the file between
        the check and ``dlopen``, since the bytes checked are the bytes loaded.
        ``check(lib)`` (e.g. look up ``pk_launch``) returns what is handed back; an
        entry that does not load, or fails ``check`` with an :class:`AttributeError`
        or :class:`OSError`, is deleted with a :class:`CacheWarning` that says why,
        and None returned: the caller rebuilds it. A private copy that cannot be
        written (a full disk) returns None and keeps the entry.
        """
        data = self.get(kind, name, identity)
        if data is None:
            return None
        try:
            path = private_copy(data, name, self._load_folder())
        except OSError:
            return None  # no room for the copy: the entry is fine, the build goes on
        try:
            lib = dlopen_copy(path)
            return check(lib) if check is not None else lib
        except (OSError, AttributeError) as exc:
            self.discard(kind, name)
            warnings.warn(
                f"portakern refused the cached library {kind}/{name} in {self.directory}: "
                f"{exc}. It was deleted and is rebuilt.", CacheWarning, stacklevel=4)
            return None

    def _load_folder(self) -> Path | None:
        """``v<FORMAT>/load`` in the cache folder, private, or None (memory-only cache).

        Libraries are loaded from the cache's own folder where there is one: it is
        private, checked, and (unlike /tmp on some systems) not mounted noexec. The
        first use in a process removes the copies of processes that are gone (killed
        between writing a copy and deleting it).
        """
        if self.directory is None or not self._writable or not self._trusted():
            return None
        folder = self.directory / f"v{FORMAT}" / "load" / "00"
        try:
            self._makedirs(folder)
        except OSError:
            return None
        if not self._folders_ok(folder / "x"):
            return None
        if not self._load_swept:
            self._load_swept = True
            sweep_copies(folder)
        return folder

    # -- size --------------------------------------------------------------------------
    def _grew(self, nbytes: int) -> None:
        if self.limit is None:
            return
        with self._lock:
            if self._size is None:
                self._size = sum(st.st_size for _, st in self._files())
            else:
                self._size += nbytes
            over = self._size > self.limit
        if over:
            self.evict()

    def _files(self) -> list[tuple[Path, os.stat_result]]:
        """Every file in the folder (entries of every version, and stray temporaries)."""
        out = []
        if self.directory is None:
            return out
        for p in self.directory.glob("v*/*/*/*"):
            try:
                st = p.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append((p, st))
        return out

    def evict(self, target: int | None = None) -> int:
        """Delete least recently used entries until the folder holds at most ``target``
        bytes (default: 80% of the limit); return how many went."""
        if self.directory is None or not self._writable or not self._trusted():
            return 0
        if target is None:
            if self.limit is None:
                return 0
            target = int(self.limit * 0.8)
        files = self._files()
        total = sum(st.st_size for _, st in files)
        removed = 0
        stale = time.time() - 3600
        # Oldest use first; a stray temporary over an hour old is a writer that died.
        for p, st in sorted(files, key=lambda f: f[1].st_atime):
            if total <= target and not (p.name.startswith(".tmp-") and st.st_mtime < stale):
                continue
            try:
                p.unlink()
            except OSError:
                continue
            total -= st.st_size
            removed += 1
        with self._lock:
            self._size = total
        return removed

    def info(self) -> dict[str, Any]:
        """Where the cache is, whether it is used, its size, entries (by kind) and limit."""
        if self.directory is None:
            status = "off (PORTAKERN_CACHE=0): memory only"
        elif not self._trusted():
            status = f"not used: {self._trust}"
        else:
            status = "in use" if self._writable else "read-only"
        kinds: dict[str, int] = {}
        size = 0
        if self.directory is not None and self._trust is True:
            for p, st in self._files():
                if p.name.startswith(".tmp-"):
                    continue
                if p.parent.parent.parent.name == f"v{FORMAT}":
                    kinds[p.parent.parent.name] = kinds.get(p.parent.parent.name, 0) + 1
                size += st.st_size
        return {"directory": str(self.directory) if self.directory else None,
                "status": status, "size": size, "entries": sum(kinds.values()),
                "kinds": kinds, "limit": self.limit, "format": FORMAT}

    def fall_back(self, exc: OSError) -> None:
        """Stop writing to the folder, with one :class:`CacheWarning` (after ``exc``)."""
        with self._lock:
            if not self._writable:
                return
            self._writable = False
        if self.quiet:
            return
        warnings.warn(
            f"portakern cannot write its kernel cache in {self.directory} ({exc}); compiled "
            f"kernels are cached in memory for this process only. Set PORTAKERN_CACHE_DIR to "
            f"a writable folder, or PORTAKERN_CACHE=0 to turn the disk cache off.",
            CacheWarning, stacklevel=4)

    def clear(self) -> int:
        """Delete every entry (of every portakern version); return how many files went."""
        with self._lock:
            self._memory.clear()
            self._size = None
        if self.directory is None or not self.directory.is_dir():
            return 0
        removed = 0
        young = time.time() - 3600
        for p in sorted(self.directory.glob("v*/*/*/*")):
            try:
                if p.name.startswith(".tmp-") and p.lstat().st_mtime > young:
                    continue  # a writer or a load in flight (another process): theirs to move
                p.unlink()
                removed += 1
            except OSError:
                pass
        return removed
