"""CPU()'s native path: C++ with OpenMP from the system compiler, and how CPU() picks it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import hammer_threads, unique_saxpy

import portakern as pk
from portakern.backends import native, native_build
from portakern.backends.base import exact_groups
from portakern.backends.native import NativeCPU
from portakern.cache import store as cache
from portakern.errors import BackendUnavailableError, CompilationError

pytestmark = pytest.mark.skipif(
    not NativeCPU.available(), reason=f"no native CPU path here: {NativeCPU.available().reason}")

BARRIER = """
@kernel void rev(float* y, const float* x) {
    @localmem float t[64];
    const long l = @index(Local, Linear);
    t[l] = x[@index(Global, Linear)];
    @synchronize();
    y[@index(Global, Linear)] = t[63 - l];
}
"""


def _runner(kernel, *args, ndrange, workgroupsize=None):
    launcher = kernel(pk.CPU(), workgroupsize)
    launcher(*args, ndrange=ndrange)
    return launcher.runner


def _objects(d) -> list:
    """The kernels' shared objects in a cache (not the native runtime's, built once)."""
    from portakern.backends.native import native_toolchain, runtime_file_name

    runtime = runtime_file_name(native_toolchain())
    return sorted(p for p in (d / f"v{cache.FORMAT}" / "native").rglob("*.so")
                  if not p.name.startswith(".tmp-") and p.name != runtime)


# -- which path runs a kernel ------------------------------------------------------------

def test_elementwise_and_barrier_kernels_both_run_native(monkeypatch):
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    y, x = np.ones(100, np.float32), np.arange(100, dtype=np.float32)
    runner = _runner(pk.kernel(unique_saxpy()), y, x, np.float32(2), ndrange=100)
    assert isinstance(runner, NativeCPU) and not runner.lockstep
    np.testing.assert_array_equal(y, 2 * x + 1)
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    runner = _runner(pk.kernel(BARRIER), y, x, ndrange=128, workgroupsize=64)
    assert isinstance(runner, NativeCPU) and runner.lockstep
    np.testing.assert_array_equal(y, np.concatenate([x[63::-1], x[:63:-1]]))


def test_barrier_kernel_with_a_jump_runs_on_opencl(monkeypatch):
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    src = BARRIER.replace("y[@index(Global, Linear)] = t[63 - l];",
                          "if (l > 1000) { return; }\n    y[@index(Global, Linear)] = t[63 - l];")
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    assert type(_runner(pk.kernel(src), y, x, ndrange=128, workgroupsize=64)) is pk.CPU
    np.testing.assert_array_equal(y, np.concatenate([x[63::-1], x[:63:-1]]))


def test_a_loop_counter_without_uniform_runs_natively_once_per_group(monkeypatch):
    # `s` is declared and updated like a per-item variable, but only from constants:
    # it is group-uniform, so the native path evaluates it once per group (it used to
    # send the kernel to OpenCL). Without a warning, and with the same result as a
    # counter in the loop header.
    import warnings

    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    src = """
    @kernel void ring(int* y, const int* x, int steps) {
        @localmem int buf[8];
        const long li = @index(Local, Linear);
        buf[li] = x[@index(Global, Linear)];
        int s = 0;
        while (s < steps) {
            @synchronize();
            const int v = buf[(li + 1) % 8];
            @synchronize();
            buf[li] = v;
            s++;
        }
        y[@index(Global, Linear)] = buf[li];
    }"""
    x = np.arange(32, dtype=np.int32)
    expected = np.concatenate([np.roll(x[g:g + 8], -3) for g in range(0, 32, 8)])
    header = src.replace("int s = 0;\n        while (s < steps) {",
                         "for (int s = 0; s < steps; ++s) {").replace("            s++;\n", "")
    for source in (src, header):
        y = np.zeros(32, np.int32)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            runner = _runner(pk.kernel(source), y, x, np.int32(3), ndrange=32,
                             workgroupsize=8)
        assert isinstance(runner, NativeCPU) and runner.lockstep
        np.testing.assert_array_equal(y, expected)


def test_a_per_item_value_around_a_barrier_loop_is_an_error_not_a_move(monkeypatch):
    # A loop bound with a value per work-item cannot be evaluated once per group, and
    # is wrong on every target: a KernelSyntaxError, not a silent move to OpenCL.
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    src = """
    @kernel void ring(int* y, const int* x) {
        @localmem int buf[8];
        const long li = @index(Local, Linear);
        buf[li] = x[@index(Global, Linear)];
        for (long s = 0; s < li; ++s) {
            @synchronize();
        }
        y[@index(Global, Linear)] = buf[li];
    }"""
    x = np.arange(32, dtype=np.int32)
    y = np.zeros(32, np.int32)
    with pytest.raises(pk.KernelSyntaxError, match="'li', which has a value per work-item"):
        _runner(pk.kernel(src), y, x, ndrange=32, workgroupsize=8)


def test_per_item_state_across_barriers_with_a_partial_group():
    # Each item keeps `mine` and an @private array across two barriers; the last group
    # is partial (the bounds mask keeps its missing items out of every run).
    src = """
    @kernel void shift(float* y, const float* x) {
        @localmem float t[16];
        @private float acc[2];
        const long l = @index(Local, Linear);
        const long i = @index(Global, Linear);
        const float mine = x[i] * 2.0f;
        acc[0] = mine;
        t[l] = mine;
        @synchronize();
        acc[1] = l + 1 < @groupsize() && i + 1 < @ndrange() ? t[l + 1] : 0.0f;
        @synchronize();
        t[l] = acc[1];
        @synchronize();
        y[i] = acc[0] + t[l] + mine;
    }"""
    n = 40  # groups of 16: the last has 8 items
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    runner = _runner(pk.kernel(src), y, x, ndrange=n, workgroupsize=16)
    assert isinstance(runner, NativeCPU) and runner.lockstep
    nxt = np.zeros(n, np.float32)
    for g in range(0, n, 16):
        seg = 2 * x[g:g + 16]
        nxt[g:g + len(seg) - 1] = seg[1:]
    np.testing.assert_array_equal(y, 4 * x + nxt)


def test_portakern_cpu_opencl_sends_everything_to_opencl(monkeypatch):
    monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    y, x = np.ones(10, np.float32), np.arange(10, dtype=np.float32)
    assert type(_runner(pk.kernel(unique_saxpy()), y, x, np.float32(2), ndrange=10)) is pk.CPU
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_portakern_cpu_unknown_value_is_named(monkeypatch):
    monkeypatch.setenv("PORTAKERN_CPU", "gpu")
    y, x = np.ones(10, np.float32), np.arange(10, dtype=np.float32)
    with pytest.raises(BackendUnavailableError, match="PORTAKERN_CPU='gpu'.*'native'"):
        pk.kernel(unique_saxpy())(y, x, np.float32(2), ndrange=10)
    np.testing.assert_array_equal(y, 1)


def test_no_compiler_falls_back_to_opencl_or_fails_when_native_is_asked(monkeypatch):
    from portakern.backends import cpu_paths

    monkeypatch.setattr(native, "_TOOLCHAIN", ["no C++ compiler found (set CXX)"])
    monkeypatch.setattr(cpu_paths, "_NATIVE", [])
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    y, x = np.ones(10, np.float32), np.arange(10, dtype=np.float32)
    assert type(_runner(pk.kernel(unique_saxpy()), y, x, np.float32(2), ndrange=10)) is pk.CPU
    np.testing.assert_array_equal(y, 2 * x + 1)
    monkeypatch.setenv("PORTAKERN_CPU", "native")
    with pytest.raises(BackendUnavailableError, match="no C\\+\\+ compiler found.*unset"):
        pk.kernel(unique_saxpy())(y, x, np.float32(2), ndrange=10)
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_cxx_that_is_not_a_compiler_is_skipped(monkeypatch, tmp_path):
    fake = tmp_path / "fakecxx"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CXX", str(fake))
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(tmp_path / "c"))
    found = native_build.find_toolchain()
    assert not isinstance(found, str) and found.compiler != str(fake)


# -- semantics ----------------------------------------------------------------------------

def test_work_items_stop_at_the_ndrange_unless_unsafe_indices():
    src = """
    @kernel{{ "(unsafe_indices)" if UNSAFE }} void mark(int* y, int* groups) {
        const long i = @index(Global, Linear);
        if (i < 12) { y[i] = 1; }
        if (@index(Local, Linear) == 0) { groups[@index(Group, Linear)] = (int)@groupsize(); }
    }
    """
    for unsafe, expected in ((False, [1] * 10 + [0, 0]), (True, [1] * 12)):
        y, groups = np.zeros(12, np.int32), np.zeros(3, np.int32)
        pk.kernel(src, UNSAFE=unsafe)(y, groups, ndrange=10, workgroupsize=4)
        np.testing.assert_array_equal(y, expected)
        np.testing.assert_array_equal(groups, [4, 4, 4])


def test_indices_in_3d_with_partial_groups():
    src = """
    @kernel void ids(long* out) {
        auto [i, j, k] = @index(Global, NTuple);
        auto [li, lj, lk] = @index(Local, NTuple);
        auto [gi, gj, gk] = @index(Group, NTuple);
        const long n = @index(Global, Linear);
        out[4 * n + 0] = i * 10000 + j * 100 + k;
        out[4 * n + 1] = li * 10000 + lj * 100 + lk;
        out[4 * n + 2] = gi * 10000 + gj * 100 + gk;
        out[4 * n + 3] = @ndrange(0) * 10000 + @ndrange(1) * 100 + @ndrange(2);
    }
    """
    shape, wg = (3, 5, 7), (2, 2, 4)
    out = np.full(4 * 105, -1, np.int64)
    pk.kernel(src)(out, ndrange=shape, workgroupsize=wg)
    i, j, k = np.indices(shape).reshape(3, -1)
    got = out.reshape(-1, 4)
    np.testing.assert_array_equal(got[:, 0], i * 10000 + j * 100 + k)
    np.testing.assert_array_equal(got[:, 1], (i % 2) * 10000 + (j % 2) * 100 + k % 4)
    np.testing.assert_array_equal(got[:, 2], (i // 2) * 10000 + (j // 2) * 100 + k // 4)
    np.testing.assert_array_equal(got[:, 3], 30507)


def test_vector_math_agrees_with_numpy():
    # sin, exp and pow take libmvec's vector variants here: within a few ulp of NumPy.
    src = """
    @kernel void f(T* s, T* e, T* p, const T* x) {
        const long i = @index(Global, Linear);
        s[i] = sin(x[i]);
        e[i] = exp(x[i] / (T)100);
        p[i] = pow(fabs(x[i]), (T)0.5);
    }
    """
    for dtype, rtol in ((np.float32, 2e-6), (np.float64, 1e-14)):
        x = np.random.default_rng(1).uniform(-2000, 2000, 100_003).astype(dtype)
        s, e, p = (np.empty_like(x) for _ in range(3))
        pk.kernel(src)(s, e, p, x, ndrange=x.shape)
        np.testing.assert_allclose(s, np.sin(x), rtol=rtol, atol=4 * np.finfo(dtype).eps)
        np.testing.assert_allclose(e, np.exp(x / dtype(100)), rtol=rtol)
        np.testing.assert_allclose(p, np.sqrt(np.abs(x)), rtol=rtol)


def test_atomics_from_many_threads():
    src = """
    @kernel void count(uint* bins, float* total, long* lo, const uint8_t* data) {
        const long i = @index(Global, Linear);
        @atomic_add(&bins[data[i] % 16], 1u);
        @atomic_add(&total[0], 1.0f);
        @atomic_min(&lo[0], (long)data[i] - 7);
    }
    """
    data = np.random.default_rng(2).integers(0, 256, 200_000).astype(np.uint8)
    bins, total, lo = np.zeros(16, np.uint32), np.zeros(1, np.float32), np.zeros(1, np.int64)
    pk.kernel(src)(bins, total, lo, data, ndrange=data.shape, workgroupsize=64)
    np.testing.assert_array_equal(bins, np.bincount(data % 16, minlength=16))
    assert total[0] == data.size  # exact: every partial sum is an integer below 2**24
    assert lo[0] == min(0, int(data.min()) - 7)


def test_compile_error_names_the_users_line(tmp_path):
    path = tmp_path / "bad.pk"
    path.write_text("@kernel void f(float* y) {\n    const long i = @index(Global, Linear);\n"
                    "    y[i] = undefined_thing;\n}\n")
    y = np.zeros(4, np.float32)
    with pytest.raises(CompilationError) as info:
        pk.kernel.from_file(path)(y, ndrange=4)
    err = info.value
    assert f"{path}:3" in str(err) and "y[i] = undefined_thing;" in str(err)
    assert err.target == "c" and "pk_launch" in err.source
    np.testing.assert_array_equal(y, 0)


def test_render_for_the_c_target_shows_the_launch_loop():
    src = pk.kernel(unique_saxpy()).render("c", T="float")
    assert 'extern "C"' in src and "#pragma omp parallel for" in src
    assert "#pragma omp simd" in src and "float* y" in src


# -- the disk cache ---------------------------------------------------------------------

def test_shared_object_is_cached_and_reloaded(cache_dir, monkeypatch):
    src = unique_saxpy()
    y, x = np.ones(1000, np.float32), np.arange(1000, dtype=np.float32)
    pk.kernel(src)(y, x, np.float32(2), ndrange=y.shape)
    (so,) = _objects(cache_dir)
    mtime = so.stat().st_mtime_ns
    # A new backend and kernel (a new process, as far as memory goes) must not compile.
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("compiled"))
    fresh = NativeCPU()
    launcher = pk.kernel(src)(pk.CPU())
    launcher.runner = fresh
    launcher(y, x, np.float32(2), ndrange=y.shape)
    np.testing.assert_array_equal(y, 4 * x + 1)
    assert so.stat().st_mtime_ns == mtime


def test_corrupt_shared_object_is_rebuilt(cache_dir, tmp_path):
    # In other processes: a loaded shared object is never rewritten in place (entries
    # are replaced), and this process would reuse its loaded copy by path.
    src_file = tmp_path / "saxpy.pk"
    src_file.write_text(unique_saxpy())
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(cache_dir))
    env.pop("PORTAKERN_CPU", None)
    assert _child(src_file, env) == {"ok": True, "native": True}
    (so,) = _objects(cache_dir)
    torn = so.with_name(".tmp-torn")
    torn.write_bytes(so.read_bytes()[:200])
    os.replace(torn, so)
    assert _child(src_file, env) == {"ok": True, "native": True}
    assert so.stat().st_size > 1000


def test_cache_off_builds_in_a_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("PORTAKERN_CACHE", "0")
    y, x = np.ones(100, np.float32), np.arange(100, dtype=np.float32)
    pk.kernel(unique_saxpy())(y, x, np.float32(2), ndrange=y.shape)
    np.testing.assert_array_equal(y, 2 * x + 1)
    assert not (tmp_path / "c").exists()


def test_threads_compile_one_kernel_at_once(cache_dir):
    hammer_threads(pk.kernel(unique_saxpy()))
    assert len(_objects(cache_dir)) == 1


_CHILD = r"""
import json, sys
import numpy as np
import portakern as pk
src = open(sys.argv[1]).read()
y, x = np.ones(5000, np.float32), np.arange(5000, dtype=np.float32)
pk.kernel(src)(y, x, np.float32(3), ndrange=y.shape)
print(json.dumps({"ok": bool(np.array_equal(y, 3 * x + 1)),
                  "native": "pyopencl" not in sys.modules}))
