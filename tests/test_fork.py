"""fork: a child can launch on every path, and no lock another thread held deadlocks it.

Every check runs in a subprocess (a hang there is stopped by a generous timeout that
fails the test, never CI); children are joined with a hang guard, not a sleep.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import portakern as pk
from portakern.backends.native import NativeCPU

native = pytest.mark.skipif(not NativeCPU.available().ok, reason="no C++ compiler with OpenMP")
posix_fork = pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="no fork()")

PACKAGE = Path(pk.__file__).resolve().parent
#: Seconds before a child counts as hung: generous, the machine may be very busy.
HANG_GUARD_S = 240

_SCRIPT = '''
import importlib.util, json, os, sys, threading
import multiprocessing as mp
import numpy as np
import portakern as pk
from portakern import subprocesses
from portakern.emulate import cupy as standin
from portakern.emulate import mlx as metal_standin

# The Metal stand-in needs MLX and clang; without them the other paths are still checked.
METAL = metal_standin.available()[0] and importlib.util.find_spec("mlx") is not None

INC = "@kernel void inc(float* y) { y[@index(Global, Linear)] += 1.0f; }"


def on_pocl(source, *args, **sizes):
    # PORTAKERN_CPU is read when a launcher first runs: this one runs on PoCL.
    os.environ["PORTAKERN_CPU"] = "opencl"
    try:
        pk.kernel(source)(*args, **sizes)
    finally:
        del os.environ["PORTAKERN_CPU"]
    assert "pyopencl" in sys.modules


def launch_all(unforkable):
    # unforkable: also the paths a forked child cannot inherit, PoCL and MLX (MLX's own
    # scheduler hangs a child forked after the parent ran an MLX op, Metal stand-in or not).
    out = {}
    y = np.zeros(4096, np.float32)
    pk.kernel(INC)(y, ndrange=y.shape)
    out["native"] = float(y.sum())
    if unforkable:
        w = np.zeros(4096, np.float32)
        on_pocl(INC, w, ndrange=w.shape)
        out["pocl"] = float(w.sum())
    with standin.installed() as cp:
        g = cp.zeros(4096, dtype=np.float32)
        pk.kernel(INC)(g, ndrange=g.shape)
        out["cuda"] = float(cp.asnumpy(g).sum())
    if METAL and unforkable:
        with metal_standin.installed() as mx:
            m = mx.zeros((4096,), dtype=mx.float32)
            pk.kernel(INC)(m, ndrange=m.shape)
            out["metal"] = float(np.asarray(m).sum())
    return out


def child(q, guard):
    # Every portakern lock is free in the child, whoever held it in the parent.
    stuck = [repr(lock) for lock in list(subprocesses._FORK_LOCKS)
             if not lock.acquire(timeout=guard)]
    for lock in list(subprocesses._FORK_LOCKS):
        if repr(lock) not in stuck:
            lock.release()
    out = launch_all(unforkable=True)
    out["stuck"] = stuck
    q.put(out)


if __name__ == "__main__":
    method, hold, guard = sys.argv[1], sys.argv[2] == "hold", float(sys.argv[3])
    # The parent warms up every path a fork may inherit: native (OpenMP's pool up) and the
    # CUDA stand-in; PoCL and the Metal stand-in only where the child does not inherit them
    # (they cannot follow a fork: the child of a fork starts them itself).
    parent = launch_all(unforkable=method != "fork")
    loaded = "pyopencl" in sys.modules
    held, release = threading.Event(), threading.Event()
    locks = list(subprocesses._FORK_LOCKS)

    def holder():
        # Deterministic: this thread holds every lock (first-use setup, builds, the
        # cache, the registry, the stand-in) until the child has finished.
        for lock in locks:
            lock.acquire()
        held.set()
        release.wait()
        for lock in reversed(locks):
            lock.release()

    t = threading.Thread(target=holder)
    if hold:
        t.start()
        held.wait()
    ctx = mp.get_context(method)
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q, guard / 4))
    p.start()
    p.join(guard)
    hung = p.is_alive()
    if hung:
        p.kill()
    release.set()
    if hold:
        t.join()
    got = {"hung": True} if hung else q.get(timeout=guard)
    got["locks"] = len(locks)
    got["parent"] = parent
    got["pyopencl_in_parent"] = loaded
    # The parent still launches on its paths after the fork.
    got["parent_after"] = launch_all(unforkable=method != "fork")
    print(json.dumps(got))
'''


def _run_script(tmp_path: Path, method: str, hold: bool) -> dict:
    script = tmp_path / "forking.py"
    script.write_text(_SCRIPT)
    env = dict(os.environ)
    env.pop("PORTAKERN_CPU", None)
    done = subprocess.run([sys.executable, str(script), method, "hold" if hold else "free",
                           str(HANG_GUARD_S)],
                          env=env, capture_output=True, text=True, timeout=3 * HANG_GUARD_S,
                          check=False)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _needs_every_path() -> None:
    if not pk.CPU.opencl_available().ok:
        pytest.skip("no CPU OpenCL device (PoCL)")
    from portakern.emulate import cupy as standin

    ok, why = standin.available()
    if not ok:
        pytest.skip(why)


def _every_path() -> dict[str, float]:
    """What each path's ``inc`` launch sums to; the Metal stand-in where it can run."""
    from portakern.emulate import mlx as metal_standin

    metal = metal_standin.available()[0] and importlib.util.find_spec("mlx") is not None
    paths = ["native", "pocl", "cuda"] + (["metal"] if metal else [])
    return dict.fromkeys(paths, 4096.0)


