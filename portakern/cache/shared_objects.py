"""Shared objects loaded from bytes: a private copy, loaded, then deleted.

The disk cache (:mod:`portakern.cache.disk`) checks an entry's bytes, and hands those
same bytes here: they are written to a new file in a folder only this user can write,
loaded with :class:`ctypes.CDLL`, and the file is deleted at once (the mapping outlives
it). A copy that cannot be written whole (a full disk) is deleted; copies of a process
killed between writing and deleting one are swept by the next process.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from ..subprocesses import fork_safe_lock

__all__ = ["dlopen_copy", "load_bytes", "private_copy", "sweep_copies"]


_LOAD_DIR: list[tuple[int, str]] = []

_LOAD_LOCK = fork_safe_lock()

_LOADS = [0]


def _process_load_dir() -> str:
    """This process's private folder (mode 0700) under the temporary folder, made once.

    Used when the cache has no folder of its own to load from (off, unwritable or
    refused). A forked child makes its own; the folder goes when the process exits.
    """
    hit = _LOAD_DIR[0] if _LOAD_DIR else None
    if hit is None or hit[0] != os.getpid() or not os.path.isdir(hit[1]):
        with _LOAD_LOCK:
            hit = _LOAD_DIR[0] if _LOAD_DIR else None
            if hit is None or hit[0] != os.getpid() or not os.path.isdir(hit[1]):
                import atexit

                from ..subprocesses import sweep_once

                sweep_once()
                pid = os.getpid()
                folder = tempfile.mkdtemp(prefix=f"portakern-load-{pid}-")
                atexit.register(_remove_load_dir, pid, folder)
                hit = (pid, folder)
                _LOAD_DIR[:] = [hit]
    return hit[1]


def _remove_load_dir(pid: int, folder: str) -> None:
    if os.getpid() == pid:  # not in a forked child that inherited the handler
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def load_bytes(data: bytes, name: str = "lib.so", folder: str | os.PathLike | None = None
               ) -> Any:
    """Load the shared object ``data`` with :class:`ctypes.CDLL`, from a private copy.

    The copy (:func:`private_copy`) is deleted once loaded: the mapping outlives it.
    """
    return dlopen_copy(private_copy(data, name, folder))


def dlopen_copy(path: str) -> Any:
    """``ctypes.CDLL(path)``, the file deleted whatever happens."""
    import ctypes

    try:
        return ctypes.CDLL(path)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass  # Windows: a loaded library cannot be deleted; the eviction removes it


def private_copy(data: bytes, name: str = "lib.so", folder: str | os.PathLike | None = None
                 ) -> str:
    """A new file holding ``data``, for :func:`ctypes.CDLL`: its path.

    The file is in ``folder`` (one only this user can write; default, or when that
    one fails: this process's folder under the temporary folder), under a name never
    used before (the dynamic loader hands back a library it loaded under the same
    path). A copy that cannot be written whole (a full disk) is deleted, and the
    :class:`OSError` raised.
    """
    try:
        return _private_copy(data, name, folder)
    except OSError:
        if folder is None:
            raise
        return _private_copy(data, name, None)  # the cache's folder failed: the process's


def _private_copy(data: bytes, name: str, folder: str | os.PathLike | None) -> str:
    with _LOAD_LOCK:
        _LOADS[0] += 1
        n = _LOADS[0]
    where = str(folder) if folder is not None else _process_load_dir()
    path = os.path.join(where, f".tmp-load-{os.getpid()}-{n}-{Path(name).name or 'lib.so'}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    return path


def sweep_copies(folder: Path) -> None:
    """Delete ``.tmp-load-<pid>-*`` copies in ``folder`` whose process is gone.

    Only copies over a minute old (a load takes milliseconds): a pid that looks dead
    may be a live process of another PID namespace sharing the folder.
    """
    from ..subprocesses import alive

    try:
        names = os.listdir(folder)
    except OSError:
        return
    old = time.time() - 60
    for n in names:
        parts = n.split("-")
        if not (n.startswith(".tmp-load-") and len(parts) > 3 and parts[2].isdigit()) \
                or int(parts[2]) == os.getpid():
            continue
        try:
            if os.lstat(folder / n).st_mtime < old and not alive(int(parts[2])):
                os.unlink(folder / n)
        except OSError:
            pass
