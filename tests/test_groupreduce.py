"""``@groupreduce(op, value)``: a workgroup reduction on every target (docs/language.md).

Checked against NumPy on both CPU paths (the native lockstep C++ and PoCL), with
partial last groups, workgroup sizes that are not powers of two or multiples of a
warp, 2D groups, a reduction inside a uniform loop and the result on every
work-item; rendered for the four targets (CUDA compiled to PTX, Metal through the
Metal check); and executed on the CUDA and Metal stand-ins (tests marked gpu/metal).
The tree reductions that the reduce and brightest_pixel examples used before
``@groupreduce`` live on here (``TREE``), run on the same paths.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError

OPS = """
@kernel void group_ops(T* sums, T* mins, T* maxs, T* every, const T* x) {
    const T s = @groupreduce(add, x[@index(Global, Linear)]);
    const T lo = @groupreduce(min, x[@index(Global, Linear)]);
    const T hi = @groupreduce(max, x[@index(Global, Linear)]);
    const long g = @index(Group, Linear);
    if (@index(Local, Linear) == 0) {
        sums[g] = s;
        mins[g] = lo;
        maxs[g] = hi;
    }
    every[@index(Global, Linear)] = s;
}
"""

GRID = """
@kernel void group_sum_2d(T* sums, T* every, const T* x) {
    auto [i, j] = @index(Global, NTuple);
    const T s = @groupreduce(add, x[i * @ndrange(1) + j]);
    if (@index(Local, Linear) == 0) {
        sums[@index(Group, Linear)] = s;
    }
    every[i * @ndrange(1) + j] = s;
}
"""

# A reduction in a group-uniform loop: its hidden buffer is reused every round.
LOOP = """
@kernel void rounds(T* out, const T* x, long n) {
    T acc = 0;
    for (long r = 1; r <= n; r++) {
        const T s = @groupreduce(add, x[@index(Global, Linear)] * (T)r);
        acc += s;
    }
    out[@index(Global, Linear)] = acc;
}
"""

UNSAFE = """
@kernel(unsafe_indices) void unsafe_sum(T* sums, const T* x) {
    const long i = @index(Global, Linear);
    const T s = @groupreduce(add, i < @ndrange() ? x[i] : (T)0);
    if (@index(Local, Linear) == 0) {
        sums[@index(Group, Linear)] = s;
    }
}
"""

# The tree reductions of portakern/examples/reduce.pk before @groupreduce: @localmem,
# barriers in a uniform loop, @uniform counts. Launch with workgroupsize GROUP.
TREE = """
{% for op in ["sum", "max"] %}
@kernel void tree_{{ op }}(T* partial, const T* x) {
    @localmem T buf[{{ GROUP }}];
    @uniform const long n = @ndrange();
    @uniform const long group = @index(Group, Linear);
    @uniform const long count = min((long)@groupsize(), n - group * (long)@groupsize());
    const long lid = @index(Local, Linear);
    buf[lid] = x[@index(Global, Linear)];
    @synchronize();
    for (long s = @groupsize() / 2; s > 0; s /= 2) {
        if (lid < s && lid + s < count) {
            const T a = buf[lid];
            const T b = buf[lid + s];
            buf[lid] = {{ "a + b" if op == "sum" else "a > b ? a : b" }};
        }
        @synchronize();
    }
    if (lid == 0) {
        partial[group] = buf[0];
    }
}
{% endfor %}

