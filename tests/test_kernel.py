"""The kernel API and the argument checks made before every launch.

Each rejected call must raise the documented error class (a ``PortakernError`` that
is also a ``TypeError``/``ValueError``), name the argument in its message, and
leave every array exactly as it was.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import portakern as pk
from portakern.errors import (
    BackendMismatchError,
    KernelArgumentError,
    KernelTypeError,
    NDRangeError,
    PortakernError,
)

SAXPY = """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

TYPED = """\
@kernel void typed(float* y, const int* x, uint8_t small, int n, float f, bool flag,
                   int64_t big, uint64_t ubig, double d) {
    const long i = @index(Global, Linear);
    y[i] = flag ? (float)(x[i] + small + n) + f : (float)(big + (long)ubig) + (float)d;
}
"""


@pytest.fixture
def saxpy():
    return pk.kernel(SAXPY)


@pytest.fixture
def typed():
    return pk.kernel(TYPED)


def typed_args(**override):
    args = dict(y=np.zeros(8, np.float32), x=np.arange(8, dtype=np.int32), small=3, n=4,
                f=0.5, flag=True, big=-2, ubig=5, d=1.5)
    args.update(override)
    return list(args.values())


@contextlib.contextmanager
def rejected(exc_type, *fragments, arrays=()):
    """Expect ``exc_type`` with every fragment in the message; arrays stay unchanged."""
    before = [np.array(a, copy=True) for a in arrays]
    with pytest.raises(exc_type) as info:
        yield info
    assert isinstance(info.value, PortakernError)
    msg = str(info.value)
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)
    for a, b in zip(arrays, before, strict=True):
        np.testing.assert_array_equal(a, b)


# -- the API ---------------------------------------------------------------------------------


def test_direct_call_resolves_backend_and_finishes(saxpy):
    y = np.ones(1000, np.float32)
    x = np.arange(1000, dtype=np.float32)
    expected = 2 * x + y
    assert isinstance(saxpy(y, x, 2.0, ndrange=y.shape), pk.Launch)  # the launch's handle
    np.testing.assert_allclose(y, expected)  # CPU() has finished on return


def test_launcher_form(saxpy):
    y = np.ones(300, np.float64)
    x = np.arange(300, dtype=np.float64)
    backend = pk.get_backend(y)
    assert backend == pk.CPU()
    launch = saxpy(backend, workgroupsize=64)
    assert isinstance(launch, pk.Launcher)
    assert "saxpy" in repr(launch)
    launch(y, x, 3.0, ndrange=y.shape)
    backend.synchronize()
    np.testing.assert_allclose(y, 3 * x + 1)
    # positional (backend, workgroupsize, ndrange)
    static = saxpy(backend, 32, (300,))
    static(y, x, 1.0)
    np.testing.assert_allclose(y, 4 * x + 1)


def test_launcher_with_static_ndrange_accepts_the_same_ndrange(saxpy):
    y = np.zeros(100, np.float32)
    launch = saxpy(pk.CPU(), 64, (100,))
    launch(y, np.ones(100, np.float32), 2.0, ndrange=(100,))
    launch(y, np.ones(100, np.float32), 2.0, ndrange=100, workgroupsize=64)
    np.testing.assert_array_equal(y, 4)


def test_kernel_properties(saxpy):
    assert saxpy.name == "saxpy"
    assert [p.name for p in saxpy.params] == ["y", "x", "a"]
    assert saxpy.type_vars == ("T",)
    assert isinstance(saxpy, pk.Kernel)
    assert pk.kernel is not pk.Kernel and callable(pk.kernel.from_file)
    assert isinstance(pk.kernel.from_resource("portakern.examples", "saxpy.pk"), pk.Kernel)


