"""Child processes: compilers, their scratch folders, and forked children.

A compile that outlives its parent wastes a core, a scratch folder left by a
process that was killed fills the temporary folder, and a lock that another
thread held when the process forked is never released in the child. So:

- :func:`run` starts a compiler that the kernel kills when the thread that
  started it dies (Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, which survives
  ``exec``; elsewhere the child is killed on any exception, Ctrl-C included, and
  on timeout, as :func:`subprocess.run` does);
- :func:`scratch_dir` makes a private folder named ``portakern-<what>-<pid>-…``
  and removes it on exit; the first call in a process also removes the folders
  of this user's portakern processes that no longer exist (killed before they
  could clean up), once they are 15 minutes old;
- every lock in portakern comes from :func:`fork_safe_lock`, and each is
  re-initialised (unlocked) in a forked child, so a fork while another thread is
  in first-use setup, a build or a launch does not deadlock the child.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["fork_safe_lock", "run", "scratch_dir", "sweep_once"]

#: Every lock :func:`fork_safe_lock` made that is still alive.
_FORK_LOCKS: weakref.WeakSet = weakref.WeakSet()


def fork_safe_lock(reentrant: bool = False) -> Any:
    """A new :class:`threading.Lock` (or ``RLock``) that a forked child gets unlocked.

    ``fork()`` copies only the calling thread: a lock another thread held at that
    moment stays held in the child, and the child's first use of it waits forever.
    In the child each lock made here is re-initialised, as the standard library does
    for its own (``threading``, ``logging``); what the lock guarded is left as the
    other thread had it, so every user of these locks keeps its shared state valid
    between steps (a first-use value is published whole, or not at all).
    """
    lock = threading.RLock() if reentrant else threading.Lock()
    _FORK_LOCKS.add(lock)
    return lock


def _reinit_locks_in_child() -> None:
    for lock in list(_FORK_LOCKS):
        lock._at_fork_reinit()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reinit_locks_in_child)


_PR_SET_PDEATHSIG = 1
_SIGKILL = 9
_PRCTL: list[Any] = []


def _prctl() -> Any:
    if not _PRCTL:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):
                fn = None
        _PRCTL.append(fn)
    return _PRCTL[0]


def run(cmd: Sequence[str], *, timeout: float | None = None, text: bool = True,
        **kwargs: Any) -> subprocess.CompletedProcess:
    """:func:`subprocess.run` for a compiler: output captured, never ``check``.

    On Linux the child gets ``SIGKILL`` when the parent thread dies; the parent's
    pid is checked after the request, so a parent that died before it is noticed.
    """
    prctl = _prctl()
    preexec = None
    if prctl is not None:
        parent = os.getpid()

        def preexec() -> None:  # runs in the child, before exec: no allocation-heavy work
            prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(1)

    return subprocess.run(list(cmd), capture_output=True, text=text, check=False,
                          timeout=timeout, preexec_fn=preexec, **kwargs)


_SWEPT: list[bool] = []
_SWEEP_LOCK = fork_safe_lock()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # another user's process (or cannot tell): leave it
    return True


#: A scratch folder untouched this long, of a process that is gone, is a leftover. (The
#: age guards against a live process of another PID namespace sharing /tmp.)
_STALE_S = 15 * 60


def _sweep() -> None:
    """Remove this user's ``portakern-*-<pid>-*`` folders whose process is gone."""
    root = Path(tempfile.gettempdir())
    me = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        entries = list(root.glob("portakern-*"))
    except OSError:
        return
    for p in entries:
        parts = p.name.split("-")
        if len(parts) < 4 or not parts[2].isdigit():
            continue
        try:
            st = p.lstat()
        except OSError:
            continue
        if (me is not None and st.st_uid != me) or time.time() - st.st_mtime < _STALE_S:
            continue
        if not _alive(int(parts[2])):
            shutil.rmtree(p, ignore_errors=True)


def sweep_once() -> None:
    """Remove leftover scratch folders (:func:`_sweep`), the first time in a process."""
    if not _SWEPT:
        with _SWEEP_LOCK:
            if not _SWEPT:
                _SWEPT.append(True)
                _sweep()


@contextlib.contextmanager
def scratch_dir(what: str) -> Iterator[str]:
    """A new private folder (mode 0700) for one build, removed on exit."""
    sweep_once()
    # ignore_cleanup_errors: where a loaded library cannot be deleted (Windows).
    with tempfile.TemporaryDirectory(prefix=f"portakern-{what}-{os.getpid()}-",
                                     ignore_cleanup_errors=True) as tmp:
        yield tmp
