"""C++-only constructs in kernels and helpers (DESIGN section 1a, "nothing passes silently").

What each target's language has is a target fact (``TargetInfo.cxx_constructs``), measured
with each target's compiler (g++ on the native path, PoCL, NVRTC, the Metal clang check):

=================  ======  ====  =====  ======================
construct          OpenCL  CUDA  Metal  native C++ (``CPU()``)
=================  ======  ====  =====  ======================
overloads          no      yes   yes    yes
default arguments  no      yes   yes    yes
lambdas            no      yes   no*    yes
constexpr          no      yes   yes    yes
templates          no      yes   yes    yes
=================  ======  ====  =====  ======================

(*) the Metal Shading Language specification (1.5.4, "Restrictions") lists lambda
expressions among the C++14 features Metal lacks; the clang check on Linux accepts them.

A construct a target lacks warns at ``pk.kernel()`` ("not portable to: ...") and its
rendering for that target is a ``KernelSyntaxError`` at the line, instead of the vendor
compiler's error. A ``namespace`` block and explicit template arguments (``sq<int>(2)``)
are refused on every target at ``pk.kernel()``: portakern's helper lowering reads
top-level functions only (a function in a namespace got no address spaces on Metal, and
debug mode left it unchecked), and debug mode's call rewriting does not see ``sq<int>(``.
Struct methods are found in nested blocks of a kernel body too.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError
from portakern.targets import builtin_targets, target_info


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def col_of(source: str, text: str) -> int:
    return source.split("\n")[line_of(source, text) - 1].index(text) + 1


def created(source: str, **options: Any) -> tuple[pk.Kernel, list[str]]:
    """The kernel and the PortabilityWarnings its creation gave."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        kernel = pk.kernel(source, filename="user.pk", **options)
    return kernel, [str(w.message) for w in seen if issubclass(w.category, pk.PortabilityWarning)]


HEAD = "@kernel void k(float* y, const float* x) {\n    const long i = @index(Global, Linear);\n"

#: construct -> (source, the text the caret is on, what the message says, the fix it names,
#: y for x = arange(8))
CASES = {
    "overloads": (
        "float twice(float v) { return 2.0f * v; }\n"
        "int twice(int v) { return 2 * v; }\n" + HEAD +
        "    y[i] = twice(x[i]) + (float)twice(1);\n}\n",
        "twice(int", "helper 'twice' is defined again (an overload", "its own name",
        lambda x: 2 * x + 2),
    "default_arguments": (
        "float scale(float v, float s = 2.0f) { return s * v; }\n" + HEAD +
        "    y[i] = scale(x[i]) + scale(x[i], 3.0f);\n}\n",
        "= 2.0f", "a default argument of helper 'scale'", "pass the value at each call",
        lambda x: 5 * x),
    "lambdas": (
        HEAD + "    const float s = 2.0f;\n"
        "    auto mul = [=](float v) { return s * v; };\n"
        "    y[i] = mul(x[i]);\n}\n",
        "[=]", "a lambda expression", "helper function",
        lambda x: 2 * x),
    "constexpr": (
        "constexpr float SCALE = 2.0f;\n" + HEAD +
        "    y[i] = SCALE * x[i];\n}\n",
        "constexpr", "constexpr", "'const'",
        lambda x: 2 * x),
    "templates": (
        "template <typename U>\nU sq(U v) { return v * v; }\n" + HEAD +
        "    y[i] = sq(x[i]) + (float)sq(2);\n}\n",
        "template", "a template", "the kernel's type variables",
        lambda x: x * x + 4),
}

LACKING_ON_METAL = ("lambdas",)
LACKING = {"overloads": ("opencl",), "default_arguments": ("opencl",),
           "lambdas": ("opencl", "metal"), "constexpr": ("opencl",), "templates": ("opencl",)}


def test_the_target_table_says_what_each_language_has() -> None:
    for construct, lacking in LACKING.items():
        for target in builtin_targets():
            has = construct in target_info(target).cxx_constructs
            assert has == (target not in lacking), (construct, target)


