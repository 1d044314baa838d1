"""Rendering: the three dialects, type names, qualifiers, and ``#line`` mapping.

Compile errors in the rendered source must name the user's file and line (the
``#line`` directives), and a :class:`CompilationError` carries the compiler log,
the rendered source and the vendor exception as ``__cause__``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import portakern as pk
from portakern.errors import CompilationError, KernelTypeError

SAXPY = """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

BARRIER = """\
// a comment line
#define WG 64

float twice(float v) { return 2 * v; }

@kernel void f(float* y, const float* x) {
    @localmem float buf[WG];
    const long li = @index(Local, Linear);
    const long i = @index(Global, Linear);
    float v = twice(x[i]);
    buf[li] = v;
    @synchronize();
    y[i] = buf[(li + 1) % WG];
}
"""


def compiler_view(source: str) -> list[tuple[str, int, str]]:
    """(file, line, text) of each rendered line after the first ``#line``, as a C
    compiler numbers them."""
    out = []
    where: tuple[str, int] | None = None
    for text in source.split("\n"):
        m = re.fullmatch(r'#line (\d+) "(.*)"', text)
        if m:
            where = (m.group(2), int(m.group(1)))
            continue
        if where is not None:
            out.append((where[0], where[1], text))
            where = (where[0], where[1] + 1)
    return out


def line_directives(source: str) -> list[tuple[int, str, str]]:
    """(user line, file, the next rendered line) for each ``#line`` directive."""
    lines = source.split("\n")
    out = []
    for n, text in enumerate(lines):
        m = re.fullmatch(r'#line (\d+) "(.*)"', text)
        if m:
            out.append((int(m.group(1)), m.group(2), lines[n + 1] if n + 1 < len(lines) else ""))
    return out


@pytest.mark.parametrize("target, signature", [
    ("opencl", "__kernel void saxpy(__global float* y, __global const float* restrict x, "
               "const float a, const long pk_n0)"),
    ("cuda", 'extern "C" __global__ void saxpy(float* y, const float* __restrict__ x, '
             "const float a, const long long pk_n0)"),
    ("metal", "device float* y [[buffer(0)]]"),
])
def test_render_targets(target, signature):
    out = pk.kernel(SAXPY).render(target, T="float")
    assert signature in out
    assert "typedef float T;" in out
    assert "@" not in out
    assert "{{" not in out and "{%" not in out
    assert "y[i] = a * x[i] + y[i];" in out


def test_render_metal_signature():
    out = pk.kernel(SAXPY).render("metal", T=np.float32)
    assert "[[kernel]] void saxpy(" in out
    assert "const device float* x [[buffer(1)]]" in out
    assert "constant float& a [[buffer(2)]]" in out
    assert "constant long& pk_n0 [[buffer(3)]]" in out
    assert "#include <metal_stdlib>" in out


def test_render_default_target_is_opencl_and_unknown_target():
    k = pk.kernel(SAXPY)
    assert k.render(T="float") == k.render("opencl", T="float")
    with pytest.raises(KernelTypeError, match="unknown target 'vulkan'.*opencl"):
        k.render("vulkan", T="float")


@pytest.mark.parametrize("name, opencl, cuda", [
    ("int64_t", "long", "long long"),
    ("uint64_t", "ulong", "unsigned long long"),
    ("long", "long", "long long"),
    ("uint8_t", "uchar", "unsigned char"),
    ("int16_t", "short", "short"),
    ("uint", "uint", "unsigned int"),
])
def test_type_names_per_dialect(name, opencl, cuda):
    src = f"@kernel void f({name}* y, {name} s) {{ y[0] = s; }}"
    assert f"__global {opencl}* y, const {opencl} s" in pk.kernel(src).render("opencl")
    assert f"({cuda}* y, const {cuda} s" in pk.kernel(src).render("cuda")


def test_type_variable_bound_to_fixed_width_name():
    out = pk.kernel(SAXPY).render("cuda", T=np.int64)
    assert "typedef long long T;" in out
    out = pk.kernel(SAXPY).render("opencl", T="uint8_t")
    assert "typedef uchar T;" in out


def test_bool_param_is_a_byte_in_opencl():
    src = "@kernel void f(bool* flags, bool b) { flags[0] = b; }"
    assert "__global uchar* flags, const uchar b" in pk.kernel(src).render("opencl")
    flags = np.zeros(3, np.bool_)
    pk.kernel(src)(flags, True, ndrange=1)
    np.testing.assert_array_equal(flags, [True, False, False])


def test_extensions_only_when_used():
    assert "cl_khr_fp64" not in pk.kernel(SAXPY).render("opencl", T="float")
    assert "cl_khr_fp64" in pk.kernel(SAXPY).render("opencl", T="double")
    assert "cl_khr_fp16" in pk.kernel(SAXPY).render("opencl", T="half")
    assert "cuda_fp16.h" in pk.kernel(SAXPY).render("cuda", T="half")
    assert "pk_atomic_add" not in pk.kernel(SAXPY).render("opencl", T="float")


def test_render_ndim_changes_the_signature():
    k = pk.kernel(SAXPY)
    for ndim in (0, 1, 2, 3):
        out = k.render("opencl", ndim=ndim, T="float")
        assert out.count("const long pk_n") == ndim
    # The default rank is inferred from the NTuple unpacking.
    src = "@kernel void f(long* y) {\n    auto [i, j] = @index(Global, NTuple);\n}\n"
    assert "pk_n1" in pk.kernel(src).render("cuda")


