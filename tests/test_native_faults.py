"""Faults on CPU()'s paths (issue 12): division by zero, Ctrl-C, fork, stack limits.

Each check that could crash or hang the test process runs in a subprocess.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import portakern as pk
from portakern.backends.native import NativeCPU

native = pytest.mark.skipif(not NativeCPU.available().ok, reason="no C++ compiler with OpenMP")
linux_x86 = pytest.mark.skipif(not (sys.platform.startswith("linux")
                                    and os.uname().machine in ("x86_64", "AMD64")),
                               reason="the division fix-up decodes x86-64 instructions")


def _run(code: str, env: dict | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    full = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=timeout, check=False)


_DIVIDE = """
import json, numpy as np, portakern as pk
src = '''@kernel void d(T* q, T* r, const T* a, const T* b) {
  const int i = @index(Global, Linear); q[i] = a[i] / b[i]; r[i] = a[i] % b[i]; }'''
out = {}
for dt in (np.int32, np.int64, np.uint32, np.int16):
    lo = np.iinfo(dt).min
    a = np.array([7, lo, lo, 5, 0] if lo else [7, 9, 0, 5, 0], dt)
    b = np.array([0, -1, 0, 2, 0] if lo else [0, 0, 0, 2, 0], dt)
    q, r = np.zeros_like(a), np.zeros_like(a)
    pk.kernel(src)(q, r, a, b, ndrange=a.shape)
    out[np.dtype(dt).name] = [q.tolist(), r.tolist()]
print(json.dumps(out))
"""


@native
@linux_x86
@pytest.mark.parametrize("path", ["native", "opencl"])
def test_integer_division_by_zero_has_one_result(path):
    if path == "opencl" and not pk.CPU.opencl_available().ok:
        pytest.skip("no CPU OpenCL device")
    import json

    done = _run(_DIVIDE, {"PORTAKERN_CPU": path})
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # x / 0 == 0, x % 0 == x, MIN / -1 == MIN, MIN % -1 == 0 (docs/cpu.md).
    for dt in ("int32", "int64", "int16"):
        lo = int(np.iinfo(dt).min)
        assert got[dt] == [[0, lo, 0, 2, 0], [7, 0, lo, 1, 0]], dt
    assert got["uint32"] == [[0, 0, 0, 2, 0], [7, 9, 0, 1, 0]]


_SPIN = """
import ctypes, sys, threading, time, numpy as np, portakern as pk
k = pk.kernel('''@kernel void spin(float* y, const long n) {
  const int i = @index(Global, Linear); float a = y[i];
  for (long j = 0; j < n; ++j) a = a * 0.999f + 1.0f;
  y[i] = a; }''')
y = np.zeros(1 << 16, np.float32)
k(y, np.int64(10), ndrange=y.shape, workgroupsize=16)   # compiled and warm
# "ready" once the launch runs: the runtime counts running launches in pk_rt_ctl[1], and
# a launch counts itself after it has read the SIGINT counter (templates/c/module.j2).
from portakern.backends import native_runtime
ctl = ctypes.cast(native_runtime.RUNTIME[0][1], ctypes.POINTER(ctypes.c_int))

def announce():
    while ctl[1] == 0:
        time.sleep(0.001)  # polls a condition: any interval gives the same outcome
    print("ready", flush=True)