@pytest.mark.parametrize("construct", list(CASES))
def test_a_cxx_construct_warns_at_creation_naming_the_line_and_targets(construct: str) -> None:
    source, caret, what, fix, _ = CASES[construct]
    _, messages = created(source)
    assert len(messages) == 1, messages
    message = messages[0]
    assert f"user.pk:{line_of(source, caret)}:{col_of(source, caret)}:" in message
    assert what in message and fix in message
    titles = ", ".join(target_info(t).title for t in LACKING[construct])
    assert message.endswith(f"(not portable to: {titles})"), message


@pytest.mark.parametrize("construct", list(CASES))
@pytest.mark.parametrize("target", builtin_targets())
def test_a_cxx_construct_is_refused_when_rendered_for_a_target_without_it(
        construct: str, target: str) -> None:
    source, caret, what, fix, _ = CASES[construct]
    kernel, _ = created(source)
    if target not in LACKING[construct]:
        assert caret in kernel.render(target)
        return
    with pytest.raises(KernelSyntaxError) as info:
        kernel.render(target)
    err = info.value
    assert (err.filename, err.lineno, err.offset) == ("user.pk", line_of(source, caret),
                                                      col_of(source, caret))
    text = str(err)
    assert f"{target_info(target).title} cannot build" in text and what in text and fix in text
    assert "run this kernel on a backend whose language has" in text


@pytest.mark.parametrize("construct", list(CASES))
def test_a_cxx_construct_runs_where_the_language_has_it(construct: str, path: Any) -> None:
    source, caret, _, _, expect = CASES[construct]
    kernel, _ = created(source)
    x = np.arange(8, dtype=np.float32)
    target = {"native": "c", "pocl": "opencl"}.get(path.where, path.where)
    if target in LACKING[construct]:
        with pytest.raises(KernelSyntaxError, match="cannot build") as info:
            path.run(kernel, np.zeros(8, np.float32), x, ndrange=8)
        assert info.value.lineno == line_of(source, caret)
        return
    path.run(kernel, np.zeros(8, np.float32), x, ndrange=8)
    assert list(path.after[0]) == list(expect(x))


def test_an_operator_function_outside_a_struct_is_an_overload() -> None:
    source = ("typedef struct { float x; } V;\n"
              "V operator+(V a, V b) { V r; r.x = a.x + b.x; return r; }\n" + HEAD +
              "    V a; a.x = x[i];\n    y[i] = (a + a).x;\n}\n")
    kernel, messages = created(source)
    assert len(messages) == 1 and "an operator function" in messages[0], messages
    assert messages[0].endswith("(not portable to: OpenCL)")
    with pytest.raises(KernelSyntaxError, match="OpenCL cannot build an operator function"):
        kernel.render("opencl")


def test_a_construct_under_a_jinja_branch_counts_only_where_it_renders() -> None:
    source = ('{% if target != "opencl" %}\nconstexpr float SCALE = 2.0f;\n'
              '{% else %}\nconst float SCALE = 2.0f;\n{% endif %}\n' + HEAD +
              "    y[i] = SCALE * x[i];\n}\n")
    kernel, messages = created(source)
    assert messages == []
    assert "constexpr" not in kernel.render("opencl")
    assert "constexpr" in kernel.render("cuda")


def test_overloads_in_two_preprocessor_branches_are_one_helper() -> None:
    source = ("#ifdef WIDE\nfloat f(float v) { return 2.0f * v; }\n#else\n"
              "float f(float v) { return v; }\n#endif\n" + HEAD + "    y[i] = f(x[i]);\n}\n")
    assert created(source)[1] == []


#: Code that looks like one of the constructs but is plain C, accepted today.
LOOKALIKES = {
    "ternary": "    y[i] = x[i] > 0.0f ? x[i] : -x[i];\n",
    "label-and-case": ("    switch ((int)i) {\n    case 0: y[i] = 1.0f; break;\n"
                       "    default: y[i] = x[i];\n    }\n"),
    "subscripts": ("    float t[2][2] = { {1.0f, 2.0f}, {3.0f, 4.0f} };\n"
                   "    y[i] = t[0][1] + x[(i)];\n"),
    # a cast of one value: OpenCL's (float2)(a, b) is refused (tests/test_probe_gaps.py)
    "vector-cast": ("    float2 q = float2(x[i], 1.0f);\n    float2 p = (float2)(q);\n"
                    "    y[i] = p.x;\n"),
    "comparison-and-assign": ("    float v = x[i];\n    v += 1.0f;\n"
                              "    y[i] = v == 2.0f ? v : v;\n"),
    "word-in-a-comment": ("    // constexpr, template, namespace and [=](x) in a comment\n"
                          "    y[i] = x[i];\n"),
}


