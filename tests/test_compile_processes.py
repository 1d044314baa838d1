"""Compilers die with their caller, and leave nothing behind (issue 29, item 2).

A child process starts the native compile of a big kernel (g++ runs ``cc1plus`` for tens
of seconds), is killed (SIGKILL: no handler runs; or SIGINT: Ctrl-C), and no process of
the compiler's process group may remain; after Ctrl-C, the temporary folder it was given
(``TMPDIR``) is empty again: g++'s own ``cc*.s`` and ``cc*.o`` went to portakern's build
folder, which is removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc to find the compiler's processes")

#: A kernel g++ takes well over a minute on at -O3 (the test kills it once it runs).
_BIG = r"""
import sys
import numpy as np
import portakern as pk
src = '''
@kernel void big(float* y, const float* x) {
    const long i = @index(Global, Linear);
    float a = x[i];
{% for k in range(N) %}    a = a * {{ k % 7 + 1 }}.5f + y[(i + {{ k }}) % 64];
{% endfor %}    y[i] = a;
}
'''
x = np.ones(64, np.float32)
y = np.ones(64, np.float32)
pk.kernel(src, N=3000)(y, x, ndrange=64)
print("the compile finished before it was stopped", file=sys.stderr)
"""

#: Generous guards for a busy machine; the processes go within milliseconds.
_GUARD_S = 240


def _stat(pid: str) -> tuple[str, int] | None:
    """(state, process group) of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[2])


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _comm(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


def _members(groups: set[int]) -> list[tuple[str, str]]:
    """(pid, name) of the live (not zombie) processes in ``groups``."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            st = _stat(pid)
            if st is not None and st[0] != "Z" and st[1] in groups:
                out.append((pid, _comm(pid)))
    return out


def _compiler_processes(caller: int) -> dict[str, int]:
    """{pid: process group} of the processes building in ``caller``'s build folder."""
    mark = f"portakern-build-{caller}-"
    out = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit() and mark in _cmdline(pid):
            st = _stat(pid)
            if st is not None and st[0] != "Z":
                out[pid] = st[1]
    return out


def _own_groups(groups: set[int]) -> None:
    """Fail unless ``groups`` are the compiler's own: never this test's (or its parents')."""
    assert os.getpgrp() not in groups, "the compiler runs in the caller's process group"


def _wait_for(condition, what: str, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + _GUARD_S
    while True:
        got = condition()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the child exited before {what}: {proc.communicate()[1][-3000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what} after {_GUARD_S} s")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One cache for the module: the toolchain probe and the runtime are built once."""
    return tmp_path_factory.mktemp("compile-cache")


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_a_killed_callers_compiler_processes_are_gone(tmp_path, shared_cache, how):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(shared_cache), PORTAKERN_CPU="native",
               TMPDIR=str(tmp))
    env.pop("PORTAKERN_CACHE", None)
    child = subprocess.Popen([sys.executable, "-c", _BIG], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    groups: set[int] = set()
    seen: set[str] = set()
    try:
        def compiling() -> bool:
            found = _compiler_processes(child.pid)
            seen.update(found)
            groups.update(found.values())
            return any(_comm(pid) == "cc1plus" for pid in found)

        _wait_for(compiling, "cc1plus to start", child)
        _own_groups(groups)
        assert os.getpgid(child.pid) not in groups  # the compiler has a group of its own
        child.send_signal(getattr(signal, how))
        _, err = child.communicate(timeout=_GUARD_S)
        if how == "SIGINT":
            assert "KeyboardInterrupt" in err, err[-3000:]
        _wait_for(lambda: not _members(groups), f"the compiler's processes to go ({how})")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for pid in seen:  # only the compiler's processes this test saw, by their pid
            if _stat(pid) is not None and f"portakern-build-{child.pid}-" in _cmdline(pid):
                os.kill(int(pid), signal.SIGKILL)
    left = sorted(p.name for p in tmp.iterdir())
    if how == "SIGINT":
        assert left == []  # every exit path that runs code removes the build folder
    else:
        # SIGKILL runs no code: what is left is one portakern folder (swept by the next
        # portakern process once its owner is gone), never g++'s files loose in TMPDIR.
        assert left and all(n.startswith(f"portakern-build-{child.pid}-") for n in left), left


def test_a_compiler_run_leaves_its_temporary_folder_empty(tmp_path, monkeypatch):
    import tempfile

    from portakern.subprocesses import run

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    (tmp_path / "k.cpp").write_text("int f(int x) { return x + 1; }\n")
    # A compiler that leaves a temporary behind (as g++ does when it is killed).
    done = run(["sh", "-c", 'echo "$TMPDIR"; touch "$TMPDIR/ccLEFT.s"'])
    assert done.returncode == 0
    used = Path(done.stdout.strip())
    assert used.parent == tmp_path and used.name.startswith("portakern-cc-")
    assert not used.exists()  # removed, with what the compiler left in it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cpp"]


def test_the_watchdog_kills_a_compilers_children_when_the_caller_is_killed(tmp_path):
    # The compiler's own child (cc1plus for g++) outlives a kill of the driver alone.
    pidfile = tmp_path / "grandchild"
    script = (
        "import sys\n"
        "from portakern.subprocesses import run\n"
        "run(['sh', '-c', 'sleep 300 & echo $! > \"$1\"; wait', 'sh', sys.argv[1]])\n")
    caller = subprocess.Popen([sys.executable, "-c", script, str(pidfile)])
    try:
        _wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), "the grandchild",
                  caller)
        grandchild = pidfile.read_text().strip()
        group = _stat(grandchild)[1]
        _own_groups({group})
        caller.send_signal(signal.SIGKILL)
        caller.wait()
        _wait_for(lambda: not _members({group}), "the compiler's child to go")
    finally:
        if caller.poll() is None:
            caller.kill()
            caller.wait()
        left = _stat(pidfile.read_text().strip()) if pidfile.exists() else None
        if left is not None and left[0] != "Z":
            os.kill(int(pidfile.read_text().strip()), signal.SIGKILL)
