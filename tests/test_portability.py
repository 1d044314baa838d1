"""The portable subset (DESIGN section 1): what the parser accepts runs on every target,
or a ``PortabilityWarning`` at kernel creation names the targets that lack it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import portakern as pk
from portakern.checks import check_metal, metal_check_available


@pytest.fixture
def clang() -> None:
    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no clang for the Metal syntax check: {why}")


# -- atomics on threadgroup memory (Metal before 4.1 has no float ones) ---------------------

LOCAL_FLOAT_ATOMICS = """
@kernel void local_atomics(float* out) {
    const long l = @index(Local, Linear);
    @localmem float acc[4];
    if (l < 4) {
        acc[l] = 0;
    }
    @synchronize();
    @atomic_add(&acc[0], 1.0f);
    @atomic_sub(&acc[1], 1.0f);
    @atomic_xchg(&acc[2], 2.0f);
    @atomic_max(&acc[3], (float)l);
    @atomic_cas(&acc[2], 2.0f, 3.0f);
    @synchronize();
    if (l < 4) {
        @atomic_add(&out[l], acc[l]);
    }
}
"""


def test_metal_float_atomics_on_threadgroup_memory_use_uint_operations():
    source = pk.kernel(LOCAL_FLOAT_ATOMICS).render("metal")
    assert "threadgroup atomic_float" not in source
    assert "threadgroup atomic_uint" in source
    # Device memory keeps Metal 3's native float atomics.
    assert "atomic_fetch_add_explicit((device atomic_float*)p" in source


def test_metal_float_atomics_on_threadgroup_memory_pass_the_check(clang):
    kernel = pk.kernel(LOCAL_FLOAT_ATOMICS)
    rendered = kernel.rendered("metal", {}, 1)
    check_metal(rendered.source, sources=rendered.sources(), name="local_atomics.metal")


def test_threadgroup_float_atomics_agree_with_numpy(backend):
    if backend.target == "metal":
        pytest.skip("runs with the other backends; Metal's own run is on a Mac")
    out = backend.zeros(4, np.float32)
    pk.kernel(LOCAL_FLOAT_ATOMICS)(out, ndrange=64, workgroupsize=32)
    backend.synchronize()
    # Two groups of 32: +32, -32, 3 (2 exchanged for 3), max local id 31 -- each summed.
    np.testing.assert_array_equal(backend.to_host(out), [64.0, -64.0, 6.0, 62.0])


# -- the portable math (DESIGN section 1) ---------------------------------------------------

MATH = """
@kernel void math(float* y, const float* x, long* z, const long* w) {
    const long i = @index(Global, Linear);
    const float v = x[i];
    float r = sqrt(v) + exp(v) + log(v) + sin(v) + cos(v) + tanh(v) + pow(v, 1.5f);
    r += fabs(-v) + fmin(v, 0.5f) + fmax(v, 0.5f) + fma(v, 2.0f, 1.0f) + floor(v) + ceil(v);
    r += min(v, 0.5f) + max(v, 0.5f) + clamp(v, 0.25f, 0.75f);
    y[i] = r + log1p(v) * 10.0f + expm1(v) * 100.0f;
    const long n = w[i];
    z[i] = min(n, 0L) + 10 * max(n, 0L) + 100 * clamp(n, -1L, 1L);
}
"""


def _math_reference(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = x.astype(np.float64)
    r = (np.sqrt(v) + np.exp(v) + np.log(v) + np.sin(v) + np.cos(v) + np.tanh(v) + v ** 1.5
         + np.abs(v) + np.minimum(v, 0.5) * 2 + np.maximum(v, 0.5) * 2 + (2 * v + 1)
         + np.floor(v) + np.ceil(v) + np.clip(v, 0.25, 0.75)
         + np.log1p(v) * 10 + np.expm1(v) * 100)
    z = np.minimum(w, 0) + 10 * np.maximum(w, 0) + 100 * np.clip(w, -1, 1)
    return r, z


def test_portable_math_passes_the_metal_check(clang):
    rendered = pk.kernel(MATH).rendered("metal", {}, 1)
    check_metal(rendered.source, sources=rendered.sources(), name="math.metal")


def test_portable_math_compiles_for_cuda():
    from portakern.backends.cuda import CUDA
    from portakern.checks import cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(why)
    ptx = CUDA.compile_check(pk.kernel(MATH).rendered("cuda", {}, 1))
    assert ".entry math(" in ptx


def test_min_max_of_two_integer_widths_compile_for_cuda_and_metal(clang):
    # long renders as long long on CUDA: min(n, 0L) and min(n, 0) were ambiguous there,
    # and min(n, 0) is ambiguous among Metal's one-type overloads.
    from portakern.backends.cuda import CUDA
    from portakern.checks import cuda_check_available

    source = """
    @kernel void k(long* z, const long* w, const int* q) {
        const long i = @index(Global, Linear);
        const long n = w[i];
        z[i] = min(n, 0L) + max(n, 0) + min(q[i], n) + max(0L, q[i]) + clamp(n, 0, 3);
    }
    """
    kernel = pk.kernel(source)
    rendered = kernel.rendered("metal", {}, 1)
    check_metal(rendered.source, sources=rendered.sources(), name="k.metal")
    if cuda_check_available()[0]:
        CUDA.compile_check(kernel.rendered("cuda", {}, 1))


def test_metal_log1p_and_expm1_keep_float_precision_near_zero():
    # The Metal prelude's formulas, evaluated here in float32 as the GPU would.
    source = pk.kernel(MATH).render("metal")
    assert "#define log1p pk_log1p" in source and "#define expm1 pk_expm1" in source
    f = np.float32

    def log1p(x):
        if abs(x) >= f(0.25):
            return np.log(f(1) + x)
        s = x / (f(2) + x)
        s2 = s * s
        p = f(1) / f(13)
        for c in (11, 9, 7, 5, 3):
            p = f(1) / f(c) + s2 * p
        return f(2) * s * (f(1) + s2 * p)

    def expm1(x):
        if abs(x) >= f(0.5):
            return np.exp(x) - f(1)
        p = f(1) / f(3628800)
        for c in (362880, 40320, 5040, 720, 120, 24, 6, 2):
            p = f(1) / f(c) + x * p
        return x * (f(1) + x * p)

    for x in np.concatenate([np.geomspace(1e-30, 1, 200), -np.geomspace(1e-30, 0.9, 200),
                             np.linspace(-0.9, 3, 200)]).astype(np.float32):
        assert log1p(x) == pytest.approx(np.log1p(float(x)), rel=5e-7, abs=0)
        assert expm1(x) == pytest.approx(np.expm1(float(x)), rel=5e-7, abs=0)
    # The formulas above are the ones rendered.
    assert "1.0f / 13" in source and "1.0f / 3628800" in source


def test_portable_math_agrees_with_numpy(backend):
    if backend.target == "metal":
        pytest.skip("Metal's run is on a Mac")
    x = np.linspace(0.05, 3, 64).astype(np.float32)
    w = np.arange(-32, 32).astype(np.int64)
    y, z = backend.zeros(64, np.float32), backend.zeros(64, np.int64)
    pk.kernel(MATH)(y, backend.to_device(x), z, backend.to_device(w), ndrange=64)
    backend.synchronize()
    r, zz = _math_reference(x, w)
    np.testing.assert_allclose(backend.to_host(y), r, rtol=2e-5)
    np.testing.assert_array_equal(backend.to_host(z), zz)


# -- PortabilityWarning at kernel creation --------------------------------------------------

def _no_portability_warning(source: str, **constants) -> pk.Kernel:
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.PortabilityWarning)
        return pk.kernel(source, **constants)


def test_printf_warns_at_creation_naming_metal_and_the_native_path():
    source = ("@kernel void k(float* y) {\n    const long i = @index(Global, Linear);\n"
              "    printf(\"%f\\n\", y[i]);\n}\n")
    with pytest.warns(pk.PortabilityWarning) as record:
        pk.kernel(source)
    [w] = [w for w in record if issubclass(w.category, pk.PortabilityWarning)]
    message = str(w.message)
    assert "printf" in message and ":3:5:" in message
    assert "Metal" in message and "native C++" in message
    assert "OpenCL" not in message.split("not portable to")[1]
    assert "CUDA" not in message.split("not portable to")[1]
    assert w.filename == __file__  # points at the pk.kernel(...) call


def test_printf_under_a_target_escape_does_not_warn():
    _no_portability_warning(
        "@kernel void k(float* y) {\n    const long i = @index(Global, Linear);\n"
        "{% if target in ('cuda', 'opencl') %}\n    printf(\"%f\\n\", y[i]);\n{% endif %}\n"
        "    y[i] = 1;\n}\n")


def test_portable_kernels_do_not_warn():
    _no_portability_warning(MATH)
    _no_portability_warning(LOCAL_FLOAT_ATOMICS)
    # Multiplication is not a pointer declaration; casts are not either.
    _no_portability_warning("@kernel void k(float* y, const float* x, float a) {\n"
                            "    const long i = @index(Global, Linear);\n"
                            "    float t = a * x[i]; y[i] = t * (float)i;\n}\n")


def test_pointers_are_portable_and_do_not_warn():
    # portakern.lower.pointers infers the address spaces (tests/test_pointers.py runs them).
    _no_portability_warning("@kernel void k(float* y, const float* x, long n) {\n"
                            "    const long i = @index(Global, Linear);\n"
                            "    const float* row = x + i * n;\n"
                            "    y[i] = row[0];\n}\n")
    _no_portability_warning("static float first_of(const float* a) { return a[0]; }\n"
                            "@kernel void k(float* y, const float* x) {\n"
                            "    const long i = @index(Global, Linear);\n"
                            "    y[i] = first_of(x + i);\n}\n")


@pytest.mark.parametrize("word, targets", [("vertex", "Metal"), ("thread", "Metal"),
                                           ("local", "OpenCL"), ("kernel", "OpenCL, Metal")])
def test_reserved_word_as_a_name_warns(word, targets):
    source = (f"@kernel void k(float* y) {{\n    const long {word} = @index(Global, Linear);\n"
              f"    y[{word}] = 1;\n}}\n")
    with pytest.warns(pk.PortabilityWarning) as record:
        pk.kernel(source)
    messages = [str(w.message) for w in record if issubclass(w.category, pk.PortabilityWarning)]
    assert len(messages) == 2  # the declaration and the use, each at its column
    assert f":2:16: '{word}' is a reserved word" in messages[0]
    assert messages[0].endswith(f"(not portable to: {targets})")


def test_a_kernel_needing_constants_warns_when_they_are_bound():
    source = ("@kernel void k(float* y) {\n    const long i = @index(Global, Linear);\n"
              "    printf(\"%d\\n\", {{ N }});\n    y[i] = 1;\n}\n")
    kernel = _no_portability_warning(source)  # N unbound: nothing to scan yet
    with pytest.warns(pk.PortabilityWarning, match="printf"):
        kernel.specialize(N=3)
    with pytest.warns(pk.PortabilityWarning, match="printf"):
        pk.kernel(source, N=3)


# -- atomics' element types, read off the typed tree ------------------------------------------

def _portability_warnings(source: str) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pk.kernel(source)
    return [str(w.message) for w in caught if issubclass(w.category, pk.PortabilityWarning)]


@pytest.mark.parametrize("update, declared", [
    ("@atomic_add(c + 1, (int64_t)i);", "int64_t"),        # pointer arithmetic
    ("@atomic_add(&(c[1]), (int64_t)i);", "int64_t"),      # parentheses
    ("@atomic_add(&acc[0], (long)i);", "long"),            # a local array
    ("@atomic_add(&big[0], (wide)i);", "wide"),            # a typedef: the tree knows it
])
def test_an_atomic_element_type_comes_from_the_typed_tree(update, declared):
    messages = _portability_warnings(
        "typedef long wide;\n"
        "@kernel void k(int64_t* c) {\n"
        "    const long i = @index(Global, Linear);\n"
        "    long acc[2] = {0, 0};\n"
        "    wide big[2] = {0, 0};\n"
        f"    {update}\n"
        "    c[0] = acc[0] + big[0];\n}\n")
    assert len(messages) == 1, messages
    assert f"on {declared} elements" in messages[0] and "<kernel source>:6:5" in messages[0]


def test_an_atomic_on_a_type_variable_or_a_32_bit_type_is_not_reported():
    assert not _portability_warnings("@kernel void k(T* c, int* d) {\n"
                                     "    const long i = @index(Global, Linear);\n"
                                     "    @atomic_add(&c[0], (T)i);\n"
                                     "    @atomic_add(d + 1, (int)i);\n}\n")


def test_an_atomic_in_a_helper_is_still_found_on_its_tokens():
    messages = _portability_warnings("void bump(long* c) { @atomic_add(&c[0], 1l); }\n"
                                     "@kernel void k(long* c) {\n"
                                     "    bump(c);\n}\n")
    assert len(messages) == 1 and "on long elements" in messages[0], messages
    assert "<kernel source>:1:22" in messages[0]


def test_the_scan_reads_the_typed_tree_it_is_given(monkeypatch):
    from portakern.analysis import expression_types, portability

    source = "@kernel void k(long* c) {\n    @atomic_add(&c[0], 1l);\n}\n"
    with pytest.warns(pk.PortabilityWarning, match="on long elements"):
        kernel = pk.kernel(source)
    module, kdef = kernel.parsed("metal")
    calls = []
    real = expression_types.typed_body
    monkeypatch.setattr(expression_types, "typed_body",
                        lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    issues = portability.scan(module, kdef, "metal", lambda: kernel.facts("metal"))
    assert [i.line for i in issues] == [2] and calls == [kernel.facts("metal")]
    assert portability.scan(module, kdef, "opencl") == []  # OpenCL has 64-bit atomics


def test_builtins_opencl_calls_ambiguous_warn_naming_opencl_and_the_fix():
    # PoCL: "call to '_cl_abs' is ambiguous", "call to '_cl_min' is ambiguous"
    src = ("@kernel void f(float* y, const long n, const int m) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    const float v = -2.0f;\n"
           "    y[i] = abs(v) + (float)min(i, m) + (float)max(n, 0)\n"
           "         + fmin(v, 1) + (float)abs(m) + fmax(v, 2.0f) + min(v, 3.0f);\n"
           "}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        k = pk.kernel(src)
    got = [str(w.message) for w in caught if issubclass(w.category, pk.PortabilityWarning)]
    assert len(got) == 3, got
    assert all(m.endswith("(not portable to: OpenCL)") for m in got)
    assert "4:12: abs() of a float" in got[0] and "write fabs()" in got[0]
    assert "4:28: min() of long and int" in got[1] and "min((long)a, (long)b)" in got[1]
    assert "4:47: max() of long and int" in got[2]
    # the fixed calls build and run on PoCL too
    fixed = (src.replace("abs(v)", "fabs(v)").replace("min(i, m)", "min(i, (long)m)")
             .replace("max(n, 0)", "max(n, 0L)"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.PortabilityWarning)
        fk = pk.kernel(fixed)
    y = np.zeros(4, np.float32)
    fk(y, 3, 1, ndrange=4)
    want = 2 + np.minimum(np.arange(4), 1) + 3 - 2 + 1 + 2 - 2
    assert np.array_equal(y, want.astype(np.float32))
    try:
        backend = pk.OpenCL()
    except pk.BackendUnavailableError as exc:
        pytest.skip(str(exc))
    d = backend.to_device(np.zeros(4, np.float32))
    fk(d, 3, 1, ndrange=4)
    assert np.array_equal(backend.to_host(d), want.astype(np.float32))
    del k


def test_a_method_taking_a_pointer_warns_naming_metal_and_the_fix():
    src = ("struct Acc {\n"
           "    float bins[4];\n"
           "    float first(const float* v) const { return v[0] + bins[0]; }\n"
           "    float get(long k) const { return bins[k]; }\n"
           "};\n"
           "@kernel void f(float* y, const float* x) {\n"
           "    Acc a;\n"
           "    a.bins[0] = 1.0f;\n"
           "    y[0] = a.first(x) + a.get(0);\n"
           "}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pk.kernel(src)
    got = [str(w.message) for w in caught if issubclass(w.category, pk.PortabilityWarning)
           and "Metal" in str(w.message)]
    assert len(got) == 1, got  # first() takes a pointer; get() does not
    assert "3:11: member function first() of struct Acc takes a pointer" in got[0]
    assert "write it as a helper function taking the struct" in got[0]
    assert got[0].endswith("(not portable to: Metal)")


def test_a_pointer_typedef_warns_naming_opencl_and_metal():
    # PoCL: "initializing '__private fptr' ... changes address space of pointer"
    src = ("typedef float* fptr;\n"
           "typedef float real;\n"
           "typedef struct { float a; } S;\n"
           "@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    fptr p = y;\n"
           "    p[i] = (real)2;\n"
           "}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pk.kernel(src)
    got = [str(w.message) for w in caught if issubclass(w.category, pk.PortabilityWarning)
           and "typedef" in str(w.message)]
    assert len(got) == 1, got
    assert "1:16: typedef fptr names a pointer type" in got[0]
    assert got[0].endswith("(not portable to: OpenCL, Metal)")
    # the fix the message names builds on PoCL too
    fixed = src.replace("typedef float* fptr;\n", "").replace("fptr p", "float* p")
    y = np.zeros(4, np.float32)
    pk.kernel(fixed)(y, ndrange=4)
    assert list(y) == [2.0] * 4
