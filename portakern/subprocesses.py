"""Child processes: compilers, their scratch folders, and forked children.

A compile that outlives its parent wastes a core, a scratch folder left by a
process that was killed fills the temporary folder, and a lock that another
thread held when the process forked is never released in the child. So:

- :func:`run` starts a compiler in a process group of its own with a watchdog that
  kills the whole group (the driver and every child it started) when the caller lets
  go of it or dies, SIGKILL included; its temporaries go to a private folder removed
  afterwards (elsewhere than POSIX the child is killed on any exception, Ctrl-C
  included, and on timeout, as :func:`subprocess.run` does);
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
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

__all__ = ["alive", "fork_safe_lock", "run", "scratch_dir", "sweep_once"]

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


#: The watchdog of a compile (POSIX): it waits on its standard input, a pipe only this
#: process holds the other end of, until end of file (this process closed it, or died,
#: SIGKILL included), then kills its process group: itself, the compiler, and every
#: process the compiler started (g++'s cc1plus, as, collect2, ld).
_WATCHDOG = "read x; kill -9 0"
_SH = "/bin/sh"
#: How long to wait for a killed compile's processes to be gone before the scratch
#: folder they wrote in is removed (a guard: they are gone within milliseconds).
_REAP_S = 2.0


def _groups() -> bool:
    """Whether compiles run in a process group of their own, with a watchdog."""
    return hasattr(os, "killpg") and os.path.exists(_SH)


def run(cmd: Sequence[str], *, timeout: float | None = None, text: bool = True,
        tmpdir: str | None = None, **kwargs: Any) -> subprocess.CompletedProcess:
    """:func:`subprocess.run` for a compiler: output captured, never ``check``.

    The compiler runs in a process group of its own, led by a watchdog (``/bin/sh``,
    :data:`_WATCHDOG`) that kills the whole group when this process lets go of it:
    when the compiler is done, when this call raises (Ctrl-C, a timeout), or when
    this process dies, SIGKILL included; so no ``cc1plus`` outlives its caller. Its
    temporary files (``TMPDIR``, ``TMP``, ``TEMP``) go to ``tmpdir``, else to a new
    private folder that is removed when the group is gone. Standard input is
    ``/dev/null``. Where there are no process groups (Windows), the compiler is
    killed on any exception and on timeout, as :func:`subprocess.run` does.
    """
    import subprocess  # here: a process that finds its kernels in the disk cache never runs one

    with contextlib.ExitStack() as stack:
        if tmpdir is None:
            tmpdir = stack.enter_context(scratch_dir("cc"))
        env = dict(kwargs.pop("env", None) or os.environ)
        env.update(TMPDIR=tmpdir, TMP=tmpdir, TEMP=tmpdir)
        options = dict(capture_output=True, text=text, check=False, timeout=timeout,
                       stdin=subprocess.DEVNULL, env=env, **kwargs)
        if not _groups():
            return subprocess.run(list(cmd), **options)
        read, write = os.pipe()
        try:
            dog = subprocess.Popen([_SH, "-c", _WATCHDOG], stdin=read,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   **_new_group(0))
        finally:
            os.close(read)
        try:
            return subprocess.run(list(cmd), **options, **_new_group(dog.pid))
        finally:
            os.close(write)  # the watchdog reads end of file, and kills the group
            _reap(dog)


def _new_group(pgid: int) -> dict:
    """Popen arguments that put the child in process group ``pgid`` (0: a new one)."""
    if sys.version_info >= (3, 11):
        return {"process_group": pgid}
    return {"preexec_fn": lambda: os.setpgid(0, pgid)}  # pragma: no cover - Python 3.10


def _reap(dog: subprocess.Popen) -> None:
    """Wait for the watchdog, then (bounded) for the rest of its group to be gone."""
    import subprocess

    deadline = time.monotonic() + _REAP_S
    try:
        dog.wait(timeout=_REAP_S)
    except subprocess.TimeoutExpired:
        os.killpg(dog.pid, 9)
        dog.wait()
    while time.monotonic() < deadline:
        try:
            os.killpg(dog.pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.01)


_SWEPT: list[bool] = []
_SWEEP_LOCK = fork_safe_lock()


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts as alive)."""
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
        if not alive(int(parts[2])):
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
