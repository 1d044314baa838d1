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