@kernel void tree_argmax(T* best, long* best_index, const T* x) {
    @localmem T val[{{ GROUP }}];
    @localmem long idx[{{ GROUP }}];
    @uniform const long n = @ndrange();
    @uniform const long group = @index(Group, Linear);
    @uniform const long count = min((long)@groupsize(), n - group * (long)@groupsize());
    const long lid = @index(Local, Linear);
    const long i = @index(Global, Linear);
    val[lid] = x[i];
    idx[lid] = i;
    @synchronize();
    for (long s = @groupsize() / 2; s > 0; s /= 2) {
        if (lid < s && lid + s < count) {
            const T other = val[lid + s];
            const long other_index = idx[lid + s];
            if (other > val[lid] || (other == val[lid] && other_index < idx[lid])) {
                val[lid] = other;
                idx[lid] = other_index;
            }
        }
        @synchronize();
    }
    if (lid == 0) {
        best[group] = val[0];
        best_index[group] = idx[0];
    }
}
"""


# -- where they run --------------------------------------------------------------------------

@pytest.fixture(params=["native", "opencl"])
def cpu(request, monkeypatch):
    """CPU() on its native path, and with every kernel on PoCL (PORTAKERN_CPU=opencl)."""
    if request.param == "opencl":
        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    else:
        monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    backend = pk.CPU()
    if not backend.available():
        pytest.skip(f"CPU() unavailable: {backend.available().reason}")
    return backend


def _backend(name: str):
    backend = {"CUDA": pk.CUDA, "Metal": pk.Metal}[name]()
    if not backend.available():
        pytest.skip(f"{name} unavailable: {backend.available().reason}")
    return backend


def _run(backend, source, name, host_args, ndrange, workgroupsize, **constants):
    """Launch a fresh kernel (so the CPU path is routed now) and return host copies."""
    kernel = pk.kernel(source, name, **constants)
    args = tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args)
    kernel(backend, workgroupsize)(*args, ndrange=ndrange)
    backend.synchronize()
    return [backend.to_host(a) if not isinstance(a, np.generic) else a for a in args]


def _data(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, size=n).astype(dtype)
    return rng.uniform(-1, 1, size=n).astype(dtype)


def _check_ops(backend, n, wg, dtype):
    x = _data(n, dtype, n + wg)
    groups = -(-n // wg)
    outs = [np.zeros(groups, dtype) for _ in range(3)] + [np.zeros(n, dtype)]
    sums, mins, maxs, every, _ = _run(backend, OPS, "group_ops", (*outs, x), (n,), wg)
    starts = np.arange(0, n, wg)
    tol = dict(rtol=1e-5, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-12, atol=0)
    np.testing.assert_allclose(sums, np.add.reduceat(x, starts), **tol)
    np.testing.assert_array_equal(mins, np.minimum.reduceat(x, starts))
    np.testing.assert_array_equal(maxs, np.maximum.reduceat(x, starts))
    # Every work-item gets the result, also those of the partial last group.
    np.testing.assert_allclose(every, np.repeat(np.add.reduceat(x, starts), wg)[:n], **tol)


# -- both CPU paths ----------------------------------------------------------------------------

@pytest.mark.parametrize("n, wg, dtype", [
    (1, 64, np.float32), (1000, 48, np.float32), (777, 1, np.float32),
    (2000, 600, np.float32), (4096, 1024, np.float32), (1000, 256, np.int32),
    (33, 32, np.float64)])
def test_add_min_max_with_partial_groups(cpu, n, wg, dtype):
    _check_ops(cpu, n, wg, dtype)


@pytest.mark.parametrize("shape, wg", [((37, 53), (8, 16)), ((16, 16), (16, 16)),
                                       ((5, 70), (3, 32))])
def test_2d_groups_with_partial_groups_on_both_axes(cpu, shape, wg):
    h, w = shape
    x = _data(h * w, np.float64, h).reshape(shape)
    gh, gw = -(-h // wg[0]), -(-w // wg[1])
    sums, every, _ = _run(cpu, GRID, "group_sum_2d",
                       (np.zeros(gh * gw), np.zeros(shape), x), shape, wg)
    want = np.zeros((gh, gw))
    want_every = np.zeros(shape)
    for a in range(gh):
        for b in range(gw):
            block = (slice(a * wg[0], (a + 1) * wg[0]), slice(b * wg[1], (b + 1) * wg[1]))
            want[a, b] = x[block].sum()
            want_every[block] = want[a, b]
    np.testing.assert_allclose(sums, want.reshape(-1), rtol=1e-12)
    np.testing.assert_allclose(every, want_every, rtol=1e-12)


@pytest.mark.parametrize("n, wg", [(1000, 128), (300, 300)])
def test_reduction_in_a_uniform_loop_reuses_its_buffer(cpu, n, wg):
    x = _data(n, np.float64, 3)
    (out, _, _) = _run(cpu, LOOP, "rounds", (np.zeros(n), x, np.int64(5)), (n,), wg)
    group_sums = np.repeat(np.add.reduceat(x, np.arange(0, n, wg)), wg)[:n]
    np.testing.assert_allclose(out, group_sums * (1 + 2 + 3 + 4 + 5), rtol=1e-12)


COND = """
@kernel void cond(T* out, const T* x, int flag) {
    T r = 0;
    if (flag > 0) {
        const T s = @groupreduce(add, x[@index(Global, Linear)]);
        r = s;
    } else {
        const T s = @groupreduce(max, x[@index(Global, Linear)]);
        r = s;
    }
    out[@index(Global, Linear)] = r;
}
"""


@pytest.mark.parametrize("flag", [1, 0])
def test_reduction_under_a_group_uniform_if(cpu, flag):
    n, wg = 300, 64
    x = _data(n, np.float32, 6)
    (out, _, _) = _run(cpu, COND, "cond", (np.zeros(n, np.float32), x, np.int32(flag)), (n,), wg)
    reduce = np.add.reduceat if flag else np.maximum.reduceat
    want = np.repeat(reduce(x, np.arange(0, n, wg)), wg)[:n]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_unsafe_indices_every_item_contributes(cpu):
    n, wg = 1000, 64
    x = _data(n, np.float32, 4)
    sums, _ = _run(cpu, UNSAFE, "unsafe_sum", (np.zeros(-(-n // wg), np.float32), x), (n,), wg)
    np.testing.assert_allclose(sums, np.add.reduceat(x, np.arange(0, n, wg)), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("dtype", [np.uint8, np.int64])
def test_identities_of_small_and_unsigned_types(cpu, dtype):
    # The masked items of the partial last group contribute the identity of each op:
    # 0, the type's largest value (min) and its smallest (max).
    info = np.iinfo(dtype)
    n, wg = 100, 64
    x = np.random.default_rng(5).integers(info.min // 2, info.max // 2, size=n, dtype=dtype)
    x[:3] = (info.min, info.max, 0)
    outs = [np.zeros(2, dtype) for _ in range(3)] + [np.zeros(n, dtype)]
    sums, mins, maxs, _, _ = _run(cpu, OPS, "group_ops", (*outs, x), (n,), wg)
    starts = np.arange(0, n, wg)
    np.testing.assert_array_equal(mins, np.minimum.reduceat(x, starts))
    np.testing.assert_array_equal(maxs, np.maximum.reduceat(x, starts))
    np.testing.assert_array_equal(sums, np.add.reduceat(x, starts, dtype=dtype))


# -- the tree versions the examples used before ------------------------------------------------

def _check_trees(backend, n, group, dtype):
    x = _data(n, dtype, n)
    groups = -(-n // group)
    starts = np.arange(0, n, group)
    (partial, _) = _run(backend, TREE, "tree_sum", (np.zeros(groups, dtype), x), (n,), group,
                        GROUP=group)
    np.testing.assert_allclose(partial, np.add.reduceat(x, starts), rtol=1e-5, atol=1e-4)
    (partial, _) = _run(backend, TREE, "tree_max", (np.zeros(groups, dtype), x), (n,), group,
                        GROUP=group)
    np.testing.assert_array_equal(partial, np.maximum.reduceat(x, starts))
    x[n // 2] = x[n // 3] = x.max() + 1  # equal maxima: the first index wins
    best, where, _ = _run(backend, TREE, "tree_argmax",
                          (np.zeros(groups, dtype), np.zeros(groups, np.int64), x), (n,), group,
                          GROUP=group)
    want = np.array([s + int(np.argmax(x[s:s + group])) for s in starts])
    np.testing.assert_array_equal(where, want)
    np.testing.assert_array_equal(best, x[want])


@pytest.mark.parametrize("n", [1, 1000])
def test_tree_reductions_on_both_cpu_paths(cpu, n):
    _check_trees(cpu, n, 256, np.float32)


# -- the CUDA and Metal stand-ins (or a GPU / a Mac) ----------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("n, wg", [(1000, 256), (100, 48), (70, 1)])
def test_cuda(n, wg):
    _check_ops(_backend("CUDA"), n, wg, np.float32)


@pytest.mark.gpu
def test_cuda_2d_loop_and_trees():
    cuda = _backend("CUDA")
    x = _data(37 * 53, np.float32, 7).reshape(37, 53)
    sums, _, _ = _run(cuda, GRID, "group_sum_2d",
                      (np.zeros(5 * 4, np.float32), np.zeros((37, 53), np.float32), x),
                      (37, 53), (8, 16))
    np.testing.assert_allclose(sums[0], x[:8, :16].sum(), rtol=1e-5)
    out, _, _ = _run(cuda, LOOP, "rounds", (np.zeros(100, np.float32), x.reshape(-1)[:100],
                                            np.int64(3)), (100,), 64)
    np.testing.assert_allclose(out[0], x.reshape(-1)[:64].sum() * 6, rtol=1e-5)
    _check_trees(cuda, 1000, 256, np.float32)


@pytest.mark.metal
@pytest.mark.parametrize("n, wg", [(1000, 256), (100, 48), (70, 1)])
def test_metal(n, wg):
    _check_ops(_backend("Metal"), n, wg, np.float32)


@pytest.mark.metal
def test_metal_2d_and_trees():
    metal = _backend("Metal")
    x = _data(37 * 53, np.float32, 8).reshape(37, 53)
    sums, every, _ = _run(metal, GRID, "group_sum_2d",
                          (np.zeros(5 * 4, np.float32), np.zeros((37, 53), np.float32), x),
                          (37, 53), (8, 16))
    np.testing.assert_allclose(sums[0], x[:8, :16].sum(), rtol=1e-5)
    np.testing.assert_allclose(every[32:, 48:], x[32:, 48:].sum(), rtol=1e-5)  # a partial group
    _check_trees(metal, 1000, 256, np.float32)


# -- renderings ------------------------------------------------------------------------------

def test_renderings_for_every_target():
    kernel = pk.kernel(OPS)
    c = kernel.render("c", T="float")
    assert "#pragma omp simd reduction(+:pk_r)" in c
    assert "#pragma omp simd reduction(min:pk_r)" in c and "reduction(max:pk_r)" in c
    assert "__shfl_down_sync" in kernel.render("cuda", T="float") or \
        "pk_shfl_down" in kernel.render("cuda", T="float")
    metal = kernel.render("metal", T="float")
    assert all(f in metal for f in ("simd_sum(", "simd_min(", "simd_max("))
    opencl = kernel.render("opencl", T="float")
    assert "work_group_reduce_add" in opencl and "__local T pk_gr0[256];" in opencl
    for target in ("cuda", "metal", "opencl", "c"):
        assert not re.search(r"@\w", re.sub(r"//[^\n]*|/\*.*?\*/", "", kernel.render(
            target, T="float"), flags=re.S))


@pytest.mark.parametrize("source", [OPS, GRID, LOOP, UNSAFE],
                         ids=["ops", "grid", "loop", "unsafe"])
def test_cuda_rendering_compiles_to_ptx(source):
    from portakern.checks import compile_cuda_ptx, cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(why)
    for t in ("float", "int", "double", "uint8_t"):
        compile_cuda_ptx(pk.kernel(source).render("cuda", T=t))


@pytest.mark.parametrize("source", [OPS, GRID, LOOP, UNSAFE],
                         ids=["ops", "grid", "loop", "unsafe"])
def test_metal_rendering_passes_the_metal_check(source):
    from portakern.checks import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(why)
    for t in ("float", "int"):
        check_metal(pk.kernel(source).render("metal", T=t))


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ("if (@index(Global, Linear) < 4) { const float s = @groupreduce(add, x[0]); y[0] = s; }",
     "value per work-item"),
    ("y[0] = @groupreduce(add, x[0]);", "must initialise a declaration"),
    ("const float s = 1 + @groupreduce(add, x[0]);", "must initialise a declaration"),
    ("const float s = @groupreduce(mul, x[0]);", "add|min|max"),
    ("const float s = @groupreduce(add);", "an operator and a value"),
    ("auto s = @groupreduce(add, x[0]);", "needs the result's type"),
    ("const float s = @groupreduce(add, x[0]) + 1;", "must initialise a declaration"),
    ("for (long k = @index(Global, Linear); k < 8; k++) { const float s = "
     "@groupreduce(add, x[k]); y[k] = s; }", "value per work-item"),
    ("if (@index(Global, Linear) == 0) return; const float s = @groupreduce(add, x[0]);",
     "'return' before @synchronize"),
])
def test_misuse_is_a_syntax_error_at_the_line(body, message):
    source = f"@kernel void k(float* y, const float* x) {{\n    {body}\n}}\n"
    with pytest.raises(KernelSyntaxError, match=re.escape(message)):
        pk.kernel(source).render("opencl")
