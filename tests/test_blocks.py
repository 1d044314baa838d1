"""The building blocks (portakern.blocks): CuPy's ElementwiseKernel and ReductionKernel.

Conformance on every backend that runs here: CPU() on its native path and on PoCL,
PyOpenCL arrays, and the CUDA and Metal stand-ins (marked ``gpu`` and ``metal``). Each
result is compared with NumPy computing the same thing. Errors are checked once, on NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import portakern as pk
from portakern import registry

BLOCK_BACKENDS = [
    pytest.param("CPU", id="CPU"),
    pytest.param("CPU-PoCL", id="CPU-PoCL"),
    pytest.param("OpenCL", id="OpenCL"),
    pytest.param("CUDA", id="CUDA", marks=pytest.mark.gpu),
    pytest.param("Metal", id="Metal", marks=pytest.mark.metal),
]


@pytest.fixture(params=BLOCK_BACKENDS)
def on(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A backend (CPU-PoCL: CPU() with PORTAKERN_CPU=opencl)."""
    name = request.param
    if name == "CPU-PoCL":
        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
        name = "CPU"
    status = registry.backend_status(name)
    if not status:
        pytest.skip(f"{name} backend unavailable: {status.reason}")
    return registry.backend_by_name(name)


def host(backend: Any, a: Any) -> np.ndarray:
    backend.synchronize()
    return backend.to_host(a)


RNG = np.random.default_rng(24)
X3 = RNG.random((5, 6, 7), dtype=np.float32)


# -- ElementwiseKernel: conformance ------------------------------------------------------
def test_elementwise_broadcasts_binds_types_and_allocates(on):
    k = pk.ElementwiseKernel("T x, T y, float32 a", "T z", "z = a * x + y", "saxpy_b")
    x, y = X3, RNG.random((6, 1), dtype=np.float32)
    z = k(on.to_device(x), on.to_device(y), 2.5)
    assert type(z) is type(on.to_device(x))
    got = host(on, z)
    assert got.shape == (5, 6, 7) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.float32(2.5) * x + y, rtol=1e-6)


def test_elementwise_writes_given_outputs_and_returns_a_tuple(on):
    k = pk.ElementwiseKernel("T x, T y", "T s, T d", "s = x + y; d = x - y", "sumdiff")
    x, y = X3[0], X3[1]
    s, d = on.to_device(np.zeros_like(x)), on.to_device(np.zeros_like(x))
    out = k(on.to_device(x), on.to_device(y), s, d)
    assert isinstance(out, tuple) and out[0] is s and out[1] is d
    np.testing.assert_allclose(host(on, s), x + y, rtol=1e-6)
    np.testing.assert_allclose(host(on, d), x - y, rtol=1e-6)


def test_elementwise_reads_a_given_output_like_cupy(on):
    k = pk.ElementwiseKernel("T x", "T y", "y += x", "accumulate")
    y = on.to_device(np.full(10, 3, np.float32))
    k(on.to_device(np.arange(10, dtype=np.float32)), y)
    np.testing.assert_array_equal(host(on, y), 3 + np.arange(10, dtype=np.float32))


def test_elementwise_in_place_like_cupy(on):
    k = pk.ElementwiseKernel("T x", "T y", "y = x * 2 + 1", "in_place")
    x = on.to_device(np.arange(8, dtype=np.float32))
    assert k(x, x) is x
    np.testing.assert_array_equal(host(on, x), np.arange(8) * 2 + 1)


def test_elementwise_raw_parameters_see_i_and_the_size(on):
    k = pk.ElementwiseKernel("raw T x", "T y", "y = x[_ind.size() - 1 - i] * (T)i", "rev")
    x = np.arange(9, dtype=np.float32)
    y = k(on.to_device(x), on.to_device(np.empty(9, np.float32)))
    np.testing.assert_array_equal(host(on, y), x[::-1] * np.arange(9))


def test_elementwise_size_and_preamble(on):
    k = pk.ElementwiseKernel("", "raw int32 y", "y[i] = twice((int)i)", "fill",
                             preamble="static inline int twice(int v) { return 2 * v; }")
    y = on.to_device(np.zeros(6, np.int32))
    k(y, size=6)
    np.testing.assert_array_equal(host(on, y), 2 * np.arange(6))


