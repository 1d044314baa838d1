"""Pointers, references and helpers with array parameters (docs/language.md, "Helper functions").

The renderer infers each pointer's address space (portakern/pointers.py): checked
against NumPy on both CPU paths (native C++ and PoCL, where OpenCL C needs the spaces
and has no references), rendered for the four targets (CUDA compiled to PTX, Metal
through the Metal check) and executed on the CUDA and Metal stand-ins.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError

# A helper over two arrays, called with global arrays, a pointer variable into one, and
# local memory; a pointer variable into local memory; a group-uniform tile loop.
MATVEC = """
T dot(const T* a, const T* b, int n) {
    T s = 0;
    for (int k = 0; k < n; k++) {
        s += a[k] * b[k];
    }
    return s;
}

T first_of(const T* a) { return a[0]; }

@kernel void matvec(T* y, T* z, const T* x, const T* w, int n) {
    @localmem T tile[{{ N }}];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    if (l == 0) {  // item 0 of a group is always inside the ndrange
        for (int k = 0; k < n; k++) {
            tile[k] = w[k] * (T)2;
        }
    }
    @synchronize();
    const T* row = x + i * n;
    const T* t = tile + 0;
    y[i] = dot(row, w, n) + first_of(t);
    z[i] = dot(x + i * n, t, n);
}
"""

# References: a cuda-samples style comparator on private variables and on local memory,
# and a reference variable into a global array.
SWAP = """
void order(T& a, T& b) {
    if (a > b) {
        const T t = a;
        a = b;
        b = t;
    }
}

void bump(T& r, const T* by, long i) { r += by[i]; }

@kernel void pairs(T* lo, T* hi, T* sorted, const T* a, const T* b) {
    @localmem T s[2 * {{ N }}];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    T p = a[i];
    T q = b[i];
    order(p, q);
    lo[i] = p;
    hi[i] = q;
    s[2 * l] = b[i];
    s[2 * l + 1] = a[i];
    order(s[2 * l], s[2 * l + 1]);
    T& r = sorted[i];
    r = s[2 * l] * (T)10 + s[2 * l + 1];
    bump(r, a, i);
}
"""

# A pointer into a private array, handed to a helper that writes through it.
PRIVATE = """
void fill(T* out, int n, T v) {
    for (int k = 0; k < n; k++) {
        out[k] = v * (T)(k + 1);
    }
}

@kernel void private_sums(T* y, const T* x) {
    const long i = @index(Global, Linear);
    T acc[4];
    T* p = acc;
    fill(p, 4, x[i]);
    y[i] = acc[0] + acc[1] + acc[2] + acc[3];
}
"""

# A reference and a pointer that live across a barrier (the native path keeps such
# variables per work-item; a reference becomes a pointer there).
ACROSS = """
@kernel void across(T* y, const T* x) {
    @localmem T t[{{ N }}];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    T& r = y[i];
    const T* p = x + i;
    t[l] = x[i];
    @synchronize();
    r = t[l] * (T)2 + *p;
}
"""

# A helper with barriers (inlined into the kernel body): it loads a tile, waits for the
# group, and hands a neighbour's element back through a reference; called in a
# group-uniform loop, so partial groups and the native path's work-item loops apply.
BARRIER = """
void exchange(T* tile, const T* x, long i, long l, long g, T& out) {
    tile[l] = x[i];
    @synchronize();
    out += tile[(l + 1) % g];
    @synchronize();
}

