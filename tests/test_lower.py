"""Lowering semantics, executed on PoCL and compared with NumPy.

Index arithmetic (row-major, last axis fastest), sizes, partial last workgroups,
implicit bounds masking that keeps barriers convergent, ``unsafe_indices``,
``@private``/``@uniform``, atomics, 0-axis and empty ndranges, Jinja constants.
The shared ``backend`` fixture (``conftest.py``) runs each test on every backend
available here: ``CPU()`` with NumPy arrays and ``OpenCL`` with PyOpenCL arrays on
PoCL, plus CUDA and Metal where a GPU is present.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import portakern as pk
from portakern.lower.lowering import Call, Gen, lower_kernel
from portakern.render.emit import KernelTemplate


def needs(backend, dtype, atomic=False):
    """Skip (with the reason) where the device lacks 64-bit types or atomics."""
    dtype = np.dtype(dtype)
    if dtype == np.float64 and not backend.supports("float64"):
        pytest.skip(f"{backend!r} has no float64")
    if atomic and dtype.itemsize == 8 and not backend.supports("int64_atomics"):
        pytest.skip(f"{backend!r} has no 64-bit atomics")


def launch(backend, kernel, *args, **kw):
    """Run ``kernel`` on ``backend`` with NumPy inputs; return the arrays as NumPy."""
    dev = [backend.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel(*dev, **kw)
    backend.synchronize()
    return [backend.to_host(d) if isinstance(a, np.ndarray) else None
            for a, d in zip(args, dev, strict=True)]


# -- indices -------------------------------------------------------------------------

INDEX_SOURCE = """\
@kernel void idx(long* g, long* loc, long* gr, long* lin, long* sizes) {
{% set axes = "ijk"[:N] %}
    auto [{{ axes | join(", ") }}] = @index(Global, NTuple);
{% set lnames %}{% for a in axes %}l{{ a }}{{ ", " if not loop.last }}{% endfor %}{% endset %}
{% set gnames %}{% for a in axes %}g{{ a }}{{ ", " if not loop.last }}{% endfor %}{% endset %}
    auto [{{ lnames }}] = @index(Local, NTuple);
    auto [{{ gnames }}] = @index(Group, NTuple);
    const long o = @index(Global, Linear);
    long check = 0;
{% for a in axes %}
    check = check * @ndrange({{ loop.index0 }}) + {{ a }};
{% endfor %}
    lin[o] = check == o ? o : -1 - o;
{% for a in axes %}
    g[{{ N }} * o + {{ loop.index0 }}] = {{ a }};
    loc[{{ N }} * o + {{ loop.index0 }}] = l{{ a }};
    gr[{{ N }} * o + {{ loop.index0 }}] = g{{ a }};
{% endfor %}
    sizes[4 * o + 0] = @ndrange();
    sizes[4 * o + 1] = @groupsize();
    sizes[4 * o + 2] = @index(Local, Linear);
    sizes[4 * o + 3] = @index(Group, Linear);
}
"""


def local_linear(idx, wg):
    out = np.zeros(len(idx), np.int64)
    for d, w in enumerate(wg):
        out = out * w + idx[:, d]
    return out


@pytest.mark.parametrize("shape, wg", [
    ((10,), (4,)),
    ((64,), (64,)),
    ((3, 5), (2, 4)),
    ((7, 9), (1, 8)),
    ((2, 3, 5), (2, 2, 4)),
    ((3, 1, 6), (1, 1, 4)),
])
def test_index_locales_and_kinds(backend, shape, wg):
    k = pk.kernel(INDEX_SOURCE, N=len(shape))
    n = int(np.prod(shape))
    d = len(shape)
    g, loc, gr = (np.full((n, d), -7, np.int64) for _ in range(3))
    lin = np.full(n, -7, np.int64)
    sizes = np.full((n, 4), -7, np.int64)
    g, loc, gr, lin, sizes = launch(backend, k, g, loc, gr, lin, sizes, ndrange=shape,
                                  workgroupsize=wg)
    expected = np.indices(shape).reshape(d, -1).T  # row-major: the last axis is fastest
    np.testing.assert_array_equal(lin, np.arange(n))
    np.testing.assert_array_equal(g, expected)
    np.testing.assert_array_equal(loc, expected % np.array(wg))
    np.testing.assert_array_equal(gr, expected // np.array(wg))
    np.testing.assert_array_equal(sizes[:, 0], n)
    np.testing.assert_array_equal(sizes[:, 1], np.prod(wg))
    np.testing.assert_array_equal(sizes[:, 2], local_linear(expected % np.array(wg), wg))
    groups = [-(-s // w) for s, w in zip(shape, wg, strict=True)]
    np.testing.assert_array_equal(sizes[:, 3], local_linear(expected // np.array(wg), groups))


def test_per_axis_sizes():
    src = """
    @kernel void f(long* out) {
        auto [i, j, k] = @index(Global, NTuple);
        const long o = @index(Global, Linear);
        out[6 * o + 0] = @ndrange(0);
        out[6 * o + 1] = @ndrange(1);
        out[6 * o + 2] = @ndrange(2);
        out[6 * o + 3] = @groupsize(0);
        out[6 * o + 4] = @groupsize(1);
        out[6 * o + 5] = @groupsize(2);
    }"""
    shape, wg = (3, 4, 5), (1, 2, 4)
    out = np.zeros((60, 6), np.int64)
    pk.kernel(src)(out, ndrange=shape, workgroupsize=wg)
    np.testing.assert_array_equal(out, np.tile(shape + wg, (60, 1)))


def test_hardware_axis_mapping_is_reversed():
    # ndrange axis d maps to hardware axis ndim-1-d, so the last axis is hardware x.
    src = "@kernel void f(long* y) {\n    auto [i, j, k] = @index(Global, NTuple);\n}\n"
    out = pk.kernel(src).render("opencl")
    assert "long i = ((long)get_global_id(2)), j = ((long)get_global_id(1)), " \
           "k = ((long)get_global_id(0));" in out
    assert "threadIdx.x" in pk.kernel(src).render("cuda")


def test_linear_index_1d_no_ntuple_in_3d(backend):
    src = """
    @kernel void f(float* y, const float* x) {
        const long i = @index(Global, Linear);
        y[i] = 2 * x[i];
    }"""
    x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    (y, _) = launch(backend, pk.kernel(src), np.zeros_like(x), x, ndrange=x.shape,
                    workgroupsize=(1, 2, 2))
    np.testing.assert_array_equal(y, 2 * x)


# -- bounds masking --------------------------------------------------------------------

MASK_1D = """\
@kernel{{ "(unsafe_indices)" if UNSAFE }} void f(int* y) {
    const long i = @index(Global, Linear);
    y[i] = (int)i + 1;
}
"""


@pytest.mark.parametrize("n, wg", [(10, 8), (1, 16), (17, 16), (100, 32)])
def test_out_of_range_items_do_not_write(backend, n, wg):
    padded = -(-n // wg) * wg
    (y,) = launch(backend, pk.kernel(MASK_1D, UNSAFE=False), np.zeros(padded, np.int32),
                  ndrange=n, workgroupsize=wg)
    np.testing.assert_array_equal(y[:n], np.arange(1, n + 1))
    np.testing.assert_array_equal(y[n:], 0)


def test_unsafe_indices_runs_the_padding(backend):
    n, wg = 10, 8
    (y,) = launch(backend, pk.kernel(MASK_1D, UNSAFE=True), np.zeros(16, np.int32),
                  ndrange=n, workgroupsize=wg)
    # Without the mask the rounded-up global size runs every work-item.
    np.testing.assert_array_equal(y, np.arange(1, 17))
    assert "pk_active" not in pk.kernel(MASK_1D, UNSAFE=True).render("opencl")


@pytest.mark.parametrize("unsafe", [False, True])
def test_masking_2d(backend, unsafe):
    src = """
    @kernel{{ "(unsafe_indices)" if UNSAFE }} void f(int* y, long stride) {
        auto [i, j] = @index(Global, NTuple);
        y[i * stride + j] = (int)(i * 100 + j);
    }"""
    rows, cols, wg = 5, 6, (2, 4)
    y0 = np.full((6, 8), -1, np.int32)
    (y, _) = launch(backend, pk.kernel(src, UNSAFE=unsafe), y0, 8, ndrange=(rows, cols),
                    workgroupsize=wg)
    ii, jj = np.indices(y0.shape)
    full = (ii * 100 + jj).astype(np.int32)
    inside = (ii < rows) & (jj < cols)
    np.testing.assert_array_equal(y[inside], full[inside])
    if unsafe:
        np.testing.assert_array_equal(y, full)  # global size (6, 8) ran everywhere
    else:
        np.testing.assert_array_equal(y[~inside], -1)


# -- barriers with masking ---------------------------------------------------------------

REDUCE = """\
#define WG {{ WG }}
@kernel void reduce(T* partial, const T* x) {
    @localmem T buf[WG];
    @uniform const long n = @ndrange(0);
    const long i = @index(Global, Linear);
    const long li = @index(Local, Linear);
    T v = x[i], twice;
    twice = v + v;
    buf[li] = twice / 2;
    @synchronize();
    for (long s = WG / 2; s > 0; s >>= 1) {
        if (li < s && i + s < n) {
            buf[li] += buf[li + s];
        }
        @synchronize();
    }
    if (li == 0) {
        partial[@index(Group, Linear)] = buf[0];
    }
}
"""


@pytest.mark.parametrize("n, wg, dtype", [
    (1000, 64, np.float64), (64, 64, np.int32), (1, 32, np.int64), (130, 128, np.float32),
    (257, 16, np.int32),
])
def test_reduction_with_partial_last_group(backend, n, wg, dtype):
    needs(backend, dtype)
    rng = np.random.default_rng(n)
    x = rng.integers(-50, 50, n).astype(dtype)
    groups = -(-n // wg)
    # The padding is poisoned: a masked-out work-item that still read x would show up.
    partial0 = np.full(groups, 12345, dtype)
    (partial, _) = launch(backend, pk.kernel(REDUCE, WG=wg), partial0, x, ndrange=n,
                          workgroupsize=wg)
    expected = np.add.reduceat(x, np.arange(0, n, wg))
    np.testing.assert_allclose(partial, expected)


def test_reduction_hoists_declarations():
    out = pk.kernel(REDUCE, WG=64).render("opencl", T="float")
    # Declarations before the first barrier are hoisted above the masked segment.
    first_if = out.index("if (pk_active) {")
    for decl in (r"\blong\s+i\s*;", r"\blong\s+li\s*;", r"\bT\s+v\s*;", r"\bT\s+twice\s*;"):
        m = re.search(decl, out)
        assert m is not None and m.start() < first_if, decl
    # ... and assigned inside it; a const declaration loses its const when hoisted.
    assert re.search(r"\bi\s*=\s*\(\(\(long\)get_global_id\(0\)\)\);", out[first_if:])
    assert "const long i" not in out
    # Exactly one barrier per @synchronize, never inside an if (pk_active).
    assert out.count("barrier(") == 2
    for segment in out.split("if (pk_active) {")[1:]:
        assert "barrier(" not in segment.split("}")[0]


TILED = """\
#define TILE {{ TILE }}
// With implicit bounds, the work-items outside c would skip their share of the tile
// loads; a kernel whose tiles straddle the edge opts out and guards by hand.
@kernel{{ "(unsafe_indices)" if UNSAFE }}
void matmul(T* c, const T* a, const T* b, long n, long m, long p) {
    auto [row, col] = @index(Global, NTuple);
    auto [lr, lc] = @index(Local, NTuple);
    @localmem T ta[TILE][TILE];
    @localmem T tb[TILE][TILE];
    @private T acc[1];
    acc[0] = 0;
    @uniform const long tiles = (m + TILE - 1) / TILE;
    for (long t = 0; t < tiles; ++t) {
        const long ka = t * TILE + lc, kb = t * TILE + lr;
        ta[lr][lc] = row < n && ka < m ? a[row * m + ka] : 0;
        tb[lr][lc] = kb < m && col < p ? b[kb * p + col] : 0;
        @synchronize();
        for (int k = 0; k < TILE; ++k) {
            acc[0] += ta[lr][k] * tb[k][lc];
        }
        @synchronize();
    }
    if (row < n && col < p) c[row * p + col] = acc[0];
}
"""


@pytest.mark.parametrize("n, m, p, tile, unsafe", [
    (16, 16, 16, 8, False), (8, 13, 4, 4, False), (16, 16, 16, 8, True), (13, 7, 11, 4, True),
    (5, 20, 3, 8, True),
])
def test_tiled_matmul(backend, n, m, p, tile, unsafe):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, m)).astype(np.float32)
    b = rng.standard_normal((m, p)).astype(np.float32)
    c0 = np.full((n, p), np.nan, np.float32)
    (c, *_) = launch(backend, pk.kernel(TILED, TILE=tile, UNSAFE=unsafe), c0, a, b, n, m, p,
                       ndrange=(n, p), workgroupsize=(tile, tile))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_uniform_statement_is_not_masked():
    out = pk.kernel(TILED, TILE=8, UNSAFE=False).render("opencl", T="float")
    line = next(s for s in out.split("\n") if "tiles = " in s)
    assert line.strip().startswith("const long tiles = ")  # kept whole, unmasked
    assert "@" not in out


def test_barrier_inside_nested_blocks_and_loops(backend):
    # Shift a workgroup's values around a ring a few times; declarations inside the
    # loop body are hoisted into the loop, and the do/while and bare block are lowered.
    src = """
    #define WG 8
    @kernel void ring(int* y, const int* x, int steps) {
        @localmem int buf[WG];
        const long li = @index(Local, Linear);
        const long i = @index(Global, Linear);
        buf[li] = x[i];
        @synchronize();
        int s = 0;
        while (s < steps) {
            int v = buf[(li + 1) % WG];
            @synchronize();
            buf[li] = v;
            @synchronize();
            s++;
        }
        do {
            { @synchronize(); }
        } while (0);
        y[i] = buf[li];
    }"""
    n = 32
    x = np.arange(n, dtype=np.int32)
    (y, _, _) = launch(backend, pk.kernel(src), np.zeros(n, np.int32), x, 3, ndrange=n,
                       workgroupsize=8)
    expected = np.concatenate([np.roll(x[g:g + 8], -3) for g in range(0, n, 8)])
    np.testing.assert_array_equal(y, expected)


def test_barrier_kernel_with_inactive_items_in_loop(backend):
    # n is not a multiple of the group: the inactive work-items of the last group
    # still go round the loop (its bounds are @uniform) and reach every barrier.
    src = """
    #define WG 16
    @kernel void prefix(int* y, const int* x) {
        @localmem int buf[WG];
        @uniform const long n = @ndrange(0);
        const long li = @index(Local, Linear);
        const long i = @index(Global, Linear);
        buf[li] = x[i];
        @synchronize();
        for (int off = 1; off < WG; off *= 2) {
            int v = li >= off ? buf[li - off] : 0;
            @synchronize();
            if (i < n) buf[li] += v;
            @synchronize();
        }
        y[i] = buf[li];
    }"""
    n = 40
    x = np.ones(n, np.int32)
    (y, _) = launch(backend, pk.kernel(src), np.zeros(n, np.int32), x, ndrange=n,
                    workgroupsize=16)
    expected = np.concatenate([np.cumsum(x[g:g + 16]) for g in range(0, n, 16)])
    np.testing.assert_array_equal(y, expected)


def test_private_array(backend):
    src = """
    @kernel void f(float* y, const float* x) {
        const long i = @index(Global, Linear);
        @private float acc[4];
        for (int k = 0; k < 4; ++k) acc[k] = x[i] * k;
        y[i] = acc[0] + acc[1] + acc[2] + acc[3];
    }"""
    x = np.linspace(0, 1, 33, dtype=np.float32)
    (y, _) = launch(backend, pk.kernel(src), np.zeros_like(x), x, ndrange=33)
    np.testing.assert_allclose(y, 6 * x, rtol=1e-6)
    assert "float acc[4];" in pk.kernel(src).render("opencl")


# -- atomics -----------------------------------------------------------------------------

ATOMIC = """\
@kernel void f(T* acc, const T* v, T* old, long m) {
    const long i = @index(Global, Linear);
    old[i] = @atomic_OP(&acc[i % m], v[i]);
}
"""


REDUCERS = {"add": np.add, "sub": np.subtract, "min": np.minimum, "max": np.maximum,
            "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
ATOMIC_CASES = [(op, dt) for op in ("add", "sub", "min", "max")
                for dt in (np.int32, np.uint32, np.float32, np.int64, np.float64)]
ATOMIC_CASES += [(op, dt) for op in ("and", "or", "xor")
                 for dt in (np.int32, np.uint32, np.int64)]


def atomic_inputs(op, dtype, n, rng):
    if op in ("and", "or", "xor"):
        return rng.integers(0, 2**16, n).astype(dtype)
    if op in ("add", "sub"):
        return rng.integers(1, 100, n).astype(dtype)  # exact, monotonic partial sums
    if np.dtype(dtype).kind == "f":
        return rng.integers(-100, 100, n).astype(dtype)
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, 100, n).astype(dtype)
    return rng.integers(-100, 100, n).astype(dtype)


@pytest.mark.parametrize("op, dtype", ATOMIC_CASES, ids=lambda v: getattr(v, "__name__", v))
def test_atomics(backend, op, dtype):
    needs(backend, dtype, atomic=True)
    n, m = 300, 7
    rng = np.random.default_rng(1)
    v = atomic_inputs(op, dtype, n, rng)
    start = {"and": np.iinfo(dtype).max if np.dtype(dtype).kind in "iu" else 0,
             "min": 1000, "max": -1000 if np.dtype(dtype).kind != "u" else 0}.get(op, 0)
    if np.dtype(dtype).kind == "u" and op == "sub":
        start = 100_000
    acc0 = np.full(m, start, dtype)
    (acc, _, old, _) = launch(backend, pk.kernel(ATOMIC.replace("OP", op)), acc0, v,
                              np.zeros(n, dtype), m, ndrange=n, workgroupsize=32)
    ufunc = REDUCERS[op]
    for r in range(m):
        expected = acc0[r]
        for value in v[r::m]:
            expected = ufunc(expected, value)
        assert acc[r] == expected, (r, acc[r], expected)
    if op in ("add", "sub"):
        # The returned old values are the partial sums in the order the atomics ran:
        # sorted (with the final value), their steps are the inputs, each used once.
        for r in range(m):
            chain = np.sort(np.append(old[r::m], acc[r]).astype(np.float64))
            np.testing.assert_array_equal(np.sort(np.diff(chain)), np.sort(v[r::m]))
            assert (acc0[r] in chain) and chain[0 if op == "add" else -1] == acc0[r]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.float32, np.int64, np.float64])
def test_atomic_xchg_and_cas(backend, dtype):
    needs(backend, dtype, atomic=True)
    src = """
    @kernel void f(T* slot, T* winner, T* seen) {
        const long i = @index(Global, Linear);
        // exactly one work-item replaces the 0 in winner[0]
        T prev = @atomic_cas(&winner[0], (T)0, (T)(i + 1));
        seen[i] = @atomic_xchg(&slot[0], (T)(i + 1));
        if (prev == 0) winner[1] = (T)(i + 1);
    }"""
    n = 200
    (slot, winner, seen) = launch(backend, pk.kernel(src), np.zeros(1, dtype),
                                  np.zeros(2, dtype), np.zeros(n, dtype), ndrange=n,
                                  workgroupsize=20)
    assert 1 <= winner[0] <= n and winner[0] == winner[1]
    # xchg hands each value on exactly once: the returned values plus the final one
    # are 0, 1, ..., n.
    values = sorted(seen.tolist() + [slot[0]])
    np.testing.assert_array_equal(values, np.arange(n + 1))


def test_atomic_on_local_memory(backend):
    src = """
    @kernel void hist(int* counts, const uint8_t* img) {
        @localmem int local_counts[4];
        const long li = @index(Local, Linear);
        const long i = @index(Global, Linear);
        if (li < 4) local_counts[li] = 0;
        @synchronize();
        @atomic_add(&local_counts[img[i] % 4], 1);
        @synchronize();
        if (li < 4) @atomic_add(&counts[li], local_counts[li]);
    }"""
    img = np.random.default_rng(2).integers(0, 256, 1000).astype(np.uint8)
    (counts, _) = launch(backend, pk.kernel(src), np.zeros(4, np.int32), img, ndrange=1000,
                         workgroupsize=64)
    np.testing.assert_array_equal(counts, np.bincount(img % 4, minlength=4))


# -- 0-axis and empty ndranges ------------------------------------------------------------


def test_zero_axis_ndrange_runs_one_item(backend):
    src = """
    @kernel void f(long* y) {
        y[0] += 1 + @index(Global, Linear) + @ndrange() + 10 * @groupsize();
    }"""
    (y,) = launch(backend, pk.kernel(src), np.zeros(1, np.int64), ndrange=())
    assert y[0] == 1 + 0 + 1 + 10
    assert "pk_n0" not in pk.kernel(src).render("opencl", ndim=0)


@pytest.mark.parametrize("nd", [0, (0,), (3, 0), (0, 4, 2)])
def test_zero_size_ndrange_does_not_launch(backend, nd):
    src = "@kernel void f(int* y) {\n    y[0] = 99;\n}\n"
    (y,) = launch(backend, pk.kernel(src), np.zeros(2, np.int32), ndrange=nd)
    np.testing.assert_array_equal(y, 0)


def test_zero_size_arrays(backend):
    src = "@kernel void f(float* y, const float* x) { y[@index(Global, Linear)] = x[0]; }"
    (y, _) = launch(backend, pk.kernel(src), np.zeros(0, np.float32), np.zeros(0, np.float32),
                    ndrange=0)
    assert y.shape == (0,)


# -- Jinja constants ------------------------------------------------------------------------

JINJA = """\
@kernel void f(float* y) {
    const long i = @index(Global, Linear);
    float acc = 0;
{% for k in range(UNROLL) %}
    acc += {{ k }} * {{ SCALE }};
{% endfor %}
{% if target == "cuda" %}
    acc = -1;
{% elif FLAG %}
    acc += 1000;
{% endif %}
    y[i] = acc;
}
"""


@pytest.mark.parametrize("unroll, scale, flag", [(4, 2.5, False), (1, 3, True), (0, 1, True)])
def test_jinja_constants(backend, unroll, scale, flag):
    k = pk.kernel(JINJA, UNROLL=unroll).specialize(SCALE=scale, FLAG=flag)
    (y,) = launch(backend, k, np.zeros(5, np.float32), ndrange=5)
    expected = sum(range(unroll)) * scale + (1000 if flag else 0)
    # The source branches on the target: the CUDA rendering sets acc = -1.
    np.testing.assert_allclose(y, -1 if backend.target == "cuda" else expected)
    cuda = k.render("cuda")
    assert "acc = -1;" in cuda and "acc = -1;" not in k.render("opencl")
    assert cuda.count("acc += ") == unroll


def test_jinja_constant_type_name(backend):
    needs(backend, np.float64)
    src = """
    @kernel void f({{ ACC }}* y) {
        const long i = @index(Global, Linear);
        y[i] = ({{ ACC }})i / 2;
    }"""
    k = pk.kernel(src, ACC=np.float64)
    (y,) = launch(backend, k, np.zeros(6), ndrange=6)
    np.testing.assert_array_equal(y, np.arange(6) / 2)
    with pytest.raises(pk.KernelTypeError, match="must have dtype float64"):
        k(np.zeros(6, np.float32), ndrange=6)


def test_jinja_float_and_bool_constants_render_as_c():
    src = "@kernel void f(float* y) {\n    y[0] = {{ A }} + ({{ B }} ? 1 : 0);\n}\n"
    out = pk.kernel(src, A=0.1, B=True).render("opencl")
    assert "y[0] = 0.1 + (true ? 1 : 0);" in out


# -- the lowered structure --------------------------------------------------------------------


def test_lower_kernel_parts():
    src = "@kernel void f(long* y) {\n    y[0] = @index(Group, Linear);\n}\n"
    module = __import__("portakern.syntax.language", fromlist=["parse"]).parse(
        KernelTemplate(src, "x.pk").render("opencl", {}))
    lowered = lower_kernel(module.kernels[0], module, 2)
    calls = [p for p in lowered.body if isinstance(p, Call)]
    # group id of axis 0 is hardware axis 1; the linear index multiplies by num_groups.
    assert [(c.macro, c.args) for c in calls] == [
        ("global_id", (1,)), ("ndrange", (0,)), ("global_id", (0,)), ("ndrange", (1,)),
        ("group_id", (1,)), ("num_groups", (0,)), ("group_id", (0,))]
    assert lowered.masked and isinstance(lowered.body[0], Gen)


def test_all_combinations_render_for_every_target():
    for locale, kind, ndim in itertools.product(("Global", "Local", "Group"),
                                                ("Linear", "NTuple"), (1, 2, 3)):
        names = ", ".join("ijk"[:ndim])
        stmt = (f"auto [{names}] = @index({locale}, NTuple);" if kind == "NTuple"
                else f"const long i = @index({locale}, Linear);")
        src = f"@kernel void f(long* y) {{\n    {stmt}\n    y[0] = i;\n}}\n"
        for target in ("opencl", "cuda", "metal"):
            out = pk.kernel(src).render(target, ndim=ndim)
            assert "@" not in out
