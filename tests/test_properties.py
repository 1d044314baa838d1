"""Property tests: random shapes, workgroup sizes and dtypes against NumPy on CPU()."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import portakern as pk

pytestmark = pytest.mark.skipif(not pk.CPU.available(),
                                reason=f"no CPU backend: {pk.CPU.available().reason}")

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


MIRROR = """\
@kernel void mirror(long* out, const long* x) {
{% set axes = range(N) | list %}
    @localmem long tile[256];
    auto [{% for d in axes %}{{ ", " if not loop.first }}g{{ d }}{% endfor %}] =
        @index(Global, NTuple);
    const long lid = @index(Local, Linear);
    const long o = @index(Global, Linear);
    const long keep = x[o] * 3;   // per-item state that must survive the barrier
    tile[lid] = x[o];
    @synchronize();
    // The work-item whose local linear index mirrors ours, in our group.
    long m = (long)@groupsize() - 1 - lid;
    bool inside = true;
    long src = 0;
{% for d in axes | reverse %}
    const long l{{ d }} = m % @groupsize({{ d }});
    m /= @groupsize({{ d }});
    const long q{{ d }} = (g{{ d }} / @groupsize({{ d }})) * @groupsize({{ d }}) + l{{ d }};
    inside = inside && q{{ d }} < @ndrange({{ d }});
{% endfor %}
    out[o] = inside ? tile[(long)@groupsize() - 1 - lid] * 1000 + keep : -1;
}
"""
MIRROR_KERNELS = {n: pk.kernel(MIRROR, N=n) for n in (1, 2, 3)}


def _mirror_expected(x: np.ndarray, wg: tuple[int, ...]) -> np.ndarray:
    shape = x.shape
    idx = np.indices(shape).reshape(len(shape), -1)
    local = idx % np.array(wg)[:, None]
    lid = np.ravel_multi_index(local, wg)
    mirror = np.array(np.unravel_index(math.prod(wg) - 1 - lid, wg))
    q = (idx // np.array(wg)[:, None]) * np.array(wg)[:, None] + mirror
    inside = (q < np.array(shape)[:, None]).all(axis=0)
    flat = x.reshape(-1)
    src = np.where(inside, np.ravel_multi_index(np.where(inside, q, 0), shape), 0)
    return np.where(inside, flat[src] * 1000 + flat * 3, -1)


@SETTINGS
@given(launch_shapes(), st.integers(0, 2**31 - 1), st.sampled_from(["auto", "opencl"]))
def test_barrier_kernel_matches_numpy_on_both_cpu_paths(shape_wg, seed, path):
    # CPU()'s native path runs this kernel as work-item loops between barriers, the
    # OpenCL path on PoCL: both must give NumPy's answer, partial groups included.
    import os

    shape, wg = shape_wg
    wg = wg or tuple(min(s, 4) for s in shape)
    x = np.random.default_rng(seed).integers(-1000, 1000, shape).astype(np.int64)
    out = np.zeros(x.size, np.int64)
    old = os.environ.get("PORTAKERN_CPU")
    os.environ["PORTAKERN_CPU"] = path
    try:
        launcher = MIRROR_KERNELS[len(shape)](pk.CPU(), wg)
        launcher(out, x, ndrange=shape)
    finally:
        if old is None:
            del os.environ["PORTAKERN_CPU"]
        else:
            os.environ["PORTAKERN_CPU"] = old
    assert (type(launcher.runner).__name__ == "NativeCPU") == (path == "auto")
    np.testing.assert_array_equal(out, _mirror_expected(x, wg))


# -- loops around barriers with group-uniform trip counts (issue 11) ---------------------------

#: Tree reductions over each group, the loop state in every form the language allows:
#: halving `s` in a while loop (updated after the barrier), in a for header, in a for loop
#: updated in its body, in a do-while (updated before the barrier), and a `width` loop that
#: works for any group size (its update reads a value declared in the loop body). With or
#: without @uniform on the loop state: either way it is group-uniform.
TREE = """\
@kernel void tree(long* partial, const long* x) {
    @localmem long buf[256];
    @uniform const long n = @ndrange();
    @uniform const long group = @index(Group, Linear);
    @uniform const long count = min((long)@groupsize(), n - group * (long)@groupsize());
    const long li = @index(Local, Linear);
    buf[li] = x[@index(Global, Linear)];
    @synchronize();
{% set U = "@uniform " if UNIFORM else "" %}
{% if LOOP == 0 %}
    {{ U }}long s = @groupsize() / 2;
    while (s > 0) {
        if (li < s && li + s < count) buf[li] += buf[li + s];
        @synchronize();
        s >>= 1;
    }
{% elif LOOP == 1 %}
    for (long s = @groupsize() / 2; s > 0; s >>= 1) {
        if (li < s && li + s < count) buf[li] += buf[li + s];
        @synchronize();
    }
{% elif LOOP == 2 %}
    for (long s = @groupsize() / 2; s > 0;) {
        if (li < s && li + s < count) buf[li] += buf[li + s];
        @synchronize();
        s = s / 2;
    }
{% elif LOOP == 3 %}
    {{ U }}long s = @groupsize();
    do {
        s /= 2;
        if (li < s && li + s < count) buf[li] += buf[li + s];
        @synchronize();
    } while (s > 1);
{% else %}
    {{ U }}long width = count;
    while (width > 1) {
        const long step = (width + 1) / 2;
        if (li + step < width) buf[li] += buf[li + step];
        @synchronize();
        width = step;
    }
{% endif %}
    if (li == 0) partial[group] = buf[0];
}
"""

#: A fixed number of rounds (a kernel argument), the counter in every form: each round
#: rotates the group's in-range values left by one. (Not named 'rotate': an OpenCL
#: built-in.)
RING = """\
@kernel void ring_shift(long* out, const long* x, int rounds) {
    @localmem long tile[256];
    @uniform const long group = @index(Group, Linear);
    @uniform const long count = min((long)@groupsize(),
                                    (long)@ndrange() - group * (long)@groupsize());
    const long li = @index(Local, Linear);
    tile[li] = x[@index(Global, Linear)];
{% set U = "@uniform " if UNIFORM else "" %}
{% if LOOP == 0 %}
    {{ U }}int k = 0;
    while (k < rounds) {
        @synchronize();
        const long v = tile[(li + 1) % count];
        @synchronize();
        tile[li] = v;
        k++;
    }
{% elif LOOP == 1 %}
    for (int k = rounds; k > 0; --k) {
        @synchronize();
        const long v = tile[(li + 1) % count];
        @synchronize();
        tile[li] = v;
    }
{% else %}
    {{ U }}int done = 0;
    do {  // at least once: a round with nothing left to do keeps the values
        @synchronize();
        const long v = done < rounds ? tile[(li + 1) % count] : tile[li];
        @synchronize();
        tile[li] = v;
        done += 1;
    } while (done < rounds);
{% endif %}
    @synchronize();
    out[@index(Global, Linear)] = tile[li];
}
"""

#: The loop forms, as the integer constants the templates branch on.
LOOP_FORMS = {"while": 0, "for": 1, "for_body": 2, "do": 3, "width": 4}

UNIFORM_LOOPS = st.one_of(
    st.tuples(st.just("tree"), st.sampled_from(["while", "for", "for_body", "do", "width"]),
              st.booleans()),
    st.tuples(st.just("ring"), st.sampled_from(["while", "for", "do"]), st.booleans()),
)


@SETTINGS
@given(UNIFORM_LOOPS, st.integers(1, 600), st.integers(0, 8), st.integers(0, 6),
       st.integers(0, 2**31 - 1), st.sampled_from(["auto", "opencl"]))
def test_loops_with_group_uniform_trip_counts_match_numpy_on_both_cpu_paths(
        kind, n, log_wg, rounds, seed, path):
    # Partial last groups included: the loop state is updated by every work-item (on the
    # native path: once per group), or PoCL hangs and the native path miscounts.
    import faulthandler
    import os

    name, loop, uniform = kind
    if loop == "width":
        wg = int(np.random.default_rng(seed).integers(1, 257))  # any size
    else:
        wg = 2 ** log_wg  # the halving trees need a power of two
    x = np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.int64)
    starts = np.arange(0, n, wg)
    kernel = pk.kernel(TREE if name == "tree" else RING, LOOP=LOOP_FORMS[loop],
                       UNIFORM=uniform)
    if name == "tree":
        out = np.zeros(len(starts), np.int64)
        args: tuple = (out, x)
        expected = np.add.reduceat(x, starts)
    else:
        out = np.zeros(n, np.int64)
        args = (out, x, np.int32(rounds))
        expected = np.concatenate([np.roll(x[g:g + wg], -rounds) for g in starts])
    old = os.environ.get("PORTAKERN_CPU")
    os.environ["PORTAKERN_CPU"] = path
    # A loop around a barrier that never ends spins in native code: end the process
    # (with every thread's stack) instead of hanging the test run.
    faulthandler.dump_traceback_later(120, exit=True)
    try:
        launcher = kernel(pk.CPU(), wg)
        launcher(*args, ndrange=n)
    finally:
        faulthandler.cancel_dump_traceback_later()
        if old is None:
            del os.environ["PORTAKERN_CPU"]
        else:
            os.environ["PORTAKERN_CPU"] = old
    assert (type(launcher.runner).__name__ == "NativeCPU") == (path == "auto")
    np.testing.assert_array_equal(out, expected)