"""


def _child(src_file, env) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(src_file)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_two_processes_compile_one_kernel_at_once(cache_dir, tmp_path):
    src_file = tmp_path / "saxpy.pk"
    src_file.write_text(unique_saxpy())
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(cache_dir))
    env.pop("PORTAKERN_CPU", None)
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(src_file)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        got = json.loads(stdout.strip().splitlines()[-1])
        # The native path never starts the OpenCL runtime.
        assert got == {"ok": True, "native": True}
    assert len(_objects(cache_dir)) == 1


def test_docs_cpu_example_runs(capsys):
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "cpu.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)
    scope: dict = {}
    exec(compile(block, "docs/cpu.md", "exec"), scope)
    assert "pk_launch" in capsys.readouterr().out
    np.testing.assert_allclose(scope["y"], np.sin(3 * scope["x"]) * np.exp(-scope["x"]),
                               atol=1e-6)


def _fork_child(q) -> None:  # module level: multiprocessing pickles it by name
    z = np.zeros(1 << 16, np.float32)
    pk.kernel("@kernel void inc(float* y) { y[@index(Global, Linear)] += 1.0f; }")(
        z, ndrange=z.shape)
    q.put(float(z.sum()))


def test_a_forked_child_runs_native_kernels():
    # GCC's OpenMP runtime hangs in a forked child unless its threads were released.
    import multiprocessing

    y = np.zeros(1 << 16, np.float32)
    pk.kernel("@kernel void inc(float* y) { y[@index(Global, Linear)] += 1.0f; }")(
        y, ndrange=y.shape)
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_fork_child, args=(q,))
    p.start()
    p.join(120)
    alive = p.is_alive()
    if alive:
        p.kill()
    assert not alive and p.exitcode == 0
    assert q.get(timeout=10) == y.size
    pk.kernel("@kernel void inc(float* y) { y[@index(Global, Linear)] += 1.0f; }")(
        y, ndrange=y.shape)
    np.testing.assert_array_equal(y, 2)


def test_unwritable_cache_folder_builds_in_a_temporary_one_with_one_warning(tmp_path,
                                                                             monkeypatch):
    import warnings

    from portakern.cache.store import CacheWarning

    blocker = tmp_path / "a-file"
    blocker.write_text("the cache folder cannot be created under a file")
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.delenv("PORTAKERN_CACHE", raising=False)
    y, x = np.ones(100, np.float32), np.arange(100, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for a in (2, 3):  # two kernels: still one warning
            src = unique_saxpy()
            launcher = pk.kernel(src)(pk.CPU())
            launcher.runner = NativeCPU()
            launcher(y, x, np.float32(a), ndrange=y.shape)
    np.testing.assert_array_equal(y, 1 + 5 * x)
    assert [w.category for w in caught] == [CacheWarning]


def test_opencl_only_code_falls_back_to_opencl_with_a_warning(monkeypatch):
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    src = """
    @kernel void f(float* y, const float* x) {
        const long i = @index(Global, Linear);
    {% if target == "cuda" %}
        y[i] = __sinf(x[i]);
    {% else %}
        y[i] = native_sin(x[i]);   // OpenCL only: no such function in C++
    {% endif %}
    }
    """
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    y = np.zeros_like(x)
    k = pk.kernel(src)
    with pytest.warns(pk.NativeFallbackWarning, match="native_sin"):
        k(y, x, ndrange=x.shape)
    np.testing.assert_allclose(y, np.sin(x), atol=1e-3)
    y[:] = 0
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.NativeFallbackWarning)
        k(y, x, ndrange=x.shape)  # the launcher stays on OpenCL: no second warning
    np.testing.assert_allclose(y, np.sin(x), atol=1e-3)


def test_code_that_compiles_nowhere_raises_the_native_error():
    src = "@kernel void f(float* y) { y[@index(Global, Linear)] = nowhere(1.0f); }"
    y = np.zeros(4, np.float32)
    k = pk.kernel(src)
    for _ in range(2):  # the second call raises the same, without running a compiler
        with pytest.raises(CompilationError) as info:
            k(y, ndrange=4)
        assert info.value.target == "c" and "nowhere" in str(info.value)
    np.testing.assert_array_equal(y, 0)


def test_available_reports_a_bad_portakern_cpu_instead_of_raising(monkeypatch):
    monkeypatch.setenv("PORTAKERN_CPU", "gpu")
    status = pk.CPU.available()
    assert not status and "PORTAKERN_CPU='gpu'" in status.reason


def test_initialised_array_across_a_barrier_runs_natively_without_a_warning(monkeypatch):
    # It used to leave the native path for PoCL, which keeps an initialised private array
    # across a barrier once per group (issue 22); now each work-item has its own.
    import warnings

    from portakern.backends.native import NativeCPU

    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    src = """
    @kernel void f(float* y) {
        @localmem float t[8];
        const long l = @index(Local, Linear);
        float w[3] = {1.0f, 2.0f, 3.0f};
        t[l] = w[l % 3];
        @synchronize();
        y[@index(Global, Linear)] = t[7 - l] + w[0];
    }"""
    y = np.zeros(16, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runner = _runner(pk.kernel(src), y, ndrange=16, workgroupsize=8)
    assert type(runner) is NativeCPU
    expected = np.array([1, 2, 3, 1, 2, 3, 1, 2], np.float32)[::-1] + 1
    np.testing.assert_array_equal(y, np.tile(expected, 2))


_BIG_STATE = r"""
import numpy as np, portakern as pk
src = (
    "@kernel void big(float* y) {"
    "    @localmem float t[4096];"
    "    @private float acc[256];"
    "    const long l = @index(Local, Linear);"
    "    for (int k = 0; k < 256; ++k) { acc[k] = (float)(l + k); }"
    "    t[l] = acc[255];"
    "    @synchronize();"
    "    y[@index(Global, Linear)] = acc[0] + t[4095 - l];"
    "}")
