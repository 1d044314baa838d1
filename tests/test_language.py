"""The kernel language: parameters, type variables, several kernels, and syntax errors.

Every syntax error must be a :class:`KernelSyntaxError` (so also a ``SyntaxError``
and a ``PortakernError``) raised before any compiler runs, naming the user's file,
line and column, with a caret under that column.
"""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError, KernelTypeError, PortakernError

SAXPY = """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""


def raises_syntax(source: str, *, line: int, col: int | None = None, match: str = "",
                  filename: str = "user.pk", target: str = "opencl", **bindings: object
                  ) -> KernelSyntaxError:
    """Render ``source`` and return the KernelSyntaxError, checking its position."""
    with pytest.raises(KernelSyntaxError, match=match) as info:
        k = pk.Kernel(source, filename=filename)
        k.render(target, **bindings)
    err = info.value
    assert isinstance(err, SyntaxError)
    assert isinstance(err, PortakernError)
    assert err.filename == filename
    assert err.lineno == line, str(err)
    if col is not None:
        assert err.offset == col, str(err)
        text = source.split("\n")[line - 1]
        assert err.text == text
        # The printed message shows the user's line and a caret under the column.
        printed = str(err).split("\n")
        assert printed[0].startswith(f'File "{filename}", line {line}')
        assert printed[1] == "    " + text
        assert printed[2] == "    " + " " * (col - 1) + "^"
    return err


def col_of(source: str, line: int, needle: str) -> int:
    return source.split("\n")[line - 1].index(needle) + 1


# -- parameters -----------------------------------------------------------------


def test_params_pointer_const_scalar_and_type_variable():
    k = pk.kernel(SAXPY)
    assert k.name == "saxpy"
    y, x, a = k.params
    assert (y.name, y.type, y.pointer, y.const, y.writable) == ("y", "T", True, False, True)
    assert (x.name, x.type, x.pointer, x.const, x.writable) == ("x", "T", True, True, False)
    assert (a.name, a.type, a.pointer, a.const) == ("a", "T", False, False)
    assert [p.index for p in k.params] == [0, 1, 2]
    assert k.type_vars == ("T",)
    assert "saxpy(T* y, const T* x, T a)" in repr(k)


def test_known_types_are_not_type_variables():
    src = """@kernel void f(float* a, const int64_t* b, uint8_t c, double d, half* e, bool g,
                     ulong h, Acc* s, const Acc* t, U u) {
        const long i = @index(Global, Linear);
        a[i] = b[i];
    }"""
    k = pk.kernel(src)
    assert k.type_vars == ("Acc", "U")
    assert [p.type for p in k.params] == ["float", "int64_t", "uint8_t", "double", "half",
                                          "bool", "ulong", "Acc", "Acc", "U"]
    assert [p.pointer for p in k.params] == [True, True, False, False, True, False, False,
                                             True, True, False]


def test_void_and_empty_parameter_lists():
    for sig in ("void", ""):
        k = pk.kernel(f"@kernel void f({sig}) {{ }}")
        assert k.params == []
        assert "__kernel void f(const long pk_n0)" in k.render("opencl")


@pytest.mark.parametrize("binding", ["float", np.float32, np.dtype("float32")])
def test_specialize_binds_type_variable(binding):
    k = pk.kernel(SAXPY).specialize(T=binding)
    assert k.type_vars == ()
    src = k.render("opencl")
    assert "typedef float T;" in src
    y = np.ones(5, np.float32)
    x = np.arange(5, dtype=np.float32)
    k(y, x, 3.0, ndrange=5)
    np.testing.assert_array_equal(y, 3 * np.arange(5, dtype=np.float32) + 1)


def test_specialize_float64_and_constructor_binding():
    k = pk.kernel(SAXPY, T=np.float64)
    assert k.type_vars == ()
    assert "typedef double T;" in k.render("opencl")
    assert "#pragma OPENCL EXTENSION cl_khr_fp64" in k.render("opencl")
    y = np.zeros(7)
    x = np.linspace(0, 1, 7)
    k(y, x, 0.5, ndrange=7)
    np.testing.assert_allclose(y, 0.5 * x)


def test_specialize_keeps_original_unchanged():
    k = pk.kernel(SAXPY)
    k2 = k.specialize(T="double")
    assert k.type_vars == ("T",)
    assert k2.type_vars == ()
    assert "typedef float T;" in k.render("opencl", T="float")


def test_render_rejects_unknown_type_variable_and_bad_type():
    k = pk.kernel(SAXPY)
    with pytest.raises(KernelTypeError, match="'U' is not a type variable"):
        k.render("opencl", U="float")
    with pytest.raises(KernelTypeError, match="type variable T"):
        k.render("opencl", T="quaternion")
    # NumPy's "complex" is complex128, the kernel type cdouble (docs/language.md).
    assert "typedef cdouble T;" in k.render("opencl", T="complex")
    with pytest.raises(KernelTypeError, match="T unbound"):
        k.render("opencl")


def test_type_variable_bound_to_number_is_rejected():
    with pytest.raises(KernelTypeError, match="type variable T"):
        pk.kernel(SAXPY, T=3).render("opencl")


# -- several kernels, helpers, defines --------------------------------------------

MULTI = """\
#define SCALE 3
float helper(float v) { return v * SCALE; }