@pytest.mark.parametrize("name", list(LOOKALIKES))
def test_plain_c_that_looks_like_a_construct_is_not_reported(name: str) -> None:
    source = HEAD + LOOKALIKES[name] + "}\n"
    kernel, messages = created(source)
    assert messages == []
    assert "k" in kernel.render("opencl")


def test_a_structured_binding_is_not_a_lambda() -> None:
    source = ("struct P { float a; float b; };\n" + HEAD +
              "    P p; p.a = x[i]; p.b = 1.0f;\n    auto [u, v] = p;\n    y[i] = u + v;\n}\n")
    kernel, messages = created(source)
    assert not [m for m in messages if "lambda" in m]
    assert "auto [u, v]" in kernel.render("c")


# -- refused on every target --------------------------------------------------------------

EVERYWHERE = {
    "template-arguments": ("template <typename U>\nU sq(U v) { return v * v; }\n" + HEAD +
                           "    y[i] = sq<float>(x[i]);\n}\n", "sq<", "explicit template "
                           "arguments", "deduce them"),
    "namespace": ("namespace mathx {\nfloat sq(float v) { return v * v; }\n}\n" + HEAD +
                  "    y[i] = mathx::sq(x[i]);\n}\n", "namespace", "a namespace",
                  "mathx_sq"),
}


@pytest.mark.parametrize("name", list(EVERYWHERE))
def test_namespaces_and_template_arguments_are_refused_at_creation(name: str) -> None:
    source, caret, what, fix = EVERYWHERE[name]
    with pytest.raises(KernelSyntaxError) as info:
        pk.kernel(source, filename="user.pk")
    err = info.value
    assert (err.filename, err.lineno, err.offset) == ("user.pk", line_of(source, caret),
                                                      col_of(source, caret))
    assert what in str(err) and fix in str(err)
    assert "member function" not in str(err)


def test_using_namespace_of_the_dialect_is_not_refused() -> None:
    source = ('{% if target == "metal" %}\nusing namespace metal;\n{% endif %}\n' + HEAD +
              "    y[i] = x[i];\n}\n")
    kernel, messages = created(source)
    assert messages == [] and "using namespace metal;" in kernel.render("metal")


# -- struct methods in nested blocks ------------------------------------------------------

NESTED = (HEAD + "    if (i >= 0) {\n"
          "        struct L { float a; float get() const { return a; } };\n"
          "        L l; l.a = x[i];\n        y[i] = l.get();\n    }\n}\n")


def test_a_struct_with_methods_in_a_nested_block_warns_and_is_refused_on_opencl() -> None:
    kernel, messages = created(NESTED)
    assert len(messages) == 1 and "member function get() of struct L" in messages[0]
    assert f"user.pk:{line_of(NESTED, 'get()')}:{col_of(NESTED, 'get()')}:" in messages[0]
    with pytest.raises(KernelSyntaxError, match="OpenCL cannot build") as info:
        kernel.render("opencl")
    assert (info.value.lineno, info.value.offset) == (line_of(NESTED, "get()"),
                                                      col_of(NESTED, "get()"))


def test_a_struct_with_methods_in_a_helper_body_is_found_too() -> None:
    source = ("float f(float v) {\n    struct L { float a; float get() const { return a; } };\n"
              "    L l; l.a = v;\n    return l.get();\n}\n" + HEAD + "    y[i] = f(x[i]);\n}\n")
    _, messages = created(source)
    assert len(messages) == 1 and "member function get() of struct L" in messages[0]


# -- what the compile checks say ----------------------------------------------------------

METHOD_STRUCT = ("struct V {\n    float x;\n    float sq() const { return x * x; }\n};\n" + HEAD +
                 "    V v; v.x = x[i];\n    y[i] = v.sq();\n}\n")