def test_type_variable_from_numpy_scalar():
    src = "@kernel void fill(U* y, U v) { y[@index(Global, Linear)] = v; }"
    k = pk.kernel(src)
    y = np.zeros(4, np.int16)
    k(y, np.int16(-7), ndrange=4)
    np.testing.assert_array_equal(y, -7)
    src = "@kernel void fill(float* y, V v) { y[@index(Global, Linear)] = (float)v; }"
    k = pk.kernel(src)
    y = np.zeros(4, np.float32)
    k(y, np.float64(0.25), ndrange=4)
    np.testing.assert_array_equal(y, 0.25)
    with rejected(KernelTypeError, "argument 1 'v'", "cannot infer V", "specialize(V=",
                  arrays=[y]):
        k(y, 0.25, ndrange=4)
    k.specialize(V="int")(y, 3, ndrange=4)
    np.testing.assert_array_equal(y, 3)


def test_scalar_conversions_accepted(typed):
    y, x = np.zeros(8, np.float32), np.arange(8, dtype=np.int32)
    typed(y, x, np.uint8(255), np.int64(-2**31), np.float64(0.1), np.bool_(True), 2**63 - 1,
          2**64 - 1, np.array(2.0), ndrange=8)
    expected = (x.astype(np.int64) + 255 - 2**31).astype(np.float32) + np.float32(0.1)
    np.testing.assert_array_equal(y, expected)


def test_each_writable_array_is_updated_in_place(typed):
    args = typed_args(flag=False)
    typed(*args, ndrange=8)
    np.testing.assert_array_equal(args[0], np.full(8, -2 + 5 + 1.5, np.float32))


# -- argument checks ------------------------------------------------------------------------


def test_wrong_count(saxpy):
    y, x = np.zeros(4, np.float32), np.ones(4, np.float32)
    with rejected(KernelTypeError, "'saxpy' takes 3 arguments", "T* y, const T* x, T a",
                  "got 2", arrays=[y, x]):
        saxpy(y, x, ndrange=4)
    with rejected(KernelTypeError, "got 4", arrays=[y, x]):
        saxpy(y, x, 1.0, 2.0, ndrange=4)
    assert issubclass(KernelTypeError, TypeError)


def test_wrong_dtype_vs_declared(typed):
    args = typed_args(x=np.arange(8, dtype=np.int64))
    with rejected(KernelTypeError, "argument 1 'x' (const int*) must have dtype int32, "
                  "got int64", arrays=args[:2]):
        typed(*args, ndrange=8)
    args = typed_args(y=np.zeros(8, np.float64))
    with rejected(KernelTypeError, "argument 0 'y' (float*)", "float32", arrays=args[:2]):
        typed(*args, ndrange=8)


def test_wrong_dtype_vs_bound_type_variable(saxpy):
    y, x = np.zeros(4, np.float32), np.ones(4, np.float64)
    with rejected(KernelTypeError, "argument 1 'x' (const T*) has dtype float64",
                  "T is already float", "argument 0 'y'", arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=4)


def test_conflicting_binding_from_specialize(saxpy):
    k = saxpy.specialize(T="float")
    y, x = np.zeros(4, np.float64), np.ones(4, np.float64)
    with rejected(KernelTypeError, "argument 0 'y'", "specialize()", arrays=[y, x]):
        k(y, x, 1.0, ndrange=4)


def test_unsupported_dtype(saxpy):
    # (complex64 is cfloat now: tests/test_complex.py)
    y, x = np.zeros(4, "datetime64[s]"), np.ones(4, "datetime64[s]")
    with rejected(KernelTypeError, "argument 0 'y'", "datetime64", arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=4)


def test_non_contiguous(saxpy):
    y = np.zeros(8, np.float32)
    x = np.ones(16, np.float32)[::2]
    with rejected(KernelArgumentError, "argument 1 'x'", "C-contiguous", arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=8)
    y2 = np.zeros((4, 2), np.float32).T
    with rejected(KernelArgumentError, "argument 0 'y'", "C-contiguous", arrays=[y2]):
        saxpy(y2, np.ones((2, 4), np.float32), 1.0, ndrange=8)
    assert issubclass(KernelArgumentError, ValueError)


