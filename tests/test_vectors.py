"""Vector types (``float4``, ``int2``, ``uchar4``...; portakern/vectors.py, docs/language.md).

Each feature runs on both CPU paths (the native C++ and PoCL) against a NumPy model:
constructors, components, arithmetic with vectors and scalars, comparisons through
any/all, dot/length, ``@vload``/``@vstore`` on scalar arrays, vector arrays as
trailing-axis NumPy arrays, and vectors in a kernel with barriers (the lockstep path).
The renderings are checked per target (CUDA compiled to PTX, Metal through the Metal
check) and executed on the CUDA and Metal stand-ins; bad input is refused with a
message that names it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelArgumentError, KernelSyntaxError, KernelTypeError
from portakern.syntax.vectors import VECTOR_TYPES

ARRAY_TYPES = [v for v in VECTOR_TYPES.values() if v.width in (2, 4)]


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


def _run(backend, source, host_args, ndrange, workgroupsize=None):
    """Launch a fresh kernel on ``backend`` and return host copies of the arguments."""
    kernel = pk.kernel(source)
    args = tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args)
    kernel(backend, workgroupsize)(*args, ndrange=ndrange)
    backend.synchronize()
    return [backend.to_host(a) if not isinstance(a, np.generic) else a for a in args]


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-4, 4, size=shape).astype(dtype)
    lo = 0 if np.dtype(dtype).kind == "u" else -50
    return rng.integers(lo, 50, size=shape).astype(dtype)


# -- arithmetic, constructors, components, comparisons -------------------------------------------

def _arith_source(vt) -> str:
    V, E = vt.name, vt.element
    real = vt.dtype.kind == "f"
    return f"""