@kernel void first(float* y) {
    const long i = @index(Global, Linear);
    y[i] = helper(1.0f);
}

@kernel void second(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = helper(x[i]) + SCALE;
}
"""


def test_several_kernels_need_a_name():
    with pytest.raises(KernelSyntaxError, match="several @kernel functions.*first, second"):
        pk.kernel(MULTI).render("opencl")
    with pytest.raises(KernelSyntaxError, match="no @kernel named 'third'.*first, second"):
        pk.kernel(MULTI, name="third").render("opencl")


def test_several_kernels_share_helpers_and_defines():
    first = pk.kernel(MULTI, name="first")
    second = pk.kernel(MULTI, name="second")
    assert first.name == "first" and second.name == "second"
    src = second.render("opencl")
    assert "#define SCALE 3" in src and "float helper(float v)" in src
    # Only the chosen kernel becomes a __kernel; the other is not rendered at all.
    assert "__kernel void second(" in src and "first" not in src
    y = np.zeros(4, np.float32)
    first(y, ndrange=4)
    np.testing.assert_array_equal(y, np.full(4, 3, np.float32))
    x = np.arange(4, dtype=np.float32)
    second(y, x, ndrange=4)
    np.testing.assert_array_equal(y, x * 3 + 3)


def test_duplicate_kernel_name():
    src = "@kernel void f(float* y) { }\n@kernel void f(float* y) { }\n"
    raises_syntax(src, line=2, match="defined twice")


def test_from_file(tmp_path):
    path = tmp_path / "scale.pk"
    path.write_text(MULTI)
    k = pk.kernel.from_file(path, name="second")
    assert k.name == "second"
    assert f'#line 10 "{path}"' in k.render("opencl")
    y = np.zeros(3, np.float32)
    k(y, np.ones(3, np.float32), ndrange=3)
    np.testing.assert_array_equal(y, np.full(3, 6, np.float32))


def test_from_file_errors_name_the_file(tmp_path):
    path = tmp_path / "broken.pk"
    path.write_text("@kernel void f(float* y) {\n    y[0] = @index(Global, Diagonal);\n}\n")
    with pytest.raises(KernelSyntaxError) as info:
        pk.kernel.from_file(path).render("opencl")
    assert info.value.filename == str(path)
    assert info.value.lineno == 2
    assert str(path) in str(info.value)
    assert "Diagonal" in str(info.value)


def test_from_file_jinja_error_names_the_file(tmp_path):
    path = tmp_path / "tmpl.pk"
    path.write_text("@kernel void f(float* y) {\n\n    y[0] = {{ MISSING }};\n}\n")
    with pytest.raises(KernelSyntaxError, match="MISSING") as info:
        pk.kernel.from_file(path).render("opencl")
    assert info.value.filename == str(path)
    assert info.value.lineno == 3


# -- syntax errors with positions ---------------------------------------------------


def test_error_is_syntax_error_and_portakern_error():
    assert issubclass(KernelSyntaxError, SyntaxError)
    assert issubclass(KernelSyntaxError, PortakernError)
    err = KernelSyntaxError("boom", "f.pk", 3, 5, "\tab cd")
    assert (err.filename, err.lineno, err.offset, err.msg) == ("f.pk", 3, 5, "boom")
    # A tab in the line is kept so the caret lines up under the same column.
    assert str(err).split("\n")[2] == "    \t   ^"


@pytest.mark.parametrize("construct, needle, match", [
    ("@index(Global)", "@index", "two words"),
    ("@index(Global, Linear, Linear)", "@index", "two words"),
    ("@index", "@index", r"expected '\('"),
    ("@index(Glob, Linear)", "Glob", "unknown index locale 'Glob'"),
    ("@index(Global, Cartesian)", "Cartesian", "unknown index kind 'Cartesian'.*NTuple"),
    ("@index(Local, Tuple)", "Tuple", "unknown index kind"),
    ("@ndrange(x)", "@ndrange", "one integer axis"),
    ("@groupsize(0, 1)", "@groupsize", "one integer axis"),
    ("@ndrange(5)", "5", "at most 3 axes"),
    ("@foo(1)", "@foo", "unknown construct @foo.*@index"),
    ("@Index(Global, Linear)", "@Index", "unknown construct"),
])
def test_malformed_constructs(construct, needle, match):
    src = f"@kernel void f(long* y) {{\n    y[0] = {construct};\n}}\n"
    raises_syntax(src, line=2, col=col_of(src, 2, needle), match=match)


def test_unknown_kernel_option():
    src = "@kernel(fast) void f(float* y) {\n}\n"
    raises_syntax(src, line=1, col=col_of(src, 1, "fast"), match="unknown @kernel option")


def test_kernel_must_return_void_and_have_a_name():
    src = "@kernel int f(float* y) {\n}\n"
    raises_syntax(src, line=1, col=col_of(src, 1, "int"), match="must return void")
    src = "\n@kernel void (float* y) {\n}\n"
    raises_syntax(src, line=2, col=col_of(src, 2, "("), match="kernel's name")


def test_kernel_inside_a_function():
    src = "void g() {\n    @kernel void f(float* y) { }\n}\n"
    raises_syntax(src, line=2, col=5, match="top level")


def test_no_kernel():
    raises_syntax("float g(float v) { return v; }\n", line=1, match="no @kernel")


def test_localmem_non_constant_size():
    """A size read at launch works for a 1-D array only (tests/test_localmem_sizes.py)."""
    src = ("@kernel void f(float* y, long n) {\n"
           "    @localmem float tile[16][n];\n"
           "    y[0] = 0;\n}\n")
    raises_syntax(src, line=2, col=col_of(src, 2, "n]"), match="'n'.*one-dimensional")


def test_localmem_constant_sizes_accepted():
    src = ("#define W 8\n"
           "@kernel void f(float* y) {\n"
           "    @localmem float a[W * 2][(4 + 1) << 1];\n"
           "    @localmem float b[{{ TILE }}];\n"
           "    y[0] = a[0][0] + b[0];\n}\n")
    out = pk.kernel(src, TILE=16).render("opencl")
    assert "__local float a[W * 2][( 4 + 1 ) << 1];" in out
    assert "__local float b[16];" in out


@pytest.mark.parametrize("decl, match", [
    ("@localmem tile;", "needs a type, a name and a size"),  # a scalar needs a type too
    ("@localmem float tile[];", "cannot be empty"),
    ("@localmem tile[4];", "needs a type, a name and a size"),
])
def test_localmem_malformed(decl, match):
    src = f"@kernel void f(float* y) {{\n    {decl}\n}}\n"
    raises_syntax(src, line=2, match=match)


def test_synchronize_inside_a_per_item_if_block():
    # An `if` around a barrier is fine when its condition is group-uniform; this one
    # reads the global index, so the error points at it.
    src = ("@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    if (i > 3) {\n"
           "        @synchronize();\n"
           "    }\n"
           "    y[i] = 0;\n}\n")
    raises_syntax(src, line=3, col=col_of(src, 3, "i >"), match="must take the same branch")


@pytest.mark.parametrize("stmt", [
    "if (i > 3)\n        @synchronize();",
    "if (i > 3) { y[i] = 1; } else { @synchronize(); }",
])
def test_synchronize_in_per_item_conditionals(stmt):
    src = ("@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           f"    {stmt}\n"
           "    y[i] = 0;\n}\n")
    raises_syntax(src, line=3, col=col_of(src, 3, "i >"), match="must take the same branch")


def test_synchronize_in_a_switch():
    src = ("@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    switch (i) { case 0: @synchronize(); break; }\n"
           "    y[i] = 0;\n}\n")
    raises_syntax(src, line=3, col=col_of(src, 3, "@synchronize"), match="cannot be convergent")


def test_synchronize_in_loops_and_blocks_is_fine():
    src = ("@kernel void f(float* y) {\n"
           "    for (int k = 0; k < 4; ++k) { @synchronize(); }\n"
           "    while (0) { @synchronize(); }\n"
           "    do { @synchronize(); } while (0);\n"
           "    { @synchronize(); }\n"
           "    @synchronize;\n}\n")
    out = pk.kernel(src).render("opencl")
    assert out.count("barrier(CLK_LOCAL_MEM_FENCE") == 5


@pytest.mark.parametrize("stmt", ["for\n    @synchronize();", "do @synchronize(); while (0);",
                                  "while @synchronize();"])
def test_malformed_loops_around_synchronize(stmt):
    src = f"@kernel void f(float* y) {{\n    y[0] = 1;\n    {stmt}\n}}\n"
    raises_syntax(src, line=3, col=5, match="malformed statement around @synchronize")


def test_synchronize_takes_no_arguments_and_needs_semicolon():
    src = "@kernel void f(float* y) {\n    @synchronize(1);\n}\n"
    raises_syntax(src, line=2, col=5, match="takes no arguments")
    src = "@kernel void f(float* y) {\n    @synchronize()\n    y[0] = 1;\n}\n"
    raises_syntax(src, line=2, col=5, match="expected ';'")


def test_return_before_synchronize():
    src = ("@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    if (i > 3) return;\n"
           "    @synchronize();\n"
           "    y[i] = 0;\n}\n")
    raises_syntax(src, line=3, col=col_of(src, 3, "return"), match="'return' before @synchronize")


def test_return_after_last_synchronize_is_fine():
    src = ("@kernel void f(float* y) {\n"
           "    @synchronize();\n"
           "    if (y[0] > 3) return;\n"
           "    y[0] = 0;\n}\n")
    assert "return" in pk.kernel(src).render("opencl")


# @synchronize() may be in a void helper, which is inlined (tests/test_pointers.py).
@pytest.mark.parametrize("construct", ["@index(Global, Linear)", "@ndrange(0)", "@groupsize()"])
def test_kernel_constructs_in_a_helper(construct):
    src = (f"long helper() {{\n    return {construct};\n}}\n"
           "@kernel void f(long* y) { y[0] = helper(); }\n")
    raises_syntax(src, line=2, col=12, match="only be used inside a @kernel")


def test_atomics_allowed_in_helpers():
    src = ("int bump(int* p) { return @atomic_add(p, 1); }\n"
           "@kernel void f(int* y) { bump(y); }\n")
    # The helper's pointer gets the address space it is called with (portakern.lower.pointers).
    for target, signature in (("opencl", "int bump_pk_g(__global int* p)"),
                              ("cuda", "int bump(int* p)"), ("metal", "int bump(device int* p)")):
        out = pk.kernel(src).render(target)
        assert f"{signature} {{ return pk_atomic_add(p, 1); }}" in out
        assert "@" not in out


def test_unknown_construct_in_helper():
    src = "int g() { return @bogus; }\n@kernel void f(int* y) { }\n"
    raises_syntax(src, line=1, col=col_of(src, 1, "@bogus"), match="unknown construct @bogus")


def test_at_construct_in_preprocessor_line():
    src = "#define IDX @index(Global, Linear)\n@kernel void f(long* y) { y[IDX] = 0; }\n"
    raises_syntax(src, line=1, col=1, match="preprocessor")


def test_unbalanced_braces():
    src = ("@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    if (i < 4) {\n"
           "        y[i] = 0;\n"
           "}\n")
    raises_syntax(src, line=1, col=col_of(src, 1, "{"), match="never closed")
    src = ("@kernel void f(float* y) {\n"
           "    y[0] = (1 + 2));\n"
           "}\n")
    raises_syntax(src, line=2, col=col_of(src, 2, "));") + 1, match="does not match")
    src = "}\n@kernel void f(float* y) { }\n"
    raises_syntax(src, line=1, col=1, match="unmatched")


def test_pointer_to_pointer_param():
    src = "@kernel void f(float** y) {\n}\n"
    raises_syntax(src, line=1, col=col_of(src, 1, "*") + 1, match="pointers to pointers")


@pytest.mark.parametrize("param, needle, match", [
    ("__global float* y", "__global", "address spaces are the renderer's job"),
    ("unsigned int y", "unsigned", "use uint"),
    ("float* y, float* y", "(", "duplicate parameter"),
    ("float* y,", "(", "empty parameter"),
    ("float* pk_n0", "(", "reserved"),
    ("float", "float", "needs a type and a name"),
    ("float y[4]", "[", "unexpected '\\['"),
    ("float *", "float", "needs a type and a name"),
])
def test_bad_params(param, needle, match):
    src = f"@kernel void f({param}) {{\n}}\n"
    raises_syntax(src, line=1, col=col_of(src, 1, needle), match=match)


def test_unexpected_character_and_unterminated_comment():
    src = "@kernel void f(float* y) {\n    y[0] = 1 $ 2;\n}\n"
    raises_syntax(src, line=2, col=col_of(src, 2, "$"), match="unexpected character")
    src = "@kernel void f(float* y) {\n    /* never closed\n}\n"
    raises_syntax(src, line=2, col=5, match="unterminated comment")


def test_ntuple_must_be_unpacked():
    src = "@kernel void f(long* y) {\n    long i = @index(Global, NTuple);\n}\n"
    raises_syntax(src, line=2, col=col_of(src, 2, "@index"), match="must be unpacked")


def test_ntuple_axis_count_mismatch():
    src = "@kernel void f(long* y) {\n    auto [i, j] = @index(Global, NTuple);\n}\n"
    k = pk.kernel(src)
    assert "long i = " in k.render("opencl")  # the rank is inferred as 2
    with pytest.raises(pk.NDRangeError, match="unpacks 2 indices.*1 axis"):
        k.render("opencl", ndim=1)
    with pytest.raises(pk.NDRangeError, match="ndrange has 1 axis"):
        k(np.zeros(4, np.int64), ndrange=4)
    src = ("@kernel void f(long* y) {\n"
           "    auto [i, j, k, l] = @index(Global, NTuple);\n}\n")
    raises_syntax(src, line=2, col=col_of(src, 2, "@index"), match="at most 3")


def test_size_axis_beyond_ndrange():
    src = "@kernel void f(long* y) {\n    y[0] = @groupsize(1);\n}\n"
    with pytest.raises(pk.NDRangeError, match=r"@groupsize\(1\).*1 axis"):
        pk.kernel(src).render("opencl", ndim=1)
    assert "get_local_size(0)" in pk.kernel(src).render("opencl", ndim=2)


@pytest.mark.parametrize("ndim", [-1, 4, 1.5, "2"])
def test_render_bad_ndim(ndim):
    with pytest.raises(pk.NDRangeError, match="rank"):
        pk.kernel(SAXPY).render("opencl", ndim=ndim, T="float")


def test_auto_declaration_hoisted_needs_a_type():
    src = ("@kernel void f(float* y) {\n"
           "    auto v = y[0];\n"
           "    @synchronize();\n"
           "    y[1] = v;\n}\n")
    raises_syntax(src, line=2, col=col_of(src, 2, "v"), match="explicit type instead of 'auto'")


def test_array_initializer_in_barrier_kernel():
    # Declared above the mask without its initializer, filled where it was written
    # (tests/test_silent_rows.py runs it on every target); without barriers, as written.
    src = ("@kernel void f(float* y, const float* x) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    float pair[2] = {x[i], 1.0f};\n"
           "    @synchronize();\n"
           "    y[i] = pair[0];\n}\n")
    text = pk.kernel(src).render()
    assert "float  pair[2] ;" in text and "pk_init_pair[2]  =  {x[i], 1.0f};" in text
    no_barrier = src.replace("    @synchronize();\n", "")
    assert "float pair[2] = {x[i], 1.0f};" in pk.kernel(no_barrier).render()


# -- Jinja -------------------------------------------------------------------------


def test_unknown_jinja_name_is_strict():
    src = ("@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    y[i] = {{ SCALE }};\n}\n")
    err = raises_syntax(src, line=3, match="undefined name 'SCALE'")
    assert "specialize(SCALE=" in str(err)
    assert err.text == "    y[i] = {{ SCALE }};"
    assert err.offset == col_of(src, 3, "SCALE")
    # Bound, the same source renders.
    assert "y[i] = 2;" in pk.kernel(src, SCALE=2).render("opencl")


def test_unknown_jinja_name_inside_a_loop_reports_its_line():
    src = ("@kernel void f(float* y) {\n"
           "{% for k in range(2) %}\n"
           "    y[{{ k }}] = {{ k }};\n"
           "{% endfor %}\n"
           "    y[2] = {{ OOPS }};\n}\n")
    raises_syntax(src, line=5, match="'OOPS'")


def test_jinja_syntax_error():
    src = ("@kernel void f(float* y) {\n"
           "    {% if FLAG %}\n"
           "    y[0] = 1;\n}\n")
    with pytest.raises(KernelSyntaxError, match="template error") as info:
        pk.Kernel(src, filename="t.pk", FLAG=True)
    assert info.value.filename == "t.pk"
    assert info.value.lineno in (2, 4)
    src = "@kernel void f(float* y) {\n    y[0] = {{ 1 + }};\n}\n"
    with pytest.raises(KernelSyntaxError, match="template error") as info:
        pk.Kernel(src, filename="t.pk")
    assert info.value.lineno == 2
    assert "nested braces" not in str(info.value)  # a Jinja expression, not C's braces


def test_a_nested_c_initialiser_read_as_jinja_says_how_to_write_it():
    src = ("@kernel void f(int* y) {\n"
           "    int t[2][2] = {{1, 2}, {3, 4}};\n"
           "    y[0] = t[1][1] + t[0][1];\n}\n")
    with pytest.raises(KernelSyntaxError, match="template error") as info:
        pk.kernel(src)
    err = info.value
    assert (err.lineno, err.offset) == (2, src.split("\n")[1].index("{{") + 1)
    assert "write '{ {' with a space" in str(err) and "{% raw %}" in str(err)
    # both fixes the message names build and run
    raw = src.replace("    int t", "{% raw %}    int t").replace("};\n", "};{% endraw %}\n", 1)
    for fixed in (src.replace("{{1, 2}, {3, 4}}", "{ {1, 2}, {3, 4} }"), raw):
        y = np.zeros(1, np.int32)
        pk.kernel(fixed)(y, ndrange=1)
        assert y[0] == 6


def test_jinja_runtime_error_is_a_syntax_error():
    src = "@kernel void f(float* y) {\n    y[0] = {{ 1 // ZERO }};\n}\n"
    with pytest.raises(KernelSyntaxError, match="ZeroDivisionError") as info:
        pk.kernel(src, ZERO=0).render("opencl")
    assert info.value.lineno == 2


def test_error_lines_follow_jinja_rendering():
    # Lines produced by a {% for %} map back to the line inside the loop; the error
    # after the loop still names its own line.
    src = ("@kernel void f(float* y) {\n"
           "{% for k in range(3) %}\n"
           "    y[{{ k }}] = {{ k }};\n"
           "{% endfor %}\n"
           "    y[0] = @index(Global, Bogus);\n}\n")
    raises_syntax(src, line=5, col=col_of(src, 5, "Bogus"), match="Bogus")


def test_constants_are_checked():
    # A string that names no type is a C expression, written only through {{ EXPR | expr }}
    # and parsed first (tests/test_fragments.py); never pasted as it is.
    with pytest.raises(KernelSyntaxError, match="expr filter"):
        pk.kernel(SAXPY + "// {{ EXPR }}", EXPR="x[0]; y[0] = 1").render("c")
    with pytest.raises(KernelSyntaxError, match="not one C expression"):
        pk.kernel(SAXPY + "// {{ OP | expr }}").specialize(OP="+").render("c")
    with pytest.raises(KernelTypeError, match="has type list"):
        pk.kernel(SAXPY, N=[1, 2])
    with pytest.raises(KernelTypeError, match="finite"):
        pk.kernel(SAXPY, X=float("nan"))
    with pytest.raises(KernelTypeError, match="'target'"):
        pk.kernel(SAXPY, target="cuda")
    for bad in (None, object(), b"float"):
        with pytest.raises(KernelTypeError):
            pk.kernel(SAXPY, N=bad)
