"""Three more gaps of DESIGN section 1a, "nothing passes silently" (code portakern cannot run
right on a target is refused or warned at ``pk.kernel()``, never handed to one vendor's
compiler or to a wrong result):

1. a struct with member functions warns (not portable to OpenCL) and is refused on OpenCL,
   instead of PoCL's compiler error; it runs on the native path and the CUDA and Metal
   stand-ins;
2. a helper's name used as a value (a function pointer) is refused on every target;
3. debug mode's initcheck counts ``T& r = t[e];`` as a mark, not a read.

Each launch test runs on the CPU's native path, on PoCL, and on the CUDA and Metal
stand-ins (the ``path`` fixture of tests/conftest.py).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def created(source: str, **options: Any) -> tuple[pk.Kernel, list[str]]:
    """The kernel and the PortabilityWarnings its creation gave."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        kernel = pk.kernel(source, filename="user.pk", **options)
    return kernel, [str(w.message) for w in seen if issubclass(w.category, pk.PortabilityWarning)]


# -- 1. struct member functions ---------------------------------------------------------------

METHODS = """
struct V {
    float x; float y;
    float norm2() const { return x * x + y * y; }
    float scaled(float s) const;
};
float V::scaled(float s) const { return s * norm2(); }
@kernel void norms(float* out, const float* a) {
    const long i = @index(Global, Linear);
    V v; v.x = a[i]; v.y = 2.0f;
    out[i] = v.norm2() + v.scaled(0.5f);
}
"""


def test_struct_methods_warn_at_creation_naming_the_lines_and_opencl() -> None:
    _, messages = created(METHODS)
    methods = [m for m in messages if "member function" in m]
    assert len(methods) == 3, messages  # norm2 and scaled declared, scaled defined outside
    first = methods[0]
    assert f"user.pk:{line_of(METHODS, 'float norm2()')}:" in first
    assert "member function norm2() of struct V" in first
    assert "'float V_norm2(const V* self)'" in first
    assert first.endswith("(not portable to: OpenCL)")
    assert f"user.pk:{line_of(METHODS, 'float V::scaled')}:" in methods[2]


def test_a_struct_with_methods_in_the_kernel_body_is_found_too() -> None:
    source = ("@kernel void f(float* y) {\n"
              "    struct L { float a; float get() const { return a; } };\n"
              "    L l; l.a = 1.0f;\n    y[0] = l.get();\n}\n")
    kernel, messages = created(source)
    assert len(messages) == 1 and "member function get() of struct L" in messages[0]
    with pytest.raises(KernelSyntaxError, match="OpenCL cannot build") as info:
        kernel.render("opencl")
    assert (info.value.lineno, info.value.offset) == (2, source.split("\n")[1].index("get") + 1)


def test_a_struct_without_methods_does_not_warn() -> None:
    source = ("typedef struct { alignas(8) float x; float y; } P;\n"
              "@kernel void f(float* out) {\n    P p; p.x = 1.0f; p.y = 2.0f;\n"
              "    out[0] = p.x + p.y;\n}\n")
    assert created(source)[1] == []


@pytest.mark.parametrize("member, needle", [
    ("V(float a) : x(a), y(0.0f) {}", "V("),
    ("V operator+(V o) const { V r = o; r.x += x; return r; }", "operator"),
], ids=["constructor", "operator"])
def test_constructors_and_operators_are_member_functions_too(member: str, needle: str) -> None:
    source = ("struct V {\n    float x; float y;\n    " + member + "\n};\n"
              "@kernel void f(float* out) {\n    out[0] = 1.0f;\n}\n")
    _, messages = created(source)
    assert len(messages) == 1 and "not portable to: OpenCL)" in messages[0]
    assert messages[0].split(": ", 1)[1].startswith(f"user.pk:3:{5 + member.index(needle)}:")


def test_struct_methods_are_refused_when_rendered_for_opencl() -> None:
    kernel, _ = created(METHODS)
    with pytest.raises(KernelSyntaxError, match="OpenCL cannot build member function norm2") \
            as info:
        kernel.render("opencl")
    err = info.value
    line = line_of(METHODS, "float norm2()")
    assert (err.filename, err.lineno) == ("user.pk", line)
    assert err.offset == METHODS.split("\n")[line - 1].index("norm2") + 1
    assert "V_norm2(&v)" in str(err) and "native path" in str(err)
    for target in ("c", "cuda", "metal"):
        assert "norm2" in kernel.render(target)


def test_struct_methods_run_on_every_path_but_opencl(path: Any) -> None:
    kernel, _ = created(METHODS)
    a = np.arange(8, dtype=np.float32)
    if path.where == "pocl":
        with pytest.raises(KernelSyntaxError, match="OpenCL cannot build") as info:
            path.run(kernel, np.zeros(8, np.float32), a, ndrange=8)
        assert info.value.lineno == line_of(METHODS, "float norm2()")
        return
    path.run(kernel, np.zeros(8, np.float32), a, ndrange=8)
    assert list(path.after[0]) == list(1.5 * (a * a + 4))


# -- 2. a helper's name as a value ------------------------------------------------------------