@kernel void arith({V}* out, int* flags, {E}* dots, const {V}* a, const {V}* b, {E} s) {{
    const long i = @index(Global, Linear);
    {V} u = a[i] + b[i] * s;
    u -= {V}(1);
    u = u / {V}({", ".join(["2"] * vt.width)});
    u += s;
    u.x = u.y;
    out[i] = u;
    flags[2 * i] = any(a[i] < b[i]) ? 1 : 0;
    flags[2 * i + 1] = all(a[i] <= b[i]) ? 1 : 0;
    {"dots[i] = dot(a[i], b[i]) + length(a[i]);" if real else "dots[i] = u.x;"}
}}
"""


def _arith_model(vt, a, b, s):
    dt = vt.dtype
    u = (a + b * s).astype(dt)
    u = (u - dt.type(1)).astype(dt)
    if dt.kind == "f":
        u = (u / dt.type(2)).astype(dt)
    else:
        u = np.trunc(u.astype(np.float64) / 2).astype(dt)
    u = (u + s).astype(dt)
    u[:, 0] = u[:, 1]
    flags = np.stack([(a < b).any(axis=1), (a <= b).all(axis=1)], axis=1).astype(np.int32)
    if dt.kind == "f":
        dots = (a.astype(np.float64) * b).sum(axis=1) + np.sqrt((a.astype(np.float64) ** 2)
                                                                 .sum(axis=1))
    else:
        dots = u[:, 0]
    return u, flags.reshape(-1), dots.astype(dt)


def _check_arith(backend, vt, n=300):
    a = _data((n, vt.width), vt.dtype, 1)
    b = _data((n, vt.width), vt.dtype, 2)
    s = vt.dtype.type(3)
    out = np.zeros((n, vt.width), vt.dtype)
    flags = np.zeros(2 * n, np.int32)
    dots = np.zeros(n, vt.dtype)
    got, gflags, gdots, *_ = _run(backend, _arith_source(vt), (out, flags, dots, a, b, s), (n,))
    want, wflags, wdots = _arith_model(vt, a, b, s)
    if vt.dtype.kind == "f":
        tol = dict(rtol=1e-5, atol=1e-5) if vt.dtype == np.float32 else dict(rtol=1e-12)
        np.testing.assert_allclose(got, want, **tol)
        np.testing.assert_allclose(gdots, wdots, **tol)
    else:
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(gdots, wdots)
    np.testing.assert_array_equal(gflags, wflags)


@pytest.mark.parametrize("vt", ARRAY_TYPES, ids=lambda v: v.name)
def test_arithmetic_components_and_comparisons(cpu, vt):
    _check_arith(cpu, vt)


LOADS = """
@kernel void loads(float* y, const float* x, const uint8_t* px, float* z) {
    const long i = @index(Global, Linear);
    const float2 p = @vload(2, x, i);
    const float3 q = @vload(3, x, i);
    const float4 r = @vload(4, x, i);
    @vstore(4, r * 2.0f + float4(p.x, p.y, q.z, 0.0f), y, i);
    const uchar4 c = @vload(4, px, i);
    @vstore(3, float3((float)c.x, (float)c.w, q.x + q.y), z, i);
}
"""


def test_vload_and_vstore_on_scalar_arrays(cpu):
    n = 257
    x = _data(4 * n, np.float32, 3)
    px = _data(4 * n, np.uint8, 4)
    y, z = np.zeros(4 * n, np.float32), np.zeros(3 * n, np.float32)
    gy, _, _, gz = _run(cpu, LOADS, (y, x, px, z), (n,))
    x2, x3, x4 = x[:2 * n].reshape(n, 2), x[:3 * n].reshape(n, 3), x.reshape(n, 4)
    extra = np.stack([x2[:, 0], x2[:, 1], x3[:, 2], np.zeros(n, np.float32)], axis=1)
    np.testing.assert_allclose(gy.reshape(n, 4), x4 * 2 + extra, rtol=1e-6, atol=1e-6)
    c = px.reshape(n, 4).astype(np.float32)
    want_z = np.stack([c[:, 0], c[:, 3], x3[:, 0] + x3[:, 1]], axis=1)
    np.testing.assert_allclose(gz.reshape(n, 3), want_z, rtol=1e-6, atol=1e-6)


SHARED = """
@kernel void neighbours(float4* out, const float4* a) {
    @localmem float4 tile[64];
    const long l = @index(Local, Linear);
    const float4 v = a[@index(Global, Linear)] * 2.0f;
    tile[l] = v;
    @synchronize();
    const float4 w = tile[(l + 1) % 64];
    out[@index(Global, Linear)] = v + w;
}
"""


def test_vectors_in_local_memory_across_a_barrier(cpu):
    n = 256
    a = _data((n, 4), np.float32, 5)
    (out, _) = _run(cpu, SHARED, (np.zeros((n, 4), np.float32), a), (n,), 64)
    v = (a * 2).reshape(-1, 64, 4)
    want = (v + np.roll(v, -1, axis=1)).reshape(n, 4)
    np.testing.assert_allclose(out, want, rtol=1e-6)


HELPER = """
float4 scaled(float4 v, float k) { return v * k + float4(0.0f, 0.0f, 0.0f, 1.0f); }

