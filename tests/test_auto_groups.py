"""workgroupsize="auto" (launch/auto.py): candidates, results, the disk cache, pk.timed()."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import portakern as pk
from portakern.errors import NDRangeError
from portakern.launch import auto

SAXPY = """
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}"""

SCALE = """
@kernel void scale(T* y, const T* x, T a) {
    y[@index(Global, Linear)] = a * x[@index(Global, Linear)];
}"""

# A reduction that reads its group's shape and adds each group's sum atomically: any
# workgroup size gives the same total.
GROUP_SUM = """
@kernel void group_sum(float* total, const float* x) {
    const float s = @groupreduce(add, x[@index(Global, Linear)]);
    if (@index(Local, Linear) == 0) {
        @atomic_add(&total[0], s);
    }
}"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PORTAKERN_CACHE", "1")
    return tmp_path / "cache"


@pytest.fixture
def timed_sizes(monkeypatch):
    seen: list = []
    monkeypatch.setattr(auto, "on_candidate", lambda name, wg: seen.append((name, wg)))
    return seen


def _valid(wg, backend, nd):
    assert len(wg) == len(nd)
    assert math.prod(wg) <= max(backend.limits.max_workgroup_size, 1 << 20)
    items = backend.max_workitem_sizes()
    assert all(w <= items[len(wg) - 1 - d] for d, w in enumerate(wg))


def test_shape_class_rounds_each_axis_to_its_power_of_two():
    assert auto.shape_class((1000, 1000)) == auto.shape_class((1023, 600))
    assert auto.shape_class((1024,)) != auto.shape_class((1000,))


def test_candidates_are_within_the_device_limits():
    sizes = auto.candidates((1000, 1000), 256, (256, 64, 64))
    assert sizes and len(sizes) < auto.MAX_CANDIDATES
    for wg in sizes:
        assert math.prod(wg) <= 256 and wg[1] <= 256 and wg[0] <= 64
    # The fastest axis gets at least a warp where the ndrange is that wide.
    assert all(wg[1] >= 32 for wg in sizes)
    # An axis never exceeds the ndrange rounded up to a power of two.
    assert all(wg[-1] <= 8 for wg in auto.candidates((5,), 1024, (1024, 1024, 64)))


def test_auto_equals_the_default_launch_and_is_chosen_among_candidates(cache, timed_sizes):
    cpu = pk.CPU()
    k = pk.kernel(SAXPY)
    n = 50_000
    x = np.arange(n, dtype=np.float32)
    y_auto, y_default = np.ones(n, np.float32), np.ones(n, np.float32)
    with pk.timed() as t:
        k(y_auto, x, np.float32(2), ndrange=(n,), workgroupsize="auto")
    k(y_default, x, np.float32(2), ndrange=(n,))
    # saxpy reads y: the candidates ran on copies, so y was updated exactly once.
    np.testing.assert_array_equal(y_auto, y_default)
    tried = {wg for _, wg in timed_sizes}
    assert None in tried and len(tried) > 1  # the default and at least one other size
    chosen = t.per_kernel()["saxpy"].workgroupsize
    assert chosen is not None
    _valid(chosen, cpu, (n,))
    assert 'workgroupsize="auto" chose' in t.summary()
    # The timing launches are not in the user's block: one launch, the real one.
    assert t.per_kernel()["saxpy"].launches == 1


def test_the_choice_is_kept_on_disk_and_reused(cache, timed_sizes, tmp_path):
    n = 30_000
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    pk.kernel(SCALE)(y, x, np.float32(3), ndrange=(n,), workgroupsize="auto")
    first = len(timed_sizes)
    assert first > 0
    assert list((cache / "v3" / "groups").rglob("*")), "no groups entry in the disk cache"
    # The same launch again, and another kernel object of the same source with an
    # ndrange of the same shape class: nothing is timed.
    pk.kernel(SCALE)(y, x, np.float32(3), ndrange=(n,), workgroupsize="auto")
    pk.kernel(SCALE)(y[:20_000], x[:20_000], np.float32(3), ndrange=(20_000,),
                     workgroupsize="auto")
    assert len(timed_sizes) == first
    np.testing.assert_array_equal(y, 3 * x)
    # Another process reads it back without timing.
    script = textwrap.dedent(f"""
        import numpy as np, portakern as pk
        from portakern.launch import auto
        seen = []
        auto.on_candidate = lambda name, wg: seen.append(wg)
        x = np.arange({n}, dtype=np.float32); y = np.zeros({n}, np.float32)
        pk.kernel({SCALE!r})(y, x, np.float32(3), ndrange=({n},), workgroupsize="auto")
        assert (y == 3 * x).all()
        print("timed", len(seen))
    """)
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, cwd=os.getcwd(), timeout=300)
    assert out.returncode == 0, out.stderr
    assert "timed 0" in out.stdout