def test_read_only_array_for_writable_param(saxpy):
    y, x = np.zeros(4, np.float32), np.ones(4, np.float32)
    y.setflags(write=False)
    with rejected(KernelArgumentError, "argument 0 'y' (T*) is read-only", "const T*",
                  arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=4)
    # A read-only array is fine for a const parameter.
    out = np.zeros(4, np.float32)
    x.setflags(write=False)
    saxpy(out, x, 2.0, ndrange=4)
    np.testing.assert_array_equal(out, 2)


@pytest.mark.parametrize("field, value, exc, fragments", [
    ("small", 300, KernelArgumentError, ["argument 2 'small' (uint8_t) = 300",
                                         "out of range for uint8", "[0, 255]"]),
    ("small", -1, KernelArgumentError, ["argument 2 'small'", "out of range"]),
    ("n", 2**31, KernelArgumentError, ["argument 3 'n' (int)", "out of range for int32"]),
    ("big", 2**63, KernelArgumentError, ["argument 6 'big'", "out of range for int64"]),
    ("ubig", -1, KernelArgumentError, ["argument 7 'ubig'", "out of range for uint64"]),
    ("n", 2.5, KernelTypeError, ["argument 3 'n' (int) must be an integer", "float 2.5"]),
    ("n", np.float32(3.0), KernelTypeError, ["argument 3 'n'", "must be an integer"]),
    ("n", True, KernelTypeError, ["argument 3 'n'", "must be a number", "bool"]),
    ("n", "4", KernelTypeError, ["argument 3 'n'", "must be a number", "str"]),
    ("n", None, KernelTypeError, ["argument 3 'n'", "NoneType"]),
    ("n", np.array([4]), KernelTypeError, ["argument 3 'n'", "ndarray"]),
    ("f", 2**24 + 1, KernelArgumentError, ["argument 4 'f' (float) = 16777217",
                                           "cannot be represented exactly as float32"]),
    ("f", 1e39, KernelArgumentError, ["argument 4 'f' (float) = 1e+39", "overflows float32"]),
    ("f", -1e39, KernelArgumentError, ["argument 4 'f'", "overflows float32"]),
    ("f", 10**400, KernelArgumentError, ["argument 4 'f'", "overflows float32"]),
    ("f", np.float64(1e300), KernelArgumentError, ["argument 4 'f'", "overflows"]),
    ("f", 1 + 2j, KernelTypeError, ["argument 4 'f'", "complex"]),
    ("d", 10**400, KernelArgumentError, ["argument 8 'd' (double)", "overflows float64"]),
    ("d", 2**53 + 1, KernelArgumentError, ["argument 8 'd'", "exactly as float64"]),
    ("flag", 1, KernelTypeError, ["argument 5 'flag' (bool) must be a bool", "int"]),
    ("flag", 0.0, KernelTypeError, ["argument 5 'flag'", "must be a bool"]),
])
def test_scalar_checks(typed, field, value, exc, fragments):
    args = typed_args(**{field: value})
    with rejected(exc, *fragments, arrays=args[:2]):
        typed(*args, ndrange=8)


def test_exact_large_ints_are_accepted_for_floats(typed):
    args = typed_args(f=2**24, d=2**53, flag=False, big=0, ubig=0)
    typed(*args, ndrange=8)
    np.testing.assert_array_equal(args[0], np.float32(2.0**53))


@pytest.mark.parametrize("ndrange, fragment", [
    ((1, 2, 3, 4), "4 axes; at most 3"),
    (-1, "ndrange[0] must be >= 0, got -1"),
    ((4, -2), "ndrange[1] must be >= 0"),
    (2.0, "ndrange must be an int or a tuple"),
    ((4, 2.0), "ndrange[1] must be an int"),
    ((4, True), "ndrange[1] must be an int"),
    ("8", "ndrange must be an int or a tuple"),
    (None, "pass ndrange="),
])
def test_bad_ndrange(saxpy, ndrange, fragment):
    y, x = np.zeros(8, np.float32), np.ones(8, np.float32)
    with rejected(NDRangeError, fragment, arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=ndrange)
    assert issubclass(NDRangeError, ValueError)