threading.Thread(target=announce, daemon=True).start()
try:
    k(y, np.int64(20_000_000), ndrange=y.shape, workgroupsize=16)  # ~0.4 s a group, 4096 groups
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
"""


@native
@pytest.mark.parametrize("path", ["native"])
def test_ctrl_c_stops_a_long_launch(path):
    env = dict(os.environ, PORTAKERN_CPU=path)
    p = subprocess.Popen([sys.executable, "-c", _SPIN], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        import select

        # Hang guards only: the child says "ready" once its launch is running.
        assert select.select([p.stdout], [], [], 240)[0], "the child never started its launch"
        assert p.stdout.readline().strip() == "ready"
        p.send_signal(signal.SIGINT)  # lands during the launch: stops it at the next group
        out, err = p.communicate(timeout=240)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 3, err[-2000:]
    assert "interrupted" in out


_FORK_SCRIPT = '''
import json, os, sys, threading
import multiprocessing as mp
import numpy as np
import portakern as pk
from portakern.errors import BackendUnavailableError, LaunchError

INC = "@kernel void inc(float* y) { y[@index(Global, Linear)] += 1.0f; }"


def on_pocl(source, *args, **sizes):
    # PORTAKERN_CPU is read when a launcher first runs: this one runs on PoCL.
    os.environ["PORTAKERN_CPU"] = "opencl"
    try:
        pk.kernel(source)(*args, **sizes)
    finally:
        del os.environ["PORTAKERN_CPU"]


def child(q):
    out = {}
    z = np.zeros(4096, np.float32)
    pk.kernel(INC)(z, ndrange=z.shape)
    out["native"] = float(z.sum())
    w = np.arange(64, dtype=np.float32)
    try:
        on_pocl(INC, w, ndrange=w.shape)
        out["pocl"] = float(w[0])
    except (BackendUnavailableError, LaunchError) as exc:
        out["pocl"] = "refused: " + str(exc)[:60]
    q.put(out)


if __name__ == "__main__":
    method = sys.argv[1]
    y = np.zeros(4096, np.float32)
    pk.kernel(INC)(y, ndrange=y.shape)                                  # native, OpenMP pool up
    w = np.arange(64, dtype=np.float32)
    on_pocl(INC, w, ndrange=w.shape)                                    # PoCL started
    assert w[0] == 1.0 and "pyopencl" in sys.modules, w[:4]
    ctx = mp.get_context(method)
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    p.join(120)
    if p.is_alive():
        p.kill()
        print(json.dumps({"hung": True}))
        sys.exit(1)
    got = q.get(timeout=10)
    # The parent still runs both paths after the fork.
    pk.kernel(INC)(y, ndrange=y.shape)
    w = np.arange(64, dtype=np.float32)
    on_pocl(INC, w, ndrange=w.shape)
    got["parent"] = [float(y.sum()), float(w[0])]
    print(json.dumps(got))
'''


@native
@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_child_of_a_pocl_parent_launches(method, tmp_path):
    if not pk.CPU.opencl_available().ok:
        pytest.skip("no CPU OpenCL device")
    import json

    script = tmp_path / "forking.py"
    script.write_text(_FORK_SCRIPT)
    env = dict(os.environ)
    env.pop("PORTAKERN_CPU", None)
    done = subprocess.run([sys.executable, str(script), method], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["native"] == 4096.0
    assert got["parent"] == [8192.0, 1.0]
    if method == "forkserver":
        assert got["pocl"] == 1.0
    else:
        # PoCL's threads do not survive fork(): a clear refusal, never a hang.
        assert got["pocl"].startswith("refused: the OpenCL (PoCL) path cannot run"), got


_LOCK_SCRIPT = '''
import json, os, sys, threading
import multiprocessing as mp
import numpy as np
import portakern as pk
from portakern.backends import native_build, native_runtime, opencl

INC = "@kernel void inc(float* y) { y[@index(Global, Linear)] += 1.0f; }"


def child(q):
    z = np.zeros(4096, np.float32)
    pk.kernel(INC)(z, ndrange=z.shape)
    q.put(float(z.sum()))


if __name__ == "__main__":
    # Another thread is inside first-use setup, holding portakern's locks, when the fork
    # happens: deterministic, the thread holds them until the child has finished.
    held, release = threading.Event(), threading.Event()

    def setup():
        with opencl._LOCK, opencl._START_LOCK, native_build.BUILD_LOCK, native_runtime.RT_LOCK:
            held.set()
            release.wait()

    t = threading.Thread(target=setup)
    t.start()
    held.wait()
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    p.join(120)
    alive = p.is_alive()
    if alive:
        p.kill()
    release.set()
    t.join()
    print(json.dumps({"hung": alive, "sum": None if alive else q.get(timeout=10)}))
'''


@native
def test_fork_while_another_thread_holds_the_setup_locks(tmp_path):
    import json

    script = tmp_path / "locks.py"
    script.write_text(_LOCK_SCRIPT)
    env = dict(os.environ)
    env.pop("PORTAKERN_CPU", None)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"hung": False, "sum": 4096.0}


_BIG_LOCAL = """@kernel void big(float* y) {
  @localmem float t[16777216];
  const int i = @index(Local, Linear);
  t[i * 4096] = 1.0f;
  @synchronize;
  y[@index(Global, Linear)] = t[i * 4096]; }"""
_BIG_PRIVATE = """@kernel void big(float* y) {
  @private float acc[4194304];
  const int i = @index(Global, Linear);
  for (int j = 0; j < 4194304; j += 1024) acc[j] = j + i;
  y[i] = acc[4096 * (i % 7)]; }"""


@pytest.mark.parametrize("path", ["native", "opencl"])
@pytest.mark.parametrize("which", ["local", "private"])
def test_arrays_larger_than_the_stack_are_refused(path, which):
    # 64 MiB of @localmem / 16 MiB of @private per work-item: a SIGSEGV before, on PoCL too.
    if path == "native" and not NativeCPU.available().ok:
        pytest.skip("no C++ compiler with OpenMP")
    if path == "opencl" and not pk.CPU.opencl_available().ok:
        pytest.skip("no CPU OpenCL device")
    src, name, size = ((_BIG_LOCAL, "t", "64.0 MiB") if which == "local"
                       else (_BIG_PRIVATE, "acc", "16.0 MiB"))
    code = f"""
    import resource, numpy as np, portakern as pk
    from portakern.errors import LaunchError
    y = np.zeros(64, np.float32)
    try:
        pk.kernel({src!r})(y, ndrange=y.shape, workgroupsize=64)
        print("ran")
    except LaunchError as exc:
        print("refused:", exc)
    """
    done = _run(code, {"PORTAKERN_CPU": path})
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    out = done.stdout.strip().splitlines()[-1]
    assert out.startswith("refused:"), out
    if path == "opencl" and which == "local":
        # PoCL keeps @localmem off the stack, in a buffer of the device's local memory
        # size (512 KiB): 64 MiB ran past it (an intermittent SIGSEGV) before.
        assert f"'{name}' ({size})" in out and "local memory" in out
    else:
        assert f"'{name}' ({size}" in out and "stack" in out


def test_stack_arrays_travel_beside_the_rendering():
    # Found from the lowering (defines, typedefs, bindings, per-item copies), not the text:
    # acc and x live on after the barrier, one copy per work-item.
    src = """
    #define N 1024
    #define M (N / 2)
    typedef double D;
    @kernel void k(T* y, long n) {
        @localmem float t[N * 4];
        D acc[M][3u];
        float x[16];
        float unknown[n];
        const long i = @index(Local, Linear);
        x[0] = 1; t[i] = x[0];
        @synchronize();
        acc[0][0] = t[i] + x[0]; unknown[0] = 0;
        y[i] = (T)acc[0][0];
    }
    """
    k = pk.kernel(src)
    rendered = k.variant("c", (("T", "float"),), 1)
    got = {(a[0], a[1], a[2]) for a in rendered.fact("arrays")}
    assert got == {("t", 16384, False), ("acc", 512 * 3 * 8, True), ("x", 64, True)}
    cl = k.variant("opencl", (("T", "float"),), 1)
    assert ("t", 16384, False, True) in cl.fact("arrays")  # __local on OpenCL
    examples = __import__("portakern.examples", fromlist=["get"])
    warp = examples.get("warp_reduce").load().variant("opencl", (("T", "float"),), 1)
    assert ("pk_sg0", 4 * 4096, False, True) in warp.fact("arrays")  # the hidden buffer
    assert "#define PK_SG_SLOTS 4096u" in warp.source  # the size the template declares


@native
def test_openmp_threads_wait_passively_by_default():
    code = """
    import os, numpy as np, portakern as pk
    y = np.zeros(8, np.float32)
    pk.kernel("@kernel void inc(float* y) { y[@index(Global, Linear)] += 1.0f; }")(
        y, ndrange=y.shape)
    print(os.environ.get("OMP_WAIT_POLICY"), os.environ.get("OMP_STACKSIZE"))
    """
    env = dict(os.environ)
    for v in ("OMP_WAIT_POLICY", "OMP_STACKSIZE"):
        env.pop(v, None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=240, check=False)
    assert done.stdout.split() == ["passive", "64M"], done.stderr[-2000:]
    # A user's choice stands.
    done = _run(code, {"OMP_WAIT_POLICY": "active"})
    assert done.stdout.split()[0] == "active"


@native
def test_busy_machine_bench_row():
    from portakern import bench

    row = bench.bench_busy(launches=5)
    assert row.name == "launch on a busy machine" and row.seconds > 0
    assert row.baseline_seconds > 0 and "load average" in row.note


class _Boxed:
    """A plugin's array type over host memory."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data


