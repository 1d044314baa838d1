"""``@localmem`` arrays sized at launch (DESIGN §1a "Sizes chosen at launch", issue 25 item 2):
a size that reads scalar parameters and ``@groupsize`` works on every backend (dynamic shared
memory on CUDA, a ``__local`` argument on OpenCL, a variant per size on Metal, a per-group
allocation natively), is checked against ``backend.limits.local_memory`` before launch, and
anything else in a size is a ``KernelSyntaxError`` at ``pk.kernel()``."""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError, LaunchError

#: A row softmax: one group per row; ``scratch`` holds each work-item's partial maximum,
#: then its partial sum (``2 * parts`` floats, sized by a parameter), and ``stats`` the
#: row's maximum and sum (sized by ``@groupsize``, which no declaration fixes).
SOFTMAX = """
@kernel void softmax(float* y, const float* x, long cols, long parts) {
    @localmem float scratch[parts * 2];
    @localmem float stats[@groupsize(0) / @groupsize(0) + 1];
    long row = @index(Group, Linear);
    long l = @index(Local, Linear);
    float m = -FLT_MAX;
    for (long c = l; c < cols; c += parts) m = fmax(m, x[row * cols + c]);
    scratch[l] = m;
    @synchronize();
    if (l == 0) {
        float best = scratch[0];
        for (long k = 1; k < parts; ++k) best = fmax(best, scratch[k]);
        stats[0] = best;
    }
    @synchronize();
    float s = 0.0f;
    for (long c = l; c < cols; c += parts) s += exp(x[row * cols + c] - stats[0]);
    scratch[parts + l] = s;
    @synchronize();
    if (l == 0) {
        float total = 0.0f;
        for (long k = 0; k < parts; ++k) total += scratch[parts + k];
        stats[1] = total;
    }
    @synchronize();
    for (long c = l; c < cols; c += parts)
        y[row * cols + c] = exp(x[row * cols + c] - stats[0]) / stats[1];
}
"""


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _run(backend, kernel, x: np.ndarray, parts: int) -> np.ndarray:
    rows, cols = x.shape
    y = backend.to_device(np.zeros(rows * cols, np.float32))
    xd = backend.to_device(np.ascontiguousarray(x).ravel())
    kernel(y, xd, cols, parts, ndrange=(rows * parts,), workgroupsize=parts)
    backend.synchronize()
    return backend.to_host(y).reshape(rows, cols)


def test_softmax_scratch_sized_by_a_parameter(backend):
    rng = np.random.default_rng(25)
    x = rng.standard_normal((6, 53)).astype(np.float32)
    got = _run(backend, pk.kernel(SOFTMAX), x, 16)
    np.testing.assert_allclose(got, _softmax(x), rtol=1e-5, atol=1e-6)


def test_two_sizes_in_two_launches_of_one_kernel(backend):
    """The same kernel (one compile on CUDA, OpenCL and natively) launched with two sizes."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 40)).astype(np.float32)
    kernel = pk.kernel(SOFTMAX)
    for parts in (4, 32):
        got = _run(backend, kernel, x, parts)
        np.testing.assert_allclose(got, _softmax(x), rtol=1e-5, atol=1e-6,
                                   err_msg=f"parts={parts}")


def test_launch_over_the_local_memory_limit_is_refused(backend):
    limit = backend.limits.local_memory
    # 2 * parts floats: more than the limit, and more than either of CPU()'s paths allows
    # (its limits are the smaller of the two; each path checks its own).
    parts = (limit + (64 << 20)) // 8 + 1
    kernel = pk.kernel(SOFTMAX)
    y = backend.to_device(np.zeros(4, np.float32))
    x = backend.to_device(np.zeros(4, np.float32))
    with pytest.raises(LaunchError) as info:
        kernel(y, x, 1, parts, ndrange=(4,), workgroupsize=4)
        backend.synchronize()
    msg = str(info.value)
    assert "'scratch'" in msg and "'stats'" in msg, msg
    assert f"{2 * parts} elements" in msg, msg
    assert "bytes" in msg and "backend.limits.local_memory" in msg, msg


@pytest.mark.parametrize(("size", "word"), [
    ("i * 2", "'i'"),           # a variable of the body
    ("x[0]", "'x'"),            # an array parameter
    ("@index(Global, Linear)", "'@index'"),
])
def test_a_size_reading_anything_else_is_a_syntax_error(size, word):
    src = ("@kernel void f(float* y, const float* x, long n) {\n"
           "    long i = 1;\n"
           f"    @localmem float buf[{size}];\n"
           "    y[0] = buf[0];\n}\n")
    with pytest.raises(KernelSyntaxError, match=f"{word} is none of these") as info:
        pk.kernel(src)
    assert info.value.lineno == 3


def test_a_define_in_a_launch_size_says_to_use_a_jinja_constant():
    src = ("#define W 4\n"
           "@kernel void f(float* y, long n) {\n"
           "    @localmem float buf[W * n];\n"
           "    y[0] = buf[0];\n}\n")
    with pytest.raises(KernelSyntaxError, match=r"#define 'W'.*\{\{ W \}\}"):
        pk.kernel(src).render("opencl")


def test_constant_sizes_still_render_as_arrays():
    """A constant size keeps its static declaration; only sizes read at launch change."""
    k = pk.kernel("@kernel void f(float* y, long n) {\n"
                  "    @localmem float a[16];\n"
                  "    @localmem float b[n + 1];\n"
                  "    y[0] = a[0] + b[0];\n}\n")
    cuda, opencl = k.render("cuda"), k.render("opencl")
    assert "__shared__ float a[16];" in cuda and "extern __shared__" in cuda
    assert "__local float a[16];" in opencl and "__local uchar* pk_local" in opencl


def test_debug_mode_runs_launch_sized_arrays(backend):
    """Debug mode's checks of @localmem subscripts read the size the launch chose."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 19)).astype(np.float32)
    got = _run(backend, pk.kernel(SOFTMAX, debug=True), x, 8)
    np.testing.assert_allclose(got, _softmax(x), rtol=1e-5, atol=1e-6)


def test_metal_sizes_are_template_constants():
    """MLX cannot size threadgroup memory at launch: the count is a template constant."""
    metal = pk.kernel(SOFTMAX).render("metal")
    assert "threadgroup float scratch[pk_local_scratch];" in metal


def test_portakern_check_passes_on_every_target(tmp_path):
    """``portakern check`` compiles each target's rendering (Metal: the variant of one
    element, standalone and as MLX wraps it), as for any kernel."""
    from portakern.cli.main import main

    path = tmp_path / "softmax.pk"
    path.write_text(SOFTMAX, encoding="utf-8")
    assert main(["check", str(path)]) == 0