def test_ndrange_accepts_numpy_ints_and_lists(saxpy):
    y, x = np.zeros(8, np.float32), np.ones(8, np.float32)
    saxpy(y, x, 1.0, ndrange=np.int64(8))
    saxpy(y, x, 1.0, ndrange=[np.int32(2), 4])
    np.testing.assert_array_equal(y, 2)


def test_workgroupsize_larger_than_device_limit(saxpy):
    backend = pk.CPU()
    limit = backend.device.max_work_group_size
    y, x = np.zeros(8, np.float32), np.ones(8, np.float32)
    with rejected(NDRangeError, f"workgroupsize ({limit * 2},)", "more than",
                  "use a smaller workgroupsize", arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=8, workgroupsize=limit * 2)
    per_axis = backend.max_workitem_sizes()
    if len(per_axis) > 2 and per_axis[2] < limit:
        with rejected(NDRangeError, "workgroupsize[0]", "device limit", arrays=[y, x]):
            saxpy(y, x, 1.0, ndrange=(8, 1, 1), workgroupsize=(per_axis[2] + 1, 1, 1))


@pytest.mark.parametrize("wg, fragment", [
    ((2, 2), "workgroupsize (2, 2) has 2 axes but the ndrange has 1"),
    (0, "workgroupsize[0] must be an int >= 1, got 0"),
    ((1.5,), "workgroupsize[0] must be an int >= 1"),
    ((True,), "workgroupsize[0]"),
    ("4", 'workgroupsize must be an int, a tuple of ints or "auto"'),
])
def test_bad_workgroupsize(saxpy, wg, fragment):
    y, x = np.zeros(8, np.float32), np.ones(8, np.float32)
    with rejected(NDRangeError, fragment, arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=8, workgroupsize=wg)


def test_workgroupsize_int_fills_the_last_axis():
    src = """
    @kernel void f(long* out) {
        out[@index(Global, Linear)] = @groupsize(0) * 100 + @groupsize(1);
    }"""
    out = np.zeros(8 * 6, np.int64)
    pk.kernel(src)(out, ndrange=(8, 6), workgroupsize=3)
    np.testing.assert_array_equal(out, 1 * 100 + 3)


def test_static_vs_dynamic_conflicts(saxpy):
    launch = saxpy(pk.CPU(), 64, (100,))
    y, x = np.zeros(100, np.float32), np.ones(100, np.float32)
    with rejected(NDRangeError, "ndrange=(50,) conflicts with the static ndrange (100,)",
                  arrays=[y, x]):
        launch(y, x, 1.0, ndrange=(50,))
    with rejected(NDRangeError, "workgroupsize=(32,) conflicts with the static "
                  "workgroupsize (64,)", arrays=[y, x]):
        launch(y, x, 1.0, workgroupsize=32)
    with pytest.raises(KernelTypeError, match="returns a launcher"):
        saxpy(pk.CPU(), 64, (100,), 5)
    # A static workgroup size of the wrong rank is caught when the ndrange is known.
    with pytest.raises(NDRangeError, match="2 axes but the ndrange has 1"):
        saxpy(pk.CPU(), workgroupsize=(4, 4), ndrange=(100,))
    launch2 = saxpy(pk.CPU(), (4, 4))
    with rejected(NDRangeError, "2 axes but the ndrange has 1", arrays=[y, x]):
        launch2(y, x, 1.0, ndrange=100)


def test_launcher_needs_a_backend(saxpy):
    with pytest.raises(KernelTypeError, match="expected a portakern backend"):
        pk.Launcher(saxpy, "cpu")