@native
@posix_fork
@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_child_launches_on_every_path(method, tmp_path):
    _needs_every_path()
    got = _run_script(tmp_path, method, hold=False)
    assert not got.get("hung"), got
    want = _every_path()
    assert {k: got.get(k) for k in want} == want, got
    assert got["stuck"] == []
    after = {k: v for k, v in want.items() if method != "fork" or k not in ("pocl", "metal")}
    assert {k: got["parent_after"].get(k) for k in after} == after, got
    if method == "fork":
        # The child started PoCL itself: the parent never had (see test_native_faults
        # for the child of a parent that had).
        assert not got["pyopencl_in_parent"]


@native
@posix_fork
def test_fork_while_another_thread_holds_every_portakern_lock(tmp_path):
    _needs_every_path()
    got = _run_script(tmp_path, "fork", hold=True)
    assert not got.get("hung"), got
    assert got["stuck"] == [], got
    want = _every_path()
    assert {k: got.get(k) for k in want} == want, got
    # Module locks and the per-object ones the warm-up made (cache, device state, builds).
    assert got["locks"] >= 10, got


def _lock_constructors(path: Path) -> list[str]:
    """``file:line`` of each ``threading.Lock()``/``RLock()`` call in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("Lock", "RLock", "Condition", "Semaphore",
                                       "BoundedSemaphore", "allocate_lock")):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_every_lock_in_portakern_is_fork_safe():
    # A plain threading.Lock() held by another thread at a fork deadlocks the child: each
    # lock in the package comes from fork_safe_lock (portakern/subprocesses.py).
    allowed = PACKAGE / "subprocesses.py"
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) if path != allowed
             for hit in _lock_constructors(path)]
    assert found == [], ("use portakern.subprocesses.fork_safe_lock() instead of "
                         f"threading.Lock()/RLock() at {found}")


@posix_fork
@pytest.mark.parametrize("reentrant", [False, True])
def test_fork_safe_lock_is_unlocked_in_the_child(reentrant):
    import threading

    from portakern.subprocesses import fork_safe_lock

    lock = fork_safe_lock(reentrant=reentrant)
    held, release = threading.Event(), threading.Event()

    def holder():
        with lock:
            held.set()
            release.wait()

    t = threading.Thread(target=holder)
    t.start()
    held.wait()
    try:
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only if the lock is free
            os._exit(0 if lock.acquire(timeout=HANG_GUARD_S) else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        release.set()
        t.join()
    assert os.waitstatus_to_exitcode(status) == 0
    # The parent's lock was not touched by the child's handler.
    assert lock.acquire(timeout=HANG_GUARD_S)
    lock.release()
