"""Complex numbers (docs/language.md "Complex numbers"): cfloat and cdouble on every backend,
against NumPy, and the CUDA and Metal renderings through the real compilers' checks."""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.analysis.c_types import arithmetic, binary_type, library_call_type, scalar
from portakern.errors import KernelTypeError

MADD = """
@kernel void madd(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

FUNCS = """
@kernel void funcs(cfloat* out, float* parts, const cfloat* z, const cfloat* cs) {
    const long i = @index(Global, Linear);
    const cfloat w = z[i];
    const cfloat c = cs[0];
    out[i * 10 + 0] = conj(w) * 2 - c / w;
    out[i * 10 + 1] = exp(w);
    out[i * 10 + 2] = log(w);
    out[i * 10 + 3] = sqrt(w);
    out[i * 10 + 4] = pow(w, c);
    out[i * 10 + 5] = polar(abs(w), arg(w) + 1.0f);
    out[i * 10 + 6] = -w + 1.5f;
    cfloat acc = 2.0f;
    acc += w;
    acc *= c;
    acc -= 1;
    acc /= cfloat(0.5f, 0.25f);
    out[i * 10 + 7] = acc;
    out[i * 10 + 8] = cfloat(real(w) * 3.0f, imag(w));
    out[i * 10 + 9] = (cfloat)(2.0f);
    parts[i * 3 + 0] = w.re + 2.0f * w.im;
    parts[i * 3 + 1] = w == c ? 1.0f : 0.0f;
    parts[i * 3 + 2] = w != w ? 1.0f : 0.0f;
}
"""

ATOMIC = """
@kernel void parts(cfloat* total, const cfloat* z) {
    const long i = @index(Global, Linear);
    @atomic_add(&total[0].re, real(z[i]));
    @atomic_add(&total[0].im, imag(z[i]));
}
"""

MIXED = """
@kernel void mixed(cdouble* y, const cfloat* x, const cdouble* w) {
    const long i = @index(Global, Linear);
    y[i] = x[i] * w[i] + x[i];
}
"""

NARROW = """
cfloat half_of(cfloat z) { return z * 0.5f; }
@kernel void narrow(cfloat* y, const cdouble* w, const cfloat* x) {
    const long i = @index(Global, Linear);
    const cdouble a = w[i] + x[i];
    y[i] = half_of(w[i]) + (cfloat)a + cfloat(x[i] * w[i] - 2.0);
    cfloat c = w[i];
    y[i] += c;
}
"""


def _values(rng, n, dt):
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)


def _run(backend, kernel, host_args, n):
    args = tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args)
    kernel(backend)(*args, ndrange=(n,))
    backend.synchronize()
    return [backend.to_host(a) if isinstance(h, np.ndarray) else a
            for a, h in zip(args, host_args, strict=True)]


def _complex128_ok(backend) -> bool:
    return not (backend.name.startswith("Metal") or "MLX" in repr(backend))


# -- the typed tree -----------------------------------------------------------------------

def test_typed_tree_rules():
    cf, cd, f, d, i = (scalar(n) for n in ("cfloat", "cdouble", "float", "double", "int"))
    assert cf.kind == "complex" and cf.element == f
    assert arithmetic(cf, d) == cf and arithmetic(i, cf) == cf  # the real converts
    assert arithmetic(cf, cd) == cd and arithmetic(cd, cf) == cd
    assert binary_type("==", cf, f).name == "bool"
    assert binary_type("<", cf, cf).unknown and binary_type("%", cf, i).unknown
    assert library_call_type("abs", [cf]) == f and library_call_type("abs", [i]) == i
    assert library_call_type("exp", [cd]) == cd and library_call_type("exp", [f]) == f
    assert library_call_type("pow", [cf, cd]) == cd
    assert library_call_type("polar", [f, f]) == cf and library_call_type("polar", [d, d]) == cd


def test_type_variable_binds_from_complex_arrays():
    k = pk.kernel(MADD)
    assert k.type_vars == ("T",)
    for dt, name in [(np.complex64, "cfloat"), (np.complex128, "cdouble")]:
        assert pk.types.type_name_of(np.dtype(dt)) == name
        assert pk.types.dtype_of(name) == np.dtype(dt)
        assert np.dtype(dt).itemsize == 2 * np.dtype(dt).alignment * (1 if dt == np.complex64
                                                                       else 1)


# -- every backend against NumPy ----------------------------------------------------------

@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_madd_matches_numpy(backend, dt):
    if dt == np.complex128 and not _complex128_ok(backend):
        pytest.skip("Metal has no float64 (test_cdouble_is_refused_on_metal)")
    rng = np.random.default_rng(1)
    n = 1000
    x, y = _values(rng, n, dt), _values(rng, n, dt)
    a = dt(0.5 - 1.25j)
    if not _complex128_ok(backend):  # MLX would pass the scalar as its own complex64_t
        with pytest.raises(KernelTypeError, match=r"'a' is a complex scalar.*one-element"):
            _run(backend, pk.kernel(MADD), (y.copy(), x, a), n)
        return
    got, _, _ = _run(backend, pk.kernel(MADD), (y.copy(), x, a), n)
    np.testing.assert_allclose(got, a * x + y, rtol=1e-6 if dt == np.complex64 else 1e-14)


def test_operators_and_functions_match_numpy(backend):
    rng = np.random.default_rng(2)
    n = 257
    z = _values(rng, n, np.complex64)
    z[0] = np.complex64(1 - 2j)  # equal to c
    c = np.complex64(1 - 2j)
    out, parts, _, _ = _run(backend, pk.kernel(FUNCS),
                            (np.zeros(n * 10, np.complex64), np.zeros(n * 3, np.float32), z,
                             np.full(16, c)),
                            n)
    o = out.reshape(n, 10)
    z128, c128 = z.astype(np.complex128), np.complex128(c)
    acc = ((2 + z128) * c128 - 1) / np.complex128(0.5 + 0.25j)
    refs = [np.conj(z128) * 2 - c128 / z128, np.exp(z128), np.log(z128), np.sqrt(z128),
            z128 ** c128, np.abs(z128) * np.exp(1j * (np.angle(z128) + 1)), -z128 + 1.5, acc,
            z128.real * 3 + 1j * z128.imag, np.full(n, 2 + 0j)]
    for j, ref in enumerate(refs):
        np.testing.assert_allclose(o[:, j], ref, rtol=2e-5, atol=2e-5, err_msg=f"column {j}")
    p = parts.reshape(n, 3)
    np.testing.assert_allclose(p[:, 0], z.real + 2 * z.imag, rtol=1e-6)
    assert p[0, 1] == 1 and (p[1:, 1] == 0).all() and (p[:, 2] == 0).all()


def test_atomics_on_the_real_and_imaginary_parts(backend):
    rng = np.random.default_rng(3)
    n = 512
    z = (rng.integers(-8, 8, n) + 1j * rng.integers(-8, 8, n)).astype(np.complex64)
    # 16 elements: MLX keeps arrays of at most 8 in constant memory, whose struct copies
    # the Metal stand-in's clang refuses.
    total, _ = _run(backend, pk.kernel(ATOMIC), (np.zeros(16, np.complex64), z), n)
    assert total[0] == z.sum() and (total[1:] == 0).all()  # small integers: exact


def test_cfloat_with_cdouble_widens(backend):
    if not _complex128_ok(backend):
        pytest.skip("Metal has no float64 (test_cdouble_is_refused_on_metal)")
    rng = np.random.default_rng(4)
    n = 100
    x, w = _values(rng, n, np.complex64), _values(rng, n, np.complex128)
    y, _, _ = _run(backend, pk.kernel(MIXED), (np.zeros(n, np.complex128), x, w), n)
    np.testing.assert_allclose(y, x.astype(np.complex128) * w + x, rtol=1e-14)


def test_cdouble_is_refused_on_metal():
    with pytest.raises(KernelTypeError, match=r"'y' is cdouble .*Metal has no float64.*cfloat"):
        pk.kernel(MIXED).rendered("metal", {}, 1)
    with pytest.raises(KernelTypeError, match=r"'y' is cdouble"):
        pk.kernel(MADD).rendered("metal", {"T": "cdouble"}, 1)


def test_opencl_rendering_calls_the_prelude_functions():
    src = pk.kernel(FUNCS).rendered("opencl", {}, 1).source
    for call in ("pk_cfloat_mul(", "pk_cfloat_div(", "pk_cfloat_exp(", "pk_cfloat_polar(",
                 "pk_cfloat_eq(", "pk_cfloat_neg(", "pk_cfloat_make("):
        assert call in src, call
    assert "acc = pk_cfloat_add(acc," in src.replace("\n", " ")
    # The other targets keep the operators as written.
    assert "pk_cfloat_mul" not in pk.kernel(FUNCS).rendered("cuda", {}, 1).source


def test_compound_assignment_with_side_effects_is_refused_on_opencl():
    src = """@kernel void k(cfloat* y, const cfloat* x) {
        long i = @index(Global, Linear);
        y[i++] *= x[0];
    }"""
    with pytest.raises(pk.KernelSyntaxError, match="side effects"):
        pk.kernel(src).rendered("opencl", {}, 1)


def test_kernels_without_complex_render_unchanged():
    src = MADD.replace("T", "float")
    k = pk.kernel(src)
    assert "cfloat" not in k.rendered("c", {}, 1).source
    assert "pk_cfloat" not in k.rendered("opencl", {}, 1).source


# -- the real compilers' checks -------------------------------------------------------------

def test_cdouble_narrows_to_cfloat_like_double_to_float(backend):
    # A cast, a constructor, an initialisation and a cfloat parameter: on every target.
    if not _complex128_ok(backend):
        pytest.skip("Metal has no float64 (test_cdouble_is_refused_on_metal)")
    rng = np.random.default_rng(5)
    n = 64
    w, x = _values(rng, n, np.complex128), _values(rng, n, np.complex64)
    y, _, _ = _run(backend, pk.kernel(NARROW), (np.zeros(n, np.complex64), w, x), n)
    want = (w.astype(np.complex64) * np.float32(0.5) + (w + x).astype(np.complex64)
            + (x * w - 2).astype(np.complex64) + w.astype(np.complex64))
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_cuda_rendering_compiles_to_ptx():
    from portakern.backends.cuda import CUDA
    from portakern.checks.cuda import cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(f"no CUDA compiler for the PTX check: {why}")
    for source, bindings in [(MADD, {"T": "cfloat"}), (MADD, {"T": "cdouble"}), (FUNCS, {}),
                             (ATOMIC, {}), (MIXED, {}), (HELPERS, {}), (REF_HELPERS, {}),
                             (GENERIC_HELPER, {"T": "cdouble"}), (DOUBLE_HELPER, {}),
                             (NARROW, {})]:
        kernel = pk.kernel(source)
        ptx = CUDA.compile_check(kernel.rendered("cuda", bindings, 1), "compute_90")
        assert f".entry {kernel.name}(" in ptx


def test_metal_rendering_passes_the_clang_check():
    from portakern.backends import _mlx
    from portakern.checks.metal import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no Metal check here: {why}")
    from portakern.examples import EXAMPLES_DIR

    fir = (EXAMPLES_DIR / "fir_complex.pk").read_text()
    for source, bindings in [(MADD, {"T": "cfloat"}), (FUNCS, {}), (ATOMIC, {}), (fir, {})]:
        rendered = pk.kernel(source).rendered("metal", bindings, 1)
        check_metal(rendered.source, sources=rendered.sources())
        if "T a" in source:  # MLX refuses a complex scalar (test_madd_matches_numpy)
            continue
        program = _mlx.build_program(rendered, "metal", cast64=False)
        check_metal(_mlx.translation_unit(program, bindings), sources=rendered.sources())


# -- helper functions (rewritten on OpenCL and Metal as the kernel body is) ------------------

HELPERS = """
cfloat twice(cfloat z) { return z * 2.0f + z; }
cfloat rot(cfloat z, float t) {
    cfloat w = cfloat(cos(t), sin(t));
    cfloat acc = 1.0f;
    acc *= z;
    acc += w * twice(z);
    acc -= 0.5f;
    acc /= cfloat(2.0f, -1.0f);
    return -acc + conj(w);
}
cfloat unit(float t) { return exp(cfloat(0.0f, t)); }
cfloat one() { return 1.0f; }
float size(cfloat z) { return abs(z) + real(sqrt(z)) * arg(z); }
cfloat sum3(const cfloat* a, long i) { return a[i] + a[i + 1] + a[i + 2]; }
@kernel void helpers(cfloat* out, float* mag, const cfloat* x) {
    const long i = @index(Global, Linear);
    out[i * 6 + 0] = twice(x[i]);
    out[i * 6 + 1] = rot(x[i], 0.25f);
    out[i * 6 + 2] = unit(real(x[i])) + one();
    out[i * 6 + 3] = twice(2.0f);
    out[i * 6 + 4] = sum3(x, i);
    out[i * 6 + 5] = log(twice(x[i]) == x[i] ? one() : x[i]) / 2;
    mag[i] = size(x[i]);
}
"""

GENERIC_HELPER = """
T twice(T z) { return z + z * 2; }
T scaled(T z, float s) { T w = z; w *= s; return twice(w); }
@kernel void twice_generic(T* y, const T* x) {
    const long i = @index(Global, Linear);
    y[i] = scaled(x[i], 0.5f) - twice(x[i]);
}
"""

DOUBLE_HELPER = """
cdouble widen(cfloat z, cdouble w) { cdouble s = z; return s * w + z; }
@kernel void widened(cdouble* y, const cfloat* x, const cdouble* w) {
    const long i = @index(Global, Linear);
    y[i] = widen(x[i], w[i]);
}
"""


REF_HELPERS = """
void accumulate(cfloat& z, cfloat v) { z += v * 2; }
void scale(cfloat* z, float s) { z[0] *= s; *z = *z + cfloat(0.0f, s); }
@kernel void refs(cfloat* y, const cfloat* x) {
    const long i = @index(Global, Linear);
    cfloat t = x[i];
    accumulate(t, x[i]);
    scale(&t, 0.5f);
    y[i] = t;
    scale(&y[i], 2.0f);
}
"""


def _helpers_reference(x):
    z = x.astype(np.complex128)
    w = np.exp(0.25j)
    acc = (((1 * z) + w * (3 * z)) - 0.5) / (2 - 1j)
    rot = -acc + np.conj(w)
    out = np.stack([3 * z, rot, np.exp(1j * z.real) + 1, np.full(len(z), 6 + 0j),
                    z + np.roll(z, -1) + np.roll(z, -2), np.log(z) / 2], axis=1)
    mag = np.abs(z) + np.sqrt(z).real * np.angle(z)
    return out, mag


def test_helpers_with_complex_arithmetic_match_numpy(backend):
    rng = np.random.default_rng(5)
    n = 200
    x = _values(rng, n + 2, np.complex64)
    out, mag, _ = _run(backend, pk.kernel(HELPERS),
                       (np.zeros(n * 6, np.complex64), np.zeros(n, np.float32), x), n)
    ref, ref_mag = _helpers_reference(x)
    o = out.reshape(n, 6)
    for j in range(6):
        np.testing.assert_allclose(o[:, j], ref[:n, j], rtol=2e-5, atol=2e-5,
                                   err_msg=f"column {j}")
    np.testing.assert_allclose(mag, ref_mag[:n], rtol=2e-5, atol=2e-5)


def test_helpers_taking_references_and_pointers(backend):
    rng = np.random.default_rng(8)
    n = 150
    x = _values(rng, n, np.complex64)
    y, _ = _run(backend, pk.kernel(REF_HELPERS), (np.zeros(n, np.complex64), x), n)
    t = 3 * x.astype(np.complex128) * 0.5 + 0.5j
    np.testing.assert_allclose(y, t * 2 + 2j, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_helper_with_a_type_variable_bound_to_complex(backend, dt):
    if dt == np.complex128 and not _complex128_ok(backend):
        pytest.skip("Metal has no float64 (test_cdouble_in_a_helper_is_refused_on_metal)")
    rng = np.random.default_rng(6)
    n = 300
    x = _values(rng, n, dt)
    y, _ = _run(backend, pk.kernel(GENERIC_HELPER), (np.zeros(n, dt), x), n)
    z = x.astype(np.complex128)
    np.testing.assert_allclose(y, 3 * (0.5 * z) - 3 * z,
                               rtol=1e-5 if dt == np.complex64 else 1e-13, atol=1e-6)


def test_helper_widening_cfloat_to_cdouble(backend):
    if not _complex128_ok(backend):
        pytest.skip("Metal has no float64 (test_cdouble_in_a_helper_is_refused_on_metal)")
    rng = np.random.default_rng(7)
    n = 100
    x, w = _values(rng, n, np.complex64), _values(rng, n, np.complex128)
    y, _, _ = _run(backend, pk.kernel(DOUBLE_HELPER), (np.zeros(n, np.complex128), x, w), n)
    z = x.astype(np.complex128)
    np.testing.assert_allclose(y, z * w + z, rtol=1e-14)


BARRIER_HELPER = """
void exchange(cfloat* tile, long j, cfloat v) {
    tile[j] = v * 2.0f;
    @synchronize();
}
@kernel(workgroupsize=64) void swapped(cfloat* y, const cfloat* x) {
    const long i = @index(Global, Linear);
    const long j = @index(Local, Linear);
    @localmem cfloat tile[64];
    exchange(tile, j, x[i]);
    y[i] = tile[63 - j] + 1.0f;
}
"""


def test_helper_with_a_barrier_and_complex_arithmetic(backend):
    rng = np.random.default_rng(9)
    n = 256
    x = _values(rng, n, np.complex64)
    y, _ = _run(backend, pk.kernel(BARRIER_HELPER), (np.zeros(n, np.complex64), x), n)
    ref = 2 * x.reshape(-1, 64)[:, ::-1].reshape(-1).astype(np.complex128) + 1
    np.testing.assert_allclose(y, ref, rtol=1e-6)


def test_opencl_rewrites_helper_bodies():
    src = pk.kernel(HELPERS).rendered("opencl", {}, 1).source
    flat = " ".join(src.split())
    assert "return pk_cfloat_add(pk_cfloat_mul(z, pk_cfloat_make((float)(2.0f), 0)), z);" \
        in flat
    assert "acc = pk_cfloat_mul(acc, z);" in flat
    assert "cfloat acc = pk_cfloat_make((float)(1.0f), 0);" in flat
    assert "return pk_cfloat_make((float)(1.0f), 0);" in flat  # a real returned converts
    assert "twice(pk_cfloat_make((float)(2.0f), 0))" in flat  # a real argument converts
    generic = pk.kernel(GENERIC_HELPER).rendered("opencl", {"T": "cfloat"}, 1).source
    assert "return pk_T_add" not in generic and "pk_cfloat_add(z, pk_cfloat_mul(z," in " ".join(
        generic.split())
    # Bound to a real type, the same helpers are left as written.
    real = pk.kernel(GENERIC_HELPER).rendered("opencl", {"T": "float"}, 1).source
    assert "pk_cfloat" not in real and "return z + z * 2;" in real


def test_metal_rewrites_helper_constructors_and_conversions():
    src = " ".join(pk.kernel(HELPERS).rendered("metal", {}, 1).source.split())
    assert "cfloat w = pk_cfloat_make((float)(cos(t)), (float)(sin(t)));" in src
    assert "return pk_cfloat_make((float)(1.0f), 0);" in src
    assert "return pk_cfloat_ld(&(a[i])) + " in src  # a pointer parameter's element
    assert "return pk_cfloat_ld(&(z)) * 2.0f + pk_cfloat_ld(&(z));" in src  # operators stay


def test_cdouble_in_a_helper_is_refused_on_metal():
    with pytest.raises(KernelTypeError, match=r"helper widen\(\) \(line 2\) uses cdouble.*"
                                              r"Metal has no float64.*cfloat"):
        pk.kernel(DOUBLE_HELPER.replace("cdouble* y", "cfloat* y").replace(
            "const cdouble* w", "const cfloat* w")).rendered("metal", {}, 1)
    with pytest.raises(KernelTypeError, match=r"'y' is cdouble"):
        pk.kernel(GENERIC_HELPER).rendered("metal", {"T": "cdouble"}, 1)


def test_complex_arithmetic_on_an_untyped_value_is_refused():
    src = """#define SQ(a) ((a) * (a))
