"""N-d array parameters ``T x[:, :]`` (DESIGN section 1a, "Arrays that know their shape").

The parse, the lowering to strided flat subscripts, and runs on views (transposes,
stepped and reversed slices, broadcasts) compared with NumPy, on every path here.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import portakern as pk
from portakern.syntax.language import hidden_params

TRANSPOSE = """
@kernel void transpose(T out[:, :], const T in[:, :]) {
    auto [i, j] = @index(Global, NTuple);
    out[j, i] = in[i, j];
}
"""

SIZES = """
@kernel void sizes(long* got, const float x[:, :, :]) {
    got[0] = @size(x, 0);
    got[1] = @size(x, 1);
    got[2] = @size(x, 2);
    got[3] = @length(x);
}
"""

#: out = a + b, b broadcast along the rows.
ADD = """
@kernel void add(float out[:, :], const float a[:, :], const float b[:, :]) {
    auto [i, j] = @index(Global, NTuple);
    out[i, j] = a[i, j] + b[i, j];
}
"""


@pytest.fixture(params=["native", "opencl"])
def cpu(request, monkeypatch):
    """CPU() on its native path, and with every kernel on PoCL (PORTAKERN_CPU=opencl)."""
    if request.param == "opencl":
        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    else:
        monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    backend = pk.CPU()
    if not backend.available():
        pytest.skip(f"CPU() unavailable: {backend.available().reason}")
    return backend


def _views(rng):
    base = rng.standard_normal((12, 10)).astype(np.float32)
    return {
        "contiguous": base,
        "transpose": base.T,
        "stepped and reversed": base[::2, ::-1],
        "offset slice": base[3:9, 2:7],
        "broadcast": np.broadcast_to(rng.standard_normal(7).astype(np.float32), (5, 7)),
        "reversed rows of a transpose": base.T[::-1],
    }


# -- the parse -------------------------------------------------------------------------------

def test_parameter_form():
    k = pk.kernel(TRANSPOSE)
    out, x = k.signature
    assert (out.axes, out.const, out.pointer, x.axes, x.const) == (2, False, True, 2, True)
    assert out.describe() == "T[:, :]" and x.describe() == "const T[:, :]"
    names = [p.name for p in hidden_params(k.signature)]
    assert names == ["pk_out_n0", "pk_out_n1", "pk_out_s0", "pk_out_s1", "pk_out_o",
                     "pk_in_n0", "pk_in_n1", "pk_in_s0", "pk_in_s1", "pk_in_o"]
    # MLX generates x_shape / x_strides / x_ndim per input: the hidden names avoid them.
    assert not any(s in n for n in names for s in ("_shape", "_strides", "_ndim"))


@pytest.mark.parametrize("param, fragment", [
    ("float* x[:, :]", "without '*'"),
    ("float x[:, 4]", "not a fixed-size array"),
    ("float x[:, :, :, :, :]", "at most 4 axes"),
    ("float x[:, ]", "one ':' per axis"),
])
def test_bad_parameter_forms(param, fragment):
    with pytest.raises(pk.KernelSyntaxError, match=re.escape(fragment)):
        pk.kernel(f"@kernel void f({param}) {{ }}")


def test_flat_pointer_with_two_indices_names_the_nd_form():
    with pytest.raises(pk.KernelSyntaxError) as err:
        pk.kernel("@kernel void f(float* x, long n) { auto [i, j] = @index(Global, NTuple);"
                  " x[i, j] = 0.0f; }")
    assert "'float x[:, :]'" in str(err.value) and "comma operator" in str(err.value)


@pytest.mark.parametrize("body, fragment", [
    ("x[i] = 0.0f;", "takes 2 indices"),
    ("x[i, j, 0] = 0.0f;", "takes 2 indices"),
    ("float* p = x; p[0] = 1.0f;", "its strides do not travel"),
    ("x[i, j] = @size(x, 2);", "has 2 axes"),
    ("x[i, j] = @size(y, 0);", "declare it 'float y[:]'"),
    ("x[i, j] = @size(x);", "@size takes"),
])
def test_bad_uses(body, fragment):
    k = pk.kernel("@kernel void f(float x[:, :], float* y) {"
                  f" auto [i, j] = @index(Global, NTuple); {body} }}")
    with pytest.raises(pk.KernelSyntaxError, match=re.escape(fragment)):
        k.render("opencl")


def test_rendering_uses_the_hidden_strides():
    text = pk.kernel(TRANSPOSE).render("opencl", T="float")
    assert "const long pk_in_s1" in text
    assert "in[pk_in_o + (i) * pk_in_s0 + ( j) * pk_in_s1]" in text


# -- runs on views -----------------------------------------------------------------------------

@pytest.mark.parametrize("view", list(_views(np.random.default_rng(0))))
def test_transpose_of_views(cpu, view):
    a = _views(np.random.default_rng(1))[view]
    out = np.full(a.shape[::-1], -1, np.float32)
    pk.kernel(TRANSPOSE)(cpu)(out, a, ndrange=a.shape)
    np.testing.assert_array_equal(out, a.T)


def test_a_written_view_writes_through_to_its_base(cpu):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 8)).astype(np.float32)
    base = np.zeros((8, 12), np.float32)
    pk.kernel(TRANSPOSE)(cpu)(base[::-1, 1::4], a, ndrange=a.shape)
    expected = np.zeros((8, 12), np.float32)
    expected[::-1, 1::4] = a.T
    np.testing.assert_array_equal(base, expected)


def test_broadcast_const_input(cpu):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = np.broadcast_to(rng.standard_normal(5).astype(np.float32), a.shape)
    out = np.zeros_like(a)
    pk.kernel(ADD)(cpu)(out, a, b, ndrange=a.shape)
    np.testing.assert_allclose(out, a + b, rtol=1e-6)


def test_sizes_and_length(cpu):
    x = np.zeros((4, 6, 10), np.float32)[:, ::2, 1:8]
    got = np.zeros(4, np.int64)
    pk.kernel(SIZES)(cpu)(got, x, ndrange=1)
    assert got.tolist() == [4, 3, 7, 4 * 3 * 7]


def test_type_variable_binds_from_an_nd_array(cpu):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::-1]
    out = np.zeros((4, 3), np.int32)
    pk.kernel(TRANSPOSE)(cpu)(out, a, ndrange=a.shape)
    np.testing.assert_array_equal(out, a.T)


def test_one_variant_per_element_type_not_per_shape(cpu):
    k = pk.kernel(TRANSPOSE)
    launch = k(cpu)
    rng = np.random.default_rng(4)
    for shape in [(3, 4), (5, 2), (7, 7)]:
        a = rng.standard_normal(shape).astype(np.float32)[::-1]
        out = np.zeros(shape[::-1], np.float32)
        launch(out, a, ndrange=a.shape)
        np.testing.assert_array_equal(out, a.T)
    assert len({key[0] for key in launch.plans}) == 1  # one binding: T=float


# -- refused arguments -----------------------------------------------------------------------

def test_written_broadcast_is_refused(cpu):
    a = np.zeros((4, 5), np.float32)
    b = np.broadcast_to(np.zeros(5, np.float32), (4, 5))
    with pytest.raises(pk.KernelArgumentError, match="read-only|stride 0"):
        pk.kernel(ADD)(cpu)(b, a, a, ndrange=a.shape)


def test_a_writable_stride_zero_view_is_refused(cpu):
    from numpy.lib.stride_tricks import as_strided

    a = np.zeros((4, 5), np.float32)
    row = np.zeros(5, np.float32)
    b = as_strided(row, shape=(4, 5), strides=(0, 4))  # writable, every row the same
    with pytest.raises(pk.KernelArgumentError, match="stride 0 along axis 0.*race"):
        pk.kernel(ADD)(cpu)(b, a, a, ndrange=a.shape)


def test_wrong_number_of_axes_is_refused(cpu):
    with pytest.raises(pk.KernelArgumentError, match=r"has 2 axes, got an array of shape \(12,\)"):
        pk.kernel(TRANSPOSE)(cpu)(np.zeros((3, 4), np.float32), np.zeros(12, np.float32),
                                   ndrange=(3, 4))


def test_stride_not_a_multiple_of_the_element_is_refused(cpu):
    raw = np.zeros(64, np.uint8)
    odd = np.ndarray((3, 4), np.float32, buffer=raw, offset=0, strides=(18, 4))
    with pytest.raises(pk.KernelArgumentError, match="18 bytes along axis 0"):
        pk.kernel(TRANSPOSE)(cpu)(np.zeros((4, 3), np.float32), odd, ndrange=(3, 4))


def test_overlapping_const_view_is_refused(cpu):
    a = np.zeros((4, 4), np.float32)
    with pytest.raises(pk.KernelArgumentError, match="shares memory"):
        pk.kernel(TRANSPOSE)(cpu)(a, a.T, ndrange=(4, 4))


def test_flat_parameter_still_wants_contiguous_and_names_the_nd_form(cpu):
    k = pk.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = 1.0f; }")
    with pytest.raises(pk.KernelArgumentError, match=r"C-contiguous.*'float y\[:, :\]'"):
        k(cpu)(np.zeros((4, 4), np.float32).T, ndrange=16)


# -- PyOpenCL arrays (strides and .offset) ------------------------------------------------------

def test_pyopencl_views():
    cla = pytest.importorskip("pyopencl.array")
    backend = pk.OpenCL()
    if not backend.available():
        pytest.skip(f"OpenCL unavailable: {backend.available().reason}")
    rng = np.random.default_rng(5)
    host = rng.standard_normal((8, 6)).astype(np.float32)
    dev = cla.to_device(backend.queue, host)
    for view, expected in [(dev, host), (dev[2:6], host[2:6]), (dev.T, host.T)]:
        out = cla.zeros(backend.queue, expected.shape[::-1], np.float32)
        pk.kernel(TRANSPOSE)(backend)(out, view, ndrange=expected.shape)
        np.testing.assert_array_equal(out.get(), expected.T)


# -- the CUDA and Metal stand-ins (or a real GPU / Mac) ---------------------------------------

@pytest.mark.gpu
def test_cuda_views():
    cp = pytest.importorskip("cupy")
    backend = pk.CUDA()
    if not backend.available():
        pytest.skip(f"CUDA unavailable: {backend.available().reason}")
    rng = np.random.default_rng(6)
    host = rng.standard_normal((12, 10)).astype(np.float32)
    dev = cp.asarray(host)
    k = pk.kernel(TRANSPOSE)
    for view, expected in [(dev.T, host.T), (dev[::2, ::-1], host[::2, ::-1]),
                           (dev[3:9, 2:7], host[3:9, 2:7])]:
        out = cp.zeros(expected.shape[::-1], np.float32)
        k(backend)(out, view, ndrange=expected.shape)
        np.testing.assert_array_equal(cp.asnumpy(out), expected.T)
    # A written view writes through; a broadcast const input is read with stride 0.
    base = cp.zeros((10, 24), np.float32)
    row = rng.standard_normal(10).astype(np.float32)
    b = cp.broadcast_to(cp.asarray(row), (12, 10))
    k(backend)(base[::-1, 1::2], b, ndrange=(12, 10))
    expected = np.zeros((10, 24), np.float32)
    expected[::-1, 1::2] = np.broadcast_to(row, (12, 10)).T
    np.testing.assert_array_equal(cp.asnumpy(base), expected)


@pytest.mark.metal
def test_metal_views_are_made_contiguous_and_counted():
    mx = pytest.importorskip("mlx.core")
    backend = pk.Metal()
    if not backend.available():
        pytest.skip(f"Metal unavailable: {backend.available().reason}")
    rng = np.random.default_rng(7)
    host = rng.standard_normal((12, 10)).astype(np.float32)
    dev = mx.array(host)
    k = pk.kernel(TRANSPOSE)
    # What a launch of contiguous arrays copies anyway (the written array's write-back).
    out = mx.zeros((10, 12), dtype=mx.float32)
    backend.reset_counters()
    k(backend)(out, dev, ndrange=host.shape)
    baseline = backend.copies
    for view, expected, copied in [(dev, host, 0), (dev.T, host.T, 1),
                                   (dev[::2, ::-1], host[::2, ::-1], 1)]:
        out = mx.zeros(expected.shape[::-1], dtype=mx.float32)
        backend.reset_counters()
        k(backend)(out, view, ndrange=expected.shape)
        np.testing.assert_array_equal(np.array(out), expected.T)
        assert backend.copies == copied + baseline


# -- the CUDA PTX and Metal clang checks of the rendering -------------------------------------

def test_cuda_rendering_compiles_to_ptx():
    from portakern.backends.cuda import CUDA
    from portakern.checks.cuda import cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(f"no CUDA compiler for the PTX check: {why}")
    for source, ndim in [(TRANSPOSE, 2), (SIZES, 1)]:
        kernel = pk.kernel(source)
        rendered = kernel.rendered("cuda", {tv: "float" for tv in kernel.type_vars}, ndim)
        ptx = CUDA.compile_check(rendered, "compute_90")
        assert f".entry {kernel.name}(" in ptx


def test_metal_rendering_passes_the_clang_check():
    from portakern.backends import _mlx
    from portakern.checks.metal import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no clang for the Metal syntax check: {why}")
    for source, ndim in [(TRANSPOSE, 2), (SIZES, 1)]:
        kernel = pk.kernel(source)
        bindings = {tv: "float" for tv in kernel.type_vars}
        rendered = kernel.rendered("metal", bindings, ndim)
        check_metal(rendered.source, sources=rendered.sources())
        program = _mlx.build_program(rendered, "metal", cast64=False)
        check_metal(_mlx.translation_unit(program, bindings), sources=rendered.sources())


# -- debug mode: each axis checked -------------------------------------------------------------

SHIFT = """
@kernel void shift(float out[:, :], const float in[:, :]) {
    auto [i, j] = @index(Global, NTuple);
    out[i, j] = in[i, j + 1];
}
"""


def test_debug_mode_checks_each_axis(cpu):
    k = pk.kernel(SHIFT, debug=True)
    a = np.arange(20, dtype=np.float32).reshape(4, 5)[:, ::-1]
    out = np.zeros((4, 5), np.float32)
    with pytest.raises(pk.KernelFaultError) as err:
        k(cpu)(out, a, ndrange=(4, 5))
    e = err.value
    assert (e.parameter, e.argument, e.dimension, e.index, e.extent) == ("in", 1, 1, 5, 5)
    assert e.work_item[1] == 4 and e.lineno == 4
    assert "axis 1 of 'in'" in str(e) and "extent 5 along axis 1" in str(e)
    # In bounds on every axis (a view whose flat offsets are negative): no fault.
    ok = pk.kernel(TRANSPOSE, debug=True)
    out2 = np.zeros((5, 4), np.float32)
    ok(cpu)(out2, a, ndrange=(4, 5))
    np.testing.assert_array_equal(out2, a.T)


@pytest.mark.gpu
def test_debug_mode_on_cuda():
    cp = pytest.importorskip("cupy")
    backend = pk.CUDA()
    if not backend.available():
        pytest.skip(f"CUDA unavailable: {backend.available().reason}")
    a = cp.asarray(np.arange(20, dtype=np.float32).reshape(4, 5)).T  # (5, 4)
    out = cp.zeros((5, 4), np.float32)
    with pytest.raises(pk.KernelFaultError) as err:
        pk.kernel(SHIFT, debug=True)(backend)(out, a, ndrange=(5, 4))
    assert (err.value.parameter, err.value.dimension, err.value.index) == ("in", 1, 4)


@pytest.mark.metal
def test_debug_mode_on_metal():
    mx = pytest.importorskip("mlx.core")
    backend = pk.Metal()
    if not backend.available():
        pytest.skip(f"Metal unavailable: {backend.available().reason}")
    a = mx.array(np.arange(20, dtype=np.float32).reshape(4, 5))
    out = mx.zeros((4, 5), dtype=mx.float32)
    with pytest.raises(pk.KernelFaultError) as err:
        pk.kernel(SHIFT, debug=True)(backend)(out, a, ndrange=(4, 5))
    assert (err.value.parameter, err.value.dimension, err.value.index) == ("in", 1, 5)


TILED = """
@kernel(workgroupsize=(4, 4)) void tiled(float out[:, :], const float in[:, :]) {
    auto [i, j] = @index(Global, NTuple);
    auto [li, lj] = @index(Local, NTuple);
    @localmem float tile[4][5];
    tile[li][lj] = in[i, j];
    @synchronize();
    out[i, j] = 2.0f * tile[li][lj];
}
"""


@pytest.mark.parametrize("debug", [False, True])
def test_barrier_kernel_on_views(cpu, debug):
    # The lockstep lowering of the native path, and PoCL, with strided views.
    a = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)[::-1, ::-1][:, 2:10]
    out_base = np.zeros((8, 16), np.float32)
    out = out_base[:, ::2]
    pk.kernel(TILED, debug=debug)(cpu)(out, a, ndrange=(8, 8))
    np.testing.assert_array_equal(out, 2 * a)
    assert not out_base[:, 1::2].any()


# -- the shipped example, as written -------------------------------------------------------------

def test_shipped_example_on_views(cpu):
    from portakern import examples

    ex = examples.get("transpose_views")
    kernel = ex.load()
    rng = np.random.default_rng(8)
    args = ex.make_args((30, 20), rng)
    assert not args[1].flags.c_contiguous  # the catalog's input is a view
    kernel(cpu)(*args, ndrange=ex.ndrange(args))
    np.testing.assert_array_equal(args[0], ex.reference(args)["out"])
    base = rng.standard_normal((40, 50)).astype(np.float32)
    for view in [base[::2, ::-1], base.T[5:25], np.broadcast_to(base[0], (7, 50))]:
        big = np.zeros((view.shape[1], 2 * view.shape[0]), np.float32)
        kernel(cpu)(big[:, ::-2], view, ndrange=view.shape)
        np.testing.assert_array_equal(big[:, ::-2], view.T)
        assert not big[:, -2::-2].any()


# -- the benchmark rows ------------------------------------------------------------------------

def test_transpose_view_bench_rows(monkeypatch):
    from portakern.bench import suite
    from portakern.bench.ndarray_rows import bench_rows

    rows = bench_rows(quick=True, repeats=1, budget=0.1)
    assert [(r.name, r.baseline) for r in rows] == [("transpose_view", "contiguous"),
                                                     ("transpose_view", "numpy")]
    assert all(r.ok and r.seconds > 0 and r.baseline_seconds > 0 for r in rows)
    # Quick sizes say nothing about the contract: the target is on full-size rows only.
    assert rows[0].target == "" and rows[0].meets is None
    assert bench_rows(quick=True, only=("saxpy",)) == []
    # `portakern bench --only transpose_view` names a known row (no backend: nothing runs).
    monkeypatch.setattr(suite, "_backends", lambda wanted: ([], {}))
    assert suite.run(quick=True, only=("transpose_view",), progress=False) == ([], {})
    with pytest.raises(ValueError, match="unknown workload"):
        suite.run(quick=True, only=("transpose_views_typo",), progress=False)


def test_relaunch_of_views_and_changed_arrays(cpu):
    # The warm path remembers a launch's arrays: a new view, or the same array after
    # its shape changed, is checked again (never the old strides or span).
    k = pk.kernel(TRANSPOSE)(cpu)
    rng = np.random.default_rng(9)
    base = rng.standard_normal((12, 10)).astype(np.float32)
    for _ in range(3):
        for view in [base, base.T, base[::2, ::-1], base[1:, 1:], base.T]:
            out = np.zeros(view.shape[::-1], np.float32)
            k(out, view, ndrange=view.shape)
            k(out, view, ndrange=view.shape)
            np.testing.assert_array_equal(out, view.T)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    out = np.zeros((6, 4), np.float32)
    k(out, a, ndrange=a.shape)
    k(out, a, ndrange=a.shape)
    a.shape = (6, 4)
    out.shape = (4, 6)
    k(out, a, ndrange=a.shape)
    np.testing.assert_array_equal(out, a.T)


REVERSE_SUM = """
@kernel void reverse_sum(float out[:], const float x[:, :, :, :], int* total) {
    const long i = @index(Global, Linear);
    float s = 0.0f;
    for (long a = 0; a < @size(x, 0); ++a)
        for (long b = 0; b < @size(x, 1); ++b)
            for (long c = 0; c < @size(x, 2); ++c)
                s += x[a, b, c, i];
    out[@size(out, 0) - 1 - i] = s;
    @atomic_add(&total[0], 1);
}
"""


def test_one_and_four_axes_with_an_atomic(cpu):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((3, 4, 5, 12)).astype(np.float32)[:, ::-1, 1:, ::2]  # (3, 4, 4, 6)
    base = np.zeros(12, np.float32)
    out = base[::2]
    total = np.zeros(1, np.int32)
    pk.kernel(REVERSE_SUM)(cpu)(out, x, total, ndrange=x.shape[3])
    np.testing.assert_allclose(out, x.sum(axis=(0, 1, 2))[::-1], rtol=1e-5)
    assert total[0] == x.shape[3] and not base[1::2].any()


def test_portakern_check_and_render_take_nd_kernels(tmp_path, capsys):
    from portakern.cli.main import main

    path = tmp_path / "transpose2d.pk"
    path.write_text(TRANSPOSE, encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert main(["render", str(path), "--target", "cuda", "-D", "T=float"]) == 0
    assert "const long long pk_in_s1" in capsys.readouterr().out


def test_a_kernel_with_nd_parameters_pickles(cpu):
    import pickle

    k = pickle.loads(pickle.dumps(pk.kernel(TRANSPOSE)))
    assert [p.axes for p in k.signature] == [2, 2]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1]
    out = np.zeros((3, 2), np.float32)
    k(cpu)(out, a, ndrange=a.shape)
    np.testing.assert_array_equal(out, a.T)


# -- random views against NumPy (hypothesis) ---------------------------------------------------

COPY3 = """
@kernel void copy3(T out[:, :, :], const T in[:, :, :]) {
    auto [i, j, k] = @index(Global, NTuple);
    out[i, j, k] = in[i, j, k] + (T)1;
}
"""


def test_random_views_match_numpy(cpu):
    hyp = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")
    kernel = pk.kernel(COPY3)(cpu)

    @hyp.settings(max_examples=25, deadline=None, database=None)
    @hyp.given(st.lists(st.integers(1, 6), min_size=3, max_size=3),
               st.permutations([0, 1, 2]),
               st.lists(st.sampled_from([1, 2, -1, -2]), min_size=3, max_size=3),
               st.lists(st.sampled_from([1, 2, -1, -3]), min_size=3, max_size=3),
               st.sampled_from(["float32", "int32", "float64"]))
    def check(shape, axes, steps_in, steps_out, dtype):
        rng = np.random.default_rng(sum(shape))
        src = (rng.standard_normal([n * abs(s) for n, s in zip(shape, steps_in, strict=True)]) * 10)
        view = src.astype(dtype)[tuple(slice(None, None, s) for s in steps_in)]
        view = view.transpose(axes)
        big = np.zeros([n * abs(s) for n, s in zip(view.shape, steps_out, strict=True)], dtype)
        where = tuple(slice(None, None, s) for s in steps_out)
        out = big[where]
        kernel(out, view, ndrange=view.shape)
        np.testing.assert_array_equal(out, view + 1)
        rest = big.copy()
        rest[where] = 0
        assert not rest.any()  # nothing written outside the view

    check()


def test_argument_count_message_shows_the_nd_form():
    k = pk.kernel(TRANSPOSE)
    wanted = re.escape("(T out[:, :], const T in[:, :]), got 1")
    with pytest.raises(pk.KernelTypeError, match=wanted):
        k(np.zeros((2, 2), np.float32), ndrange=(2, 2))