def test_elementwise_many_axes(on):
    k = pk.ElementwiseKernel("T x, T y", "T z", "z = x * y + (T)i", "nd5")
    x = RNG.random((2, 3, 2, 4, 3), dtype=np.float32)
    y = RNG.random((3, 1, 1, 3), dtype=np.float32)
    got = host(on, k(on.to_device(x), on.to_device(y)))
    np.testing.assert_allclose(got, x * y + np.arange(x.size).reshape(x.shape), rtol=1e-6)


# -- strided NumPy views run without a copy ---------------------------------------------
@pytest.mark.parametrize("view", ["transpose", "negative", "broadcast_to", "slice"])
def test_elementwise_numpy_views(view, monkeypatch):
    base = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
    x = {"transpose": base.T, "negative": base[::-1, ::-2],
         "broadcast_to": np.broadcast_to(base[0], (5, 6)), "slice": base[1:3, 2:5]}[view]
    copied = []
    real = np.ascontiguousarray
    monkeypatch.setattr(np, "ascontiguousarray", lambda a, *r, **k: copied.append(a) or
                        real(a, *r, **k))
    k = pk.ElementwiseKernel("T x", "T y", "y = x * 2", "double_view")
    np.testing.assert_array_equal(k(x), x * 2)
    assert not copied, "a view was copied"


def test_views_of_device_arrays(on):
    """A transpose of the backend's own array (copied where the library forces it)."""
    x = X3[0]
    dx = on.to_device(x)
    try:
        view = dx.T
    except (AttributeError, NotImplementedError, ValueError) as exc:
        pytest.skip(f"{type(dx).__name__} has no transpose view: {exc}")
    k = pk.ElementwiseKernel("T x", "T y", "y = x * 3", "triple_view")
    np.testing.assert_allclose(host(on, k(view)), x.T * 3, rtol=1e-6)
    s = pk.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_view")
    np.testing.assert_allclose(host(on, s(view, axis=1)), x.T.sum(axis=1), rtol=2e-5)


def test_pyopencl_arrays_at_an_offset_run_in_place():
    cla = pytest.importorskip("pyopencl.array", reason="needs PyOpenCL")
    if not registry.backend_status("OpenCL"):
        pytest.skip("no OpenCL device")
    backend = registry.backend_by_name("OpenCL")
    x = np.arange(20, dtype=np.float32)
    dx = cla.to_device(backend.queue, x)
    k = pk.ElementwiseKernel("T x", "T y", "y = x + 1", "offset_view")
    part = dx[5:12]
    assert part.offset  # a view into dx's buffer, not a copy
    np.testing.assert_array_equal(k(part).get(), x[5:12] + 1)
    k(part, part)  # written in place, through the offset
    np.testing.assert_array_equal(dx.get()[5:12], x[5:12] + 1)
    np.testing.assert_array_equal(dx.get()[:5], x[:5])


def test_elementwise_writes_a_strided_output_view():
    k = pk.ElementwiseKernel("T x", "T y", "y = x + 1", "into_view")
    out = np.zeros((6, 8), np.float32)
    k(np.ones((3, 4), np.float32), out[::2, 1::2])
    expected = np.zeros((6, 8), np.float32)
    expected[::2, 1::2] = 2
    np.testing.assert_array_equal(out, expected)


def test_elementwise_repeated_calls_take_new_values_and_allocate_anew():
    k = pk.ElementwiseKernel("T x, T a", "T y", "y = a * x", "replayed")
    x = np.arange(6, dtype=np.float32)
    first, second = k(x, 2.0), k(x, 3.0)  # the second replays the first's plan
    assert first is not second
    np.testing.assert_array_equal(first, 2 * x)
    np.testing.assert_array_equal(second, 3 * x)
    np.testing.assert_array_equal(k(x.reshape(2, 3), 4.0), 4 * x.reshape(2, 3))
    out = np.zeros(6, np.float32)
    assert k(x + 1, 5.0, out) is out and (out == 5 * (x + 1)).all()
    k(x, 1.0, out)
    np.testing.assert_array_equal(out, x)
    k(out, 2.0, out)  # in place after out-of-place: another plan
    np.testing.assert_array_equal(out, 2 * x)


