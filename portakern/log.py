"""What portakern does on a first call: each compile, cache hit and path choice, timed.

Records go to the standard :mod:`logging` logger ``"portakern"`` at ``DEBUG`` level::

    import logging
    logging.basicConfig()
    logging.getLogger("portakern").setLevel(logging.DEBUG)

``PORTAKERN_VERBOSE=1`` does the same without any set-up: the records are written to
stderr, one line each (``portakern: compiled kernel 'saxpy' for c in 1.42 s``).

A compile that takes longer than :data:`PROGRESS_AFTER` seconds shows a progress line
on stderr while it runs, when stderr is a terminal (``PORTAKERN_VERBOSE=0`` turns that
off too).

Cheap when nobody listens: :mod:`logging` is not imported by ``import portakern``, and
a record is only made when ``PORTAKERN_VERBOSE`` is set or the program has imported
:mod:`logging` itself (no handler for ``"portakern"`` can exist before that).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")

#: The logger's name.
LOGGER = "portakern"
#: Seconds a compile runs before a progress line appears on a terminal.
PROGRESS_AFTER = 1.0

_SET_UP: list[Any] = []


def _verbose() -> str:
    return os.environ.get("PORTAKERN_VERBOSE", "").strip().lower()


def _on(value: str) -> bool:
    return value not in ("", "0", "false", "no", "off")


def logger() -> Any:
    """The ``portakern`` logger when a record could be seen, else None.

    With ``PORTAKERN_VERBOSE`` on, the first call gives it a stderr handler at
    ``DEBUG`` level (once per process).
    """
    verbose = _on(_verbose())
    if not verbose and "logging" not in sys.modules:
        return None
    import logging

    log = logging.getLogger(LOGGER)
    if verbose and not _SET_UP:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("portakern: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
        _SET_UP.append(handler)
    return log if log.isEnabledFor(logging.DEBUG) else None


def clock() -> float:
    """The start of something :func:`hit` or :func:`found` will report."""
    return time.perf_counter()


def seconds(s: float) -> str:
    """``s`` seconds the way the records write them (``1.42 s``, ``3.1 ms``)."""
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


def hit(what: str, name: str, start: float) -> None:
    """A cache hit: ``what`` (``"native shared object"``) of kernel ``name``, since ``start``."""
    log = logger()
    if log is not None:
        log.debug("cache hit: %s of kernel %r, loaded in %s", what, name,
                  seconds(time.perf_counter() - start))


def found(what: str, result: Any, start: float) -> None:
    """A disk-cache lookup of ``what`` that gave ``result`` (None: a miss, not reported)."""
    if result is not None:
        hit(what, getattr(result, "name", "?"), start)


def timed(verb: str, target: str, work: Callable[[], R]) -> R:
    """``work()``, reported as ``verb`` (``"rendered"``) for ``target`` of the kernel it
    returns."""
    log = logger()
    if log is None:
        return work()
    start = time.perf_counter()
    result = work()
    log.debug("%s kernel %r for %s in %s", verb, getattr(result, "name", "?"), target,
              seconds(time.perf_counter() - start))
    return result


def path(kernel: Any, backend: Any, runner: Any) -> None:
    """The path a launcher chose: ``runner`` runs ``kernel`` for ``backend``."""
    log = logger()
    if log is None:
        return
    log.debug("kernel %r on %r runs on %s (target %s)", getattr(kernel, "name", kernel),
              backend, type(runner).__name__, getattr(runner, "target", "?"))


def compiling(name: str, target: str, build: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``build(*args, **kwargs)``, the compile of kernel ``name`` for ``target``, reported.

    The record says how long it took (or that it failed); past :data:`PROGRESS_AFTER`
    seconds a progress line on a terminal says it is still running.
    """
    start = time.perf_counter()
    progress = _Progress(f"kernel {name!r} for {target}") if _tty() else None
    ok = False
    try:
        result = build(*args, **kwargs)
        ok = True
        return result
    finally:
        if progress is not None:
            # With PORTAKERN_VERBOSE the record below says it; else the progress line does.
            progress.stop(ok, final=not _on(_verbose()))
        log = logger()
        if log is not None:
            log.debug("%s kernel %r for %s in %s", "compiled" if ok else "failed to compile",
                      name, target, seconds(time.perf_counter() - start))


def _tty() -> bool:
    if _verbose() in ("0", "false", "no", "off"):
        return False
    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return False


class _Progress:
    """A line on stderr, rewritten each second, while a long compile runs."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.start = time.perf_counter()
        self.stopped = threading.Event()
        self.shown = False
        self.thread = threading.Thread(target=self._run, name="portakern-progress",
                                       daemon=True)
        self.thread.start()

    def _run(self) -> None:
        if self.stopped.wait(PROGRESS_AFTER):
            return
        while not self.stopped.is_set():
            self._write(f"\rportakern: compiling {self.what}... "
                        f"{time.perf_counter() - self.start:.0f} s")
            self.shown = True
            self.stopped.wait(1.0)

    def _write(self, text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            self.stopped.set()

    def stop(self, ok: bool, final: bool = True) -> None:
        """End the line: with ``final``, a last line saying how long it took; else erased."""
        self.stopped.set()
        self.thread.join()
        if not self.shown:
            return
        if final:
            verb = "compiled" if ok else "failed to compile"
            self._write(f"\rportakern: {verb} {self.what} in "
                        f"{seconds(time.perf_counter() - self.start)}\033[K\n")
        else:
            self._write("\r\033[K")