def test_launcher_form_and_a_group_shape_kernel(cache, timed_sizes):
    cpu = pk.CPU()
    k = pk.kernel(GROUP_SUM)
    n = 1 << 15
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    total_auto, total_default = np.zeros(1, np.float32), np.zeros(1, np.float32)
    k(cpu, workgroupsize="auto")(total_auto, x, ndrange=(n,))
    k(total_default, x, ndrange=(n,))
    # The atomics ran on a copy while timing: the caller's total has one launch's sum.
    np.testing.assert_allclose(total_auto, total_default, rtol=1e-4)
    np.testing.assert_allclose(total_auto, x.sum(dtype=np.float64), rtol=1e-4)
    assert {wg for _, wg in timed_sizes} - {None}


def test_a_declared_size_is_the_only_candidate(cache, timed_sizes):
    k = pk.kernel("""
    @kernel(workgroupsize=64) void fill(int* y) {
        y[@index(Global, Linear)] = (int)@index(Local, Linear);
    }""")
    y = np.zeros(256, np.int32)
    with pk.timed() as t:
        k(y, ndrange=(256,), workgroupsize="auto")
    assert timed_sizes == []
    assert t.per_kernel()["fill"].workgroupsize == (64,)
    np.testing.assert_array_equal(y, np.arange(256) % 64)


def test_a_given_size_wins_over_an_auto_launcher(cache, timed_sizes):
    k = pk.kernel("""
    @kernel void lid(int* y) { y[@index(Global, Linear)] = (int)@index(Local, Linear); }""")
    y = np.zeros(64, np.int32)
    k(pk.CPU(), workgroupsize="auto")(y, ndrange=(64,), workgroupsize=16)
    assert timed_sizes == []
    np.testing.assert_array_equal(y, np.arange(64) % 16)


def test_another_string_is_refused_naming_auto():
    k = pk.kernel(SCALE)
    x = np.zeros(8, np.float32)
    with pytest.raises(NDRangeError, match='"auto"'):
        k(x, x.copy(), np.float32(1), ndrange=(8,), workgroupsize="fast")


def _on_device(kind):
    """(backend, to_device, to_host) for the arrays of ``kind``: CUDA (CuPy or its
    stand-in) or Metal (MLX, or its stand-in)."""
    if kind == "cuda":
        import cupy as cp

        return pk.CUDA(), cp.asarray, cp.asnumpy
    import mlx.core as mx

    return pk.Metal(), mx.array, np.asarray


@pytest.mark.parametrize("kind", [pytest.param("cuda", marks=pytest.mark.gpu),
                                  pytest.param("metal", marks=pytest.mark.metal)])
def test_auto_on_the_gpu_backends(kind, cache, timed_sizes):
    backend, to_device, to_host = _on_device(kind)
    n = 4096
    xs = np.random.default_rng(1).random(n, dtype=np.float32)
    x = to_device(xs)
    totals = []
    for wg in ("auto", None):
        total = to_device(np.zeros(1, np.float32))
        pk.kernel(GROUP_SUM)(backend, workgroupsize=wg)(total, x, ndrange=(n,))
        backend.synchronize()
        totals.append(to_host(total))
    np.testing.assert_allclose(totals[0], totals[1], rtol=1e-4)
    tried = {wg for _, wg in timed_sizes} - {None}
    assert tried
    for wg in tried:
        _valid(wg, backend, (n,))
    # Reused: a new launcher times nothing.
    before = len(timed_sizes)
    total = to_device(np.zeros(1, np.float32))
    pk.kernel(GROUP_SUM)(backend, workgroupsize="auto")(total, x, ndrange=(n,))
    backend.synchronize()
    assert len(timed_sizes) == before
    np.testing.assert_allclose(to_host(total), totals[1], rtol=1e-4)


def test_the_bench_rows_compare_auto_with_the_default(cache):
    from portakern.bench import auto_rows, suite

    rows = auto_rows.bench_rows([pk.CPU()], quick=True, repeats=1, budget=0.1)
    assert [r.name for r in rows] == ["workgroupsize_auto"] * 3
    assert all(r.ok for r in rows), [r.note for r in rows]
    assert all(r.baseline == "default size" and "chose" in r.note for r in rows)
    # The tiled matmul declares its size: "auto" chose that one.
    assert rows[0].note.endswith("chose (16, 16)")
    assert auto_rows.bench_rows([pk.CPU()], quick=True, only=("scan",)) == []
    # `portakern bench --only workgroupsize_auto` names a known row.
    with pytest.raises(ValueError, match="unknown workload"):
        suite.run(quick=True, only=("workgroupsize_automatic",), progress=False)