def test_elementwise_scalars_only_type_variables():
    k = pk.ElementwiseKernel("T a, T b", "T c", "c = a * b", "scalar_mul")
    c = k(np.arange(4.0), 3)  # T from the array (float64); the int is cast to it
    assert c.dtype == np.float64 and (c == np.arange(4.0) * 3).all()


# -- ReductionKernel: conformance --------------------------------------------------------
AXES = [None, 0, 1, 2, -1, (0, 2), (1, 2), (0, 1)]


@pytest.mark.parametrize("axis", AXES)
def test_reduction_sum_and_l2_over_any_axes(on, axis):
    s = pk.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum")
    l2 = pk.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "rl2")
    dx = on.to_device(X3)
    np.testing.assert_allclose(host(on, s(dx, axis=axis)), X3.sum(axis=axis), rtol=2e-5)
    np.testing.assert_allclose(host(on, l2(dx, axis=axis)),
                               np.sqrt((X3 * X3).sum(axis=axis)), rtol=2e-5)


def test_reduction_keepdims_max_and_a_given_output(on):
    m = pk.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", "-INFINITY", "rmax")
    got = host(on, m(on.to_device(X3), axis=(0, 2), keepdims=True))
    assert got.shape == (1, 6, 1)
    np.testing.assert_array_equal(got, X3.max(axis=(0, 2), keepdims=True))
    out = on.to_device(np.zeros(7, np.float32))
    assert m(on.to_device(X3), out, axis=(0, 1)) is out
    np.testing.assert_array_equal(host(on, out), X3.max(axis=(0, 1)))


def test_reduction_two_inputs_a_scalar_and_reduce_type(on):
    dot = pk.ReductionKernel("T x, T y, float32 w", "float32 z", "x * y * w", "a + b",
                             "z = a", "0", "wdot", reduce_type="float32")
    x, y = X3.reshape(-1), X3[::-1].reshape(-1).copy()
    got = host(on, dot(on.to_device(x), on.to_device(y), 0.5))
    np.testing.assert_allclose(got, 0.5 * (x * y).sum(), rtol=2e-5)


def test_reduction_full_reduction_of_many_elements(on):
    x = RNG.random(100_003, dtype=np.float32)
    s = pk.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum_big")
    np.testing.assert_allclose(host(on, s(on.to_device(x))), x.sum(dtype=np.float64),
                               rtol=1e-5)


def test_reduction_of_numpy_views_and_empty_axes():
    s = pk.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum_views")
    v = X3.transpose(2, 0, 1)[::-1, :, 1:]
    for axis in (None, 0, 1, 2, (0, 2)):
        np.testing.assert_allclose(s(v, axis=axis), v.sum(axis=axis), rtol=2e-5)
    empty = np.zeros((3, 0), np.float32)
    np.testing.assert_array_equal(s(empty, axis=1), np.zeros(3, np.float32))


def test_reduction_counts_with_an_integer_type():
    count = pk.ReductionKernel("T x", "int64 n", "x > 0.5f ? 1 : 0", "a + b", "n = a", "0",
                               "count_big", reduce_type="int64")
    assert count(X3, axis=None) == (X3 > 0.5).sum()
    np.testing.assert_array_equal(count(X3, axis=1), (X3 > 0.5).sum(axis=1))


# -- property: random shapes, views and axes against NumPy (CPU) -----------------------
@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), data=st.data())
def test_random_shapes_views_and_axes_agree_with_numpy(shape, data):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 7 - 3
    steps = tuple(data.draw(st.sampled_from([1, -1, 2])) for _ in shape)
    view = x[tuple(slice(None, None, s) for s in steps)]
    axes = data.draw(st.sets(st.integers(0, len(shape) - 1)))
    axis = tuple(sorted(axes)) if axes else None
    keep = data.draw(st.booleans())
    np.testing.assert_array_equal(_SUM(view, axis=axis, keepdims=keep),
                                  view.sum(axis=axis, keepdims=keep))
    other = RNG_FIXED[: view.shape[-1]]
    np.testing.assert_array_equal(_AXPB(view, other, np.float32(2)), view * 2 + other)


_SUM = pk.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "prop_sum")
_AXPB = pk.ElementwiseKernel("T x, T y, T a", "T z", "z = a * x + y", "prop_axpb")
RNG_FIXED = np.arange(6, dtype=np.float32) - 2


