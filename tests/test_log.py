"""Verbose reports (portakern/log.py): each compile, cache hit and path choice, timed, under
the ``portakern`` logger or ``PORTAKERN_VERBOSE=1``; progress for a long compile on a terminal."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import portakern as pk
from portakern import log


def _fresh(body: str) -> str:
    """A kernel source no cache has seen (the body differs by a constant of this test run)."""
    return f"@kernel void k(float* y) {{ y[@index(Global, Linear)] = {body}; }}"


def test_records_under_the_portakern_logger(caplog, tmp_path, monkeypatch):
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(tmp_path / "cache"))
    caplog.set_level(logging.DEBUG, logger="portakern")
    source = _fresh(f"{os.getpid()}.5f")
    y = np.zeros(4, np.float32)
    pk.kernel(source)(y, ndrange=4)
    messages = [r.getMessage() for r in caplog.records if r.name == "portakern"]
    assert any(m.startswith("kernel 'k' on CPU() runs on ") for m in messages), messages
    assert any(m.startswith("rendered kernel 'k' for ") for m in messages), messages
    compiled = [m for m in messages if m.startswith("compiled kernel 'k' for ")]
    assert compiled and compiled[0].endswith(("s", "ms", "us")), messages
    # A new Kernel of the same source in the same cache: loaded, not compiled.
    caplog.clear()
    pk.kernel(source)(y, ndrange=4)
    messages = [r.getMessage() for r in caplog.records if r.name == "portakern"]
    assert any(m.startswith("cache hit: ") and "of kernel 'k', loaded in " in m
               for m in messages), messages
    assert not any(m.startswith("compiled kernel 'k'") for m in messages), messages
    assert float(y[0]) == pytest.approx(os.getpid() + 0.5)


def test_nothing_is_made_when_nobody_listens(monkeypatch):
    monkeypatch.delenv("PORTAKERN_VERBOSE", raising=False)
    monkeypatch.setitem(sys.modules, "logging", None)  # as if never imported
    monkeypatch.delitem(sys.modules, "logging")
    assert log.logger() is None


def test_verbose_env_writes_each_step_to_stderr(tmp_path):
    code = ("import numpy as np, portakern as pk, sys\n"
            f"k = pk.kernel({_fresh('7')!r})\n"
            "y = np.zeros(4, np.float32)\n"
            "k(y, ndrange=4)\n"
            "assert 'logging' in sys.modules\n"
            "print(y[0])\n")
    env = dict(os.environ, PORTAKERN_VERBOSE="1", PORTAKERN_CACHE_DIR=str(tmp_path / "c"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "7.0"
    lines = proc.stderr.splitlines()
    assert any(line.startswith("portakern: kernel 'k' on CPU() runs on ") for line in lines)
    assert any(line.startswith("portakern: compiled kernel 'k' for ") for line in lines), lines


def test_without_the_env_or_logging_a_first_call_is_silent(tmp_path):
    code = ("import numpy as np, portakern as pk, sys\n"
            f"pk.kernel({_fresh('8')!r})(np.zeros(4, np.float32), ndrange=4)\n"
            "assert 'logging' not in sys.modules, 'import logging for nothing'\n")
    env = {k: v for k, v in os.environ.items() if k != "PORTAKERN_VERBOSE"}
    env["PORTAKERN_CACHE_DIR"] = str(tmp_path / "c")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "portakern:" not in proc.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_compile_shows_progress_on_a_terminal(monkeypatch):
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(log, "PROGRESS_AFTER", 0.0)
    monkeypatch.delenv("PORTAKERN_VERBOSE", raising=False)
    shown = threading.Event()

    def build() -> str:
        # Runs until the progress line is there (no sleeping on a guess of the load).
        for _ in range(3000):
            if "compiling" in term.getvalue():
                shown.set()
                break
            threading.Event().wait(0.01)
        return "built"

    assert log.compiling("slow", "c", build) == "built"
    assert shown.is_set()
    out = term.getvalue()
    assert "portakern: compiling kernel 'slow' for c..." in out
    assert out.endswith("\n") and "portakern: compiled kernel 'slow' for c in " in out


def test_no_progress_off_a_terminal_or_when_turned_off(monkeypatch):
    monkeypatch.setattr(log, "PROGRESS_AFTER", 0.0)
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    assert log.compiling("quiet", "c", lambda: 1) == 1
    assert plain.getvalue() == ""
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setenv("PORTAKERN_VERBOSE", "0")
    assert log.compiling("quiet", "c", lambda: 2) == 2
    assert term.getvalue() == ""


def test_a_failed_compile_is_reported_and_raises(caplog):
    caplog.set_level(logging.DEBUG, logger="portakern")

    def fail() -> None:
        raise pk.CompilationError("no", log="", source="", target="c")

    with pytest.raises(pk.CompilationError):
        log.compiling("bad", "c", fail)
    assert any(r.getMessage().startswith("failed to compile kernel 'bad' for c in ")
               for r in caplog.records)