def test_mixed_backends_name_each_argument(saxpy):
    cla = pytest.importorskip("pyopencl.array")
    backend = pk.OpenCL()
    y = np.zeros(8, np.float32)
    x = cla.to_device(backend.queue, np.ones(8, np.float32))
    with rejected(BackendMismatchError, "argument 0 'y'", "numpy.ndarray", "CPU()",
                  "argument 1 'x'", "pyopencl.array.Array", "OpenCL", arrays=[y]):
        saxpy(y, x, 1.0, ndrange=8)
    np.testing.assert_array_equal(x.get(), 1)
    with pytest.raises(BackendMismatchError, match="(?s)argument 0.*argument 1") as info:
        pk.get_backend(y, x)
    assert isinstance(info.value, TypeError)


def test_array_of_another_backend_with_explicit_launcher(saxpy):
    cla = pytest.importorskip("pyopencl.array")
    backend = pk.OpenCL()
    x = cla.to_device(backend.queue, np.ones(8, np.float32))
    y = np.zeros(8, np.float32)
    # The fix in the array's own library: PyOpenCL's x.get() brings it to NumPy.
    with rejected(BackendMismatchError, "argument 1 'x'", "move it with x.get()", arrays=[y]):
        saxpy(pk.CPU())(y, x, 1.0, ndrange=8)
    with rejected(BackendMismatchError, "argument 0 'y'", "backend.to_device(y) or "
                  "pyopencl.array.to_device(queue, y)", arrays=[y]):
        saxpy(backend)(y, x, 1.0, ndrange=8)


class Opaque:
    pass


def test_unknown_array_type_names_the_fix(saxpy):
    x = np.ones(4, np.float32)
    with rejected(BackendMismatchError, "argument 0 'y'", "Opaque", "pk.register_backend",
                  "__portakern_backend__", arrays=[x]):
        saxpy(Opaque(), x, 1.0, ndrange=4)
    with pytest.raises(BackendMismatchError, match="register_backend"):
        pk.get_backend(Opaque())
    with rejected(BackendMismatchError, "argument 1 'x'", "list", arrays=[x]):
        saxpy(x, [1.0, 2.0], 1.0, ndrange=4)


def test_non_array_for_array_param_on_explicit_backend(saxpy):
    y = np.zeros(4, np.float32)
    with rejected(PortakernError, "argument 1 'x'", arrays=[y]):
        saxpy(pk.CPU())(y, 3.0, 1.0, ndrange=4)


def test_no_arrays_runs_on_the_default_backend():
    src = "@kernel void f(int n) { }"
    pk.kernel(src)(3, ndrange=1)
    pk.kernel(src)(pk.CPU())(3, ndrange=1)
    with pytest.raises(KernelArgumentError, match="argument 0 'n'"):
        pk.kernel(src)(2**40, ndrange=1)


def test_float64_scalar_on_device_without_it(saxpy, monkeypatch):
    from portakern.backends.native import NativeCPU

    # Both of CPU()'s paths: the native one (elementwise kernels) and OpenCL.
    for cls in (pk.CPU, NativeCPU):
        monkeypatch.setattr(cls, "supports", lambda self, feature: feature != "float64")
    y, x = np.zeros(4), np.ones(4)
    with rejected(KernelTypeError, "argument 0 'y'", "float64", arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=4)
    src = "@kernel void f(float* y, double d) { y[0] = (float)d; }"
    y32 = np.zeros(1, np.float32)
    with rejected(KernelTypeError, "argument 1 'd'", "float64", arrays=[y32]):
        pk.kernel(src)(y32, 1.0, ndrange=1)


def test_empty_ndrange_still_checks_arguments(saxpy):
    y, x = np.zeros(4, np.float32), np.ones(4, np.float64)
    with rejected(KernelTypeError, "argument 1 'x'", arrays=[y, x]):
        saxpy(y, x, 1.0, ndrange=0)
    y, x = np.zeros(4, np.float32), np.ones(4, np.float32)
    saxpy(y, x, 1.0, ndrange=(0,))  # nothing to run, nothing written
    np.testing.assert_array_equal(y, 0)
    with rejected(KernelArgumentError, "argument 2 'a'", arrays=[y, x]):
        saxpy(y, x, 1e39, ndrange=0)


