"""portakern.lower.lockstep: what the C++ path's work-item loops emit, and what they compute."""
from __future__ import annotations

import re

import numpy as np
import pytest

import portakern as pk
from portakern import examples
from portakern.backends.native import NativeCPU

native = pytest.mark.skipif(
    not NativeCPU.available(), reason=f"no native CPU path here: {NativeCPU.available().reason}")


def _run(kernel, *args, ndrange, workgroupsize=None):
    launcher = kernel(pk.CPU(), workgroupsize)
    launcher(*args, ndrange=ndrange)
    assert isinstance(launcher.runner, NativeCPU) and launcher.runner.lockstep
    return args


def _item_loops(text: str) -> list[str]:
    """The header of each work-item loop over hardware axis 0, with a pragma before it."""
    return re.findall(r"(#pragma omp simd[^\n]*\n)?for \(long long pk_l0 = 0; ([^;]*);", text)


def test_matmul_tiled_keeps_indices_as_expressions_and_its_accumulator_per_item():
    text = examples.get("matmul_tiled").load().specialize(T="float").render("c")
    # row, col, li, lj, M, N are recomputed in each loop; acc lives across barriers.
    for name in ("row", "col", "li", "lj", "M", "N"):
        assert f"pk_priv_{name}[" not in text
    assert "pk_priv_acc[pk_items]" in text and "auto& acc = pk_priv_acc[pk_lid];" in text
    assert text.count("long long li = pk_l1, lj = pk_l0;") == 4  # one per item loop
    loops = _item_loops(text)
    assert len(loops) == 4 and all(pragma for pragma, _ in loops)
    # unsafe_indices: every item of the group runs, no bound at the ndrange.
    assert all(bound == "pk_l0 < pk_ls0" for _, bound in loops)
    # A declared row of 16 items: one 16-lane vector (64 bytes of float), whatever width
    # the compiler's tuning prefers.
    assert all(pragma == "#pragma omp simd simdlen(16)\n" for pragma, _ in loops)


def test_simdlen_only_for_a_declared_row_of_a_multiple_of_16():
    source = examples.get("matmul_tiled").load()
    for tile, simdlen in ((8, False), (16, True), (32, True)):
        text = source.specialize(T="float", TILE=tile).render("c")
        pragmas = [p for p, _ in _item_loops(text) if p]
        assert pragmas and all(("simdlen(16)" in p) == simdlen for p in pragmas), tile
    # Without a declared workgroup size the row length is known only at launch.
    text = pk.kernel("""
@kernel void s(float* y) {
    @localmem float t[64];
    const long i = @index(Local, Linear);
    t[i] = y[@index(Global, Linear)];
    @synchronize();
    y[@index(Global, Linear)] = t[63 - i];
}""").render("c")
    assert "#pragma omp simd" in text and "simdlen" not in text


@native
@pytest.mark.parametrize("n, tile", [(48, 16), (37, 8)])
def test_matmul_tiled_matches_numpy(n, tile):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n + 3)).astype(np.float32)
    b = rng.standard_normal((n + 3, n - 1)).astype(np.float32)
    c = np.zeros((n, n - 1), np.float32)
    kernel = examples.get("matmul_tiled").load(TILE=tile)
    _run(kernel, c, a, b, a.shape[1], ndrange=c.shape, workgroupsize=(tile, tile))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_histogram_keeps_bin_in_its_loop_and_flushes_only_the_bins():
    text = examples.get("histogram").load().render("c")
    assert "pk_priv_bin" not in text and "pk_priv_lid" not in text
    loops = _item_loops(text)
    assert len(loops) == 3
    zero, count, flush = loops
    # Clearing and flushing visit at most BINS items; the counting loop, with its
    # read-modify-write on @localmem, is no SIMD loop.
    assert zero[0] and "(long long)(256) <" in zero[1]
    assert not count[0] and "(long long)(256)" not in count[1]
    assert not flush[0] and "(long long)(256) <" in flush[1]