@kernel void neighbours(T* y, const T* x, int rounds) {
    @localmem T t[{{ N }}];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    T v = 0;
    for (int r = 0; r < rounds; r++) {
        exchange(t, x, i, l, @groupsize(), v);
    }
    y[i] = v;
}
"""

N = 64

# A kernel the native path cannot compile would fall back to PoCL with this warning.
pytestmark = pytest.mark.filterwarnings("error::portakern.NativeFallbackWarning")


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


def _run(backend, source, host_args, n, wg, **constants):
    kernel = pk.kernel(source, **constants)
    args = tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args)
    kernel(backend, wg)(*args, ndrange=(n,))
    backend.synchronize()
    return [backend.to_host(a) for a, h in zip(args, host_args, strict=True)
            if isinstance(h, np.ndarray)]


def _check_matvec(backend, rows, cols, wg, dtype=np.float32):
    rng = np.random.default_rng(rows + cols)
    x = rng.uniform(-1, 1, (rows, cols)).astype(dtype)
    w = rng.uniform(-1, 1, cols).astype(dtype)
    y, z = np.zeros(rows, dtype), np.zeros(rows, dtype)
    y, z, _, _ = _run(backend, MATVEC, (y, z, x, w, np.int32(cols)), rows, wg, N=N)
    np.testing.assert_allclose(y, x @ w + 2 * w[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(z, x @ (2 * w), rtol=1e-4, atol=1e-5)


def _check_pairs(backend, n, wg, dtype=np.float32):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 9, n).astype(dtype)
    b = rng.integers(0, 9, n).astype(dtype)
    lo, hi, srt = (np.zeros(n, dtype) for _ in range(3))
    lo, hi, srt, _, _ = _run(backend, SWAP, (lo, hi, srt, a, b), n, wg, N=wg)
    np.testing.assert_array_equal(lo, np.minimum(a, b))
    np.testing.assert_array_equal(hi, np.maximum(a, b))
    np.testing.assert_array_equal(srt, np.minimum(a, b) * 10 + np.maximum(a, b) + a)


def _check_private(backend, n, wg, dtype=np.float32):
    x = np.arange(n, dtype=dtype) / 7
    y = np.zeros(n, dtype)
    y, _ = _run(backend, PRIVATE, (y, x), n, wg)
    np.testing.assert_allclose(y, x * 10, rtol=1e-6)


# -- both CPU paths -----------------------------------------------------------------------

@pytest.mark.parametrize("rows, cols, wg", [(100, 40, 32), (7, 64, 64), (130, 1, 16)])
def test_helper_over_global_and_local_arrays(cpu, rows, cols, wg):
    _check_matvec(cpu, rows, cols, wg)


@pytest.mark.parametrize("n, wg", [(100, 32), (33, 16)])
def test_reference_parameters_and_variables(cpu, n, wg):
    _check_pairs(cpu, n, wg)


def test_pointer_into_a_private_array(cpu):
    _check_private(cpu, 77, 16)


def _check_across(backend, n=100, wg=32):
    x = np.arange(n, dtype=np.float32)
    y, _ = _run(backend, ACROSS, (np.zeros(n, np.float32), x), n, wg, N=wg)
    np.testing.assert_array_equal(y, 3 * x)


def test_reference_living_across_a_barrier(cpu):
    _check_across(cpu)


def _check_barrier(backend, n=100, wg=32, rounds=3):
    x = np.arange(n, dtype=np.float32)
    y, _ = _run(backend, BARRIER, (np.zeros(n, np.float32), x, np.int32(rounds)), n, wg, N=wg)
    # Work-items past the end of the ndrange still reach the barriers, but load nothing:
    # a neighbour there reads whatever the tile holds, so only full groups are compared.
    item = np.arange(n)
    neighbour = item - item % wg + (item % wg + 1) % wg
    full = neighbour < n - n % wg if n % wg else np.ones(n, bool)
    np.testing.assert_array_equal(y[full], rounds * x[neighbour[full]])


@pytest.mark.parametrize("n, wg", [(96, 32), (100, 32), (50, 50)])
def test_helper_with_barriers_is_inlined(cpu, n, wg):
    _check_barrier(cpu, n, wg)


def test_double(cpu):
    _check_matvec(cpu, 50, 9, 16, np.float64)


# -- the stand-ins -------------------------------------------------------------------------

@pytest.mark.gpu
def test_cuda():
    backend = _backend("CUDA")
    _check_matvec(backend, 100, 40, 32)
    _check_pairs(backend, 100, 32)
    _check_private(backend, 77, 16)
    _check_docs(backend)
    _check_across(backend)
    _check_barrier(backend)


@pytest.mark.metal
def test_metal():
    backend = _backend("Metal")
    _check_matvec(backend, 100, 40, 32)
    _check_matvec(backend, 3, 2, 4)  # inputs of fewer than 8 elements: MLX's constant space
    _check_pairs(backend, 100, 32)
    _check_private(backend, 77, 16)
    _check_docs(backend)
    _check_across(backend)
    _check_barrier(backend)


# -- renderings ----------------------------------------------------------------------------

def test_opencl_copies_a_helper_per_address_space_combination():
    text = pk.kernel(MATVEC, N=N).render("opencl", T="float")
    assert "T dot_pk_gg(__global const T* a, __global const T* b, int n)" in text
    assert "T dot_pk_gl(__global const T* a, __local const T* b, int n)" in text
    assert "T first_of_pk_l(__local const T* a)" in text
    assert re.search(r"__global const T\s*\*\s*row", text)
    assert re.search(r"__local const T\s*\*\s*t\b", text)
    assert "dot_pk_gg(row, w, n)" in text and "dot_pk_gl(x + i * n, t, n)" in text
    swap = pk.kernel(SWAP, N=N).render("opencl", T="float")
    assert "void order_pk_pp(__private T* a, __private T* b)" in swap
    assert "void order_pk_ll(__local T* a, __local T* b)" in swap
    assert "order_pk_pp(&(p), &(q))" in swap
    assert "order_pk_ll(&(s[2 * l]), &(s[2 * l + 1]))" in swap
    assert "if ((*a) > (*b))" in swap
    assert re.search(r"__global T\s*\*\s*r = &\(sorted\[i\]\)", swap)
    assert "bump_pk_gg(&((*r)), a, i)" in swap


def test_metal_overloads_and_input_pointers():
    text = pk.kernel(MATVEC, N=N).render("metal", T="float")
    # A read-only input may be device or constant memory (MLX decides per launch).
    for a in ("device", "constant"):
        for b in ("device", "constant"):
            assert f"T dot({a} const T* a, {b} const T* b, int n)" in text
        assert f"T dot({a} const T* a, threadgroup const T* b, int n)" in text
    assert "decltype(&x[0])" in text
    swap = pk.kernel(SWAP, N=N).render("metal", T="float")
    assert "void order(thread T& a, thread T& b)" in swap
    assert "void order(threadgroup T& a, threadgroup T& b)" in swap


@pytest.mark.parametrize("target", ["c", "cuda"])
def test_flat_targets_keep_the_source(target):
    text = pk.kernel(SWAP, N=N).render(target, T="float")
    assert "order(T& a, T& b)" in text and "order(p, q)" in text
    assert "__private" not in text and "(&(p)" not in text and "order_pk" not in text


@pytest.mark.parametrize("source", [MATVEC, SWAP, PRIVATE, ACROSS, BARRIER, "docs"],
                         ids=["matvec", "swap", "private", "across", "barrier", "docs"])
def test_cuda_rendering_compiles_to_ptx(source):
    source = _docs_source() if source == "docs" else source
    from portakern.checks import compile_cuda_ptx, cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(why)
    for t in ("float", "double"):
        compile_cuda_ptx(pk.kernel(source, N=N).render("cuda", T=t))


@pytest.mark.parametrize("source", [MATVEC, SWAP, PRIVATE, ACROSS, BARRIER, "docs"],
                         ids=["matvec", "swap", "private", "across", "barrier", "docs"])
def test_metal_rendering_passes_the_metal_check(source):
    source = _docs_source() if source == "docs" else source
    from portakern.checks import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(why)
    for t in ("float", "int"):
        check_metal(pk.kernel(source, N=N).render("metal", T=t))


def test_no_portability_warning_for_pointers():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.PortabilityWarning)
        for source in (MATVEC, SWAP, PRIVATE):
            pk.kernel(source, N=N).render("opencl", T="float")


# -- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("source, message", [
    ("float f(float** p) { return p[0][0]; }\n"
     "@kernel void k(float* y) { y[0] = 1; }", "pointer to a pointer"),
    ("@kernel void k(float* y) {\n    float** p = 0;\n    y[0] = 1;\n}", "pointer to a pointer"),
    ("void f(float*& p) { }\n@kernel void k(float* y) { y[0] = 1; }", "pointer to a pointer"),
])
def test_refused_with_a_syntax_error(source, message):
    for target in ("opencl", "metal", "cuda", "c"):  # on every target alike
        with pytest.raises(KernelSyntaxError, match=re.escape(message)):
            pk.kernel(source).render(target)


_EXCHANGE = "void ex(float* t, long l) {\n    t[l] = 1;\n    @synchronize();\n}\n"


@pytest.mark.parametrize("source, message, line", [
    ("float ex(float* t) {\n    @synchronize();\n    return t[0];\n}\n"
     "@kernel void k(float* y) { y[0] = ex(y); }", "must return void", 1),
    ("void ex(float* t) {\n    if (t[0] > 0) return;\n    @synchronize();\n}\n"
     "@kernel void k(float* y) { ex(y); }", "where 'return' would end the kernel", 2),
    (_EXCHANGE + "void other(float* t) { ex(t, 0); }\n@kernel void k(float* y) { other(y); }",
     "can be called from a kernel only, not from another helper", 5),
    (_EXCHANGE + "@kernel void k(float* y) {\n    const long l = @index(Local, Linear);\n"
     "    y[0] = (ex(y, l), 1.0f);\n}", "call it as a statement of its own", 7),
    # Per-item control around the call: the usual convergence error, at the 'if'.
    (_EXCHANGE + "@kernel void k(float* y) {\n    @localmem float t[64];\n"
     "    const long i = @index(Global, Linear);\n    if (y[i] > 0) {\n        ex(t, i);\n"
     "    }\n}", "(it contains @synchronize() on line 3) depends on 'i'", 8),
])
def test_helper_with_barriers_misuse(source, message, line):
    for target in ("opencl", "c"):
        with pytest.raises(KernelSyntaxError, match=re.escape(message)) as e:
            pk.kernel(source).render(target)
        assert e.value.lineno == line


def test_a_pointer_with_no_source_is_an_error_at_its_line():
    source = "@kernel void k(float* y) {\n    float* p;\n    y[0] = 1;\n}"
    with pytest.raises(KernelSyntaxError, match="cannot infer the address space of 'p'") as e:
        pk.kernel(source).render("opencl")
    assert e.value.lineno == 2


@pytest.mark.parametrize("source, check", [(MATVEC, _check_matvec), (SWAP, _check_pairs)],
                         ids=["matvec", "swap"])
def test_debug_mode(cpu, monkeypatch, source, check):
    monkeypatch.setenv("PORTAKERN_DEBUG", "1")
    if check is _check_matvec:
        check(cpu, 40, 12, 16)
    else:
        check(cpu, 40, 16)


# -- one kernel of a file (issue 14, item 5) -------------------------------------------------

MANY = """
#define TWICE(v) ((v) * 2)
float scale(float v) { return v * {{ FACTOR }}; }