# -- debug mode --------------------------------------------------------------------------
def test_debug_mode_checks_the_fragments_subscripts():
    k = pk.ElementwiseKernel("raw T x", "T y", "y = x[i + 1]", "shift", debug=True)
    with pytest.raises(pk.KernelFaultError, match="x"):
        k(np.arange(4, dtype=np.float32), np.zeros(4, np.float32))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_debug_mode_reductions_agree(axis):
    s = pk.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "dbg_sum", debug=True)
    np.testing.assert_allclose(s(X3[0], axis=axis), X3[0].sum(axis=axis), rtol=2e-5)


# -- errors in fragments -----------------------------------------------------------------
def test_a_syntax_error_points_at_the_fragment():
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.ElementwiseKernel("T x", "T y", "float t = x;\ny = (t + ", "bad_paren")
    err = info.value
    assert err.filename == "<bad_paren: operation>" and err.lineno == 2 and err.offset == 5
    assert "y = (t + " in str(err) and "^" in str(err)


def test_a_parser_error_inside_the_fragment_is_moved_there():
    k = pk.ElementwiseKernel("T x", "T y", "y = x;\ny = @nosuch(x)", "bad_at")
    with pytest.raises(pk.KernelSyntaxError) as info:  # the body parses at its first launch
        k(np.ones(3, np.float32))
    err = info.value
    assert err.filename == "<bad_at: operation>" and err.lineno == 2, str(err)
    assert "generated" not in str(err)


def test_an_error_in_the_preamble_points_at_the_preamble():
    k = pk.ElementwiseKernel("T x", "T y", "y = f(x)", "bad_pre",
                             preamble="static inline float f(float v) {\n  return @nosuch(v);\n}")
    with pytest.raises(pk.KernelSyntaxError) as info:
        k(np.ones(3, np.float32))
    assert (info.value.filename, info.value.lineno) == ("<bad_pre: preamble>", 2)
    assert k.nin == 1 and k.nout == 1 and k.nargs == 2


def test_an_unknown_name_is_named():
    with pytest.raises(pk.KernelSyntaxError, match="unknown name 'yy'") as info:
        pk.ReductionKernel("T x", "T y", "x * yy", "a + b", "y = a", "0", "unknown")
    assert info.value.filename == "<unknown: map_expr>" and info.value.offset == 5


def test_locals_math_and_constants_are_known_names():
    k = pk.ElementwiseKernel("T x", "T y", "float t = x, u = 2; y = fmax(t * u, M_PI)",
                             "locals_ok")
    np.testing.assert_allclose(k(np.ones(3, np.float32)), np.full(3, np.pi, np.float32))


def test_an_expression_fragment_is_one_expression():
    with pytest.raises(pk.KernelSyntaxError, match="one C expression"):
        pk.ReductionKernel("T x", "T y", "x; x", "a + b", "y = a", "0", "two")


def test_a_type_error_from_the_compiler_names_the_fragment():
    k = pk.ElementwiseKernel("T x", "T y", "y = x +* x", "bad_types")
    with pytest.raises(pk.CompilationError, match="<bad_types: operation>:1"):
        k(np.ones(3, np.float32))


def test_jinja_syntax_in_a_fragment_is_refused():
    with pytest.raises(pk.KernelSyntaxError, match="never Jinja"):
        pk.ElementwiseKernel("T x", "T y", "y = x {% if 1 %}", "jinja")


# -- errors in arguments -----------------------------------------------------------------
SAXPY = ("T x, T y, float32 a", "T z", "z = a * x + y", "saxpy_err")


def test_a_wrong_number_of_arguments():
    k = pk.ElementwiseKernel(*SAXPY)
    with pytest.raises(pk.KernelTypeError, match=r"takes 3 input arguments \(x, y, a\)"):
        k(np.ones(3, np.float32), 1.0)


def test_a_type_variable_bound_two_ways():
    k = pk.ElementwiseKernel(*SAXPY)
    with pytest.raises(pk.KernelTypeError, match="type variable T is float32 from argument "
                                                 "'x' but argument 'y'"):
        k(np.ones(3, np.float32), np.ones(3), 1.0)


def test_a_wrong_fixed_dtype_names_the_fix():
    k = pk.ElementwiseKernel("float32 x", "float32 y", "y = x", "fixed")
    with pytest.raises(pk.KernelTypeError, match=r"'x' \(float x\) must have dtype float32, "
                                                 r"got float64; pass x.astype"):
        k(np.ones(3))


