"""The CUDA stand-in itself (portakern.emulate.cupy): that it executes the CUDA rendering
with CUDA's semantics, and reports what a GPU would silently get wrong.

The GPU tests of tests/test_cuda.py and the conformance suite run through it where there
is no GPU (tests/conftest.py); these tests check the stand-in's own promises.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import REAL_CUDA

import portakern as pk
from portakern.errors import LaunchError

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(REAL_CUDA, reason="checks the CPU stand-in, which a GPU replaces"),
]

RAW = """
extern "C" __global__ void scale(float* y, const float a, const long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}
"""


@pytest.fixture
def cp(_cuda_standin):
    return _cuda_standin


def test_raw_kernel_runs_with_cupys_launch_semantics(cp):
    kernel = cp.RawModule(code=RAW).get_function("scale")
    y = cp.arange(1000, dtype=cp.float32)
    # grid in blocks, block in threads: 4 blocks of 256 cover 1000 elements.
    kernel((4,), (256,), (y, np.float32(3.0), 1000))
    np.testing.assert_array_equal(cp.asnumpy(y), 3 * np.arange(1000, dtype=np.float32))
    kernel((1,), (256,), (y, np.float32(0.0), 1000))  # one block: only the first 256
    got = cp.asnumpy(y)
    assert (got[:256] == 0).all() and (got[256:] == 3 * np.arange(256, 1000)).all()


@pytest.mark.parametrize("value, what", [(3.0, "8-byte Python float"),
                                         (np.float64(3.0), "8-byte numpy.float64"),
                                         (3, "8-byte Python int")])
def test_scalar_of_the_wrong_size_is_refused(cp, value, what):
    kernel = cp.RawModule(code=RAW).get_function("scale")
    y = cp.ones(8, cp.float32)
    with pytest.raises(TypeError, match=f"argument 1 .*{what}.*4-byte value"):
        kernel((1,), (8,), (y, value, 8))
    assert (cp.asnumpy(y) == 1).all()  # nothing ran


def test_python_int_is_int64_and_argument_count_is_checked(cp):
    kernel = cp.RawModule(code=RAW).get_function("scale")
    y = cp.ones(8, cp.float32)
    kernel((1,), (8,), (y, np.float32(2), 8))  # a Python int fills `long long n`
    assert (cp.asnumpy(y) == 2).all()
    with pytest.raises(TypeError, match="takes 3 parameters, the launch passed 2"):
        kernel((1,), (8,), (y, np.float32(2)))
    with pytest.raises(TypeError, match="argument 0 .*8-byte Python int.*a pointer"):
        kernel((1,), (8,), (7, np.float32(2), 8))


@pytest.mark.parametrize("grid, block", [((1,), (1025,)), ((1,), (1, 1, 65)),
                                         ((1, 65536), (1,)), ((1, 1, 65536), (1,))])
def test_driver_launch_limits(cp, grid, block):
    kernel = cp.RawModule(code=RAW).get_function("scale")
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="CUDA_ERROR_INVALID_VALUE"):
        kernel(grid, block, (cp.ones(1, cp.float32), np.float32(1), 1))


def test_compile_error_is_cupys_compile_exception(cp):
    with pytest.raises(cp.cuda.compiler.CompileException, match="nope"):
        cp.RawModule(code='extern "C" __global__ void k(float* y) { y[0] = nope; }'
                     ).get_function("k")


def test_arrays_refuse_implicit_numpy_conversion(cp):
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(cp.zeros(3, cp.float32))


DIVERGE = """
@kernel void diverge(float* y) {
    const long i = @index(Global, Linear);
{% if target == "cuda" %}
    if (threadIdx.x < 5) { __syncthreads(); }
{% endif %}
    y[i] = 1;
}
"""


def test_divergent_barrier_is_a_launch_error_naming_kernel_and_line(cp):
    y = cp.zeros(64, cp.float32)
    with pytest.raises(LaunchError, match=r"divergent barrier in kernel 'diverge'.*:5\b"):
        pk.kernel(DIVERGE)(y, ndrange=64, workgroupsize=32)


UNWRITTEN = """
@kernel void unwritten(float* y) {
    @localmem float tile[64];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    if (l > 0) { tile[l] = 1.0f; }
    @synchronize();
    y[i] = tile[(l + 1) % @groupsize()];
}
"""


def test_shared_memory_is_poisoned_before_each_block(cp):
    # Work-item 0 of each group never writes tile[0]; whoever reads it sees the poison
    # (NaN), in every block, not a zero or the previous block's value.
    y = cp.zeros(256, cp.float32)
    pk.kernel(UNWRITTEN)(y, ndrange=256, workgroupsize=64)
    got = cp.asnumpy(y).reshape(4, 64)
    assert np.isnan(got[:, 63]).all()
    assert (got[:, :63] == 1).all()


GROUPS = """
@kernel void groups(long* out) {
    out[@index(Global, Linear)] = @index(Group, Linear) * 1000 + @index(Local, Linear);
}
"""


def test_a_broken_cuda_template_fails_on_the_stand_in(cp, clean_registry, tmp_path: Path):
    """The stand-in executes the CUDA templates: a reversed group id is a wrong result."""
    from portakern.render import emit as render

    n, wg = 1000, 100
    want = (np.arange(n) // wg) * 1000 + np.arange(n) % wg
    out = cp.zeros(n, cp.int64)
    pk.kernel(GROUPS)(out, ndrange=n, workgroupsize=wg)
    np.testing.assert_array_equal(cp.asnumpy(out), want)

    original = (render.template_dirs()[-1] / "cuda" / "macros.j2").read_text()
    good = '{% macro group_id(axis) %}((long long)blockIdx.{{ "xyz"[axis] }}){% endmacro %}'
    assert good in original
    mutated = original.replace(good, '{% macro group_id(axis) %}((long long)(gridDim.'
                               '{{ "xyz"[axis] }} - 1 - blockIdx.{{ "xyz"[axis] }})){% endmacro %}')
    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda" / "macros.j2").write_text(mutated)
    render.add_template_dir(tmp_path)
    out = cp.zeros(n, cp.int64)
    pk.kernel(GROUPS + "// mutated\n")(out, ndrange=n, workgroupsize=wg)
    got = cp.asnumpy(out)
    assert (got != want).all()  # with 10 groups reversed, none stays in place


def test_docs_example_runs(run_doc):
    run_doc("emulation.md")


def test_a_view_passes_the_address_of_its_first_element(cp):
    kernel = cp.RawModule(code=RAW).get_function("scale")
    y = cp.arange(100, dtype=cp.float32)
    view = y[30:60]
    assert view.data.ptr == y.data.ptr + 30 * 4
    kernel((1,), (32,), (view, np.float32(2.0), 30))
    want = np.arange(100, dtype=np.float32)
    want[30:60] *= 2
    np.testing.assert_array_equal(cp.asnumpy(y), want)


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)])
def test_empty_is_poisoned_and_takes_every_shape(cp, shape):
    # cupy.empty gives uninitialised memory; the stand-in fills it with 0xA5 bytes so a
    # kernel that reads what it never wrote shows it. A 0-d array is a shape too.
    a = cp.empty(shape, cp.float32)
    assert a.shape == shape
    got = cp.asnumpy(a)
    assert got.shape == shape
    assert (got.reshape(-1).view(np.uint8) == 0xA5).all()
