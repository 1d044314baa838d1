"""Thread-private sums for a barrier kernel's global atomics on CPU()'s native path
(portakern/lower/private_atomics.py, templates/c/module.j2).

The fast path is a fact beside the ``c`` rendering (``private_atomics``); it is taken only
where the array is touched by nothing but whole-statement ``@atomic_add``/``@atomic_sub``
with an integer element type, and the results stay exact on the native path, on PoCL and
against NumPy: partial last groups, several bin counts, updates outside the private size,
int and float element types.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import portakern as pk
from portakern.backends import native, opencl

HISTOGRAM = (Path(pk.__file__).parent / "examples" / "histogram.pk").read_text()

# The histogram's shape with the element type a type variable, and a subtracting variant.
TYPED = """
@kernel void hist_t(T* counts, const uint8_t* data) {
    @localmem T bins[{{ BINS }}];
    @uniform const long n = @ndrange();
    @uniform const long group = @index(Group, Linear);
    @uniform const long count = min((long)@groupsize(), n - group * (long)@groupsize());
    const long lid = @index(Local, Linear);
    for (long b = lid; b < {{ BINS }}; b += count) { bins[b] = 0; }
    @synchronize();
    @atomic_add(&bins[(long)data[@index(Global, Linear)] % {{ BINS }}], (T)1);
    @synchronize();
    for (long b = lid; b < {{ BINS }}; b += count) {
        if (bins[b] != 0) { {% if SUB %}@atomic_sub{% else %}@atomic_add{% endif %}(&counts[b], bins[b]); }
    }
}
"""
# Updates past the private size (4, from the literal subscript) go to memory as written.
SPILL = """
@kernel void spill(uint* counts, const uint8_t* data) {
    @localmem uint seen[1];
    if (@index(Local, Linear) == 0) { seen[0] = 0; }
    @synchronize();
    @atomic_add(&seen[0], 1u);
    @synchronize();
    @atomic_add(&counts[data[@index(Global, Linear)]], 1u);
    if (@index(Local, Linear) == 0) { @atomic_add(&counts[3], seen[0]); }
}
"""
# Not provably the same with private sums: each keeps its atomics.
READS = """
@kernel void reads(uint* counts, uint* seen) {
    @localmem uint t[4];
    t[@index(Local, Linear) % 4] = 1;
    @synchronize();
    @atomic_add(&counts[0], t[0]);
    seen[@index(Global, Linear)] = counts[0];
}
"""
OLD_VALUE = """
@kernel void ticket(uint* counts, uint* tickets) {
    @localmem uint t[4];
    t[@index(Local, Linear) % 4] = 1;
    @synchronize();
    tickets[@index(Global, Linear)] = @atomic_add(&counts[0], t[0]);
}
"""
OTHER_WRITE = """
@kernel void also_writes(uint* counts, float* y) {
    @localmem uint t[4];
    t[@index(Local, Linear) % 4] = 1;
    @synchronize();
    @atomic_add(&counts[0], t[0]);
    y[@index(Global, Linear)] = 1.0f;
}
"""
NO_BARRIER = """
@kernel void plain(uint* counts, const uint8_t* data) {
    @atomic_add(&counts[data[@index(Global, Linear)] % 4], 1u);
    @atomic_add(&counts[3], 1u);
}
"""
UNSIZED = """
@kernel void unsized(uint* counts, const uint8_t* data) {
    @localmem uint t[4];
    t[@index(Local, Linear) % 4] = 1;
    @synchronize();
    @atomic_add(&counts[data[@index(Global, Linear)]], t[0]);
}
"""


def _fact(kernel: pk.Kernel, target: str = "c", **bindings: str) -> object:
    return kernel.rendered(target, bindings, 1).fact("private_atomics")


def test_the_histogram_takes_the_fast_path():
    for bins in (1, 7, 256, 1000):
        k = pk.kernel(HISTOGRAM, BINS=bins)
        assert _fact(k) == (("counts", bins),)
        source = k.rendered("c", {}, 1).source
        assert "pk_pv_counts.add(&counts[b]" in source and "pk_pv_counts.merge()" in source
        assert f"pk_private_sums<unsigned int, {bins}, true>" in source
        assert _fact(k, "opencl") == ()  # PoCL keeps its atomics


@pytest.mark.parametrize("source", [READS, OLD_VALUE, OTHER_WRITE, NO_BARRIER, UNSIZED],
                         ids=["reads", "old_value", "other_write", "no_barrier", "unsized"])
def test_not_taken_where_not_provably_the_same(source: str):
    k = pk.kernel(source)
    assert _fact(k) == ()
    assert "pk_private_sums" not in k.rendered("c", {}, 1).source


def test_a_float_array_keeps_its_atomics():
    k = pk.kernel(TYPED, BINS=16, SUB=False)
    assert _fact(k, T="uint") == (("counts", 16),)
    assert _fact(k, T="long") == (("counts", 16),)
    for t in ("float", "double"):
        assert _fact(k, T=t) == ()
        assert f"pk_private_sums<{t}, 16, false>" in k.rendered("c", {"T": t}, 1).source


def test_debug_mode_keeps_the_atomics():
    k = pk.kernel(HISTOGRAM, BINS=256, debug=True)
    assert _fact(k) == ()


def test_a_private_copy_over_the_limit_is_not_made():
    from portakern.lower.private_atomics import MAX_BYTES

    bins = MAX_BYTES // 8 + 1  # fits as uint, not as long
    k = pk.kernel(TYPED, BINS=bins, SUB=False)
    assert _fact(k, T="uint") == (("counts", bins),)
    assert _fact(k, T="long") == ()


needs_both = [
    pytest.mark.skipif(not native.NativeCPU.available(),
                       reason=f"no native CPU path: {native.NativeCPU.available().reason}"),
    pytest.mark.skipif(not opencl.CPU.opencl_available(),
                       reason=f"no CPU OpenCL device: {opencl.CPU.opencl_available().reason}"),
]


def _run_both(monkeypatch: pytest.MonkeyPatch, kernel: pk.Kernel, make, n: int) -> dict:
    out = {}
    for path in ("native", "opencl"):
        if path == "native":
            monkeypatch.delenv("PORTAKERN_CPU", raising=False)
        else:
            monkeypatch.setenv("PORTAKERN_CPU", "opencl")
        args = make()
        launcher = kernel(pk.CPU())
        launcher(*args, ndrange=(n,))
        launcher(*args, ndrange=(n,))  # launches accumulate
        assert isinstance(launcher.runner, native.NativeCPU if path == "native"
                          else opencl.CPU)
        out[path] = args[0]
    return out


def _data(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


@pytest.mark.parametrize("bins", [1, 7, 256, 1000])
@pytest.mark.parametrize("n", [1, 1000, 4096 * 3 + 5, 70_001])
def test_histogram_is_exact_on_both_paths(monkeypatch, bins: int, n: int):
    for mark in needs_both:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    data = _data(n, n + bins)
    got = _run_both(monkeypatch, pk.kernel(HISTOGRAM, BINS=bins),
                    lambda: [np.zeros(bins, np.uint32), data], n)
    want = 2 * np.bincount(data.astype(np.int64) * bins // 256, minlength=bins)
    np.testing.assert_array_equal(got["native"], want)
    np.testing.assert_array_equal(got["opencl"], want)


@pytest.mark.parametrize("t, dtype", [("int", np.int32), ("uint", np.uint32),
                                      ("long", np.int64), ("float", np.float32),
                                      ("double", np.float64)])
@pytest.mark.parametrize("op", ["atomic_add", "atomic_sub"])
def test_typed_histograms_are_exact_on_both_paths(monkeypatch, t: str, dtype, op: str):
    for mark in needs_both:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    n, bins = 50_003, 13
    data = _data(n, 7)
    k = pk.kernel(TYPED, BINS=bins, SUB=op == "atomic_sub")
    start = np.arange(bins).astype(dtype) * 3
    got = _run_both(monkeypatch, k, lambda: [start.copy(), data], n)
    counted = 2 * np.bincount(data.astype(np.int64) % bins, minlength=bins)
    want = (start + counted if op == "atomic_add" else start - counted).astype(dtype)
    np.testing.assert_array_equal(got["native"], want)
    np.testing.assert_array_equal(got["opencl"], want)


def test_unsigned_wraparound_matches_the_atomics(monkeypatch):
    for mark in needs_both:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    n, bins = 20_000, 4
    data = _data(n, 3)
    k = pk.kernel(TYPED, BINS=bins, SUB=False)
    start = np.full(bins, np.iinfo(np.uint32).max - 5, np.uint32)
    got = _run_both(monkeypatch, k, lambda: [start.copy(), data], n)
    counted = 2 * np.bincount(data.astype(np.int64) % bins, minlength=bins)
    want = ((start.astype(np.int64) + counted) % 2**32).astype(np.uint32)
    np.testing.assert_array_equal(got["native"], want)
    np.testing.assert_array_equal(got["opencl"], want)


def test_updates_past_the_private_size_still_land(monkeypatch):
    for mark in needs_both:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    k = pk.kernel(SPILL)
    assert _fact(k) == (("counts", 4),)
    n = 30_001
    data = _data(n, 11)
    got = _run_both(monkeypatch, k, lambda: [np.zeros(256, np.uint32), data], n)
    want = 2 * np.bincount(data, minlength=256)
    want[3] += 2 * n  # each group adds its item count at [3]
    np.testing.assert_array_equal(got["native"], want)
    np.testing.assert_array_equal(got["opencl"], want)
