"""The native path's launch of a barrier kernel (templates/c/module.j2, macros.j2): a
declared workgroup size as a compile-time constant, the unrolled rows of a run on local
memory, groups handed to threads in chunks, and the collective's int loop counters. Each
kernel runs on the native path and is compared with a NumPy model, partial last groups
included.
"""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.backends.native import NativeCPU
from portakern.examples import EXAMPLES_DIR

native = pytest.mark.skipif(
    not NativeCPU.available(), reason=f"no native CPU path here: {NativeCPU.available().reason}")

# A group-reversed copy through @localmem: every item's output depends on which group it
# is in and on every other item of the group, so a wrong size or a group run twice,
# skipped or mixed with another shows.
REVERSE_2D = """
@kernel(unsafe_indices, workgroupsize=({{ H }}, {{ W }})) void rev2(T* out, const T* x) {
    auto [i, j] = @index(Global, NTuple);
    auto [li, lj] = @index(Local, NTuple);
    const long h = @ndrange(0);
    const long w = @ndrange(1);
    @localmem T t[{{ H }}][{{ W }}];
    t[li][lj] = (i < h && j < w) ? x[i * w + j] : (T)-1;
    @synchronize();
    if (i < h && j < w) {
        out[i * w + j] = t[{{ H }} - 1 - li][{{ W }} - 1 - lj] + (T)@index(Group, Linear);
    }
}
"""

REVERSE_1D = """
@kernel(workgroupsize={{ G }}) void rev1(T* out, const T* x) {
    @localmem T t[{{ G }}];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    t[l] = x[i];
    @synchronize();
    const long g = @index(Group, Linear);
    const long count = min((long)@groupsize(), @ndrange() - g * (long)@groupsize());
    out[i] = l < count ? t[count - 1 - l] : (T)0;
}
"""

# A reduction whose value is built from the local index (int loop counters).
FIRST_MIN = """
@kernel void first_min(int* where, const T* x) {
    const T low = @groupreduce(min, x[@index(Global, Linear)]);
    const int at = @groupreduce(min, x[@index(Global, Linear)] == low
                                     ? (int)@index(Local, Linear) : (int)@groupsize());
    if (@index(Local, Linear) == 0) {
        where[@index(Group, Linear)] = at;
    }
}
"""


def _native(kernel, *args, ndrange, workgroupsize=None):
    launcher = kernel(pk.CPU(), workgroupsize)
    launcher(*args, ndrange=ndrange)
    assert isinstance(launcher.runner, NativeCPU) and launcher.runner.lockstep
    return args


def test_declared_size_is_a_constant_in_the_c_rendering():
    kernel = pk.kernel(REVERSE_2D, H=4, W=8).specialize(T="float")
    text = kernel.render("c", ndim=2)
    # Hardware axis 0 is the last ndrange axis.
    assert "const long long pk_ls0 = 8;" in text and "const long long pk_ls1 = 4;" in text
    undeclared = pk.kernel(REVERSE_2D.replace(", workgroupsize=({{ H }}, {{ W }})", ""),
                           H=4, W=8).specialize(T="float")
    assert "const long long pk_ls0 = pk_geom[" in undeclared.render("c", ndim=2)


@native
@pytest.mark.parametrize("shape, hw", [((37, 53), (4, 8)), ((64, 64), (16, 16)),
                                       ((5, 200), (3, 32)), ((1, 1), (2, 2))])
def test_declared_2d_size_with_partial_groups(shape, hw):
    h, w = shape
    kh, kw = hw
    x = np.random.default_rng(h * w).uniform(0, 1, shape).astype(np.float32)
    out = np.zeros_like(x)
    _native(pk.kernel(REVERSE_2D, H=kh, W=kw), out, x, ndrange=shape)
    gh, gw = -(-h // kh), -(-w // kw)
    padded = np.full((gh * kh, gw * kw), -1, np.float32)
    padded[:h, :w] = x
    tiles = padded.reshape(gh, kh, gw, kw)[:, ::-1, :, ::-1].reshape(gh * kh, gw * kw)
    group = (np.arange(gh)[:, None] * gw + np.arange(gw)[None, :]).astype(np.float32)
    want = tiles + np.kron(group, np.ones((kh, kw), np.float32))
    np.testing.assert_array_equal(out, want[:h, :w])


@native
@pytest.mark.parametrize("n, group", [(1, 16), (1000, 48), (100_003, 256), (4096, 64)])
def test_declared_1d_size_masked_with_many_groups(n, group):
    x = np.arange(n, dtype=np.float64)
    out = np.zeros(n)
    _native(pk.kernel(REVERSE_1D, G=group), out, x, ndrange=n)
    want = np.concatenate([x[s:s + group][::-1] for s in range(0, n, group)])
    np.testing.assert_array_equal(out, want)


@native
@pytest.mark.parametrize("n, group", [(10_007, 64), (300, 300), (5000, 1000), (77, 5)])
def test_index_reduction_with_int_counters(n, group):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 7, n).astype(np.float32)  # many ties
    where = np.zeros(-(-n // group), np.int32)
    _native(pk.kernel(FIRST_MIN), where, x, ndrange=n, workgroupsize=group)
    want = [int(np.argmin(x[s:s + group])) for s in range(0, n, group)]
    np.testing.assert_array_equal(where, want)


def test_only_runs_on_local_memory_unroll_their_rows():
    text = pk.kernel((EXAMPLES_DIR / "matmul_tiled.pk").read_text(), TILE=16) \
        .specialize(T="float").render("c", ndim=2)
    chunks = text.split("for (long long pk_l1 = 0;")
    # Each row loop: whether it is unrolled, and its text up to the next one.
    loops = [(chunks[i - 1].rstrip().endswith("#pragma GCC unroll 16"), chunks[i])
             for i in range(1, len(chunks))]
    # The FMA run (tiles and the accumulator only) unrolls its 16 rows; the run that
    # loads the tiles from a and b, and the one that stores c, do not.
    assert next(u for u, body in loops if "acc += ta[li][15] * tb[15][lj];" in body)
    assert not next(u for u, body in loops if "a[row * K + k0 + lj]" in body)
    assert not next(u for u, body in loops if "c[row * N + col] = acc;" in body)
    # Undeclared (or masked): the row count is not a constant, nothing is unrolled.
    undeclared = pk.kernel(REVERSE_2D.replace(", workgroupsize=({{ H }}, {{ W }})", ""),
                           H=4, W=8).specialize(T="float")
    assert "#pragma GCC unroll" not in undeclared.render("c", ndim=2)


@native
@pytest.mark.parametrize("n, tile", [(64, 16), (45, 16), (37, 8), (20, 2)])
def test_tiled_matmul_with_unrolled_rows_matches_numpy(n, tile):
    rng = np.random.default_rng(n + tile)
    a = rng.standard_normal((n, n + 5)).astype(np.float32)
    b = rng.standard_normal((n + 5, n - 3)).astype(np.float32)
    c = np.zeros((n, n - 3), np.float32)
    kernel = pk.kernel((EXAMPLES_DIR / "matmul_tiled.pk").read_text(), TILE=tile)
    _native(kernel, c, a, b, a.shape[1], ndrange=c.shape)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