class _BoxedCPU(pk.CPU):
    name = "BoxedCPU"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def array_info(self, array):
        from portakern.backends.base import ArrayInfo

        if not isinstance(array, _Boxed):
            return None
        a = array.data
        return ArrayInfo(a.dtype, a.shape, a.flags.c_contiguous, a.flags.writeable, a)


@native
def test_cpu_subclasses_over_host_memory_run_natively():
    from portakern.backends.native import HostedNativeCPU

    backend = _BoxedCPU()
    k = pk.kernel("@kernel void inc(float* y, const float* x) "
                  "{ const long i = @index(Global, Linear); y[i] += x[i]; }")
    runner = backend.executor(k)
    assert isinstance(runner, HostedNativeCPU) and repr(runner) == repr(backend)
    y, x = _Boxed(np.zeros(5000, np.float32)), _Boxed(np.arange(5000, dtype=np.float32))
    k(backend)(y, x, ndrange=(5000,))
    k(backend)(y, x, ndrange=(5000,))
    np.testing.assert_array_equal(y.data, 2 * x.data)
    assert "native: " in _BoxedCPU.describe(start=False)

    class OwnLaunch(_BoxedCPU):
        def launch(self, *args):  # pragma: no cover - never reached
            raise AssertionError

    assert OwnLaunch().executor(k) is not None
    assert not isinstance(OwnLaunch().executor(k), HostedNativeCPU)
    assert "native path not used" in OwnLaunch.describe(start=False)