FPTR_CASES = {
    "auto-in-a-helper": ("float at(const float* p, long i) { return p[i]; }\n"
                         "float through(const float* x, long i) {\n"
                         "    auto f = at;\n    return f(x, i);\n}\n"
                         "@kernel void k(float* y, const float* x) {\n"
                         "    const long i = @index(Global, Linear);\n"
                         "    y[i] = through(x, i);\n}\n", "= at;"),
    "auto-in-the-kernel": ("float sq(float v) { return v * v; }\n"
                           "@kernel void k(float* y) {\n"
                           "    const long i = @index(Global, Linear);\n"
                           "    auto f = sq;\n    y[i] = f(2.0f);\n}\n", "= sq;"),
    "assigned": ("float sq(float v) { return v * v; }\n"
                 "float cube(float v) { return v * v * v; }\n"
                 "@kernel void k(float* y) {\n"
                 "    const long i = @index(Global, Linear);\n"
                 "    auto f = cube;\n    f = sq;\n    y[i] = f(2.0f);\n}\n", "= cube;"),
    "an-argument": ("float sq(float v) { return v * v; }\n"
                    "template <typename F> float apply(F f, float v) { return f(v); }\n"
                    "@kernel void k(float* y) {\n"
                    "    const long i = @index(Global, Linear);\n"
                    "    y[i] = apply(sq, 2.0f);\n}\n", "(sq,"),
}


@pytest.mark.parametrize("debug", [False, True], ids=["release", "debug"])
@pytest.mark.parametrize("case", sorted(FPTR_CASES))
def test_a_helper_used_as_a_value_is_refused_at_creation(case: str, debug: bool) -> None:
    source, marker = FPTR_CASES[case]
    with pytest.raises(KernelSyntaxError, match="used as a function pointer") as info:
        pk.kernel(source, filename="user.pk", debug=debug)
    err = info.value
    line = line_of(source, marker)
    name = marker.strip("=(;, ")
    assert (err.filename, err.lineno) == ("user.pk", line)
    assert err.offset == source.split("\n")[line - 1].index(name, 4) + 1
    assert err.text == source.split("\n")[line - 1] and "^" in str(err).splitlines()[-1]
    assert f"call {name!r} directly" in str(err) and "OpenCL C and Metal" in str(err)


SHADOWED = """
typedef struct { float sq; float w; } Pair;
float sq(float v) { return v * v; }
float fields(Pair s) { return s.sq + s.sq * s.w; }
float own(float v) { float a = 0.5f, sq = v; return a + sq; }
float param(long sq) { return (float)sq; }
@kernel void shadowed(float* y, const float* x) {
    const long i = @index(Global, Linear);
    Pair s; s.sq = 1.0f; s.w = 2.0f;
    float r = sq(x[i]);
    { float sq = 1.0f; r += sq; }
    for (long sq = 0; sq < 2; sq++) r += (float)sq;
    y[i] = r + fields(s) + own(x[i]) + param(i);
}
"""


@pytest.mark.parametrize("debug", [False, True], ids=["release", "debug"])
def test_a_variable_field_or_parameter_named_like_a_helper_is_no_function_pointer(
        path: Any, debug: bool) -> None:
    kernel = pk.kernel(SHADOWED, debug=debug)
    x = np.arange(8, dtype=np.float32)
    path.run(kernel, np.zeros(8, np.float32), x, ndrange=8)
    expected = x * x + 1 + 1 + 3 + (0.5 + x) + np.arange(8)
    assert list(path.after[0]) == list(expected.astype(np.float32))


def test_a_kernel_parameter_named_like_a_helper_shadows_it() -> None:
    source = ("float w(float v) { return v; }\n"
              "@kernel void k(float* y, const float* w) {\n"
              "    const long i = @index(Global, Linear);\n    y[i] = w[i];\n}\n")
    assert "y[i] = w[i]" in pk.kernel(source).render("c")


def test_a_binding_or_a_construct_word_named_like_a_helper_is_no_function_pointer() -> None:
    source = ("float add(float a, float b) { return a + b; }\n"
              "float i(float v) { return v; }\n"
              "@kernel void k(float* y) {\n"
              "    auto [i, j] = @index(Global, NTuple);\n"
              "    y[i * 2 + j] = add(1.0f, 2.0f);\n"
              "    float s = @groupreduce(add, y[0]);\n"
              "    y[0] = s;\n}\n")
    kernel = pk.kernel(source)
    assert "add(1.0f, 2.0f)" in kernel.render("c", ndim=2)


# -- 3. initcheck: a reference binding marks its element ---------------------------------------

REFERENCE = """
@kernel void through_ref(float* y, const float* x) {
    @localmem float t[8];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    float& r = t[2 * l];
    r = x[i];
    t[2 * l + 1] = 1.0f;
    @synchronize();
    y[i] = t[2 * l] + t[2 * l + 1];
}
"""


def test_a_reference_bound_to_localmem_is_no_read_in_debug_mode(path: Any) -> None:
    kernel = pk.kernel(REFERENCE, debug=True)
    x = np.arange(8, dtype=np.float32)
    path.run(kernel, np.zeros(8, np.float32), x, ndrange=8, workgroupsize=4)
    assert list(path.after[0]) == list(x + 1)


def test_a_read_of_an_element_no_reference_marked_still_faults(path: Any) -> None:
    # The binding marks t[2l]; t[2l + 1] is read before anything wrote it.
    source = REFERENCE.replace("t[2 * l + 1] = 1.0f;", "float u = t[2 * l + 1];") \
        .replace("t[2 * l] + t[2 * l + 1]", "t[2 * l] + u")
    kernel = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(kernel, np.zeros(8, np.float32), x, ndrange=8, workgroupsize=4)
    assert info.value.lineno == line_of(source, "float u =")
    # the first item to read is the GPU stand-in's to choose: some odd element
    assert re.search(r"read of element [1357] of @localmem array 't'", str(info.value))
    assert "no work-item of the group had written" in str(info.value)