@native
@pytest.mark.parametrize("n, wg", [(100_003, None), (5000, 1000), (777, 100), (600, 256)])
def test_histogram_matches_numpy(n, wg):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    counts = np.zeros(256, np.uint32)
    _run(examples.get("histogram").load(), counts, data, ndrange=data.shape,
         workgroupsize=wg)
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=256))


REASSIGNED = """
@kernel void f(float* y, const float* x) {
    @localmem float t[64];
    long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    t[l] = x[i];
    i = i * 2;
    @synchronize();
    if (i < 2 * (long)@ndrange()) { y[i / 2] = t[63 - l] + (float)l; }
}
"""


def test_a_variable_assigned_again_stays_one_value_per_item():
    text = pk.kernel(REASSIGNED).render("c")
    assert "pk_priv_i[pk_items]" in text  # assigned after its declaration
    assert "pk_priv_l[" not in text and text.count("const long long l = (pk_l0);") == 2


@native
def test_a_variable_assigned_again_keeps_its_new_value_across_the_barrier():
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    _run(pk.kernel(REASSIGNED), y, x, ndrange=128, workgroupsize=64)
    want = x.reshape(2, 64)[:, ::-1].reshape(-1) + np.tile(np.arange(64), 2)
    np.testing.assert_array_equal(y, want)


LIMITED = """
@kernel void f(int* out, const int* x, long n) {
    @localmem int t[64];
    const long lid = @index(Local, Linear);
    t[lid] = x[@index(Global, Linear)];
    @synchronize();
    for (long b = lid; b < n; b += 64) {
        out[@index(Group, Linear) * n + b] = t[b % 64] + (int)b;
    }
    @synchronize();
    if (lid == 0) {
        out[@index(Group, Linear) * n] += 1000;
    }
}
"""


def test_strided_loop_and_first_item_runs_visit_only_the_items_that_do_something():
    loops = _item_loops(pk.kernel(LIMITED).render("c"))
    assert len(loops) == 3
    assert "(long long)(n) <" in loops[1][1] and loops[1][0]
    assert loops[2][1].startswith("pk_l0 < (1 <")


@native
@pytest.mark.parametrize("n", [10, 64, 150])
def test_strided_loop_and_first_item_runs_match_numpy(n):
    groups, size = 3, 64 * 3 - 5  # a partial last group
    x = np.arange(size, dtype=np.int32) * 3
    out = np.zeros(groups * n, np.int32)
    _run(pk.kernel(LIMITED), out, x, n, ndrange=size, workgroupsize=64)
    want = np.zeros((groups, n), np.int64)
    for g in range(groups):
        active = min(64, size - 64 * g)
        t = np.zeros(64, np.int64)
        t[:active] = x[64 * g:64 * g + active]
        for b in range(n):
            if b % 64 < active:  # b starts at an item inside the ndrange
                want[g, b] = t[b % 64] + b
        want[g, 0] += 1000
    np.testing.assert_array_equal(out, want.reshape(-1))


@pytest.mark.filterwarnings("ignore:.*@print prints nothing")
def test_debug_mode_and_print_keep_item_loops_scalar():
    source = examples.get("matmul_tiled").source
    debug = pk.Kernel(source, "matmul_tiled", debug=True, TILE=16).specialize(T="float")
    # Debug mode keeps each loop with a check that records state or calls out scalar;
    # only the loops without (the tile reads' copy for when both tiles are written,
    # initcheck.fast_runs, and a run with no check) are vectorised.
    pieces = debug.render("c").split("{ const long long pk_lid")
    simd = ["#pragma omp simd" in head[-200:] for head in pieces[:-1]]
    checks = [any(c in body for c in ("pk_dbg_rd(", "pk_dbg_race(", "pk_dbg_at_"))
              for body in pieces[1:]]
    assert any(checks) and any(simd)
    assert not any(s and c for s, c in zip(simd, checks, strict=True))
    printing = pk.kernel("""
    @kernel void f(float* y) {
        @localmem float t[8];
        t[@index(Local, Linear)] = 1.0f;
        @synchronize();
        @print("%f\\n", t[0]);
        y[@index(Global, Linear)] = t[0];
    }""")
    loops = _item_loops(printing.render("c"))
    assert loops[0][0] and not loops[1][0]