def test_a_scalar_out_of_range_names_the_parameter():
    k = pk.ElementwiseKernel("int8 x, int8 a", "int8 y", "y = x + a", "small_ints")
    x = np.zeros(4, np.int8)
    np.testing.assert_array_equal(k(x, 3), np.full(4, 3))
    with pytest.raises(pk.KernelArgumentError, match=r"argument 'a' \(int8_t\) cannot hold 300"):
        k(x, 300)  # the second call replays the first's plan, then takes the checked road
    s = pk.ReductionKernel("T x, int8 w", "T y", "x * w", "a + b", "y = a", "0", "small_w")
    assert s(np.ones(3, np.float32), 2) == 6
    with pytest.raises(pk.KernelArgumentError, match="'w'"):
        s(np.ones(3, np.float32), 1000)


def test_shapes_that_do_not_broadcast():
    k = pk.ElementwiseKernel(*SAXPY)
    with pytest.raises(ValueError, match=r"do not broadcast.*'x' \(3,\), 'y' \(4,\)"):
        k(np.ones(3, np.float32), np.ones(4, np.float32), 1.0)


def test_a_scalar_for_a_raw_or_an_output_parameter():
    k = pk.ElementwiseKernel("raw T x", "T y", "y = x[i]", "raw_scalar")
    with pytest.raises(pk.KernelTypeError, match="'x' .* raw array parameter and got the "
                                                 "scalar 2.0; pass an array"):
        k(2.0, np.zeros(3))
    with pytest.raises(pk.KernelTypeError, match="output 'y' .* got float"):
        pk.ElementwiseKernel("T x", "T y", "y = x", "out_scalar")(np.ones(3), 1.0)


def test_an_output_of_the_wrong_shape_and_an_unknown_output_type():
    k = pk.ElementwiseKernel("T x", "T y", "y = x", "copy_shape")
    with pytest.raises(ValueError, match=r"output 'y' has shape \(4,\).*\(3,\)"):
        k(np.ones(3), np.ones(4))
    k2 = pk.ElementwiseKernel("T x", "U y", "y = x", "unbound")
    with pytest.raises(pk.KernelTypeError, match="no input binds type variable U"):
        k2(np.ones(3))
    assert k2(np.ones(3), np.zeros(3, np.int32)).dtype == np.int32


def test_reduction_axis_errors():
    s = pk.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "axis_err")
    with pytest.raises(ValueError, match="axis 3 is out of bounds"):
        s(X3, axis=3)
    with pytest.raises(ValueError, match="repeated"):
        s(X3, axis=(1, -2))
    with pytest.raises(pk.KernelTypeError, match="axis must be None, an int"):
        s(X3, axis=1.5)


def test_cupy_loop_code_is_refused_not_ignored():
    with pytest.raises(pk.KernelTypeError, match="loop_prep"):
        pk.ElementwiseKernel("T x", "T y", "y = x", "looped", loop_prep="int q = 0;")


def test_bad_parameter_strings():
    with pytest.raises(pk.KernelSyntaxError, match=r"'\[raw\] TYPE NAME'"):
        pk.ElementwiseKernel("T", "T y", "y = 1", "bad_params")
    with pytest.raises(pk.KernelSyntaxError, match="cannot name a parameter"):
        pk.ReductionKernel("T a", "T y", "a", "a + b", "y = a", "0", "reserved")