def test_helpers_defines_and_comments_survive():
    out = pk.kernel(BARRIER).render("cuda")
    assert "#define WG 64" in out
    assert "float twice(float v) { return 2 * v; }" in out
    assert "// a comment line" in out
    assert "__shared__ float buf[WG];" in out
    assert "__syncthreads()" in out


@pytest.mark.parametrize("target", ["opencl", "cuda", "metal"])
@pytest.mark.parametrize("source", [SAXPY, BARRIER], ids=["saxpy", "barrier"])
def test_line_directives_point_at_user_lines(target, source):
    out = pk.Kernel(source, filename="my file.pk").render(target, **(
        {"T": "float"} if "T*" in source else {}))
    directives = line_directives(out)
    assert directives, "no #line directive"
    user = source.split("\n")
    # Every name the user wrote sits, for the compiler, on a user line that has it.
    user_names = set(re.findall(r"[A-Za-z_]\w*", source)) - {"const", "long", "float", "if"}
    kernel_line = next(n for n, text in enumerate(user, 1) if "@kernel" in text)
    checked = 0
    signature = False
    for filename, line, text in compiler_view(out):
        assert filename == "my file.pk"
        if re.search(r"\bvoid (saxpy|f)\(", text):
            # The generated signature is attributed to the user's @kernel line.
            assert line == kernel_line, text
            signature = True
        if signature:
            signature = text != "{"
            continue
        if line > len(user) or text.startswith("}"):
            continue  # the closing brace and the lines after the kernel body
        text = re.sub(r"\.\w+", "", text)  # generated member accesses: threadIdx.x
        for word in set(re.findall(r"[A-Za-z_]\w*", text)) & user_names:
            assert re.search(rf"\b{word}\b", user[line - 1]), (line, text, word)
            checked += 1
    assert checked >= 5


def test_line_directive_filename_is_escaped():
    out = pk.Kernel(SAXPY, filename='C:\\dir\\"q".pk').render("opencl", T="float")
    assert '#line 2 "C:\\\\dir\\\\\\"q\\".pk"' in out


def test_line_directives_follow_jinja_loops():
    src = ("@kernel void f(float* y) {\n"
           "{% for k in range(3) %}\n"
           "    y[{{ k }}] = {{ k }};\n"
           "{% endfor %}\n"
           "    y[3] = 3;\n"
           "}\n")
    out = pk.kernel(src).render("opencl")
    assert [d[0] for d in line_directives(out)] == [1, 3, 3, 3]
    view = [(line, text.strip()) for _, line, text in compiler_view(out) if "y[" in text]
    assert view == [(3, "y[0] = 0;"), (3, "y[1] = 1;"), (3, "y[2] = 2;"), (5, "y[3] = 3;")]


COMPILE_ERROR = """\
// line 1
#define K 2

@kernel void f(float* y, const float* x) {
    const long i = @index(Global, Linear);
    float t = x[i] * K;
    y[i] = t + undefined_thing;
}
"""


def test_opencl_compile_error_names_user_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PORTAKERN_CPU", "opencl")  # the native path: test_native.py
    path = tmp_path / "bad.pk"
    path.write_text(COMPILE_ERROR)
    k = pk.kernel.from_file(path)
    y = np.zeros(4, np.float32)
    x = np.ones(4, np.float32)
    with pytest.raises(CompilationError) as info:
        k(y, x, ndrange=4)
    err = info.value
    assert isinstance(err, pk.PortakernError) and isinstance(err, RuntimeError)
    assert f"{path}:7" in str(err)
    assert "undefined_thing" in str(err)
    assert "y[i] = t + undefined_thing;" in str(err)  # the user's line is quoted
    assert "undefined_thing" in err.log
    assert "__kernel void f(" in err.source and "undefined_thing" in err.source
    assert err.target == "opencl"
    assert err.__cause__ is not None
    assert type(err.__cause__).__module__.startswith("pyopencl")
    np.testing.assert_array_equal(y, 0)


def test_opencl_compile_error_in_masked_barrier_kernel_names_user_line():
    src = BARRIER.replace("buf[li] = v;", "buf[li] = v + nope;")
    with pytest.raises(CompilationError, match=r"user\.pk:11") as info:
        pk.Kernel(src, filename="user.pk")(np.zeros(64, np.float32), np.zeros(64, np.float32),
                                           ndrange=64)
    assert "nope" in info.value.log


def cuda_compiler():
    from portakern.checks import cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(f"no CUDA compiler here: {why}")


def test_cuda_compile_error_names_user_line():
    cuda_compiler()
    from portakern.checks import compile_cuda_ptx

    rendered = pk.Kernel(COMPILE_ERROR, filename="bad.pk").render("cuda")
    with pytest.raises(CompilationError, match=r"bad\.pk.*7"):
        compile_cuda_ptx(rendered, sources={"bad.pk": COMPILE_ERROR})


def test_rendered_variant_cache_and_bindings():
    k = pk.kernel(SAXPY)
    r1 = k.rendered("cuda", {"T": "float"}, 1)
    assert r1 is k.rendered("cuda", {"T": "float"}, 1)
    assert r1.target == "cuda" and r1.name == "saxpy" and r1.ndim == 1
    assert dict(r1.bindings) == {"T": "float"}
    assert [p.name for p in r1.params] == ["y", "x", "a"]
    r2 = k.rendered("cuda", {"T": "double"}, 1)
    assert "typedef double T;" in r2.source and r2 is not r1