# -- the direct form's launcher table ------------------------------------------------------

_ADD1 = """@kernel void add1(T* y) { y[@index(Global, Linear)] += 1; }"""


def test_direct_calls_reuse_the_launcher_of_the_same_argument_types():
    from portakern.launch import resolve

    k = pk.kernel(_ADD1)
    y32, y64 = np.zeros(10, np.float32), np.zeros(10, np.float64)
    k(y32, ndrange=10)
    k(y32, ndrange=10)
    k(y64, ndrange=10)
    assert list(k._by_types) == [(np.ndarray,)]
    assert y32.tolist() == [2.0] * 10 and y64.tolist() == [1.0] * 10
    resolve.clear_resolution_cache()  # what a registration does
    k(y32, ndrange=10)
    assert k._by_types_generation == resolve.generation
    assert y32.tolist() == [3.0] * 10


def test_arrays_whose_type_does_not_decide_the_backend_are_resolved_each_call():
    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla

    ctx = pk.CPU().context
    q1, q2 = cl.CommandQueue(ctx), cl.CommandQueue(ctx)
    a, b = cla.zeros(q1, 8, np.float32), cla.zeros(q2, 8, np.float32)
    k = pk.kernel(_ADD1)
    k(a, ndrange=8)
    k(b, ndrange=8)
    k(b, ndrange=8)
    assert not k._by_types  # one OpenCL backend per queue: the type alone can't decide
    assert len(k._launchers) == 2
    assert a.get().tolist() == [1.0] * 8 and b.get().tolist() == [2.0] * 8


def test_zero_axis_ndrange_refuses_a_workgroupsize_other_than_1():
    k = pk.kernel("@kernel void one(float* y) { y[0] = 5; }")
    y = np.zeros(1, np.float32)
    with pytest.raises(NDRangeError, match="workgroupsize must be 1"):
        k(y, ndrange=(), workgroupsize=4)
    with pytest.raises(NDRangeError, match="workgroupsize must be 1"):
        k(pk.CPU(), 4)(y, ndrange=())
    assert y.tolist() == [0.0]
    k(y, ndrange=(), workgroupsize=1)
    assert y.tolist() == [5.0]


def test_a_0d_array_scalar_changed_in_place_is_read_again():
    # A 0-d array is mutable: the launch memo must not reuse its converted value.
    k = pk.kernel("""
@kernel void scale(float* y, const float* x, float a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i];
}""")
    y, x, a = np.zeros(4, np.float32), np.ones(4, np.float32), np.array(2.0)
    for launch in (k, k(pk.CPU())):
        for value in (2.0, 5.0, 7.0):
            a[()] = value
            launch(y, x, a, ndrange=4)
            assert y.tolist() == [value] * 4


@pytest.mark.parametrize("nd", [2**63, (4, 2**64), (0, 2**64), (2**62, 4), (2**31, 2**31, 2**2)])
def test_an_ndrange_beyond_64_bit_indices_is_an_ndrange_error(nd, monkeypatch):
    # Sizes and linear indices are int64: a larger axis or total must be refused
    # before launch (not an OverflowError from NumPy, nor a wrapped-around index).
    def launch(*args):
        raise AssertionError("launched")

    monkeypatch.setattr(pk.CPU, "launch", launch)
    k = pk.kernel("@kernel void g(float* y) { y[@index(Global, Linear)] = 1; }")
    y = np.zeros(4, np.float32)
    with pytest.raises(NDRangeError, match="ndrange"):
        k(y, ndrange=nd)
    assert y.tolist() == [0.0] * 4