def test_the_names_load_lazily():
    import subprocess
    import sys

    code = ("import sys, portakern as pk; assert 'portakern.blocks' not in sys.modules; "
            "pk.ElementwiseKernel; assert 'portakern.blocks' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_bench_rows_run_and_agree_with_numpy():
    from portakern.bench import suite

    rows, _ = suite.run(backend="CPU", quick=True, only=["elementwise_kernel",
                                                           "reduction_kernel"],
                        startup=False, progress=False)
    names = [r.name for r in rows if r.name in ("elementwise_kernel", "reduction_kernel")]
    assert names.count("elementwise_kernel") == 1 and names.count("reduction_kernel") == 4
    assert all(r.ok for r in rows if r.name in names), [r.note for r in rows]


def test_the_pyopencl_rows_run_on_the_same_queue_and_agree():
    pytest.importorskip("pyopencl.reduction", reason="PyOpenCL is the baseline of these rows")
    from portakern.bench import suite

    if not registry.backend_status("OpenCL"):
        pytest.skip(f"OpenCL backend unavailable: {registry.backend_status('OpenCL').reason}")
    rows, _ = suite.run(backend="OpenCL", quick=True, only=["elementwise_kernel",
                                                              "reduction_kernel"],
                        startup=False, progress=False)
    peer = [r for r in rows if r.baseline == "pyopencl"
            and r.name in ("elementwise_kernel", "reduction_kernel")]
    assert [r.name for r in peer] == ["elementwise_kernel"] + ["reduction_kernel"] * 2
    assert all(r.backend == "OpenCL" and r.ok for r in peer), [r.note for r in peer]
    assert all(r.seconds > 0 and r.baseline_seconds > 0 for r in peer)


# -- a CuPy user's kernel strings, as CuPy's user guide writes them, run unchanged --------
def _cupy_guide_cases():
    """(kernel, arguments, kwargs, what NumPy computes) for the guide's kinds of kernels."""
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    y = np.arange(5, dtype=np.float32)
    fixed = pk.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                 "z = (x - y) * (x - y)", "squared_diff")
    generic = pk.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)",
                                   "squared_diff_generic")
    with_local = pk.ElementwiseKernel("T x, T y", "T z", "T diff = x - y;\nz = diff * diff;",
                                      "squared_diff_local")
    branch = pk.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                  "if (x - 2 > y) {\n  z = x * y;\n} else {\n  z = x + y;\n}",
                                  "my_kernel")
    reverse = pk.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]",
                                   "add_reverse")
    l2norm = pk.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    flat = np.arange(10, dtype=np.float32)
    return [
        ("squared_diff", fixed, (x, y), {}, (x - y) ** 2),
        ("generic, a scalar", generic, (x, np.float32(5)), {}, (x - 5) ** 2),
        ("generic, float64", generic, (x.astype(np.float64), y.astype(np.float64)), {},
         (x.astype(np.float64) - y) ** 2),
        ("a local of type T", with_local, (x, y), {}, (x - y) ** 2),
        ("if/else", branch, (x, y), {}, np.where(x - 2 > y, x * y, x + y)),
        ("raw with i", reverse, (flat, flat), {}, flat + flat[::-1]),
        ("L2 norm, axis=1", l2norm, (x,), {"axis": 1}, np.sqrt((x * x).sum(axis=1))),
        ("L2 norm, all", l2norm, (x,), {}, np.sqrt((x * x).sum())),
    ]


@pytest.mark.parametrize("case", range(8), ids=lambda k: f"case{k}")
def test_cupy_guide_kernels_run_unchanged(on, case):
    label, kernel, args, kwargs, want = _cupy_guide_cases()[case]
    if np.asarray(want).dtype == np.float64 and on.name == "Metal":
        pytest.skip("Metal has no float64: such a kernel is refused there, naming the fix")
    dev = [on.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    got = np.asarray(host(on, kernel(*dev, **kwargs)))
    assert got.shape == np.shape(want), label
    assert got.dtype == np.asarray(want).dtype, label
    np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=label)


def test_pyopencl_arrays_on_a_cpu_device_reduce_the_first_axis_by_rows():
    if not registry.backend_status("OpenCL"):
        pytest.skip(f"OpenCL backend unavailable: {registry.backend_status('OpenCL').reason}")
    cl = registry.backend_by_name("OpenCL")
    cl_mod = pytest.importorskip("pyopencl")
    if not cl.device.type & cl_mod.device_type.CPU:
        pytest.skip(f"the OpenCL device {cl.device.name!r} is not a CPU")
    s = pk.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rows_first")
    forms = []
    built = s.kernel
    s.kernel = lambda form, *a: forms.append(form) or built(form, *a)
    m = RNG.random((70, 300), dtype=np.float32)
    dev = cl.to_device(m)
    np.testing.assert_allclose(host(cl, s(dev, axis=0)), m.sum(axis=0), rtol=2e-5)
    np.testing.assert_allclose(host(cl, s(dev[3:], axis=0)), m[3:].sum(axis=0), rtol=2e-5)
    assert forms and set(forms) == {"tile"}
