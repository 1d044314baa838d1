"""pk.InclusiveScanKernel, pk.ExclusiveScanKernel (also segmented) and pk.copy_if.

Each is compared with NumPy (cumsum, maximum.accumulate, a segmented scan written out
by hand, boolean indexing) on every backend available here: CPU() on its native path
and on PoCL, PyOpenCL arrays, and the CUDA and Metal stand-ins (small sizes there: a
stand-in runs one thread per GPU thread). Sizes cover 0, 1, non-powers of two, sizes
just past a chunk, and random ones (hypothesis).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import portakern as pk
from portakern.blocks.scan import chunk_for, on_cpu_device

#: Sizes around the chunk boundaries of both policies (4096 on CPU(), 64 elsewhere).
EDGE = [0, 1, 2, 3, 63, 64, 65, 127, 1000, 4095, 4096, 4097]


@pytest.fixture(params=["CPU", "CPU-PoCL", "OpenCL",
                        pytest.param("CUDA", marks=pytest.mark.gpu),
                        pytest.param("Metal", marks=pytest.mark.metal)])
def be(request, monkeypatch):
    """A backend instance; "CPU-PoCL" is CPU() with every kernel on its OpenCL device."""
    from portakern import registry

    name = request.param
    if name == "CPU-PoCL":
        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
        name = "CPU"
    status = registry.backend_status(name)
    if not status:
        pytest.skip(f"{name} backend unavailable: {status.reason}")
    return registry.backend_by_name(name)


def _sizes(be):
    """The edge sizes, plus a multi-level one (three passes of chunks) on fast backends."""
    if isinstance(be, pk.CPU):
        return [*EDGE, 4096 * 256 + 17]
    if type(be).__name__ == "OpenCL":
        return [*EDGE, 64 * 64 * 3 + 5]
    return [0, 1, 65, 64 * 64 + 1]  # the stand-ins: still two levels of totals


def _host(be, a):
    be.synchronize()
    return be.to_host(a)


def _segmented_ref(x, flags, op, neutral=None):
    """The segmented scan, one element at a time (inclusive, or exclusive with neutral)."""
    out = np.empty_like(x)
    acc = None
    for i, v in enumerate(x):
        if flags[i] or acc is None:
            acc = None
        if neutral is None:
            acc = v if acc is None else op(acc, v)
            out[i] = acc
        else:
            out[i] = neutral if acc is None else acc
            acc = v if acc is None else op(acc, v)
    return out


def test_inclusive_sum_and_max_against_numpy(be):
    rng = np.random.default_rng(1)
    add = pk.InclusiveScanKernel(np.int32, "a+b")
    top = pk.InclusiveScanKernel(np.float32, "max(a, b)")
    for n in _sizes(be):
        xi = rng.integers(-100, 100, n).astype(np.int32)
        y = add(be.to_device(xi))
        np.testing.assert_array_equal(_host(be, y), np.cumsum(xi, dtype=np.int32))
        xf = rng.standard_normal(n).astype(np.float32)
        y = top(be.to_device(xf))
        np.testing.assert_array_equal(_host(be, y), np.maximum.accumulate(xf))


def test_exclusive_sum_out_and_in_place(be):
    rng = np.random.default_rng(2)
    scan = pk.ExclusiveScanKernel(np.int64, "a+b", neutral=0)
    for n in _sizes(be):
        x = rng.integers(-1000, 1000, n).astype(np.int64)
        ref = np.concatenate([[0], np.cumsum(x)[:-1]]).astype(np.int64)[:n]
        dx = be.to_device(x)
        out = be.to_device(np.full(n, 7, np.int64))
        assert scan(dx, out=out) is out
        np.testing.assert_array_equal(_host(be, out), ref)
        scan(dx, out=dx)  # in place
        np.testing.assert_array_equal(_host(be, dx), ref)


def test_non_commutative_scan_keeps_the_order(be):
    # "The left operand wins unless it is zero": associative, not commutative.
    x = np.array([0, 0, 3, 0, 5, 2, 0], np.int32)
    scan = pk.InclusiveScanKernel(np.int32, "a != 0 ? a : b")
    ref = np.array([0, 0, 3, 3, 3, 3, 3], np.int32)
    np.testing.assert_array_equal(_host(be, scan(be.to_device(x))), ref)
    n = _sizes(be)[-1]  # past several chunks: the carry is the left operand too
    x = np.zeros(n, np.int32)
    x[n // 2], x[n // 2 + 1], x[-1] = 9, 4, 1
    want = np.where(np.arange(n) >= n // 2, 9, 0).astype(np.int32)
    np.testing.assert_array_equal(_host(be, scan(be.to_device(x))), want)


def test_segmented_inclusive_and_exclusive(be):
    rng = np.random.default_rng(3)
    inc = pk.InclusiveScanKernel(np.int64, "a+b", segmented=True)
    exc = pk.ExclusiveScanKernel(np.int64, "a+b", 0, segmented=True)
    for n in _sizes(be):
        x = rng.integers(0, 10, n).astype(np.int64)
        for p in (0.0, 0.0005, 0.3):
            flags = (rng.random(n) < p).astype(np.uint8)
            if n > 70:  # a segment start on a chunk's first element
                flags[64] = flags[4096 % n] = 1
            got = inc(be.to_device(x), be.to_device(flags))
            np.testing.assert_array_equal(_host(be, got),
                                          _segmented_ref(x, flags, np.add))
            got = exc(be.to_device(x), be.to_device(flags.astype(bool)))
            np.testing.assert_array_equal(_host(be, got),
                                          _segmented_ref(x, flags, np.add, neutral=0))


def test_copy_if_against_boolean_indexing(be):
    rng = np.random.default_rng(4)
    for n in _sizes(be):
        x = rng.standard_normal(n).astype(np.float32)
        dx = be.to_device(x)
        selected, count = pk.copy_if(dx, "x > 0")
        assert count == int((x > 0).sum())
        np.testing.assert_array_equal(_host(be, selected), x[x > 0])
        selected, count = pk.copy_if(dx, "x > t && x < 2 * t", t=0.5)
        t = np.float32(0.5)
        np.testing.assert_array_equal(_host(be, selected), x[(x > t) & (x < 2 * t)])
        assert count == int(((x > t) & (x < 2 * t)).sum())
        none, zero = pk.copy_if(dx, "x > 100")
        assert zero == 0 and _host(be, none).shape == (0,)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 20000), seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.int32, np.int64, np.float64]))
def test_random_sizes_on_cpu(n, seed, dtype):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, n).astype(dtype)
    got = pk.InclusiveScanKernel(dtype, "a+b")(x)
    np.testing.assert_array_equal(got, np.cumsum(x, dtype=dtype))
    got = pk.ExclusiveScanKernel(dtype, "min(a, b)", neutral=1000)(x)
    ref = np.minimum.accumulate(np.concatenate([[1000], x]).astype(dtype))[:n]
    np.testing.assert_array_equal(got, ref)
    selected, count = pk.copy_if(x, "x % 3 == 0" if dtype != np.float64 else "x < 0")
    want = x[x % 3 == 0] if dtype != np.float64 else x[x < 0]
    assert count == want.size
    np.testing.assert_array_equal(selected, want)


@pytest.fixture(params=["chunks", "tiles"])
def strategy(request, monkeypatch):
    """Each of the two ways to scan, on every backend (each picks one by itself)."""
    from portakern.blocks import scan

    monkeypatch.setattr(scan, "strategy_for", lambda backend, segmented: (
        "chunks" if segmented else request.param))
    return request.param


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 2048 * 3 + 1])
def test_both_strategies_on_the_cpu_backends(strategy, n, be):
    if not on_cpu_device(be):
        pytest.skip("the stand-ins take the tiles by themselves (the tests above)")
    rng = np.random.default_rng(n)
    x = rng.integers(-9, 9, n).astype(np.int32)
    inc = pk.InclusiveScanKernel(np.int32, "a+b")
    exc = pk.ExclusiveScanKernel(np.int32, "max(a, b)", neutral="INT_MIN")
    np.testing.assert_array_equal(_host(be, inc(be.to_device(x))), np.cumsum(x, dtype=np.int32))
    want = np.maximum.accumulate(np.concatenate([[np.iinfo(np.int32).min], x]))[:n]
    dx = be.to_device(x)
    exc(dx, out=dx)
    np.testing.assert_array_equal(_host(be, dx), want.astype(np.int32))


def test_the_tiles_past_two_levels_on_opencl(strategy):
    # 2048 tiles of 2048 elements and one more: the group totals take two tiles.
    if not pk.OpenCL.available():
        pytest.skip(f"OpenCL unavailable: {pk.OpenCL.available().reason}")
    be = pk.OpenCL()
    n = 2048 * 2048 + 7
    x = np.ones(n, np.int32)
    got = be.to_host(pk.InclusiveScanKernel(np.int32, "a+b")(be.to_device(x)))
    np.testing.assert_array_equal(got, np.arange(1, n + 1, dtype=np.int32))


def test_a_chunk_is_a_few_hundredth_of_a_large_input_on_cpu():
    # The CPU policy: at least 4096 elements a work-item, about 256 work-items.
    assert chunk_for(pk.CPU(), 10**7) == -(-10**7 // 256)
    assert chunk_for(pk.CPU(), 100) == 4096


def test_large_input_three_levels_on_cpu():
    n = 4096 * 4096 + 3  # 4097 chunks of 4096: the totals are scanned in two chunks
    x = np.ones(n, np.int32)
    got = pk.InclusiveScanKernel(np.int32, "a+b")(x)
    assert got[-1] == n and got[4096 * 4096] == 4096 * 4096 + 1
    np.testing.assert_array_equal(got[:: 4097], np.arange(1, n + 1, 4097, dtype=np.int32))


# -- checked fragments and argument errors ---------------------------------------------


@pytest.mark.parametrize("expr, col, words", [
    ("a +* b", 4, "unexpected '*'"),
    ("a = b", 3, "assignment"),
    ("a + c", 5, "unknown name 'c'"),
    ("a + b;", 6, "statement separator"),
    ("max(a, b", 9, "expected ')'"),
    ("frob(a, b)", 1, "unknown function 'frob'"),
    ("a @ b", 3, "unexpected"),
    ("", 1, "empty"),
])
def test_a_bad_scan_expr_is_a_syntax_error_at_its_own_text(expr, col, words):
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.InclusiveScanKernel(np.float32, expr)
    err = info.value
    assert words in str(err)
    assert err.filename == "<scan_expr>" and err.offset == col
    if expr:
        assert expr in str(err) and str(err).rstrip().endswith("^")


def test_a_bad_predicate_is_a_syntax_error_at_its_own_text():
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.copy_if(np.ones(3, np.float32), "x > > 0")
    assert info.value.filename == "<predicate>" and info.value.offset == 5
    with pytest.raises(pk.KernelSyntaxError, match="unknown name 't'"):
        pk.copy_if(np.ones(3, np.float32), "x > t")  # t not given


def test_bad_inputs_name_the_argument_and_the_fix():
    scan = pk.InclusiveScanKernel(np.float32, "a+b")
    with pytest.raises(TypeError, match=r"x has dtype float64.*astype\('float32'\)"):
        scan(np.ones(4))
    with pytest.raises(ValueError, match=r"x must be 1-D, got shape \(2, 2\).*reshape"):
        scan(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"out has 3 elements but x has 4"):
        scan(np.ones(4, np.float32), out=np.ones(3, np.float32))
    with pytest.raises(TypeError, match="out has dtype int32"):
        scan(np.ones(4, np.float32), out=np.ones(4, np.int32))
    with pytest.raises(TypeError, match="not segmented"):
        scan(np.ones(4, np.float32), np.ones(4, np.uint8))
    with pytest.raises(TypeError, match="needs neutral="):
        pk.ExclusiveScanKernel(np.float32, "a+b")
    with pytest.raises(TypeError, match="cannot be scanned"):
        pk.InclusiveScanKernel(np.complex64, "a+b")
    seg = pk.InclusiveScanKernel(np.float32, "a+b", segmented=True)
    with pytest.raises(TypeError, match="flags .* is missing"):
        seg(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="flags must be a 1-D array of 4 elements"):
        seg(np.ones(4, np.float32), np.ones(5, np.uint8))
    with pytest.raises(TypeError, match="flags must be a contiguous integer or bool"):
        seg(np.ones(4, np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"x must be 1-D.*reshape\(-1\)"):
        pk.copy_if(np.ones((2, 2)), "x > 0")
    with pytest.raises(TypeError, match="scalar cif_lo= clashes"):
        pk.copy_if(np.ones(2), "x > cif_lo", cif_lo=1)


def test_debug_mode_runs_the_scan_and_copy_if():
    x = np.arange(10000, dtype=np.int64)
    got = pk.InclusiveScanKernel(np.int64, "a+b", debug=True)(x)
    np.testing.assert_array_equal(got, np.cumsum(x))
    selected, count = pk.copy_if(x, "x % 7 == 1", debug=True)
    np.testing.assert_array_equal(selected, x[x % 7 == 1])


def test_the_bench_rows_agree_in_quick_mode():
    from portakern.bench.scan_rows import bench_rows

    backends = [pk.CPU()]
    try:
        backends.append(pk.OpenCL())
    except pk.BackendUnavailableError:
        pass
    rows = bench_rows(backends, quick=True, repeats=1, budget=0.1)
    names = {(r.name, r.backend, r.baseline) for r in rows}
    assert ("scan", "CPU", "numpy") in names and ("copy_if", "CPU", "numpy") in names
    assert all(r.ok for r in rows), [(r.name, r.backend, r.baseline, r.note) for r in rows]
    assert bench_rows(backends, quick=True, repeats=1, budget=0.1, only=("copy_if",)) \
        and all(r.name == "copy_if" for r in bench_rows([pk.CPU()], quick=True, repeats=1,
                                                         budget=0.1, only=("copy_if",)))


def test_a_scan_pickles_by_recipe():
    import pickle

    scan = pk.ExclusiveScanKernel(np.int32, "a+b", neutral=0, segmented=True)
    back = pickle.loads(pickle.dumps(scan))
    assert type(back) is pk.ExclusiveScanKernel and repr(back) == repr(scan)
    x, flags = np.arange(6, dtype=np.int32), np.array([0, 0, 1, 0, 0, 1], np.uint8)
    np.testing.assert_array_equal(back(x, flags), scan(x, flags))
