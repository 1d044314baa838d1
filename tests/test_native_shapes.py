"""Kernel shapes the native path runs in another form (portakern/lower/native_shapes.py):
grid-stride loops as one element per item, 32-bit index variables widened. Each rewrite
must keep the kernel's results for every launch, the ones it runs the other form for and
the ones it does not."""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.backends.native import NativeCPU

native = pytest.mark.skipif(
    not NativeCPU.available(), reason=f"no native CPU path here: {NativeCPU.available().reason}")

GRID = """
@kernel void gs(float* y, const float* x, const float a, const long n) {
    for (long i = @index(Global, Linear); i < n; i += @ndrange()) {
        if (x[i] < 0.0f) continue;
        y[i] += a * x[i];
    }
}
"""


def _case(n):
    rng = np.random.default_rng(1)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(
        np.float32)


def _want(y, x, a, n):
    out = y.copy()
    sel = np.arange(len(y)) < n
    sel &= x >= 0
    out[sel] += a * x[sel]
    return out


def test_grid_stride_loop_renders_the_once_form_for_c_only():
    k = pk.kernel(GRID)
    c = k.render("c")
    assert "if (PK_F)" in c and "pk_flat" in c
    assert "PK_F" not in k.render("opencl") and "PK_F" not in k.render("cuda")


def test_once_form_has_no_test_per_item():
    """The once form runs the body for the item's own i with no `i < BOUND` test (which
    made g++ 12 leave the parallel item loop scalar); pk_launch runs the flat form only
    where the indices 0 .. BOUND - 1 fit the index's type."""
    c = pk.kernel(GRID).render("c")
    once = c[c.index("if (PK_F)"):c.index("} else")]
    assert "i < " not in once and "do {" in once
    assert "pk_fits<long long>(pk_fb)" in c
    narrow = pk.kernel(GRID.replace("for (long i", "for (uint8_t i")).render("c")
    assert "pk_fits<unsigned char>(pk_fb)" in narrow


def test_pk_fits_per_type(tmp_path):
    """pk_fits<T>(n): whether 0 .. n - 1 all fit T, for the types an index may have."""
    import re
    import shutil
    import subprocess

    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    c = pk.kernel(GRID).render("c")
    fits = re.search(r"template <typename T> static inline bool pk_fits.*", c).group(0)
    cases = [("unsigned char", 256, 1), ("unsigned char", 257, 0), ("signed char", 128, 1),
             ("signed char", 129, 0), ("short", 32768, 1), ("short", 32769, 0),
             ("int", 1 << 31, 1), ("int", (1 << 31) + 1, 0), ("unsigned int", 1 << 32, 1),
             ("unsigned int", (1 << 32) + 1, 0), ("long long", (1 << 63) - 1, 1),
             ("unsigned long long", (1 << 63) - 1, 1), ("int", 0, 1), ("int", -5, 1)]
    body = "".join(f'    printf("%d\\n", (int)pk_fits<{t}>({n}LL));\n' for t, n, _ in cases)
    (tmp_path / "f.cpp").write_text(f"#include <stdio.h>\n{fits}\nint main() {{\n{body}}}\n")
    subprocess.run([cxx, "-O2", "f.cpp", "-o", "f"], cwd=tmp_path, check=True)
    out = subprocess.run(["./f"], cwd=tmp_path, check=True, capture_output=True, text=True)
    assert out.stdout.split() == [str(w) for *_, w in cases]


