"""Subgroup operations (docs/language.md, "Subgroup operations"; portakern/subgroups.py).

Each operation is checked against a NumPy model of the documented contract on both
CPU paths (the native lockstep C++ and PoCL, which has no sub-groups and takes the
local-memory fallback), with partial last groups, workgroup sizes that are not a
multiple of the subgroup size (a partial last subgroup), out-of-range source lanes
and 2D groups; rendered for the four targets (CUDA compiled to PTX, Metal through the
Metal check); and executed on the CUDA and Metal stand-ins (tests marked gpu/metal),
which implement warp shuffles and SIMD-group functions with real semantics.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError

# Every operation once, with its argument taken from a kernel parameter so the tests
# can reach negative and out-of-range lanes; info gets size, subgroup id and lane.
OPS = """
@kernel void sg_ops(T* down, T* up, T* xor_, T* shuf, T* bcast, T* sum, T* lo, T* hi,
                    int* info, const T* x, int delta, int mask, int lane) {
    const long i = @index(Global, Linear);
    const T d = @shuffle_down(x[i], delta);
    const T u = @shuffle_up(x[i], delta);
    const T q = @shuffle_xor(x[i], mask);
    const T s = @shuffle(x[i], (int)((@laneid() * 7 + lane) % 37) - 2);
    const T b = @broadcast(x[i], lane);
    const T r = @subgroupreduce(add, x[i]);
    const T m = @subgroupreduce(min, x[i]);
    const T M = @subgroupreduce(max, x[i]);
    down[i] = d; up[i] = u; xor_[i] = q; shuf[i] = s; bcast[i] = b;
    sum[i] = r; lo[i] = m; hi[i] = M;
    info[3 * i] = (int)@subgroupsize();
    info[3 * i + 1] = (int)@subgroupid();
    info[3 * i + 2] = (int)@laneid();
}
"""

# A warp-style reduction in a group-uniform loop (the shuffle's result feeds the next
# round), then one value per subgroup.
LOOP = """
@kernel void sg_loop(T* out, const T* x) {
    const long i = @index(Global, Linear);
    T v = x[i];
    for (int o = (int)@subgroupsize() / 2; o > 0; o /= 2) {
        const T other = @shuffle_down(v, o);
        v += other;
    }
    if (@laneid() == 0) {
        out[i / @subgroupsize()] = v;
    }
}
"""

GRID = """
@kernel void sg_grid(T* out, int* lanes, const T* x) {
    auto [a, b] = @index(Global, NTuple);
    const long k = a * @ndrange(1) + b;
    const T q = @shuffle_xor(x[k], 1);
    out[k] = q;
    lanes[k] = (int)(@subgroupid() * 1000 + @laneid());
}
"""

# Position constructs alone: no collective, so no work-item loops on the C++ path.
POSITION = """
@kernel void positions(int* info) {
    const long i = @index(Global, Linear);
    info[2 * i] = (int)@subgroupid();
    info[2 * i + 1] = (int)@laneid();
}
"""

UNSAFE = """
@kernel(unsafe_indices) void sg_unsafe(T* out, const T* x) {
    const long i = @index(Global, Linear);
    const T r = @subgroupreduce(add, i < @ndrange() ? x[i] : (T)0);
    if (i < @ndrange()) {
        out[i] = r;
    }
}
"""


# -- the model -------------------------------------------------------------------------------

def _identity(op, dtype):
    if op == "add":
        return dtype.type(0)
    if np.issubdtype(dtype, np.floating):
        return dtype.type(np.inf if op == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if op == "min" else info.min)


def model(x, wg, size, delta, mask, lane):
    """The documented contract, one work-item at a time (1D ndrange of len(x))."""
    n = len(x)
    padded = -(-n // wg) * wg
    held = np.zeros(padded, x.dtype)  # a work-item outside the ndrange holds zero
    held[:n] = x
    out = {k: np.zeros(n, x.dtype) for k in ("down", "up", "xor", "shuf", "bcast",
                                             "sum", "lo", "hi")}
    info = np.zeros((n, 3), np.int32)
    for g in range(n):
        lid = g % wg
        own = g - lid + lid // size * size  # global index of lane 0 of g's subgroup
        ln = lid % size
        width = min(size, wg - lid // size * size)
        members = np.arange(own, own + width)

        def get(src, g=g, own=own, width=width):
            return held[own + src] if 0 <= src < width else x[g]

        out["down"][g] = get(ln + delta if delta >= 0 else -1)
        out["up"][g] = get(ln - delta if delta >= 0 else -1)
        out["xor"][g] = get(ln ^ mask if mask >= 0 else -1)
        out["shuf"][g] = get((ln * 7 + lane) % 37 - 2)
        out["bcast"][g] = get(lane)
        for key, op, fn in (("sum", "add", np.add), ("lo", "min", np.minimum),
                            ("hi", "max", np.maximum)):
            vals = np.where(members < n, held[members], _identity(op, x.dtype))
            out[key][g] = fn.reduce(vals.astype(x.dtype), dtype=x.dtype)
        info[g] = (size, lid // size, ln)
    return out, info


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


def _backend(name):
    backend = {"CUDA": pk.CUDA, "Metal": pk.Metal}[name]()
    if not backend.available():
        pytest.skip(f"{name} unavailable: {backend.available().reason}")
    return backend


def _run(backend, source, name, host_args, ndrange, workgroupsize):
    """Launch a fresh kernel (so the CPU path is routed now) and return host copies."""
    kernel = pk.kernel(source, name)
    args = tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args)
    kernel(backend, workgroupsize)(*args, ndrange=ndrange)
    backend.synchronize()
    return [backend.to_host(a) if not isinstance(a, np.generic) else a for a in args]


def _data(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, size=n).astype(dtype)
    return rng.uniform(-1, 1, size=n).astype(dtype)


def _check_ops(backend, n, wg, dtype, delta=1, mask=5, lane=3):
    x = _data(n, dtype, n + wg)
    outs = [np.zeros(n, dtype) for _ in range(8)]
    got = _run(backend, OPS, "sg_ops",
               (*outs, np.zeros(3 * n, np.int32), x, np.int32(delta), np.int32(mask),
                np.int32(lane)), (n,), wg)
    info = got[8].reshape(n, 3)
    size = int(info[0, 0])
    assert size >= 1 and (size & (size - 1)) == 0, f"subgroup size {size}"
    want, want_info = model(x, wg, size, delta, mask, lane)
    np.testing.assert_array_equal(info, want_info)
    for k, key in enumerate(("down", "up", "xor", "shuf", "bcast")):
        np.testing.assert_array_equal(got[k], want[key], err_msg=key)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=0)
    np.testing.assert_allclose(got[5], want["sum"], err_msg="sum", **tol)
    np.testing.assert_array_equal(got[6], want["lo"], err_msg="min")
    np.testing.assert_array_equal(got[7], want["hi"], err_msg="max")
    return size


# -- both CPU paths ----------------------------------------------------------------------------

@pytest.mark.parametrize("n, wg, dtype", [
    (100, 64, np.float32),   # a partial last group: its missing items hold zero
    (1000, 48, np.float32),  # 48 = 32 + 16: a partial last subgroup in every group
    (77, 1, np.float64),     # one work-item a group, one lane a subgroup
    (300, 20, np.int32),     # a group smaller than a subgroup
    (1000, 256, np.int64),
    (600, 600, np.float32),  # over 256 items: the OpenCL fallback's chunks
])
def test_every_operation_against_numpy(cpu, n, wg, dtype):
    size = _check_ops(cpu, n, wg, dtype)
    assert size == 32  # both CPU paths: portakern's own subgroups (PoCL has none)


@pytest.mark.parametrize("delta, mask, lane", [(0, 0, 0), (7, 31, 31), (-1, -3, -2),
                                               (40, 33, 40), (31, 16, 17)])
def test_out_of_range_lanes_keep_the_callers_value(cpu, delta, mask, lane):
    _check_ops(cpu, 200, 48, np.float32, delta, mask, lane)


@pytest.mark.parametrize("n, wg", [(1000, 128), (333, 96), (100, 64)])
def test_shuffle_reduction_in_a_uniform_loop(cpu, n, wg):
    x = _data(n, np.float64, 9)
    (out, _) = _run(cpu, LOOP, "sg_loop", (np.full(-(-n // 32), np.nan), x), (n,), wg)
    padded = np.zeros(-(-n // 32) * 32)
    padded[:n] = x  # the items past the ndrange hold zero
    np.testing.assert_allclose(out, padded.reshape(-1, 32).sum(1), rtol=1e-12)


@pytest.mark.parametrize("shape, wg", [((37, 53), (8, 16)), ((9, 70), (3, 20))])
def test_2d_groups_take_lanes_by_linear_local_index(cpu, shape, wg):
    h, w = shape
    x = _data(h * w, np.float32, h).reshape(shape)
    out, lanes, _ = _run(cpu, GRID, "sg_grid", (np.zeros(shape, np.float32),
                                                np.zeros(shape, np.int32), x), shape, wg)
    items = wg[0] * wg[1]
    for a in range(h):
        for b in range(w):
            lid = (a % wg[0]) * wg[1] + b % wg[1]
            ln, sg = lid % 32, lid // 32
            assert lanes[a, b] == sg * 1000 + ln
            width = min(32, items - sg * 32)
            src = ln ^ 1
            if src < width:
                slid = sg * 32 + src
                sa, sb = a - a % wg[0] + slid // wg[1], b - b % wg[1] + slid % wg[1]
                want = x[sa, sb] if sa < h and sb < w else 0
            else:
                want = x[a, b]
            assert out[a, b] == want, (a, b)


def test_position_constructs_without_a_collective(cpu):
    n, wg = 200, 48
    (info,) = _run(cpu, POSITION, "positions", (np.zeros(2 * n, np.int32),), (n,), wg)
    lid = np.arange(n) % wg
    np.testing.assert_array_equal(info.reshape(n, 2), np.stack([lid // 32, lid % 32], 1))


def test_unsafe_indices_every_item_contributes(cpu):
    n, wg = 100, 64
    x = _data(n, np.float32, 4)
    out, _ = _run(cpu, UNSAFE, "sg_unsafe", (np.zeros(n, np.float32), x), (n,), wg)
    padded = np.zeros(128, np.float32)
    padded[:n] = x
    want = np.repeat(padded.reshape(4, 32).sum(1), 32)[:n]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


OUT_OF_BOUNDS = """
@kernel void reads_past_the_end(float* y, const float* x) {
    const long i = @index(Global, Linear);
    const float v = @shuffle_down(x[i + 5], 1);
    y[i] = v;
}
"""


def test_debug_mode_checks_the_values_a_collective_exchanges(cpu):
    kernel = pk.kernel(OUT_OF_BOUNDS, debug=True)
    y, x = np.zeros(100, np.float32), np.zeros(100, np.float32)
    with pytest.raises(pk.KernelFaultError, match=r"x\[100\] at .*:4"):
        kernel(cpu, 64)(y, x, ndrange=(100,))


# -- the CUDA and Metal stand-ins (or a GPU / a Mac) ----------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("n, wg, dtype", [(100, 64, np.float32), (200, 48, np.int32),
                                          (70, 20, np.float64)])
def test_cuda(n, wg, dtype):
    assert _check_ops(_backend("CUDA"), n, wg, dtype) == 32


@pytest.mark.gpu
def test_cuda_out_of_range_lanes_and_loop():
    cuda = _backend("CUDA")
    _check_ops(cuda, 100, 48, np.float32, -1, 40, 33)
    x = _data(256, np.float32, 2)
    out, _ = _run(cuda, LOOP, "sg_loop", (np.zeros(8, np.float32), x), (256,), 128)
    np.testing.assert_allclose(out, x.reshape(8, 32).sum(1), rtol=1e-5)


@pytest.mark.metal
@pytest.mark.parametrize("n, wg, dtype", [(100, 64, np.float32), (200, 48, np.int32)])
def test_metal(n, wg, dtype):
    assert _check_ops(_backend("Metal"), n, wg, dtype) == 32


@pytest.mark.metal
def test_metal_out_of_range_lanes_and_loop():
    metal = _backend("Metal")
    _check_ops(metal, 100, 48, np.float32, -1, 40, 33)
    x = _data(256, np.float32, 2)
    out, _ = _run(metal, LOOP, "sg_loop", (np.zeros(8, np.float32), x), (256,), 128)
    np.testing.assert_allclose(out, x.reshape(8, 32).sum(1), rtol=1e-5)


# -- renderings ------------------------------------------------------------------------------

def _code(text):
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def test_renderings_for_every_target():
    kernel = pk.kernel(OPS)
    cuda = kernel.render("cuda", T="float")
    for f in ("__shfl_sync(", "__shfl_down_sync(", "__shfl_up_sync(", "__shfl_xor_sync("):
        assert f in cuda
    metal = kernel.render("metal", T="float")
    for f in ("simd_shuffle(", "simd_shuffle_down(", "simd_shuffle_up(", "simd_shuffle_xor(",
              "simd_broadcast(", "simd_sum(", "simd_min(", "simd_max("):
        assert f in metal
    opencl = kernel.render("opencl", T="float")
    for f in ("sub_group_shuffle_down(", "sub_group_broadcast(", "sub_group_reduce_add(",
              "cl_khr_subgroups", "__local T pk_sg0[PK_SG_SLOTS];"):
        assert f in opencl
    c = kernel.render("c", T="float")
    assert "pk_sv[pk_items]" in c and "pk_priv_d[pk_items]" in c
    for target in ("cuda", "metal", "opencl", "c"):
        assert not re.search(r"@\w", _code(kernel.render(target, T="float")))


@pytest.mark.parametrize("source", [OPS, LOOP, GRID, UNSAFE],
                         ids=["ops", "loop", "grid", "unsafe"])
def test_cuda_rendering_compiles_to_ptx(source):
    from portakern.checks import compile_cuda_ptx, cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(why)
    for t in ("float", "int", "double", "long", "uint8_t"):
        compile_cuda_ptx(pk.kernel(source).render("cuda", T=t))


@pytest.mark.parametrize("source", [OPS, LOOP, GRID, UNSAFE],
                         ids=["ops", "loop", "grid", "unsafe"])
def test_metal_rendering_passes_the_metal_check(source):
    from portakern.checks import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(why)
    for t in ("float", "int"):
        check_metal(pk.kernel(source).render("metal", T=t))


@pytest.mark.parametrize("t", ["float", "int", "long", "double"])
def test_opencl_rendering_with_device_subgroups_compiles(tmp_path, t):
    # PoCL has no sub-groups, so the native branch is compiled here by clang for SPIR,
    # which declares cl_khr_subgroups and the shuffle extensions.
    import shutil
    import subprocess

    clang = shutil.which("clang")
    if clang is None:
        pytest.skip("clang is not installed (apt-get install clang)")
    path = tmp_path / "k.cl"
    path.write_text(pk.kernel(OPS).render("opencl", T=t), encoding="utf-8")
    cmd = [clang, "-x", "cl", "-cl-std=CL2.0", "--target=spir64", "-Xclang",
           "-finclude-default-header", str(path)]
    pre = subprocess.run([*cmd, "-E"], capture_output=True, text=True, check=True).stdout
    assert "sub_group_shuffle_down(pk_v" in pre and "sub_group_reduce_max(pk_v" in pre
    assert "pk_sg0" not in pre  # no fallback buffer
    done = subprocess.run([*cmd, "-fsyntax-only", "-Werror"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ("if (@index(Global, Linear) < 4) { const float s = @shuffle_down(x[0], 1); y[0] = s; }",
     "value per work-item"),
    ("if (@laneid() == 0) { const float s = @subgroupreduce(add, x[0]); y[0] = s; }",
     "@laneid()"),
    ("const float s = @shuffle(x[0], 1); for (int k = 0; k < (int)s; k++) { "
     "const float t = @shuffle(x[0], k); y[k] = t; }", "a subgroup operation"),
    ("y[0] = @shuffle(x[0], 1);", "must initialise a declaration"),
    ("const float s = 1 + @broadcast(x[0], 0);", "must initialise a declaration"),
    ("const float s = @subgroupreduce(mul, x[0]);", "add, min or max"),
    ("const float s = @shuffle_xor(x[0]);", "takes two arguments"),
    ("auto s = @shuffle_up(x[0], 1);", "needs the result's type"),
    ("y[0] = @laneid(3);", "takes no arguments"),
    ("const float4 s = @shuffle(float4(x[0]), 1);", "exchange each component"),
    ("@uniform const float s = @broadcast(x[0], 0);", "cannot be @uniform"),
    ("for (long k = @index(Global, Linear); k < 8; k++) { const float s = "
     "@shuffle(x[k], 0); y[k] = s; }", "value per work-item"),
    ("if (@index(Global, Linear) == 0) return; const float s = @subgroupreduce(max, x[0]);",
     "'return' before @synchronize"),
])
def test_misuse_is_a_syntax_error_at_the_line(body, message):
    source = f"@kernel void k(float* y, const float* x) {{\n    {body}\n}}\n"
    with pytest.raises(KernelSyntaxError, match=re.escape(message)) as info:
        pk.kernel(source).render("opencl")
    assert info.value.lineno == 2


SHUFFLE_IN_CONDITION = """
@kernel void cond(int* out, const int* x) {
    const long i = @index(Global, Linear);
    if (@shuffle_xor(x[i], 1) > x[i]) {
        out[i] = 1;
    } else {
        out[i] = 0;
    }
}
"""


def test_a_collective_in_an_if_condition_is_lockstep_by_the_one_definition(cpu):
    # The statement tree's facts are the one definition of lockstep (there used to be a
    # second, over raw tokens, that disagreed on a shuffle inside a condition); such a
    # shuffle is then refused at its line on every path, with the form that works.
    k = pk.kernel(SHUFFLE_IN_CONDITION)
    assert k.facts("c").lockstep and k.facts("opencl").lockstep
    n = 256
    x = np.random.default_rng(7).integers(0, 1000, n).astype(np.int32)
    with pytest.raises(KernelSyntaxError, match=r"const T r = @shuffle_xor") as info:
        _run(cpu, SHUFFLE_IN_CONDITION, "cond", (np.zeros(n, np.int32), x), (n,), 64)
    assert info.value.lineno == 4