def test_a_float_scalar_that_underflows_to_zero_is_refused():
    k = pk.kernel("@kernel void scale(float* y, float a) { y[@index(Global, Linear)] *= a; }")
    y = np.ones(4, np.float32)
    with pytest.raises(pk.KernelArgumentError, match=r"argument 1 'a' \(float\).*underflows"):
        k(y, 1e-50, ndrange=4)
    assert y.tolist() == [1.0] * 4
    k(y, 1e-40, ndrange=4)  # a float32 subnormal: kept, not refused
    assert y[0] == np.float32(1e-40)
    k(y, 0.0, ndrange=4)
    assert y.tolist() == [0.0] * 4


def test_a_const_array_that_overlaps_a_written_one_is_refused():
    k = pk.kernel("""@kernel void axpy(T* y, const T* x, T a) {
        const long i = @index(Global, Linear);
        y[i] += a * x[i];
    }""")
    y = np.arange(8, dtype=np.float32)
    for x in (y, y[:4], y.reshape(2, 4)):
        with pytest.raises(pk.KernelArgumentError,
                           match=r"argument 1 'x' \(const T\*\) shares memory with argument 0"):
            k(y, x, 2.0, ndrange=4)
    assert y.tolist() == list(range(8))  # nothing ran
    k(y, y.copy(), 1.0, ndrange=8)  # a copy is fine
    assert y.tolist() == [2.0 * v for v in range(8)]
    # Two read-only views of one array are fine: nothing writes them.
    k2 = pk.kernel("""@kernel void add(T* z, const T* a, const T* b) {
        const long i = @index(Global, Linear);
        z[i] = a[i] + b[i];
    }""")
    z = np.zeros(8, np.float32)
    k2(z, y, y, ndrange=8)
    assert z.tolist() == [4.0 * v for v in range(8)]


def test_from_resource_loads_a_kernel_shipped_in_a_package():
    import portakern.testing

    k = pk.kernel.from_resource("portakern.testing", "kernels/types.pk", "saxpy")
    y, x = np.ones(8, np.float32), np.arange(8, dtype=np.float32)
    k(y, x, 2.0, ndrange=8)
    np.testing.assert_array_equal(y, 2 * np.arange(8) + 1)
    # #line names the resource as <package>/<path>; a module object works as well.
    assert "\"portakern.testing/kernels/types.pk\"" in k.render("opencl")
    same = pk.kernel.from_resource(portakern.testing, "kernels/types.pk", "saxpy")
    assert same.render("cuda") == k.render("cuda")


def test_from_resource_missing_file_names_package_and_path():
    with pytest.raises(FileNotFoundError, match="'portakern.testing' has no kernel file "
                                                "'kernels/nope.pk'"):
        pk.kernel.from_resource("portakern.testing", "kernels/nope.pk")


# -- parse once (DESIGN section 7) --------------------------------------------------------
def _count_parses(monkeypatch):
    import portakern.kernels as kernels_module

    calls = []
    real = kernels_module.parse

    def counting(smap):
        calls.append(smap.rendered)
        return real(smap)

    monkeypatch.setattr(kernels_module, "parse", counting)
    return calls


def test_creating_a_kernel_parses_a_target_agnostic_source_once(monkeypatch):
    calls = _count_parses(monkeypatch)
    k = pk.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = {{ V }}; }", V=2)
    assert len(calls) == 1
    for target in ("c", "cuda", "metal", "opencl"):
        assert "y[" in k.render(target)
    assert len(calls) == 1, "rendering every target reused the one parse"


def test_a_source_that_branches_on_target_is_parsed_per_distinct_rendering(monkeypatch):
    calls = _count_parses(monkeypatch)
    pk.kernel("""@kernel void f(float* y) {
    {% if target == "cuda" %}y[@index(Global, Linear)] = 1;
    {% else %}y[@index(Global, Linear)] = 2;{% endif %}
}""")
    assert len(calls) == 2  # cuda's text, and the one text c, metal and opencl share
    assert any("= 1;" in c for c in calls) and any("= 2;" in c for c in calls)