@pytest.mark.parametrize("src", [
    # The bound names a pointer's element: it could change as the loop runs.
    GRID.replace("i < n;", "i < (long)x[0];"),
    # The loop assigns its index.
    GRID.replace("y[i] += a * x[i];", "y[i] += a * x[i]; i += 0;"),
    # A step other than the whole ndrange.
    GRID.replace("i += @ndrange()", "i += 2 * @ndrange()"),
    # Something before the loop.
    GRID.replace("    for (", "    y[0] = y[0];\n    for ("),
    # The bound is written in the loop.
    GRID.replace("long n)", "long n0)").replace("i < n;", "i < n0;").replace(
        "y[i] += a * x[i];", "y[i] += a * x[i]; n0 = n0;").replace(
        "const long n0", "long n0"),
    # A float bound: i < 2.5 is not i < (long)2.5.
    GRID.replace("const long n)", "const float n)"),
    GRID.replace("i < n;", "i < n + 0.5f;"),
    # A float index.
    GRID.replace("for (long i", "for (float i").replace("x[i]", "x[(long)i]").replace(
        "y[i]", "y[(long)i]"),
    # An @ construct in the loop.
    GRID.replace("y[i] += a * x[i];", "y[i] += a * x[i] + @index(Global, Linear);"),
    # A written array at another index: the same item's previous iteration wrote it.
    GRID.replace("y[i] += a * x[i];", "if (i >= 1) y[i] += y[i - 1];"),
    GRID.replace("y[i] += a * x[i];", "float* p = y + i; *p += a * x[i];"),
    # A scalar parameter carried from one iteration to the next.
    GRID.replace("const float a", "float a").replace("y[i] += a * x[i];",
                                                     "a += 1.0f; y[i] = a;"),
])
def test_other_loops_keep_their_form(src):
    assert "PK_F" not in pk.kernel(src).render("c")


@native
def test_grid_stride_loop_with_a_carried_dependence_keeps_its_order():
    # Each item walks its own strided chain y[i] += y[i - S]: a prefix sum per residue.
    src = """
@kernel void chain(float* y, const long n) {
    for (long i = @index(Global, Linear); i < n; i += @ndrange()) {
        if (i >= @ndrange()) y[i] += y[i - @ndrange()];
    }
}"""
    k = pk.kernel(src)
    n, items = 4096, 64
    y = np.ones(n, np.float32)
    k(pk.CPU())(y, n, ndrange=items)
    want = np.ones(n, np.float32).reshape(-1, items).cumsum(axis=0).ravel()
    np.testing.assert_array_equal(y, want)