#define HALF(a) ((a) / 2)
cfloat f(cfloat z) {
    return z + HALF(real(z));
}
cfloat g(cfloat z) {
    return z + SQ(z);
}
@kernel void k(cfloat* y, const cfloat* x) {
    const long i = @index(Global, Linear);
    y[i] = f(x[i]) + g(x[i]);
}"""
    with pytest.raises(pk.KernelSyntaxError, match=r"line 4.*'HALF\(real\(z\)\)', whose type "
                                                   r"portakern cannot tell.*typed local first "
                                                   r"\('float v = HALF\(real\(z\)\);'"):
        pk.kernel(src).rendered("opencl", {}, 1)
    fixed = src.replace("return z + HALF(real(z));", "float v = HALF(real(z));\n    return z + v;")
    with pytest.raises(pk.KernelSyntaxError, match=r"line 8.*macro SQ\(\) is given a complex "
                                                   r"value.*write SQ as a helper function"):
        pk.kernel(fixed).rendered("opencl", {}, 1)
    # The C++ dialects overload the operators: nothing to rewrite there.
    assert "z + SQ(z)" in pk.kernel(src).rendered("cuda", {}, 1).source


def test_the_fixes_for_untyped_values_run(backend):
    src = """#define HALF(a) ((a) / 2)
