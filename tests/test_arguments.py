"""Argument errors name where a type came from, and the caller's names (``relabel``)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import portakern as pk

AXPBY = """
@kernel void axpby(T* y, const T* x, T alpha, T beta) {
    const long i = @index(Global, Linear);
    y[i] = alpha * x[i] + beta * y[i];
}"""
BLUR = """
@kernel void blur(T* dst, const T* src) {
    const long i = @index(Global, Linear);
    dst[i] = src[i];
}"""


def test_refused_scalar_says_which_argument_bound_its_type():
    k = pk.kernel(AXPBY)
    y, x = np.ones(8, np.int32), np.arange(8, dtype=np.int32)
    with pytest.raises(pk.KernelTypeError) as info:
        k(y, x, 2, 1.0, ndrange=8)
    assert str(info.value).startswith(
        "argument 3 'beta' (T; T is int32, bound by argument 0 'y') must be an integer, "
        "got float 1.0")
    # The same refusal after a good call (the remembered-arguments path) says it too.
    k(y, x, 2, 1, ndrange=8)
    with pytest.raises(pk.KernelTypeError, match=r"T is int32, bound by argument 0 'y'"):
        k(y, x, 2, 1.0, ndrange=8)
    np.testing.assert_array_equal(y, 2 * x + 1)  # the refused calls wrote nothing


def test_declared_scalar_types_have_no_binding_to_name():
    k = pk.kernel("@kernel void f(int* y, int n) { y[@index(Global, Linear)] = n; }")
    with pytest.raises(pk.KernelTypeError) as info:
        k(np.zeros(4, np.int32), 1.5, ndrange=4)
    assert str(info.value).startswith("argument 1 'n' (int) must be an integer")


def test_relabel_names_arguments_as_the_caller_does():
    blur = pk.kernel(BLUR).relabel(src="image", dst="out")
    out, image = np.zeros(16, np.float32), np.arange(16, dtype=np.float64)
    with pytest.raises(pk.KernelTypeError) as info:
        blur(out, image, ndrange=out.shape)
    # The message docs/api.md shows, then where the parameter is declared.
    assert str(info.value).splitlines() == [
        "argument 'image' (const T*) has dtype float64, but T is already float (float32) "
        "from argument 'out'",
        "  File \"<kernel source>\", line 2, in kernel 'blur', parameter 'src'",
        "    @kernel void blur(T* dst, const T* src) {"]
    assert (info.value.filename, info.value.lineno) == ("<kernel source>", 2)
    with pytest.raises(pk.KernelArgumentError, match=r"^argument 'image' \(const T\*\) "
                       r"shares memory with argument 'out' \(T\*\)"):
        blur(out, out, ndrange=out.shape)
    with pytest.raises(pk.BackendMismatchError, match=r"^argument 'out' has type builtins.list"):
        blur([0.0], image, ndrange=1)
    with pytest.raises(pk.KernelTypeError, match=r"^argument 'out' \(T\*\) must be an array"):
        blur(pk.CPU())([0.0], image, ndrange=1)
    k = pk.kernel(AXPBY).relabel(beta="scale")
    with pytest.raises(pk.KernelTypeError, match=r"^argument 'scale' \(T; T is int32, bound "
                                                 r"by argument 0 'y'\)"):
        k(np.ones(4, np.int32), np.ones(4, np.int32), 1, 0.5, ndrange=4)
    blur(out, image.astype(np.float32), ndrange=out.shape)  # and it still runs
    np.testing.assert_array_equal(out, image)


def test_relabel_is_kept_by_specialize_and_pickle_and_checks_names():
    base = pk.kernel(BLUR)
    blur = base.relabel(src="image")
    assert base.labels == {} and blur.labels == {"src": "image"}
    assert blur.specialize(T="float").labels == {"src": "image"}
    assert pickle.loads(pickle.dumps(blur)).labels == {"src": "image"}
    with pytest.raises(pk.KernelTypeError, match=r"no parameter 'source' to relabel; its "
                                                 r"parameters are dst, src"):
        base.relabel(source="image")
    with pytest.raises(pk.KernelTypeError, match="non-empty str"):
        base.relabel(src="")


# -- the fix, in the array's own library ----------------------------------------------------

class _Duck:
    """An array of some library (by its type's module), as a backend describes it."""

    def __init__(self, dtype=np.float32, contiguous=True):
        self.dtype, self.contiguous = np.dtype(dtype), contiguous


def _duck_of(library: str) -> type:
    return type("Array", (_Duck,), {"__module__": library})


class _DuckBackend:
    """What check_args asks of a backend: each array's description, and features."""

    name = "Duck"

    def array_info(self, a):
        from portakern.backends.base import ArrayInfo

        if not isinstance(a, _Duck):
            return None
        return ArrayInfo(a.dtype, (8,), a.contiguous, True, object())

    def supports(self, feature):
        return False

    def __repr__(self):
        return "Duck()"


COPY = pk.kernel("@kernel void copy(float* dst,\n  const float* src) {\n"
                 "  dst[@index(Global, Linear)] = src[@index(Global, Linear)]; }")


@pytest.mark.parametrize("library, contiguous, astype", [
    ("numpy", "numpy.ascontiguousarray(src)", "src.astype(numpy.float32)"),
    ("cupy._core.core", "cupy.ascontiguousarray(src)", "src.astype(cupy.float32)"),
    ("mlx.core", "mx.contiguous(src)", "src.astype(mx.float32), or make it with "
                                       "mx.array(..., dtype=mx.float32)"),
    ("torch", "src.contiguous()", "src.to(torch.float32)"),
    ("pyopencl.array", "pyopencl.array.to_device(src.queue, numpy.ascontiguousarray("
                       "src.get()))", "src.astype(numpy.float32)"),
])
def test_fixes_are_named_in_the_arrays_own_library(library, contiguous, astype):
    from portakern.launch.arguments import check_args

    kdef = COPY.parsed("opencl")[1]
    array = _duck_of(library)
    backend = _DuckBackend()
    with pytest.raises(pk.KernelArgumentError) as info:
        check_args(kdef, (array(), array(contiguous=False)), backend, {},
                   source=COPY.template)
    assert f"must be C-contiguous; pass a contiguous copy ({contiguous})" in str(info.value)
    assert info.value.lineno == 2  # the declaration of 'src'
    if library.startswith(("cupy", "mlx", "torch")):
        assert "numpy." not in str(info.value)
    with pytest.raises(pk.KernelTypeError) as info:
        check_args(kdef, (array(), array(np.float64)), backend, {})
    assert str(info.value) == (f"argument 1 'src' (const float*) must have dtype float32, got "
                               f"float64; convert it ({astype})")
    assert info.value.filename is None  # no source given: no place invented


def test_a_feature_the_backend_lacks_is_converted_in_its_own_library():
    from portakern.launch.arguments import check_args

    k = pk.kernel("@kernel void f(T* y) { y[@index(Global, Linear)] = 1; }")
    array = _duck_of("mlx.core")
    with pytest.raises(pk.KernelTypeError, match=r"is float64, which Duck\(\) does not "
                                                 r"support; convert it \(y.astype\(mx.float32\)"):
        check_args(k.parsed("opencl")[1], (array(np.float64),), _DuckBackend(), {})


def test_an_array_of_another_backend_says_how_to_move_it():
    torch = pytest.importorskip("torch")
    y = torch.zeros(8)
    with pytest.raises(pk.BackendMismatchError, match=r"move it with dst.numpy\(\) or launch"):
        COPY(pk.CPU())(y, np.zeros(8, np.float32), ndrange=8)
