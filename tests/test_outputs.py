"""Arguments by parameter name, and written arrays the launch allocates and returns
(DESIGN §2a; portakern.launch.outputs)."""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelTypeError

SAXPY = """@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i];
}"""


def test_arguments_by_name_in_any_order():
    k = pk.kernel(SAXPY)
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    k(a=2.0, x=x, y=y, ndrange=x.shape)
    np.testing.assert_array_equal(y, 2 * x)
    z = np.zeros_like(x)
    k(z, a=3.0, x=x, ndrange=x.shape)  # positions first, then names
    np.testing.assert_array_equal(z, 3 * x)


def test_named_arguments_on_a_launcher(backend):
    k = pk.kernel(SAXPY)
    x = np.arange(8, dtype=np.float32)
    y = backend.to_device(np.zeros_like(x))
    k(backend)(y=y, x=backend.to_device(x), a=2.0, ndrange=x.shape)
    backend.synchronize()
    np.testing.assert_array_equal(backend.to_host(y), 2 * x)


@pytest.mark.parametrize("call, message", [
    (lambda k, x, y: k(y, x, 2.0, b=1, ndrange=8), r"has no parameter 'b'; its parameters "
                                                   r"are y, x, a"),
    (lambda k, x, y: k(y, x, 2.0, x=x, ndrange=8), r"'x' is given twice, as argument 1"),
    (lambda k, x, y: k(y, a=2.0, ndrange=8), r"no value for 'x'"),
])
def test_bad_names_are_refused_naming_the_fix(call, message):
    k = pk.kernel(SAXPY)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(KernelTypeError, match=message):
        call(k, x, np.zeros_like(x))


def test_relabelled_names_are_accepted():
    k = pk.kernel(SAXPY).relabel(x="image")
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    k(y, image=x, a=1.0, ndrange=8)
    np.testing.assert_array_equal(y, x)


def test_an_output_like_another_argument_is_allocated_and_returned(backend):
    k = pk.kernel(SAXPY)
    x = backend.to_device(np.arange(16, dtype=np.float32))
    launch = k(backend)(pk.Output(like="x"), x, 2.0, ndrange=16)
    backend.synchronize()
    assert len(launch.outputs) == 1 and launch.output is launch.outputs[0]
    np.testing.assert_array_equal(backend.to_host(launch.output), 2 * np.arange(16))
    assert type(launch.output) is type(x)  # on the inputs' backend


def test_an_output_by_name_with_its_dtype_from_the_type_variable():
    k = pk.kernel(SAXPY)
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    y = k(x=x, a=0.5, y=pk.Output((2, 3)), ndrange=(2, 3)).output
    assert y.dtype == np.float64 and y.shape == (2, 3)
    np.testing.assert_array_equal(y.reshape(-1), 0.5 * x.reshape(-1))


def test_filled_outputs_and_declared_element_types():
    k = pk.kernel("""@kernel void count(int* bins, const int* x) {
    @atomic_add(&bins[x[@index(Global, Linear)]], 1);
}""")
    x = np.array([0, 1, 1, 3, 3, 3], np.int32)
    bins = k(pk.Output(4, fill=0), x, ndrange=x.shape).output
    assert bins.dtype == np.int32
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=4))


@pytest.mark.parametrize("spec, message", [
    (lambda: pk.Output(like="nope"), r"like='nope'\) for 'y' names no parameter"),
    (lambda: pk.Output(like="a"), r"needs an array passed for 'a'"),
])
def test_bad_outputs_are_refused(spec, message):
    k = pk.kernel(SAXPY)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(KernelTypeError, match=message):
        k(spec(), x, 2.0, ndrange=8)


def test_only_written_arrays_can_be_allocated():
    k = pk.kernel(SAXPY)
    with pytest.raises(KernelTypeError, match=r"only a written array parameter"):
        k(np.zeros(8, np.float32), pk.Output(8, np.float32), 2.0, ndrange=8)
    with pytest.raises(KernelTypeError, match="needs a shape, or like="):
        pk.Output()


def test_a_python_scalar_for_an_array_names_the_parameter():
    k = pk.kernel(SAXPY)
    with pytest.raises(KernelTypeError, match=r"argument 1 'x' \(const T\*\) expects an array"):
        k(np.zeros(8, np.float32), 2.0, 2.0, ndrange=8)


def test_the_api_doc_example_runs_as_written():
    from conftest import _doc_blocks

    (block,) = [text for lang, text in _doc_blocks("api.md")
                if lang == "python" and "pk.Output" in text]
    exec(compile(block, "docs/api.md", "exec"), {})  # noqa: S102