@native
@linux_x86
def test_a_division_by_a_literal_zero_is_not_a_trap():
    # GCC turns x / 0 it can see into ud2 (SIGILL) unless told not to.
    code = """
    import numpy as np, portakern as pk
    src = '''@kernel void d(int* q, const int* a, const int z) {
      int i = @index(Global, Linear); q[i] = a[i] / 0 + (a[i] % z) * 1000 + a[i] / z; }'''
    a = np.array([7, -7, 5], np.int32); q = np.zeros_like(a)
    pk.kernel(src)(q, a, np.int32(0), ndrange=a.shape)
    print(q.tolist())
    """
    done = _run(code, {"PORTAKERN_CPU": "native"})
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip().splitlines()[-1] == "[7000, -7000, 5000]"


@native
def test_ctrl_c_still_interrupts_a_blocking_read():
    # The runtime's SIGINT handler takes the flags of Python's (no SA_RESTART): a read
    # that waits is still interrupted, and KeyboardInterrupt raised at once.
    code = """
    import os, signal, threading, numpy as np, portakern as pk
    y = np.zeros(8, np.float32)
    pk.kernel("@kernel void inc(float* y) { y[@index(Global, Linear)] += 1.0f; }")(
        y, ndrange=y.shape)
    r, w = os.pipe()
    try:  # the timer starts inside: however late it fires, KeyboardInterrupt is caught
        threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        os.read(r, 1)
    except KeyboardInterrupt:
        print("interrupted")
    """
    done = _run(code, timeout=120)
    assert done.stdout.strip().splitlines()[-1:] == ["interrupted"], done.stderr[-2000:]
