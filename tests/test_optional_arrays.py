"""Optional array parameters ``const T* mask = null`` (DESIGN section 1a, "Optional arrays").

A launch may pass None for one; the kernel tests ``if (mask)``. A ggml-like softmax
with an optional additive mask is run with and without the mask on every backend and
compared with NumPy; None for a parameter without ``= null`` is refused.
"""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelArgumentError, KernelSyntaxError, KernelTypeError

#: ggml's soft_max: out = softmax(x * scale + mask) per row, the mask optional.
SOFTMAX = """
@kernel void softmax(T* out, const T* x, const T* mask = null, long n, T scale) {
    const long row = @index(Global, Linear);
    T m = -INFINITY;
    for (long j = 0; j < n; j++) {
        T v = x[row * n + j] * scale;
        if (mask) v += mask[row * n + j];
        m = fmax(m, v);
    }
    T s = 0;
    for (long j = 0; j < n; j++) {
        T v = x[row * n + j] * scale;
        if (mask) v += mask[row * n + j];
        s += exp(v - m);
    }
    for (long j = 0; j < n; j++) {
        T v = x[row * n + j] * scale;
        if (mask) v += mask[row * n + j];
        out[row * n + j] = exp(v - m) / s;
    }
}
"""


def _softmax(x: np.ndarray, mask: np.ndarray | None, scale: float) -> np.ndarray:
    v = x * scale + (0 if mask is None else mask)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _launch(backend, k, x, mask, scale=0.5):
    rows, n = x.shape
    out = backend.zeros((rows, n), np.float32)
    k(backend)(out, backend.to_device(x), None if mask is None else backend.to_device(mask),
               np.int64(n), np.float32(scale), ndrange=rows)
    backend.synchronize()
    return backend.to_host(out)


def test_softmax_with_and_without_the_mask(backend):
    rows, n = 6, 16
    x = np.random.default_rng(1).standard_normal((rows, n)).astype(np.float32)
    causal = np.where(np.arange(n) > np.arange(rows)[:, None], -np.inf, 0).astype(np.float32)
    k = pk.kernel(SOFTMAX)
    masked = _launch(backend, k, x, causal)
    np.testing.assert_allclose(masked, _softmax(x, causal, 0.5), rtol=1e-5, atol=1e-6)
    assert np.all(masked[causal == -np.inf] == 0)
    plain = _launch(backend, k, x, None)
    np.testing.assert_allclose(plain, _softmax(x, None, 0.5), rtol=1e-5, atol=1e-6)
    assert np.all(plain > 0)
    # The same launcher again, with the mask and then without (a remembered call each).
    np.testing.assert_allclose(_launch(backend, k, x, causal), masked, rtol=1e-6)
    np.testing.assert_allclose(_launch(backend, k, x, None), plain, rtol=1e-6)


def test_optional_output_array(backend):
    """A writable optional array: the kernel writes it only where one is given."""
    k = pk.kernel("""
@kernel void twice(float* y, const float* x, long* count = null) {
    const long i = @index(Global, Linear);
    y[i] = 2 * x[i];
    if (count) count[i] = i;
}
""")
    x = backend.to_device(np.arange(8, dtype=np.float32))
    y = backend.zeros(8, np.float32)
    if backend.name == "Metal":  # a written array is an MLX output of its own
        with pytest.raises(KernelArgumentError, match=r"argument 2 'count' \(long\*\) is "
                                                      r"None, which MLX cannot pass to a "
                                                      r"written array"):
            k(y, x, None, ndrange=8)
        return
    k(y, x, None, ndrange=8)
    backend.synchronize()
    np.testing.assert_array_equal(backend.to_host(y), 2 * np.arange(8))
    c = backend.zeros(8, np.int64)
    k(y, x, c, ndrange=8)
    backend.synchronize()
    np.testing.assert_array_equal(backend.to_host(c), np.arange(8))


def test_none_for_a_required_array_names_the_fix():
    k = pk.kernel("""
@kernel void f(float* y, const float* x) { y[@index(Global, Linear)] = x[0]; }
""")
    with pytest.raises(KernelTypeError,
                       match=r"argument 1 'x' \(const float\*\) is None.*declare it "
                             r"'const float\* x = null'"):
        k(np.zeros(4, np.float32), None, ndrange=4)
    with pytest.raises(KernelTypeError, match=r"argument 1 'x' \(const float\*\) is None"):
        k(pk.CPU())(np.zeros(4, np.float32), None, ndrange=4)


def test_a_type_variable_only_a_none_binds_is_an_error():
    k = pk.kernel("""
@kernel void f(float* y, const U* w = null) {
    const long i = @index(Global, Linear);
    y[i] = w ? (float)w[i] : 1.0f;
}
""")
    with pytest.raises(KernelTypeError, match=r"'w' \(const U\*\) is None, so it cannot bind "
                                              r"U.*specialize\(U='float'\)"):
        k(np.zeros(4, np.float32), None, ndrange=4)
    y = np.zeros(4, np.float32)
    k.specialize(U="int")(y, None, ndrange=4)
    np.testing.assert_array_equal(y, 1)


@pytest.mark.parametrize("param, match", [
    ("float a = null", r"only an array parameter may default to null"),
    ("const float* m = 0", r"only default is '= null'"),
    ("const float m[:, :] = null", r"'= null' is for flat array parameters"),
])
def test_bad_defaults(param, match):
    with pytest.raises(KernelSyntaxError, match=match):
        pk.Kernel(f"@kernel void f(float* y, {param}) {{ }}").render("opencl")


def test_the_parameter_is_optional():
    k = pk.Kernel("@kernel void f(float* y, const float* m = null) { }")
    assert [p.optional for p in k.signature] == [False, True]


def test_mlx_translation_unit_passes_the_metal_check():
    """MLX's kernel for the softmax (the stand-in input and the flag) compiles as Metal."""
    from portakern.backends import _mlx
    from portakern.checks.metal import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(why)
    k = pk.Kernel(SOFTMAX)
    rendered = k.rendered("metal", {"T": "float"}, 1)
    program = _mlx.build_program(rendered, "metal")
    names = [s.name for s in program.inputs]
    assert "pk_opt_mask" in names and "pk_has_mask" in names and "mask" not in names
    assert "auto mask = pk_has_mask ? pk_opt_mask : nullptr;" in program.source
    check_metal(_mlx.translation_unit(program, {"T": "float"}), sources=rendered.sources())
