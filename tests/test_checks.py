"""Tests for portakern.checks: the Metal (clang) and CUDA (NVRTC/nvcc) compile checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from portakern.checks import (
    check_metal,
    compile_cuda_ptx,
    cuda_check_available,
    metal_check_available,
)
from portakern.checks import cuda as cuda_module
from portakern.checks import metal as metal_module
from portakern.checks.diagnostics import (
    Diagnostic,
    format_diagnostics,
    parse_diagnostics,
)
from portakern.errors import BackendUnavailableError, CompilationError, PortakernError

# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------

MSL_MATMUL = """\
#include <metal_stdlib>
using namespace metal;

#define TILE 16

[[kernel]] void matmul(const device float* A [[buffer(0)]],
                       const device float* B [[buffer(1)]],
                       device float* C [[buffer(2)]],
                       constant uint& M [[buffer(3)]],
                       constant uint& N [[buffer(4)]],
                       constant uint& K [[buffer(5)]],
                       uint2 lid [[thread_position_in_threadgroup]],
                       uint2 tg [[threadgroup_position_in_grid]]) {
    threadgroup float As[TILE][TILE];
    threadgroup float Bs[TILE][TILE];
    const uint row = tg.y * TILE + lid.y;
    const uint col = tg.x * TILE + lid.x;
    float acc = 0.0f;
    for (uint t = 0; t < (K + TILE - 1) / TILE; ++t) {
        const uint ka = t * TILE + lid.x;
        const uint kb = t * TILE + lid.y;
        As[lid.y][lid.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[lid.y][lid.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < TILE; ++k) {
            acc = fma(As[lid.y][k], Bs[k][lid.x], acc);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
"""

MSL_HISTOGRAM = """\
#include <metal_stdlib>
using namespace metal;

[[kernel]] void histogram(const device uint* x [[buffer(0)]],
                          device uint* h [[buffer(1)]],
                          device atomic_float* total [[buffer(2)]],
                          constant uint& n [[buffer(3)]],
                          constant uint& nbins [[buffer(4)]],
                          uint i [[thread_position_in_grid]],
                          uint lid [[thread_index_in_threadgroup]],
                          uint tgsize [[threads_per_threadgroup]]) {
    threadgroup atomic_uint local_h[64];
    for (uint b = lid; b < 64; b += tgsize) {
        atomic_store_explicit(&local_h[b], 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (i < n) {
        const uint b = x[i] % nbins;
        atomic_fetch_add_explicit((device atomic_uint*)&h[b], 1u, memory_order_relaxed);
        atomic_fetch_add_explicit(&local_h[b % 64], 1u, memory_order_relaxed);
        atomic_fetch_add_explicit(total, float(x[i]), memory_order_relaxed);
    }
}
"""

MSL_TYPES = """\
#include <metal_stdlib>
using namespace metal;

#define SCALE 2.0f
#define IDX(i, j, n) ((i) * (n) + (j))

static inline float softplus(float x) { return x > 20.0f ? x : log(1.0f + exp(x)); }
static inline half to_half(float x) { return half(x); }

struct Params { uint n; float alpha; };

kernel void mixed(device half* h [[buffer(0)]],
                  device int64_t* wide [[buffer(1)]],
                  const device uint8_t* bytes [[buffer(2)]],
                  device ulong* big [[buffer(3)]],
                  device float4* vec [[buffer(4)]],
                  constant Params& p [[buffer(5)]],
                  constant bool& flag [[buffer(6)]],
                  uint3 gid [[thread_position_in_grid]],
                  uint3 grid [[threads_per_grid]]) {
    const ulong i = IDX(ulong(gid.y), ulong(gid.x), ulong(grid.x));
    if (i >= p.n) {
        return;
    }
    bool odd = (bytes[i] & 1u) != 0;
    int64_t acc = 0;
    for (int k = 0; k < 4; ++k) {
        if (odd && flag) {
            acc += int64_t(bytes[i]) << k;
        } else {
            acc -= k;
        }
    }
    wide[i] = acc;
    big[i] = ulong(acc) * 3ul;
    h[i] = to_half(softplus(float(h[i]) * SCALE * p.alpha));
    float4 v = float4(float2(1.0f, 2.0f), 3.0f, float(h[i]));
    vec[i] = clamp(v * float4(0.5f), float4(0.0f), float4(1.0f));
    uint bits = as_type<uint>(p.alpha);
    int local = int(bits & 7u);
    wide[i] += local + min(int(i), 3) + int(max(abs(-1.5f), metal::precise::sqrt(2.0f)));
}
"""

# The user's file: the body of the kernel sits on lines 7-8.
USER_PK = """\
// saxpy.pk
// y <- a * x + y
//
//
//
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

# What the renderer makes of it for Metal, with #line mapping the body back.
MSL_RENDERED = """\
#include <metal_stdlib>
using namespace metal;

[[kernel]] void saxpy(device float* y [[buffer(0)]],
                      const device float* x [[buffer(1)]],
                      constant float& a [[buffer(2)]],
                      uint pk_gid [[thread_position_in_grid]]) {
#line 7 "user.pk"
    const long i = long(pk_gid);
    y[i] = a * x[i] + y[i];
}
"""

CUDA_SAXPY = """\
extern "C" __global__ void saxpy(float* __restrict__ y, const float* __restrict__ x,
                                 float a, long n) {
    const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
"""

CUDA_ATOMICS = """\
extern "C" __global__ void sum_atomic(const float* x, float* total_f, double* total_d,
                                      long n) {
    const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(total_f, x[i]);
        atomicAdd(total_d, (double)x[i]);
    }
}
"""

CUDA_RENDERED = """\
extern "C" __global__ void saxpy(float* y, const float* x, float a, long n) {
#line 7 "user.pk"
    const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    y[i] = a * x[i] + y[i];
}
"""


def _line_of(source: str, text: str) -> int:
    assert text in source, text
    return source[: source.index(text)].count("\n") + 1


def _mutate(source: str, old: str, new: str) -> str:
    assert source.count(old) >= 1, old
    return source.replace(old, new, 1)


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------


@pytest.fixture
def clang() -> None:
    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"clang not found: {why}")


@pytest.fixture(params=["nvrtc", "nvcc"])
def cuda_compiler(request: pytest.FixtureRequest) -> str:
    if request.param == "nvrtc" and cuda_module._load_nvrtc() is None:
        pytest.skip("NVRTC library not found: pip install nvidia-cuda-nvrtc")
    if request.param == "nvcc" and cuda_module._find_nvcc() is None:
        pytest.skip("nvcc not found: install the CUDA toolkit")
    return request.param


@pytest.fixture
def any_cuda() -> None:
    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(why)


@pytest.fixture
def nvrtc() -> None:
    if cuda_module._load_nvrtc() is None:
        pytest.skip("NVRTC library not found: pip install nvidia-cuda-nvrtc")


# ---------------------------------------------------------------------------
# diagnostics.py
# ---------------------------------------------------------------------------


def test_parse_clang_log_attaches_notes() -> None:
    log = (
        "In file included from k.metal:1:\n"
        "/shim/metal_stdlib:10:3: error: size mismatch (4 vs 8)\n"
        "k.metal:8:43: note: in instantiation requested here\n"
        "    uint2 u = as_type<uint2>(x);\n"
        "              ^\n"
        "k.metal:9:5: warning: unused variable 'u'\n"
        "1 warning and 1 error generated.\n"
    )
    diags = parse_diagnostics(log)
    assert [d.severity for d in diags] == ["error", "warning"]
    error = diags[0]
    assert (error.filename, error.line, error.column) == ("/shim/metal_stdlib", 10, 3)
    assert error.is_error and not diags[1].is_error
    assert len(error.notes) == 1
    assert (error.notes[0].filename, error.notes[0].line) == ("k.metal", 8)


def test_parse_edg_log_recovers_column_from_caret() -> None:
    log = (
        'user.pk(8): error: identifier "zz" is undefined\n'
        "      y[i] = zz;\n"
        "             ^\n"
        "\n"
        'user.pk(7): warning #177-D: variable "j" was declared but never referenced\n'
        "      int j = 0;\n"
        "          ^\n"
        "\n"
        '1 error detected in the compilation of "kernel.cu".\n'
    )
    diags = parse_diagnostics(log)
    assert [(d.filename, d.line, d.column, d.severity) for d in diags] == [
        ("user.pk", 8, 12, "error"),
        ("user.pk", 7, 9, "warning"),
    ]
    assert diags[0].message == 'identifier "zz" is undefined'


def test_parse_tool_level_errors() -> None:
    diags = parse_diagnostics(
        "nvcc fatal   : Unsupported gpu architecture 'compute_60'\n"
        "clang: error: unknown argument: '-foo'\n"
        "nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
    )
    assert [d.is_error for d in diags] == [True, True, True]
    assert all(d.filename is None and d.line is None for d in diags)
    assert "compute_60" in diags[0].message
    assert "-foo" in diags[1].message


def test_format_draws_caret_under_column_and_keeps_tabs() -> None:
    diags = [Diagnostic("user.pk", 2, 9, "error", "boom"),
             Diagnostic("user.pk", 1, 1, "warning", "ignored")]
    text = format_diagnostics(diags, {"user.pk": "first\n\ty = bad;\n"})
    lines = text.splitlines()
    assert lines == ["user.pk:2:9: error: boom", "    \ty = bad;", "    \t       ^"]


def test_format_without_source_prints_message_only() -> None:
    diags = [Diagnostic("other.h", 3, 1, "error", "nope"),
             Diagnostic(None, None, None, "fatal error", "no arch")]
    assert format_diagnostics(diags, {}) == "other.h:3:1: error: nope\nfatal error: no arch"


def test_format_falls_back_to_a_note_in_a_known_file() -> None:
    note = Diagnostic("k.metal", 2, 3, "note", "requested here")
    diags = [Diagnostic("/shim/h", 10, 1, "error", "size mismatch", (note,))]
    text = format_diagnostics(diags, {"k.metal": "a\nb c d\n"})
    assert text.splitlines() == [
        "/shim/h:10:1: error: size mismatch",
        "k.metal:2:3: note: requested here",
        "    b c d",
        "      ^",
    ]


# ---------------------------------------------------------------------------
# Metal: availability and the attribute pre-pass (no clang needed)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("source", [MSL_MATMUL, MSL_HISTOGRAM, MSL_TYPES, MSL_RENDERED])
def test_attribute_prepass_keeps_every_offset(source: str) -> None:
    stripped = metal_module._strip_metal_attributes(source)
    assert len(stripped) == len(source)
    assert [i for i, c in enumerate(stripped) if c == "\n"] == [
        i for i, c in enumerate(source) if c == "\n"
    ]
    assert "[[" not in stripped
    assert "__kernel" in stripped or "kernel void" in stripped


def test_attribute_prepass_leaves_unknown_attributes_for_clang() -> None:
    strip = metal_module._strip_metal_attributes
    assert strip("x [[buffer(0), foo]]") == "x [[         , foo]]"
    assert strip("x [[buffer]]") == "x [[buffer]]"  # buffer needs an index
    assert strip("[[kernel]] void") == "__kernel   void"


def test_metal_unavailable_without_clang(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    metal_module._find_clang.cache_clear()
    try:
        ok, why = metal_check_available()
        assert not ok
        assert "apt-get install clang" in why
        with pytest.raises(BackendUnavailableError) as info:
            check_metal(MSL_MATMUL)
        assert isinstance(info.value, ImportError)
        assert "apt-get install clang" in str(info.value)
    finally:
        metal_module._find_clang.cache_clear()


# ---------------------------------------------------------------------------
# Metal: accepted sources
# ---------------------------------------------------------------------------


@pytest.mark.usefixtures("clang")
@pytest.mark.parametrize("source", [MSL_MATMUL, MSL_HISTOGRAM, MSL_TYPES, MSL_RENDERED],
                         ids=["matmul", "histogram", "types", "rendered"])
def test_metal_accepts_realistic_kernels(source: str) -> None:
    assert check_metal(source) is None


@pytest.mark.usefixtures("clang")
def test_metal_reports_user_file_through_line_directives() -> None:
    # k-th line after `#line 7 "user.pk"` must be reported as user.pk:7+k.
    seeds = [("long(pk_gid)", "long(pk_gidd)"), ("a * x[i]", "a * xx[i]")]
    for k, (old, new) in enumerate(seeds):
        bad = _mutate(MSL_RENDERED, old, new)
        with pytest.raises(CompilationError) as info:
            check_metal(bad, sources={"user.pk": USER_PK})
        message = str(info.value)
        assert message.startswith(f"user.pk:{7 + k}:"), message
        assert USER_PK.splitlines()[6 + k] in message  # the user's line, quoted
        assert info.value.target == "metal"
        assert info.value.source == bad


# (old text, new text, text on the line the error must point at, message fragment)
METAL_SEEDED = {
    "undefined-name": (MSL_MATMUL, "Bs[k][lid.x], acc)", "Bs[k][lid.x], acc2)", None,
                       "undeclared identifier 'acc2'"),
    "bad-barrier-flag": (MSL_MATMUL, "mem_flags::mem_threadgroup", "mem_flags::mem_foo",
                         None, "no member named 'mem_foo'"),
    "write-through-const": (MSL_MATMUL, "C[row * N + col] = acc;",
                            "A[row * K + col] = acc;", None, "not assignable"),
    "unknown-attribute": (MSL_MATMUL, "[[threadgroup_position_in_grid]]",
                          "[[threadgroup_position_in_grd]]", None,
                          "unknown attribute 'threadgroup_position_in_grd'"),
    "missing-semicolon": (MSL_MATMUL, "const uint row = tg.y * TILE + lid.y;",
                          "const uint row = tg.y * TILE + lid.y", None, "expected ';'"),
    "wrong-function-name": (MSL_MATMUL, "threadgroup_barrier(", "threadgroup_barier(",
                            None, "threadgroup_barier"),
    "opencl-builtin": (MSL_MATMUL, "threadgroup_barrier(mem_flags::mem_threadgroup);",
                       "barrier(CLK_LOCAL_MEM_FENCE);", None, "undeclared identifier"),
    "double": (MSL_MATMUL, "float acc = 0.0f;", "double acc = 0.0;", None,
               "Metal has no 'double' type"),
    "threadgroup-outside-kernel": (MSL_MATMUL, "[[kernel]] void", "void",
                                   "threadgroup float As", "threadgroup address space"),
    "address-space-mismatch": (MSL_MATMUL, "float acc = 0.0f;",
                               "float acc = 0.0f; threadgroup float* p = C;", None,
                               "'threadgroup float *'"),
    "no-float8": (MSL_TYPES, "float4 v = float4(", "float8 v = float4(", None,
                  "unknown type name 'float8'"),
    "atomic-on-plain-pointer": (MSL_HISTOGRAM, "((device atomic_uint*)&h[b], 1u",
                                "(&h[b], 1u", None, "no matching function"),
    "float-atomic-and": (MSL_HISTOGRAM, "atomic_fetch_add_explicit(total",
                         "atomic_fetch_and_explicit(total", None, "no matching function"),
    "as-type-size": (MSL_TYPES, "as_type<uint>(p.alpha)", "as_type<uint2>(p.alpha)",
                     None, "size"),
}


@pytest.mark.usefixtures("clang")
@pytest.mark.parametrize("case", sorted(METAL_SEEDED))
def test_metal_catches_seeded_error_on_its_line(case: str) -> None:
    base, old, new, at, fragment = METAL_SEEDED[case]
    bad = _mutate(base, old, new)
    line = _line_of(bad, at or new)
    with pytest.raises(CompilationError) as info:
        check_metal(bad)
    message = str(info.value)
    assert fragment in message
    # The error, or for an error inside the shim the note that instantiated it,
    # points at the seeded line and quotes it.
    assert f"kernel.metal:{line}:" in message, message
    assert bad.splitlines()[line - 1] in message
    assert "^" in message
    assert isinstance(info.value, PortakernError)
    assert "error" in info.value.log


# ---------------------------------------------------------------------------
# CUDA
# ---------------------------------------------------------------------------


def test_cuda_available_names_the_compiler() -> None:
    ok, why = cuda_check_available()
    if ok:
        assert why.startswith(("NVRTC", "nvcc"))
    else:
        assert "nvidia-cuda-nvrtc" in why


@pytest.mark.parametrize("arch", ["compute_90", "compute_75"])
def test_cuda_compiles_saxpy_and_atomics_to_ptx(cuda_compiler: str, arch: str) -> None:
    ptx = compile_cuda_ptx(CUDA_SAXPY + CUDA_ATOMICS, arch=arch, compiler=cuda_compiler)
    assert ".entry saxpy(" in ptx
    assert ".entry sum_atomic(" in ptx
    assert f".target sm_{arch.split('_')[1]}" in ptx
    # float atomicAdd everywhere; double atomicAdd needs sm_60+, which both are.
    assert "atom.global.add.f32" in ptx
    assert "atom.global.add.f64" in ptx


@pytest.mark.usefixtures("any_cuda")
def test_cuda_sm_arch_means_the_virtual_one() -> None:
    ptx = compile_cuda_ptx(CUDA_SAXPY, arch="sm_80")
    assert ".target sm_80" in ptx


def test_cuda_reports_user_file_through_line_directives(cuda_compiler: str) -> None:
    bad = _mutate(CUDA_RENDERED, "a * x[i]", "a * xx[i]")
    with pytest.raises(CompilationError) as info:
        compile_cuda_ptx(bad, compiler=cuda_compiler, sources={"user.pk": USER_PK})
    message = str(info.value)
    assert message.startswith('user.pk:8:16: error: identifier "xx" is undefined')
    assert "    y[i] = a * x[i] + y[i];" in message  # the user's own line 8
    assert info.value.target == "cuda"
    assert info.value.source == bad


# (old, new, text on the line EDG points at, message fragment)
CUDA_SEEDED = {
    "undefined-name": ("y[i] = a * x[i] + y[i];", "y[i] = a * z[i] + y[i];", None,
                       'identifier "z" is undefined'),
    # EDG reports a missing ';' where the next statement starts.
    "missing-semicolon": ("const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;",
                          "const long i = blockIdx.x * (long)blockDim.x + threadIdx.x",
                          "if (i < n)", 'expected a ";"'),
    "wrong-function-name": ("if (i < n) {", "__syncthread(); if (i < n) {", None,
                            '"__syncthread" is undefined'),
    "write-through-const": ("y[i] = a * x[i] + y[i];", "x[i] = a;", None,
                            "modifiable lvalue"),
    "wrong-member": ("blockIdx.x * (long)", "blockIdx.w * (long)", None,
                     '"w"'),
}


@pytest.mark.usefixtures("nvrtc")
@pytest.mark.parametrize("case", sorted(CUDA_SEEDED))
def test_cuda_catches_seeded_error_on_its_line(case: str) -> None:
    old, new, at, fragment = CUDA_SEEDED[case]
    bad = _mutate(CUDA_SAXPY, old, new)
    line = _line_of(bad, at or new)
    with pytest.raises(CompilationError) as info:
        compile_cuda_ptx(bad, name="saxpy.cu")
    message = str(info.value)
    assert message.startswith(f"saxpy.cu:{line}:"), message
    assert fragment in message
    assert bad.splitlines()[line - 1] in message


@pytest.mark.usefixtures("nvrtc")
def test_cuda_options_pass_through_to_nvrtc() -> None:
    source = """\
struct Pair { int a; float b; };
extern "C" __global__ void k(float* y) {
    Pair p{VALUE, 2.0f};
    auto [a, b] = p;  // structured bindings: C++17
    y[threadIdx.x] = a + b;
}
"""
    ptx = compile_cuda_ptx(source, options=("-std=c++17", "-DVALUE=3"))
    assert ".entry k(" in ptx
    with pytest.raises(CompilationError, match="VALUE"):
        compile_cuda_ptx(source, options=("-std=c++17",))
    with pytest.raises(CompilationError):
        compile_cuda_ptx(source, options=("-std=c++14", "-DVALUE=3"))


def test_cuda_define_passes_through(cuda_compiler: str) -> None:
    source = 'extern "C" __global__ void k(float* y) { y[threadIdx.x] = VALUE; }\n'
    assert ".entry k(" in compile_cuda_ptx(source, options=("-DVALUE=3.0f",),
                                           compiler=cuda_compiler)


@pytest.mark.usefixtures("any_cuda")
def test_cuda_includes_toolkit_headers() -> None:
    if not cuda_module._cuda_include_dirs():
        pytest.skip("no CUDA include directory with cuda_fp16.h found")
    source = """\
#include <cuda_fp16.h>
extern "C" __global__ void to_half(const float* x, __half* y) {
    y[threadIdx.x] = __float2half(x[threadIdx.x]);
}
"""
    assert ".entry to_half(" in compile_cuda_ptx(source)


def test_cuda_rejects_an_arch_the_compiler_cannot_target(cuda_compiler: str) -> None:
    # CUDA 13 dropped everything below sm_75.
    _, why = cuda_check_available()
    nvrtc = cuda_module._load_nvrtc()
    if cuda_compiler == "nvrtc" and nvrtc is not None and nvrtc.version[0] < 13:
        pytest.skip(f"{why} still supports compute_60")
    with pytest.raises(CompilationError, match="compute_60"):
        compile_cuda_ptx(CUDA_SAXPY, arch="compute_60", compiler=cuda_compiler)


def test_cuda_rejects_malformed_arguments() -> None:
    with pytest.raises(ValueError, match="compute_90"):
        compile_cuda_ptx(CUDA_SAXPY, arch="hopper")
    with pytest.raises(ValueError, match="nvrtc"):
        compile_cuda_ptx(CUDA_SAXPY, compiler="clang")


def test_cuda_unavailable_without_any_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_module, "_load_nvrtc", lambda: None)
    monkeypatch.setattr(cuda_module, "_find_nvcc", lambda: None)
    ok, why = cuda_check_available()
    assert not ok
    assert "pip install nvidia-cuda-nvrtc" in why
    with pytest.raises(BackendUnavailableError) as info:
        compile_cuda_ptx(CUDA_SAXPY)
    assert isinstance(info.value, ImportError)
    assert "nvidia-cuda-nvrtc" in str(info.value)


# ---------------------------------------------------------------------------
# Metal: what Apple's compiler rejects and C++ for OpenCL would accept
# ---------------------------------------------------------------------------

# (base source, old text, new text, text on the line of the error, message fragment)
METAL_STRICT = {
    # clang's generic address space would take a pointer without one; Metal does not.
    "pointer-variable-without-address-space": (
        MSL_MATMUL, "float acc = 0.0f;", "float acc = 0.0f; const float* p = A;", None,
        "address space"),
    "helper-parameter-without-address-space": (
        MSL_HISTOGRAM, "[[kernel]] void histogram(",
        "static uint first(const uint* p) { return p[0]; }\n[[kernel]] void histogram(",
        "const uint b = x[i] % nbins;", "no matching function"),
    # Metal before 4.1 has no float atomics on threadgroup memory.
    "threadgroup-float-atomic-add": (
        MSL_HISTOGRAM, "threadgroup atomic_uint local_h[64];",
        "threadgroup atomic_uint local_h[64];\n    threadgroup atomic_float tsum;\n"
        "    atomic_fetch_add_explicit(&tsum, 1.0f, memory_order_relaxed);",
        "atomic_fetch_add_explicit(&tsum", "threadgroup"),
    "threadgroup-float-atomic-exchange": (
        MSL_HISTOGRAM, "threadgroup atomic_uint local_h[64];",
        "threadgroup atomic_uint local_h[64];\n    threadgroup atomic_float tsum;\n"
        "    atomic_exchange_explicit(&tsum, 1.0f, memory_order_relaxed);",
        "atomic_exchange_explicit(&tsum", "threadgroup"),
    # Words Metal reserves, used as names.
    "reserved-vertex": (MSL_MATMUL, "float acc = 0.0f;", "float vertex = 0.0f;", None,
                        "'vertex' is a reserved word"),
    "reserved-fragment": (MSL_MATMUL, "const uint col = tg.x * TILE + lid.x;",
                          "const uint fragment = tg.x * TILE + lid.x;", None,
                          "'fragment' is a reserved word"),
    "reserved-kernel": (MSL_TYPES, "bool odd = (bytes[i] & 1u) != 0;",
                        "bool kernel = (bytes[i] & 1u) != 0;", None,
                        "'kernel' is a reserved word"),
}


@pytest.mark.usefixtures("clang")
@pytest.mark.parametrize("case", sorted(METAL_STRICT))
def test_metal_rejects_what_apples_compiler_rejects(case: str) -> None:
    base, old, new, at, fragment = METAL_STRICT[case]
    bad = _mutate(base, old, new)
    if case == "helper-parameter-without-address-space":
        bad = _mutate(bad, "const uint b = x[i] % nbins;", "const uint b = first(x) % nbins;")
        at = "const uint b = first(x) % nbins;"
    line = _line_of(bad, at or new.splitlines()[-1])
    with pytest.raises(CompilationError) as info:
        check_metal(bad)
    message = str(info.value)
    assert fragment in message, message
    assert f"kernel.metal:{line}:" in message, message


@pytest.mark.usefixtures("clang")
def test_metal_keeps_accepting_what_metal_accepts() -> None:
    ok = _mutate(MSL_MATMUL, "float acc = 0.0f;",
                 "float acc = 0.0f; thread float* pa = &acc; const device float* ar = A + "
                 "row * K; threadgroup float* t = &As[0][0]; *pa = ar[0] + t[0];")
    check_metal(ok)
    # Device float atomics (Metal 3), the reserved words as qualifiers and attributes,
    # and a Metal variable called `local` (an OpenCL keyword) all stay legal.
    check_metal(MSL_HISTOGRAM)
    check_metal(MSL_TYPES)
    check_metal(_mutate(MSL_TYPES, "kernel void mixed(", "[[kernel]] void mixed("))


@pytest.mark.usefixtures("clang")
def test_metal_reserved_word_error_names_the_users_line() -> None:
    bad = _mutate(MSL_RENDERED, "const long i = long(pk_gid);",
                  "const long vertex = long(pk_gid); const long i = vertex;")
    with pytest.raises(CompilationError) as info:
        check_metal(bad, sources={"user.pk": USER_PK})
    message = str(info.value)
    assert message.startswith("user.pk:7:"), message
    assert "'vertex' is a reserved word in Metal" in message
    assert "rename" in message


# Metal copies and returns structs (by value, out of device memory, into it); the strict
# check (no generic address space) must not reject that, and must still reject a write
# through a const or constant pointer, and a struct made from the wrong type.
MSL_STRUCTS = """\
#include <metal_stdlib>
using namespace metal;

typedef struct { float a; float b; } pair_t;
struct vec2f { float x; float y; };

pair_t make_pair(float a, float b) { pair_t p; p.a = a; p.b = b; return p; }
pair_t swapped(pair_t p) { pair_t q = p; q.a = p.b; q.b = p.a; return q; }
struct vec2f added(struct vec2f u, struct vec2f v) { struct vec2f w = {u.x + v.x, u.y + v.y}; return w; }
pair_t load(const device pair_t* in, uint i) { return in[i]; }

kernel void structs(device pair_t* out [[buffer(0)]],
                    const device pair_t* in [[buffer(1)]],
                    device float* y [[buffer(2)]],
                    uint i [[thread_position_in_grid]]) {
    pair_t p = make_pair(1.0f, 2.0f);
    pair_t q = swapped(p);
    pair_t r = in[i];
    out[i] = swapped(in[i]);
    out[i + 1] = q;
    threadgroup pair_t shared[4];
    shared[i % 4] = r;
    struct vec2f u = {1.0f, 2.0f};
    struct vec2f w = added(u, u);
    pair_t l = load(in, i);
    y[i] = q.a + r.b + w.x + l.a + shared[0].a;
}
"""


@pytest.mark.usefixtures("clang")
def test_metal_accepts_struct_copies_and_returns() -> None:
    assert check_metal(MSL_STRUCTS) is None


@pytest.mark.usefixtures("clang")
@pytest.mark.parametrize(("old", "new", "fragment"), [
    ("    out[i + 1] = q;", "    pair_t* bad = (pair_t*)0; in[i] = q;", "in[i] = q;"),
    ("    pair_t r = in[i];", "    pair_t r = 3;", "pair_t r = 3;"),
    ("    pair_t l = load(in, i);", "    pair_t l = load(y, i);", "pair_t l = load(y, i);"),
    ("    pair_t q = swapped(p);", "    pair_t q = swapped(u);", "pair_t q = swapped(u);"),
], ids=["write-through-const", "from-int", "pointer-of-another-type", "wrong-struct"])
def test_metal_struct_copies_keep_real_errors(old: str, new: str, fragment: str) -> None:
    source = MSL_STRUCTS.replace("    struct vec2f u = {1.0f, 2.0f};\n", "")
    source = source.replace("    pair_t p = make_pair", "    struct vec2f u = {1.0f, 2.0f};\n"
                                                        "    pair_t p = make_pair")
    assert check_metal(source) is None
    bad = _mutate(source, old, new)
    line = _line_of(bad, fragment)
    with pytest.raises(CompilationError) as info:
        check_metal(bad)
    assert f"kernel.metal:{line}:" in str(info.value), str(info.value)
