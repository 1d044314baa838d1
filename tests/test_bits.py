"""@bitcast(T, v), @load(T, p, offset) and @store(T, p, offset, v) on every backend
(portakern.lower.bits; docs/language.md, "Bit casts and byte-addressed loads")."""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError

BITCAST = """
@kernel void bits(uint* u, float* back, const float* x, int* s, const uint* v) {
    const long i = @index(Global, Linear);
    u[i] = @bitcast(uint, x[i]);
    back[i] = @bitcast(float, u[i] ^ 0x80000000u);
    s[i] = @bitcast(int, v[i]);
}
"""

BITCAST64 = """
@kernel void bits64(ulong* w, double* back, const double* d) {
    const long i = @index(Global, Linear);
    w[i] = @bitcast(ulong, d[i]);
    back[i] = @bitcast(double, w[i] + 1);
}
"""

BYTES = """
@kernel void bytes(float* f, uint16_t* h, ulong* q, uint8_t* out, const uint8_t* src, long off) {
    const long i = @index(Global, Linear);
    const long at = off + i * 15;
    f[i] = @load(float, src, at);
    h[i] = @load(uint16_t, src, at + 4);
    q[i] = @load(ulong, src, at + 6);
    @store(float, out, at, f[i] * 2.0f);
    @store(uint16_t, out, at + 4, h[i] + 1);
    @store(ulong, out, at + 6, q[i] ^ 0xffUL);
    out[at + 14] = src[at + 14];
}
"""


def _run(backend, kernel, arrays, scalars=(), n=None):
    dev = [backend.to_device(a) for a in arrays]
    kernel(backend)(*dev, *scalars, ndrange=n)
    backend.synchronize()
    return [backend.to_host(d) for d in dev]


def test_bitcast_reinterprets_bits(backend):
    x = np.array([1.0, -2.5, 0.0, np.inf, 3.4e38, 1e-40, np.nan, -0.0], np.float32)
    v = np.array([0, 1, 2**31, 2**32 - 1, 7, 2**31 - 1, 12345678, 99], np.uint32)
    u, back, s = np.zeros(8, np.uint32), np.zeros(8, np.float32), np.zeros(8, np.int32)
    u, back, _, s, _ = _run(backend, pk.kernel(BITCAST), [u, back, x, s, v], n=8)
    np.testing.assert_array_equal(u, x.view(np.uint32))
    np.testing.assert_array_equal(back.view(np.uint32), x.view(np.uint32) ^ np.uint32(2**31))
    np.testing.assert_array_equal(s, v.view(np.int32))


def test_bitcast_of_a_double(backend):
    if not backend.supports("float64"):
        pytest.skip(f"{backend!r} has no float64")
    d = np.array([-3.0, 0.0, 1e300, -np.inf, 5e-324, 7.25])
    w, back, _ = _run(backend, pk.kernel(BITCAST64), [np.zeros(6, np.uint64), np.zeros(6), d],
                      n=6)
    np.testing.assert_array_equal(w, d.view(np.uint64))
    np.testing.assert_array_equal(back.view(np.uint64), d.view(np.uint64) + np.uint64(1))


def test_load_and_store_at_unaligned_byte_offsets(backend):
    rng = np.random.default_rng(3)
    n, off = 6, 3  # every value starts at an odd byte
    src = rng.integers(0, 256, off + 15 * n, dtype=np.uint8)
    f, h, q = np.zeros(n, np.float32), np.zeros(n, np.uint16), np.zeros(n, np.uint64)
    out = np.zeros_like(src)
    f, h, q, out, _ = _run(backend, pk.kernel(BYTES), [f, h, q, out, src], (np.int64(off),), n)
    rec = src[off:].reshape(n, 15)
    want_f = rec[:, 0:4].copy().view(np.float32).ravel()
    np.testing.assert_array_equal(f.view(np.uint32), want_f.view(np.uint32))
    np.testing.assert_array_equal(h, rec[:, 4:6].copy().view(np.uint16).ravel())
    np.testing.assert_array_equal(q, rec[:, 6:14].copy().view(np.uint64).ravel())
    got = out[off:].reshape(n, 15)
    with np.errstate(over="ignore", invalid="ignore"):
        want2 = (want_f * np.float32(2)).astype(np.float32)
    np.testing.assert_array_equal(got[:, 0:4].copy().view(np.uint32).ravel(),
                                  want2.view(np.uint32))
    np.testing.assert_array_equal(got[:, 4:6].copy().view(np.uint16).ravel(), h + np.uint16(1))
    np.testing.assert_array_equal(got[:, 6:14].copy().view(np.uint64).ravel(),
                                  q ^ np.uint64(0xFF))
    np.testing.assert_array_equal(got[:, 14], rec[:, 14])


@pytest.mark.parametrize("form, words", [
    ("@bitcast(uint)", "takes 2 arguments"),
    ("@bitcast(T4, x[i])", "scalar type name"),
    ("@load(float, src)", "takes 3 arguments"),
])
def test_bad_forms_are_syntax_errors(form, words):
    src = ("@kernel void k(uint* y, const float* x, const uint8_t* src) {\n"
           f"    const long i = @index(Global, Linear);\n    y[i] = {form};\n}}\n")
    with pytest.raises(KernelSyntaxError, match=words):
        pk.kernel(src).render("opencl")


def test_a_pointer_cast_names_both_types_and_the_load_fix():
    src = ("@kernel void k(float* y, const uint8_t* src, long off) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    y[i] = *((const float*)(src + off));\n}\n")
    with pytest.raises(KernelSyntaxError) as info:
        pk.kernel(src)
    text = str(info.value)
    assert "'src' (uint8_t*)" in text and "const float*" in text
    assert "@load(float, src, offset)" in text