@pytest.mark.parametrize("name", [*CASES, "methods", "nested-methods"])
def test_nvrtc_builds_what_cuda_is_said_to_have(name: str) -> None:
    """Struct methods and lambdas have no ``__device__`` of their own: NVRTC builds them
    as device code (``--device-as-default-execution-space``), not as host functions."""
    from portakern.backends.cuda import CUDA
    from portakern.checks.cuda import cuda_check_available

    ok, detail = cuda_check_available()
    if not ok:
        pytest.skip(detail)
    source = {"methods": METHOD_STRUCT, "nested-methods": NESTED}.get(name) or CASES[name][0]
    kernel, _ = created(source)
    assert ".entry k" in CUDA.compile_check(kernel.rendered("cuda", {}, 1))


@pytest.mark.parametrize("construct", [c for c in CASES if c not in LACKING_ON_METAL])
def test_the_metal_check_builds_what_metal_is_said_to_have(construct: str) -> None:
    from portakern.checks.metal import check_metal, metal_check_available

    ok, detail = metal_check_available()
    if not ok:
        pytest.skip(detail)
    kernel, _ = created(CASES[construct][0])
    check_metal(kernel.rendered("metal", {}, 1).source)


# -- with what the lowering adds: barriers, debug mode's hidden parameters ----------------

WITH_LOWERING = {
    "overloads-on-pointers": (
        "float get(const float* p, long j) { return p[j]; }\n"
        "float get(float v, long j) { return v + (float)j; }\n" + HEAD +
        "    @localmem float t[8];\n    t[@index(Local, Linear)] = x[i];\n    @synchronize();\n"
        "    y[i] = get(x, i) + get(t, @index(Local, Linear)) + get(1.0f, 0);\n}\n",
        "overloads", lambda x: 2 * x + 1),
    "default-after-a-pointer": (
        "float at(const float* p, long j, float s = 2.0f) { return s * p[j]; }\n" + HEAD +
        "    y[i] = at(x, i) + at(x, i, 1.0f);\n}\n",
        "default_arguments", lambda x: 3 * x),
    "template-on-two-spaces": (
        "template <typename U>\nU at(const U* p, long j) { return p[j]; }\n" + HEAD +
        "    @localmem float t[8];\n    t[@index(Local, Linear)] = x[i];\n    @synchronize();\n"
        "    y[i] = at(x, i) + at(t, @index(Local, Linear));\n}\n",
        "templates", lambda x: 2 * x),
    "lambda-across-a-barrier": (
        HEAD + "    @localmem float t[8];\n    const float s = 2.0f;\n"
        "    auto mul = [&](float v) { return s * v; };\n"
        "    t[@index(Local, Linear)] = x[i];\n    @synchronize();\n"
        "    y[i] = mul(t[@index(Local, Linear)]);\n}\n",
        "lambdas", lambda x: 2 * x),
}


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
@pytest.mark.parametrize("name", list(WITH_LOWERING))
def test_a_construct_runs_through_the_lowering(name: str, debug: bool, path: Any) -> None:
    """Where the lowering cannot carry a construct, a clear error at the line: a lambda in
    a kernel with ``@synchronize`` at ``pk.kernel()`` (the convergence check read its
    ``return`` as the kernel's; its declaration is hoisted, with no type to write); in
    debug mode an overloaded helper taking a pointer or one with a default argument
    (debug mode passes hidden parameters at every call of its name)."""
    source, construct, expect = WITH_LOWERING[name]
    if construct == "lambdas":
        with pytest.raises(KernelSyntaxError, match="a lambda in a kernel with @synchronize.*"
                           "helper function") as info:
            pk.kernel(source, filename="user.pk", debug=debug)
        assert info.value.lineno == line_of(source, "[&]")
        return
    kernel, _ = created(source, debug=debug)
    x = np.arange(8, dtype=np.float32)
    target = {"native": "c", "pocl": "opencl"}.get(path.where, path.where)
    refused = ("debug mode cannot check helper" if debug and construct != "templates"
               else "cannot build" if target in LACKING[construct] else None)
    if refused is not None:
        with pytest.raises(KernelSyntaxError, match=refused) as info:
            path.run(kernel, np.zeros(8, np.float32), x, ndrange=8, workgroupsize=8)
        caret = {"overloads": "get(float", "default_arguments": "= 2.0f",
                 "templates": "template"}[construct]
        assert info.value.lineno == line_of(source, caret)
        return
    path.run(kernel, np.zeros(8, np.float32), x, ndrange=8, workgroupsize=8)
    assert list(path.after[0]) == list(expect(x))