cfloat sq(cfloat a) { return a * a; }
cfloat f(cfloat z) {
    float v = HALF(real(z));
    return z + v + sq(z);
}
@kernel void k(cfloat* y, const cfloat* x) {
    const long i = @index(Global, Linear);
    y[i] = f(x[i]);
}"""
    rng = np.random.default_rng(11)
    x = _values(rng, 50, np.complex64)
    y, _ = _run(backend, pk.kernel(src), (np.zeros(50, np.complex64), x), 50)
    z = x.astype(np.complex128)
    np.testing.assert_allclose(y, z + z.real / 2 + z ** 2, rtol=1e-5, atol=1e-6)


def test_helper_rendering_passes_the_compilers_checks():
    from portakern.backends import _mlx
    from portakern.checks.metal import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no Metal check here: {why}")
    for source, bindings in [(HELPERS, {}), (GENERIC_HELPER, {"T": "cfloat"}),
                             (REF_HELPERS, {}), (BARRIER_HELPER, {})]:
        rendered = pk.kernel(source).rendered("metal", bindings, 1)
        check_metal(rendered.source, sources=rendered.sources())
        program = _mlx.build_program(rendered, "metal", cast64=False)
        check_metal(_mlx.translation_unit(program, bindings), sources=rendered.sources())


def _docs_helper_example() -> str:
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "language.md").read_text()
    start = text.index("```c\n", text.index("**Helper functions** compute with complex"))
    return text[start + 5:text.index("```", start + 5)]


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_the_docs_helper_example_runs_as_written(backend, dt):
    if dt == np.complex128 and not _complex128_ok(backend):
        pytest.skip("Metal has no float64 (test_cdouble_in_a_helper_is_refused_on_metal)")
    rng = np.random.default_rng(10)
    n = 64
    x = _values(rng, n, dt)
    y, _ = _run(backend, pk.kernel(_docs_helper_example()), (np.zeros(n, dt), x), n)
    z = x.astype(np.complex128)
    np.testing.assert_allclose(y, np.exp(0.25j) * 3 * z + 6, rtol=1e-5, atol=1e-5)