@kernel void helper(float4* out, const float4* a) {
    const long i = @index(Global, Linear);
    out[i] = scaled(a[i], 3.0f);
}
"""


def test_constructor_in_a_helper_function(cpu):
    a = _data((100, 4), np.float32, 6)
    (out, _) = _run(cpu, HELPER, (np.zeros((100, 4), np.float32), a), (100,))
    np.testing.assert_allclose(out, a * 3 + np.array([0, 0, 0, 1], np.float32), rtol=1e-6)


# -- the CUDA and Metal stand-ins (or a GPU / a Mac) ----------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("vt", [VECTOR_TYPES[t] for t in ("float4", "int2", "uchar4",
                                                          "double2")], ids=lambda v: v.name)
def test_cuda(vt):
    _check_arith(_backend("CUDA"), vt)


@pytest.mark.gpu
def test_cuda_loads_and_local_memory():
    cuda = _backend("CUDA")
    test_vload_and_vstore_on_scalar_arrays(cuda)
    test_vectors_in_local_memory_across_a_barrier(cuda)


METAL = """
@kernel void metal_vec(float* y, int* flags, const float* x, float s) {
    const long i = @index(Global, Linear);
    const float4 a = @vload(4, x, i);
    float4 u = a * s - float4(1.0f);
    u += float4(0.5f, 1.0f, 1.5f, 2.0f);
    u.w = dot(a, a);
    @vstore(4, u, y, i);
    flags[i] = any(a < float4(0.0f)) ? 1 : 0;
}
"""


@pytest.mark.metal
@pytest.mark.parametrize("vt", [VECTOR_TYPES[t] for t in ("float4", "int2", "uint4", "uchar4")],
                         ids=lambda v: v.name)
def test_metal(vt):
    _check_arith(_backend("Metal"), vt)


@pytest.mark.metal
def test_metal_vectors_on_scalar_arrays():
    metal = _backend("Metal")
    n = 200
    x = _data(4 * n, np.float32, 7)
    y, flags = np.zeros(4 * n, np.float32), np.zeros(n, np.int32)
    gy, gflags, _, _ = _run(metal, METAL, (y, flags, x, np.float32(2.5)), (n,))
    a = x.reshape(n, 4)
    want = a * 2.5 - 1 + np.array([0.5, 1, 1.5, 2], np.float32)
    want[:, 3] = (a * a).sum(axis=1)
    np.testing.assert_allclose(gy.reshape(n, 4), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(gflags, (a < 0).any(axis=1))


# -- renderings ---------------------------------------------------------------------------------

def test_renderings_for_every_target():
    kernel = pk.kernel(_arith_source(VECTOR_TYPES["float4"]))
    spelled = {
        "c": ["struct alignas(16) float4 { float x, y, z, w; };", "pk_make_float4(1)"],
        "opencl": ["#define pk_make_float4(...) ((float4)(__VA_ARGS__))",
                   "__global const float4* restrict a"],
        "cuda": ["__device__ inline float4 operator+(float4 a, float4 b)",
                 "pk_make_float4(1)"],
        "metal": ["#define pk_make_float4(...) float4(__VA_ARGS__)",
                  "const device float4* a"],
    }
    for target, needles in spelled.items():
        src = kernel.render(target)
        for needle in needles:
            assert needle in src, (target, needle)
        assert not re.search(r"@\w", re.sub(r"//[^\n]*|/\*.*?\*/", "", src, flags=re.S))
    loads = pk.kernel(LOADS)
    assert "#define pk_vload4 vload4" in loads.render("opencl")
    assert "pk_vload4(i, x)" in loads.render("c")
    assert "pk_vstore3(" in loads.render("metal")


def test_kernels_without_vectors_render_no_vector_prelude():
    plain = pk.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = 1.0f; }")
    for target in ("c", "cuda", "opencl", "metal"):
        assert "pk_make_" not in plain.render(target)


ALL_TYPES = "\n".join(
    f"    {{ const {v.name} t = {v.name}(({v.element})1); "
    f"y[i] += (float)t.x; }}" for v in VECTOR_TYPES.values())
EVERY = f"""
@kernel void every(float* y) {{
    const long i = @index(Global, Linear);
{ALL_TYPES}
}}
"""


def test_every_vector_type_compiles_on_both_cpu_paths(cpu):
    (y,) = _run(cpu, EVERY, (np.zeros(8, np.float32),), (8,))
    np.testing.assert_array_equal(y, np.full(8, len(VECTOR_TYPES), np.float32))


@pytest.mark.parametrize("source", [_arith_source(VECTOR_TYPES["float4"]),
                                    _arith_source(VECTOR_TYPES["uchar4"]), LOADS, SHARED,
                                    EVERY], ids=["float4", "uchar4", "loads", "shared", "every"])
def test_cuda_rendering_compiles_to_ptx(source):
    from portakern.checks import compile_cuda_ptx, cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(why)
    compile_cuda_ptx(pk.kernel(source).render("cuda"))


@pytest.mark.parametrize("source", [_arith_source(VECTOR_TYPES["float4"]),
                                    _arith_source(VECTOR_TYPES["uint4"]), LOADS, SHARED,
                                    METAL], ids=["float4", "uint4", "loads", "shared", "metal"])
def test_metal_rendering_passes_the_metal_check(source):
    from portakern.checks import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(why)
    check_metal(pk.kernel(source).render("metal"))


# -- errors -------------------------------------------------------------------------------------

VEC = "@kernel void f(float4* y, const float4* x) { const long i = @index(Global, Linear); BODY }"


@pytest.mark.parametrize("body, message", [
    ("y[i].q = 1.0f;", r"'y\.q': unknown component of a 4-component vector; the components "
                       r"are \.x \.y \.z \.w"),
    ("float2 v = float2(1.0f); v.z = 0.0f;", r"'v\.z': unknown component of a 2-component"),
    ("const float4 v = x[i]; y[i] = float4(v.xy, 0.0f, 0.0f);", r"swizzles are not portable"),
    ("y[i] = float4(1.0f, 2.0f);", r"float4\(\.\.\.\) takes 1 value .* or 4 values .* got 2"),
    ("y[i] = float4();", r"got 0"),
    ("y[i] = @vload(5, x, i);", r"the width, 2, 3 or 4"),
    ("@vstore(4, x[i], y);", r"@vstore takes 4 arguments"),
])
def test_misuse_is_a_syntax_error_at_the_line(body, message):
    with pytest.raises(KernelSyntaxError, match=message):
        pk.kernel(VEC.replace("BODY", body)).render("opencl")


def test_a_swizzle_of_a_helper_s_returned_vector_is_refused_and_a_component_runs():
    # the 80-kernel probe: make(a).xy reached NVRTC ("no member xy"); .w builds everywhere
    helper = "float4 make(float a) { return float4(a, a + 1.0f, a + 2.0f, a + 3.0f); }\n"
    source = helper + ("@kernel void f(float2* y) {\n"
                       "    const long i = @index(Global, Linear);\n"
                       "    y[i] = make(1.0f).xy;\n}\n")
    with pytest.raises(KernelSyntaxError, match=r"'make\(\.\.\.\)\.xy': swizzles are not "
                                                r"portable") as info:
        pk.kernel(source)
    assert info.value.lineno == 4
    ok = pk.kernel(helper + "@kernel void g(float* y) {\n"
                            "    y[@index(Global, Linear)] = make(2.0f).w + make(1.0f).x;\n}\n")
    y = np.zeros(2, np.float32)
    ok(y, ndrange=2)
    assert list(y) == [6.0, 6.0]
    assert "make(2.0f).w" in ok.render("cuda")


@pytest.mark.parametrize("signature, message", [
    ("float4 v", r"a vector cannot be passed by value"),
    ("const float3* v", r"arrays of float3 are not portable"),
])
def test_vector_parameters_that_are_refused(signature, message):
    with pytest.raises(KernelSyntaxError, match=message):
        pk.kernel(f"@kernel void f({signature}, float* y) {{ y[0] = 1.0f; }}").render("c")


COPY = "@kernel void copy(float4* y, const float4* x) { const long i = @index(Global, Linear); " \
       "y[i] = x[i]; }"


def test_wrong_arrays_for_a_vector_parameter():
    kernel = pk.kernel(COPY)
    y = np.zeros((8, 4), np.float32)
    with pytest.raises(KernelTypeError, match=r"argument 1 'x' \(const float4\*\) must be a "
                                              r"float32 array .* got dtype float64"):
        kernel(y, np.zeros((8, 4)), ndrange=(8,))
    with pytest.raises(KernelArgumentError, match=r"argument 1 'x' \(const float4\*\) must have"
                                                  r" a last axis of length 4 .* got shape "
                                                  r"\(32,\); reshape"):
        kernel(y, np.zeros(32, np.float32), ndrange=(8,))
    raw = np.zeros(8 * 16 + 4, np.uint8)[4:].view(np.float32).reshape(8, 4)
    with pytest.raises(KernelArgumentError, match=r"not aligned to 16 bytes"):
        kernel(y, raw, ndrange=(8,))
    x = _data((8, 4), np.float32, 9)
    kernel(y, x, ndrange=(8,))  # the right array is accepted
    np.testing.assert_array_equal(y, x)


def test_debug_mode_counts_vectors_not_components(cpu):
    kernel = pk.kernel("@kernel void over(float4* y, const float4* x) {\n"
                       "    const long i = @index(Global, Linear);\n"
                       "    y[i] = x[i + 1];\n}\n", debug=True)
    x = _data((8, 4), np.float32, 10)
    with pytest.raises(pk.KernelFaultError, match=r"x\[8\].*has 8 elements"):
        kernel(np.zeros((8, 4), np.float32), x, ndrange=(8,))
    y = np.zeros((8, 4), np.float32)
    kernel(y, x, ndrange=(7,))  # inside: no fault
    np.testing.assert_array_equal(y[:7], x[1:])


def test_mlx_views_vector_arrays_and_stages_written_ones():
    from portakern.backends import _mlx

    rendered = pk.kernel(COPY).rendered("metal", {}, 1)
    program = _mlx.build_program(rendered, "metal")
    assert program.modes == {"y": "staged"}
    assert [s.name for s in program.inputs] == ["pk_work_y", "pk_vec_x", "pk_dims"]
    assert "const auto x = pk_as_vector<float4>(pk_vec_x);" in program.source
    assert "device float4* y = (device float4*)pk_work_y;" in program.source
    assert _mlx.param_dtypes(program, {}) == {0: np.dtype(np.float32), 1: np.dtype(np.float32)}


def test_vload_arguments_keep_their_spacing(cpu):
    source = ("@kernel void f(float* y, const float* x) {\n"
              "    const long i = @index(Global, Linear);\n"
              "    @vstore(2, @vload(2, x, i) * (float)sizeof x[0], y, i);\n}\n")
    assert "pk_vload2(i, x) * (float)sizeof x[0]" in pk.kernel(source).render("c")
    x = _data(8, np.float32, 11)
    (y, _) = _run(cpu, source, (np.zeros(8, np.float32), x), (4,))
    np.testing.assert_allclose(y, x * 4, rtol=1e-6)


CONVERT = """
@kernel void convert(float4* f, int4* k, uchar4* c, const uchar4* px, const float4* x) {
    const long i = @index(Global, Linear);
    f[i] = convert_float4(px[i]) * 0.5f;
    k[i] = convert_int4(x[i]);
    c[i] = convert_uchar4(convert_int4(x[i]) + 100);
}
"""


def test_conversions_between_vector_types(cpu):
    n = 64
    px = _data((n, 4), np.uint8, 12)
    x = _data((n, 4), np.float32, 13) * 10
    f, k, c = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.int32), \
        np.zeros((n, 4), np.uint8)
    gf, gk, gc, _, _ = _run(cpu, CONVERT, (f, k, c, px, x), (n,))
    np.testing.assert_array_equal(gf, px.astype(np.float32) * 0.5)
    np.testing.assert_array_equal(gk, np.trunc(x).astype(np.int32))  # toward zero
    np.testing.assert_array_equal(gc, (np.trunc(x).astype(np.int32) + 100).astype(np.uint8))


@pytest.mark.gpu
def test_cuda_conversions():
    test_conversions_between_vector_types(_backend("CUDA"))


@pytest.mark.metal
def test_metal_conversions():
    test_conversions_between_vector_types(_backend("Metal"))


def test_conversion_renderings_compile():
    from portakern.checks import (
        check_metal,
        compile_cuda_ptx,
        cuda_check_available,
        metal_check_available,
    )

    kernel = pk.kernel(CONVERT)
    assert "convert_float4(px[i])" in kernel.render("opencl")  # OpenCL's own
    if cuda_check_available()[0]:
        compile_cuda_ptx(kernel.render("cuda"))
    if metal_check_available()[0]:
        check_metal(kernel.render("metal"))