@native
@pytest.mark.parametrize("t", ["int", "uint"])
def test_grid_stride_bound_expression(t):
    """BOUND evaluated in pk_launch with the parameters' own types (uint wraps there too)."""
    src = GRID.replace("const long n)", f"const {t} n)").replace("i < n;", "i < (n - 3u) / 2;")
    assert "PK_F" in pk.kernel(src).render("c")
    y, x = _case(4200)
    for n in (3, 4000, 8403):
        want = _want(y, x, np.float32(1), min(4200, (n - 3) // 2))
        got = y.copy()
        pk.kernel(src)(pk.CPU())(got, x, np.float32(1), getattr(np, f"{t}32")(n),
                                 ndrange=(96,))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@native
@pytest.mark.parametrize("items", [1, 7, 64, 1000, 4096, 5000, 9000])
@pytest.mark.parametrize("n", [0, 1, 4097])
def test_grid_stride_results_for_any_ndrange(items, n):
    y, x = _case(4200)
    a = np.float32(1.5)
    want = _want(y, x, a, n)
    pk.kernel(GRID)(pk.CPU())(y, x, a, np.int64(n), ndrange=(items,))
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


@native
@pytest.mark.filterwarnings("error::portakern.errors.NativeFallbackWarning")
@pytest.mark.parametrize("index", ["uint8_t", "short", "int", "uint"])
def test_grid_stride_narrow_index_results(index):
    """A narrow index type with its bound in range: the flat form (no test per item) and
    the loop form agree with NumPy (8 items: the loop form stays below 2^7 + 8)."""
    src = GRID.replace("for (long i", f"for ({index} i")
    y, x = _case(300)
    for n, items in ((120, 8), (120, 7), (119, 120)):
        got = y.copy()
        pk.kernel(src)(pk.CPU())(got, x, np.float32(1), np.int64(n), ndrange=(items,))
        np.testing.assert_allclose(got, _want(y, x, np.float32(1), n), rtol=1e-6, atol=1e-6)


@native
@pytest.mark.parametrize("items", [128, 100])
def test_grid_stride_with_unsafe_indices_runs_the_items_it_runs(items):
    """With unsafe_indices every item of the groups runs: 128 of them either way here,
    so ndrange=(100,) updates some elements twice, as written (no flat form there)."""
    src = GRID.replace("@kernel void", "@kernel(unsafe_indices) void").replace(
        "if (x[i] < 0.0f) continue;\n", "")
    n = 3000
    y, x = np.zeros(n, np.float32), np.ones(n, np.float32)
    pk.kernel(src)(pk.CPU(), 64)(y, x, np.float32(1), np.int64(n), ndrange=(items,))
    want = np.zeros(n, np.float32)
    for g in range(128):
        want[g:n:items] += 1
    np.testing.assert_array_equal(y, want)


INDEX = """
@kernel void s(float* y, const float* x, const float a) {
    %s tid = @index(Global, Linear);
    y[tid] = a * x[tid] + y[tid];
}
"""


@pytest.mark.parametrize("t, ctype", [("uint", "unsigned int"), ("int", "int")])
def test_index_variable_widened_when_only_subscripting(t, ctype):
    c = pk.kernel(INDEX % t).render("c")
    assert f"pk_idx<PK_W, {ctype}>::type" in c
    limit = 1 << (32 if t == "uint" else 31)
    assert f"pk_wide = pk_ext0 <= {limit}LL" in c
    assert "pk_idx" not in pk.kernel(INDEX % "long").render("c")
    assert "pk_idx" not in pk.kernel(INDEX % t).render("opencl")


@pytest.mark.parametrize("body", [
    "y[tid] = a * x[tid - 1u];",  # arithmetic: a wrap at 0 must stay a wrap
    "y[tid] = (float)tid;",
    "tid += 1; y[tid] = x[tid];",
    "y[tid] = x[(tid)];",
])
def test_index_variable_kept_for_other_uses(body):
    src = INDEX.replace("y[tid] = a * x[tid] + y[tid];", body) % "uint"
    assert "pk_idx" not in pk.kernel(src).render("c")


def test_index_variable_forms():
    const = INDEX.replace("%s tid", "const %s tid") % "uint"
    assert "const typename pk_idx<PK_W, unsigned int>::type" in pk.kernel(const).render("c")
    # `unsigned int tid`: two type words, kept as written.
    assert "pk_idx" not in pk.kernel(INDEX % "unsigned int").render("c")


@native
@pytest.mark.parametrize("t", ["uint", "int", "const uint", "unsigned int"])
@pytest.mark.parametrize("n", [1, 1000, 100_003])
def test_widened_index_results(t, n):
    y, x = _case(n)
    a = np.float32(0.5)
    want = a * x + y
    pk.kernel(INDEX % t)(pk.CPU())(y, x, a, ndrange=(n,))
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


BROADCAST = """
@kernel void badd(T out[:, :], const T a[:, :], const T b[:, :]) {
    auto [i, j] = @index(Global, NTuple);
    out[i, j] = a[i, j] + b[i, j];
}
"""


def test_const_nd_arrays_get_a_zero_stride_launch():
    c = pk.kernel(BROADCAST).render("c", T="float")
    # a's and b's innermost strides (arguments 11 and 16), not out's (6).
    assert "if (pk_a11 == 0) {" in c and "} else if (pk_a16 == 0) {" in c
    assert "pk_a6 == 0" not in c
    flat = pk.kernel(INDEX % "long").render("c")
    assert "== 0) {" not in flat.split("pk_launch")[1]


@native
@pytest.mark.parametrize("which", ["row", "column", "scalar", "strided", "both"])
def test_broadcast_views_agree_with_numpy(which):
    rng = np.random.default_rng(2)
    h, w = 37, 70
    a = rng.standard_normal((h, w)).astype(np.float32)
    full = rng.standard_normal((h, 2 * w)).astype(np.float32)
    b = {"row": np.broadcast_to(full[0, :w], (h, w)),
         "column": np.broadcast_to(full[:, :1], (h, w)),
         "scalar": np.broadcast_to(full[0, 0], (h, w)),
         "strided": full[:, ::2],
         "both": np.broadcast_to(full[:, :1], (h, w))}[which]
    if which == "both":
        a = np.broadcast_to(full[:1, 3], (h, w))
    out = np.zeros((h, w), np.float32)
    pk.kernel(BROADCAST)(pk.CPU())(out, a, b, ndrange=(h, w))
    np.testing.assert_array_equal(out, a + b)