@kernel void first(float* y) {
    const long i = @index(Global, Linear);
    y[i] = scale(y[i]) + {{ OFFSET }};
}

{% for op in ["a", "b"] %}
@kernel void gen_{{ op }}(float* y) { y[@index(Global, Linear)] += {{ STEP }}; }
{% endfor %}

// {  a brace in a comment, and "}" in a string, do not end a kernel: "{"
@kernel(unsafe_indices) void second(float* y) {
    const long i = @index(Global, Linear);
    if (i < @ndrange()) {
        y[i] = TWICE(y[i]) + {{ SHIFT }} + scale(1.0f);
    }
}
"""


def test_one_kernel_of_a_file_needs_only_its_own_constants(tmp_path, cpu):
    path = tmp_path / "many.pk"
    path.write_text(MANY)
    y = np.arange(6, dtype=np.float32)
    # OFFSET (first's) is unbound; STEP is needed: gen_a and gen_b come from a loop.
    kernel = pk.kernel.from_file(path, "second", FACTOR=3, SHIFT=1, STEP=0)
    kernel(y, ndrange=y.shape)
    np.testing.assert_array_equal(y, np.arange(6, dtype=np.float32) * 2 + 1 + 3)
    y = np.arange(6, dtype=np.float32)
    pk.kernel(MANY, "first", FACTOR=2, OFFSET=0.5, STEP=0)(y, ndrange=y.shape)
    np.testing.assert_array_equal(y, np.arange(6, dtype=np.float32) * 2 + 0.5)


@pytest.mark.parametrize("name, constants, missing, line", [
    ("second", dict(SHIFT=1, STEP=0), "FACTOR", 3),  # a helper the kernel uses
    ("second", dict(FACTOR=1, STEP=0), "SHIFT", 18),  # the kernel's own
    ("second", dict(FACTOR=1, SHIFT=0), "STEP", 11),  # a kernel Jinja names: kept
    ("gen_a", dict(FACTOR=1), "STEP", 11),
])
def test_a_constant_the_chosen_kernel_needs_is_still_an_error(name, constants, missing, line):
    with pytest.raises(KernelSyntaxError, match=f"undefined name '{missing}'") as e:
        pk.kernel(MANY, name, **constants).render("opencl")
    assert e.value.lineno == line


def test_without_a_name_every_constant_is_needed():
    with pytest.raises(KernelSyntaxError, match="undefined name 'OFFSET'"):
        pk.kernel(MANY.replace("second", "second_only"), FACTOR=1, SHIFT=1, STEP=0).render(
            "opencl")


def _docs_source() -> str:
    """The kernel of docs/language.md's "Helper functions, pointers and references"."""
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "language.md").read_text()
    at = doc.index("## Helper functions, pointers and references")
    return re.search(r"```c\n(.*?)```", doc[at:], re.S).group(1)


def _check_docs(backend):
    rng = np.random.default_rng(5)
    rows, n = 100, 24
    x = rng.uniform(-1, 1, (rows, n)).astype(np.float32)
    w = rng.uniform(-1, 1, n).astype(np.float32)
    keys = rng.integers(0, 1000, 2 * rows).astype(np.uint32)
    y = np.zeros(rows, np.float32)
    y, _, _, got_keys = _run(backend, _docs_source(), (y, x, w, keys, np.int32(n)), rows, 32)
    # The reference r is declared apart from its value (hoisted above the masked
    # segment after the barrier): a pointer on every target.
    np.testing.assert_allclose(y, 2 * (x @ w) + 1, rtol=1e-4, atol=1e-5)
    lo, hi = np.minimum(keys[0::2], keys[1::2]), np.maximum(keys[0::2], keys[1::2])
    np.testing.assert_array_equal(got_keys[0::2], hi)  # lo + (hi - lo)
    np.testing.assert_array_equal(got_keys[1::2], hi)
    assert not np.array_equal(lo, hi)  # the data has pairs to order


def test_the_docs_example(cpu):
    _check_docs(cpu)
