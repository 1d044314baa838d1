"""Property tests: random shapes, workgroup sizes and dtypes against NumPy on PoCL."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import portakern as pk

pytestmark = pytest.mark.skipif(not pk.CPU.available(),
                                reason=f"no CPU OpenCL device: {pk.CPU.available().reason}")

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

ELEMENTWISE = pk.kernel("""\
@kernel void fma3(T* out, const T* a, const T* b, T s) {
    const long i = @index(Global, Linear);
    out[i] = a[i] * s + b[i] - (T)(i % 3);
}
""")

NTUPLE = """\
@kernel void coords(long* out, const T* a) {
{% set axes = "ijk"[:N] %}
    auto [{{ axes | join(", ") }}] = @index(Global, NTuple);
    const long o = @index(Global, Linear);
    long w = 1;
{% for ax in axes | reverse %}
    out[o] += w * {{ ax }};
    w *= 10;
{% endfor %}
    out[o] = out[o] * 2 + (long)a[o];
}
"""
NTUPLE_KERNELS = {n: pk.kernel(NTUPLE, N=n) for n in (1, 2, 3)}

DTYPES = st.sampled_from([np.float32, np.float64, np.int32, np.int64])


@st.composite
def launch_shapes(draw):
    """An ndrange of 1-3 axes and a workgroup shape (or None) the device accepts."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 40 if ndim > 1 else 600),
                                min_size=ndim, max_size=ndim)))
    if draw(st.booleans()):
        return shape, None
    wg = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 4, 5, 8, 16, 32]), min_size=ndim,
                             max_size=ndim)))
    while math.prod(wg) > 256:
        wg = tuple(max(1, w // 2) for w in wg)
    return shape, wg


def values(rng, dtype, shape):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-100, 100, shape).astype(dtype)
    return rng.integers(-1000, 1000, shape).astype(dtype)


@SETTINGS
@given(launch_shapes(), DTYPES, st.integers(0, 2**32 - 1))
def test_elementwise_matches_numpy(sizes, dtype, seed):
    shape, wg = sizes
    rng = np.random.default_rng(seed)
    a, b = values(rng, dtype, shape), values(rng, dtype, shape)
    s = dtype(3)
    out = np.full(shape, 77, dtype)
    ELEMENTWISE(out, a, b, s, ndrange=shape, workgroupsize=wg)
    expected = a * s + b - (np.arange(a.size) % 3).astype(dtype).reshape(shape)
    if np.dtype(dtype).kind == "f":
        # The device may fuse a * s + b (one rounding fewer than NumPy).
        tol = 1e-6 if dtype == np.float32 else 1e-14
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol * 400)
    else:
        np.testing.assert_array_equal(out, expected)


@SETTINGS
@given(launch_shapes(), DTYPES, st.integers(0, 2**32 - 1))
def test_ntuple_matches_numpy(sizes, dtype, seed):
    shape, wg = sizes
    ndim = len(shape)
    rng = np.random.default_rng(seed)
    a = values(rng, dtype, shape)
    # One row per work-item plus a padding tail: masked work-items must not write it.
    out = np.zeros(math.prod(shape) + 7, np.int64)
    NTUPLE_KERNELS[ndim](out, a, ndrange=shape, workgroupsize=wg)
    idx = np.indices(shape).reshape(ndim, -1)
    weights = 10 ** np.arange(ndim - 1, -1, -1)
    expected = 2 * (weights @ idx) + a.reshape(-1).astype(np.int64)
    np.testing.assert_array_equal(out[:-7], expected)
    np.testing.assert_array_equal(out[-7:], 0)


@SETTINGS
@given(st.integers(1, 700), st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128]),
       st.sampled_from([np.int32, np.float64]))
def test_group_reduction_matches_numpy(n, wg, dtype):
    src = """
    @kernel void block_sum(T* partial, const T* x) {
        @localmem T buf[256];
        @uniform const long n = @ndrange(0);
        const long i = @index(Global, Linear);
        const long li = @index(Local, Linear);
        buf[li] = x[i];
        @synchronize();
        // (The interleaved form, li % (2 * s) == 0, is miscompiled by PoCL 3.0.)
        for (long s = @groupsize() / 2; s > 0; s >>= 1) {
            if (li < s && i + s < n) {
                buf[li] += buf[li + s];
            }
            @synchronize();
        }
        if (li == 0) partial[@index(Group, Linear)] = buf[0];
    }"""
    x = (np.arange(n) % 17 - 8).astype(dtype)
    groups = -(-n // wg)
    partial = np.zeros(groups, dtype)
    pk.kernel(src)(partial, x, ndrange=n, workgroupsize=wg)
    np.testing.assert_array_equal(partial, np.add.reduceat(x, np.arange(0, n, wg)))