SHADOWED = """
@kernel void f(float* y, const float* x, long n) {
    @localmem float t[16];
    const long lid = @index(Local, Linear);
    t[lid] = x[@index(Global, Linear)];
    @synchronize();
    {
        long n = 4;
        n += 4;
        for (long b = lid; b < n; b += 16) {
            y[@index(Group, Linear) * 16 + b] = t[b] * (float)n;
        }
    }
}
"""


@native
def test_a_local_named_like_a_parameter_keeps_its_own_value():
    # The block's `n` (8) bounds the loop, not the parameter (2): no work-item limit
    # or recomputed declaration may read the parameter instead.
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    _run(pk.kernel(SHADOWED), y, x, 2, ndrange=32, workgroupsize=16)
    want = np.zeros(32, np.float32)
    for g in range(2):
        want[g * 16:g * 16 + 8] = x[g * 16:g * 16 + 8] * 8
    np.testing.assert_array_equal(y, want)


@native
def test_a_condition_that_only_starts_with_lid_less_than_is_no_limit():
    # '<' binds tighter than '^': this is (lid < 2) ^ 1, true for lid >= 2.
    kernel = pk.kernel("""
    @kernel void f(int* y) {
        @localmem int t[8];
        const long lid = @index(Local, Linear);
        t[lid] = 1;
        @synchronize();
        if (lid < 2 ^ 1) {
            y[@index(Global, Linear)] = t[lid] + (int)lid;
        }
    }""")
    y = np.zeros(16, np.int32)
    _run(kernel, y, ndrange=16, workgroupsize=8)
    lid = np.tile(np.arange(8), 2)
    np.testing.assert_array_equal(y, np.where(lid >= 2, 1 + lid, 0))


POINTED_INTO = """
@kernel void pointed(float* y, const float* x) {
    const long i = @index(Global, Linear);
    float acc[4];
    float* p = acc + 1;
    const float* q = &acc[0];
    for (int j = 0; j < 4; j++) acc[j] = x[i] + j;
    @synchronize();
    y[i] = p[0] + p[2] + q[1];
}
"""


@native
def test_a_private_array_a_pointer_holds_across_a_barrier_lives_on_with_it():
    # Only p and q are named after the barrier; acc must outlive the first loop too
    # (it used to be that loop's local, and p read dead stack memory: 18 for every item).
    k = pk.kernel(POINTED_INTO)
    assert "pk_priv_acc[pk_items]" in k.render("c", ndim=1)
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    k(pk.CPU(), 8)(y, x, ndrange=16)
    np.testing.assert_array_equal(y, (x + 1) + (x + 3) + (x + 1))


POINTED_INTO_ROW = """
@kernel void pointed_row(float* y, const float* x) {
    const long i = @index(Global, Linear);
    float acc[2][4];
    float* p = acc[1];
    const float* r = acc[0] + 1;
    for (int j = 0; j < 4; j++) {
        acc[0][j] = x[i];
        acc[1][j] = x[i] + j;
    }
    @synchronize();
    y[i] = p[2] + r[0];
}
"""


@native
def test_a_private_array_a_row_pointer_holds_across_a_barrier_lives_on_with_it():
    # acc[1] is a row (a pointer), not an element: acc must outlive the first loop.
    k = pk.kernel(POINTED_INTO_ROW)
    assert "pk_priv_acc[pk_items]" in k.render("c", ndim=1)
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    k(pk.CPU(), 8)(y, x, ndrange=16)
    np.testing.assert_array_equal(y, (x + 2) + x)