y = np.zeros(4 * 4096, np.float32)
launcher = pk.kernel(src)(pk.CPU(), 4096)
launcher(y, ndrange=y.shape)
l = np.tile(np.arange(4096, dtype=np.float32), 4)
print(type(launcher.runner).__name__, bool(np.array_equal(y, l + (4095 - l) + 255)))
"""


def test_large_per_item_state_on_worker_threads(tmp_path):
    # 4096 items x 256 floats of @private state across a barrier: 4 MiB per group on
    # each OpenMP thread's stack, past libgomp's usual 2 MiB: portakern's default
    # OMP_STACKSIZE (64M, in a process that did not set it) makes room.
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(tmp_path))
    env.pop("OMP_STACKSIZE", None)
    env.pop("PORTAKERN_CPU", None)
    done = subprocess.run([sys.executable, "-c", _BIG_STATE], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["NativeCPU", "True"]


def test_barrier_kernels_get_the_opencl_paths_default_workgroup(monkeypatch):
    # Not the elementwise path's 1024-item rows: the shape CPU() gave barrier kernels on
    # PoCL (one that tiles the ndrange, else powers of two up to 256 items).
    src = """
    @kernel void groups(int* y) {
        @localmem int t[2048];
        t[@index(Local, Linear)] = (int)@groupsize();
        @synchronize();
        y[@index(Global, Linear)] = t[0];
    }"""
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    for n in (5000, 4999):  # 4999 is prime: no tiling shape, so 256
        y = np.zeros(n, np.int32)
        runner = _runner(pk.kernel(src), y, ndrange=y.shape)
        assert isinstance(runner, NativeCPU) and runner.lockstep
        expected = runner.default_workgroupsize((n,), None)[0]
        assert expected == (256 if n == 4999 else exact_groups((n,), 4096, (4096,) * 3,
                                                               os.cpu_count() or 1)[0])
        np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("op", ["add", "sub", "min", "max", "xchg", "and", "or", "xor"])
def test_atomics_on_local_memory_in_barrier_kernels(op):
    # A group's items run one after another on one thread, so an atomic on @localmem is
    # a plain read-modify-write (pk_local_atomic_*): the result is the sequential one.
    funcs = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "min": min, "max": max,
             "xchg": lambda a, b: b, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
             "xor": lambda a, b: a ^ b}
    types = {"int": np.int32, "uint": np.uint32, "long": np.int64, "float": np.float32,
             "double": np.float64}
    for t, dt in types.items():
        if op in ("and", "or", "xor") and t in ("float", "double"):
            continue
        src = f"""@kernel void k({t}* out, {t}* olds, const {t}* x) {{
            @localmem {t} acc[4];
            const long l = @index(Local, Linear);
            if (l < 4) {{ acc[l] = ({t})5; }}
            @synchronize();
            olds[@index(Global, Linear)] = @atomic_{op}(&acc[l % 4], x[@index(Global, Linear)]);
            @synchronize();
            if (l < 4) {{ out[@index(Group, Linear) * 4 + l] = acc[l]; }}
        }}"""
        n, wg = 64, 16
        x = (np.arange(n) % 7 + 1).astype(dt)
        out, olds = np.zeros(n // wg * 4, dt), np.zeros(n, dt)
        k = pk.kernel(src)
        runner = _runner(k, out, olds, x, ndrange=n, workgroupsize=wg)
        assert isinstance(runner, NativeCPU) and f"pk_local_atomic_{op}" in k.render("c")
        want, want_olds = [], []
        with np.errstate(over="ignore"):
            for g in range(n // wg):
                acc = [dt(5)] * 4
                for li in range(wg):
                    want_olds.append(acc[li % 4])
                    acc[li % 4] = dt(funcs[op](acc[li % 4], x[g * wg + li]))
                want += acc
        np.testing.assert_array_equal(out, np.array(want, dt), err_msg=f"{op} {t}")
        np.testing.assert_array_equal(olds, np.array(want_olds, dt), err_msg=f"{op} {t}")


# -- the warm launch path (DESIGN section 4: under 3 us) ---------------------------------------

def test_warm_launches_use_the_prepared_launch_and_stay_correct():
    """Two launches in a row of the same arrays prepare the third; any change is seen."""
    k = pk.kernel(unique_saxpy())
    launch = k(pk.CPU())
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    for _ in range(3):
        launch(y, x, np.float32(1), ndrange=y.shape)
    assert launch._prepared is not None and launch._prepared[2] is not None
    np.testing.assert_array_equal(y, 3 * x)
    launch(y, x, np.float32(2), ndrange=y.shape)  # another scalar: the full native launch
    launch(y, x, 2.0, ndrange=(100,))  # a Python float, converted
    np.testing.assert_array_equal(y, 7 * x)
    launch(y, x, np.float32(1), ndrange=(50,))  # another ndrange: another plan
    np.testing.assert_array_equal(y[:50], 8 * x[:50])
    np.testing.assert_array_equal(y[50:], 7 * x[50:])
    y2 = np.zeros(100, np.float32)  # other arrays: checked and pointed at anew
    launch(y2, x, np.float32(1), ndrange=y.shape)
    launch(y2, x, np.float32(1), ndrange=y.shape)
    launch(y2, x, np.float32(1), ndrange=y.shape)
    np.testing.assert_array_equal(y2, 3 * x)
    np.testing.assert_array_equal(y[:50], 8 * x[:50])
    y2.shape = (10, 10)  # the same object, another shape: checked again
    launch(y2, x, np.float32(1), ndrange=(100,))
    np.testing.assert_array_equal(y2.reshape(-1), 4 * x)
    y2.flags.writeable = False
    with pytest.raises(pk.KernelArgumentError, match="read-only"):
        launch(y2, x, np.float32(1), ndrange=(100,))


def test_a_changed_scalar_updates_the_argument_block():
    """The block of the last launch is copied, not written, when one argument changes."""
    k = pk.kernel(unique_saxpy())
    launch = k(pk.CPU())
    x = np.ones(8, np.float32)
    y = np.zeros(8, np.float32)
    launch(y, x, np.float32(1), ndrange=8)
    compiled = next(iter(launch.plans.values())).compiled
    first = compiled.last
    launch(y, x, np.float32(-0.0), ndrange=8)  # == 0.0, but other bytes: a new block
    assert compiled.last is not first
    assert first[2][2][()] == 1  # the old block is untouched (another thread may use it)
    np.testing.assert_array_equal(y, np.ones(8, np.float32))
    launch(y, x, np.float32(-0.0), ndrange=8)
    np.testing.assert_array_equal(y, np.ones(8, np.float32))


def test_threads_launching_one_kernel_on_their_own_arrays():
    """Warm launches from several threads at once each use their own arguments."""
    import threading

    k = pk.kernel(unique_saxpy())
    launch = k(pk.CPU())
    x = np.arange(1000, dtype=np.float32)
    outs = [np.zeros(1000, np.float32) for _ in range(4)]
    errors: list[BaseException] = []

    def work(y: np.ndarray, a: float) -> None:
        try:
            for _ in range(200):
                launch(y, x, np.float32(a), ndrange=y.shape)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(y, i + 1)) for i, y in enumerate(outs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, y in enumerate(outs):
        np.testing.assert_array_equal(y, 200 * (i + 1) * x)
