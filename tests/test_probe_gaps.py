"""Gaps of DESIGN section 1a ("nothing passes silently") found by porting probes, each
a kernel a new user would write from CUDA, OpenCL or Metal:

1. one dialect's own spelling (CUDA's ``threadIdx``, ``__syncthreads()``, ``atomicAdd``,
   ``__device__``; OpenCL's ``get_global_id``, ``barrier``, ``as_float``, ``select``;
   Metal's ``as_type``) warns at ``pk.kernel()`` naming the targets that lack it and the
   portable spelling, and its rendering there is refused at the line, instead of that
   compiler's error (or the native path's fall-back to PoCL); under ``{% if target ==
   ... %}`` it is the dialect's own and passes;
2. a ``1.5h`` literal builds on CUDA and the native path (``((half)1.5f)``);
3. ``long long`` is portakern's ``long`` (CUDA rendered ``long long long``).

Launch tests run on the CPU's native path, PoCL, and the CUDA and Metal stand-ins (the
``path`` fixture of tests/conftest.py).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError
from portakern.targets import DIALECT_WORDS, target_info


def created(source: str) -> tuple[pk.Kernel, list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        kernel = pk.kernel(source, filename="user.pk")
    return kernel, [str(w.message) for w in seen if issubclass(w.category, pk.PortabilityWarning)]


def kernel_with(statement: str, helper: str = "") -> str:
    return (f"{helper}@kernel void k(float* o, const float* a) {{\n"
            f"    const long i = @index(Global, Linear);\n    {statement}\n}}\n")


# word, statement, helper, the dialect that has it, a piece of the fix
CASES = [
    ("threadIdx", "o[i] = (float)threadIdx.x;", "", "cuda", "@index("),
    ("__syncthreads", "__syncthreads(); o[i] = a[i];", "", "cuda", "@synchronize()"),
    ("atomicAdd", "atomicAdd(&o[0], a[i]);", "", "cuda", "@atomic_add(&a[i], v)"),
    ("__device__", "o[i] = sq(a[i]);", "__device__ float sq(float v) { return v * v; }\n",
     "cuda", "drop it"),
    ("__int_as_float", "o[i] = __int_as_float(0x3f800000);", "", "cuda", "@bitcast(float"),
    ("get_global_id", "o[get_global_id(0)] = a[i];", "", "opencl", "@index("),
    ("barrier", "barrier(CLK_LOCAL_MEM_FENCE); o[i] = a[i];", "", "opencl", "@synchronize()"),
    ("atomic_add", "atomic_add((int*)0, 1);", "", "opencl", "@atomic_add"),
    ("as_float", "o[i] = as_float(0x3f800000u);", "", "opencl", "@bitcast(float"),
    ("as_type", "o[i] = as_type<float>(0x3f800000u);", "", "metal", "@bitcast(float"),
    ("select", "o[i] = select(1.0f, 2.0f, a[i] > 3.0f);", "", "opencl", "c ? b : a"),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("word, statement, helper, dialect, fix", CASES, ids=IDS)
def test_a_dialect_word_warns_naming_the_targets_that_lack_it(
        word: str, statement: str, helper: str, dialect: str, fix: str) -> None:
    source = kernel_with(statement, helper)
    if "(int*)0" in source:  # a pointer cast is refused before: keep the word alone
        source = source.replace("atomic_add((int*)0, 1)", "atomic_add(&o[0], 1)")
    _, messages = created(source)
    mine = [m for m in messages if f"{word!r} is " in m]
    assert mine, messages
    line = 1 if helper else 3
    assert f"user.pk:{line}:" in mine[0] and fix in mine[0]
    lacking = [target_info(t).title for t in ("opencl", "cuda", "metal", "c")
               if word not in target_info(t).dialect_words]
    assert mine[0].endswith(f"(not portable to: {', '.join(lacking)})")
    assert target_info(dialect).title not in mine[0].rsplit("(not portable to:", 1)[1]


@pytest.mark.parametrize("word, statement, helper, dialect, fix", CASES, ids=IDS)
@pytest.mark.parametrize("target", ["opencl", "cuda", "metal", "c"])
def test_a_dialect_word_is_refused_where_rendered_for_a_target_without_it(
        word: str, statement: str, helper: str, dialect: str, fix: str, target: str) -> None:
    source = kernel_with(statement.replace("(int*)0", "&o[0]"), helper)
    kernel, _ = created(source)
    if word in target_info(target).dialect_words:
        assert word in kernel.render(target)
        return
    with pytest.raises(KernelSyntaxError, match=f"cannot build '{word}'") as info:
        kernel.render(target)
    err = info.value
    assert err.lineno == (1 if helper else 3) and fix in str(err)
    line = source.split("\n")[err.lineno - 1]
    assert line[err.offset - 1:].startswith(word)


def test_every_dialect_word_belongs_to_some_target() -> None:
    had = set().union(*(target_info(t).dialect_words for t in ("opencl", "cuda", "metal")))
    assert had == set(DIALECT_WORDS)


def test_a_dialect_word_under_its_target_passes_and_runs_there() -> None:
    source = ("@kernel void k(float* o) {\n    const long i = @index(Global, Linear);\n"
              "{% if target == \"cuda\" %}\n    o[i] = (float)threadIdx.x;\n{% else %}\n"
              "    o[i] = (float)@index(Local, Linear);\n{% endif %}\n}\n")
    kernel, messages = created(source)
    assert messages == []
    assert "threadIdx" in kernel.render("cuda") and "threadIdx" not in kernel.render("opencl")


def test_look_alikes_of_dialect_words_pass() -> None:
    # a helper of one's own named select, a member named barrier, a variable named
    # threadIdx that is not read with '.', a word in a comment or string
    source = ("typedef struct { float barrier; } S;\n"
              "float select(float a, float b, bool c) { return c ? b : a; }\n"
              "@kernel void k(float* o, const float* a) {\n"
              "    const long i = @index(Global, Linear);  // __syncthreads() atomicAdd(\n"
              "    S s; s.barrier = 1.0f; int threadIdx = 2;\n"
              "    o[i] = select(a[i], s.barrier, threadIdx > 1);\n}\n")
    kernel, messages = created(source)
    assert messages == []
    for target in ("opencl", "cuda", "metal", "c"):
        kernel.render(target)


def test_an_opencl_word_runs_on_cpus_opencl_device_as_a_failed_cpp_build_does(
        path: Any) -> None:
    """docs/cpu.md: OpenCL-only code still runs on CPU(), on its OpenCL device, with a
    NativeFallbackWarning quoting portakern's refusal of the C++ rendering; the GPU
    targets refuse it."""
    kernel, _ = created(kernel_with("o[i] = (float)get_global_id(0);"))
    o, a = np.zeros(8, np.float32), np.zeros(8, np.float32)
    if path.where in ("cuda", "metal"):
        with pytest.raises(KernelSyntaxError, match="cannot build 'get_global_id'"):
            path.run(kernel, o, a, ndrange=8)
        return
    if path.where == "native":
        with pytest.warns(pk.NativeFallbackWarning,
                          match=r"(?s)portakern's check said.*cannot build 'get_global_id'"):
            path.run(kernel, o, a, ndrange=8)
    else:
        path.run(kernel, o, a, ndrange=8)
    assert path.after[0].tolist() == list(range(8))


def test_a_cuda_word_on_the_cpu_is_the_native_paths_refusal(path: Any) -> None:
    """Neither of CPU()'s renderings has threadIdx: the native path's refusal is raised,
    at the line, and nothing falls back."""
    if path.where in ("cuda", "metal"):
        pytest.skip("the CPU's paths only")
    kernel, _ = created(kernel_with("o[i] = (float)threadIdx.x;"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.NativeFallbackWarning)
        with pytest.raises(KernelSyntaxError, match="cannot build 'threadIdx'") as info:
            path.run(kernel, np.zeros(8, np.float32), np.zeros(8, np.float32), ndrange=8)
    assert info.value.lineno is not None


# -- 2, 3: half literals and `long long` ------------------------------------------------------

LITERALS = """
@kernel void k(half* h, long* l, const float* a) {
    const long i = @index(Global, Linear);
    long long big = 1LL << 40;
    h[i] = (half)a[i] * 1.5h + 0.25H;
    l[i] = big + (long long)i;
}
"""


def test_half_literals_and_long_long_run_on_every_path(path: Any) -> None:
    kernel, messages = created(LITERALS)
    assert messages == []
    a = np.arange(8, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.NativeFallbackWarning)
        h, wide, _ = path.run(kernel, np.zeros(8, np.float16), np.zeros(8, np.int64), a, ndrange=8)
    assert h.tolist() == (a * 1.5 + 0.25).tolist()
    assert wide.tolist() == [(1 << 40) + k for k in range(8)]


@pytest.mark.parametrize("target", ["cuda", "c"])
def test_half_literals_render_as_casts_where_the_dialect_has_no_suffix(target: str) -> None:
    text = pk.kernel(LITERALS).render(target)
    assert "1.5h" not in text and "1.5f)" in text and "long long long" not in text


def test_metal_and_opencl_keep_their_half_literals() -> None:
    kernel = pk.kernel(LITERALS)
    assert "1.5h" in kernel.render("metal") and "1.5h" in kernel.render("opencl")


# -- 4. OpenCL's vector literal ----------------------------------------------------------------

@pytest.mark.parametrize("literal, fix", [
    ("(float4)(1.0f, 2.0f, 3.0f, 4.0f)", "float4(v0, v1, v2, v3)"),
    ("(int2)((int)i, (int)(i + 1))", "int2(v0, v1)"),
], ids=["float4", "int2-nested"])
def test_opencl_vector_literals_are_refused_at_the_line_with_the_constructor(
        literal: str, fix: str) -> None:
    source = ("@kernel void k(float* o) {\n    const long i = @index(Global, Linear);\n"
              f"    o[i] = (float)({literal}).x;\n}}\n")
    with pytest.raises(KernelSyntaxError, match="comma operator") as info:
        pk.kernel(source, filename="user.pk")
    err = info.value
    assert err.lineno == 3 and fix in str(err)
    assert source.split("\n")[2][err.offset - 1:].startswith(literal[1:4])


@pytest.mark.parametrize("expr", [
    "float4(1.0f, 2.0f, 3.0f, 4.0f)",   # the constructor
    "(float4)(v)",                      # a cast of one value
    "sq((float)(i), 1.0f)",             # a scalar cast, then a call's list
], ids=["constructor", "one-value-cast", "scalar-cast"])
def test_vector_constructors_and_casts_of_one_value_pass(expr: str) -> None:
    source = ("float4 sq(float a, float b) { return float4(a * b); }\n"
              "@kernel void k(float* o) {\n    const long i = @index(Global, Linear);\n"
              f"    float4 v = float4(2.0f);\n    float4 w = {expr};\n    o[i] = w.x + v.y;\n}}\n")
    kernel, messages = created(source)
    assert messages == []
    assert "float4" in kernel.render("cuda")
