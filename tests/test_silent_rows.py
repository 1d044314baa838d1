"""Issue 22, "nothing passes silently": the language rows (DESIGN section 1a).

Each construct that used to pass ``pk.kernel()`` without a word, to a wrong result or to
one target's compiler, either runs right on every target (CPU()'s native path, PoCL, the
CUDA and Metal stand-ins) or is a ``KernelSyntaxError`` at the user's line, with a caret,
naming the fix. One test (or parametrized family) per row of the issue's table.
"""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError


def refused(source: str, needle: str, match: str, *, line: int, nth: int = 0,
            target: str | None = None, ndim: int = 1) -> KernelSyntaxError:
    """The KernelSyntaxError ``source`` gets, at ``line``, caret under ``needle``.

    Raised by ``pk.kernel()`` itself, unless ``target`` names the rendering (the
    lowering for it) that finds it.
    """
    with pytest.raises(KernelSyntaxError, match=match) as info:
        kernel = pk.kernel(source, filename="user.pk")
        if target is not None:
            kernel.render(target, ndim=ndim)
    err = info.value
    text = source.split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = text.index(needle, col + 1)
    assert (err.filename, err.lineno, err.offset) == ("user.pk", line, col + 1), str(err)
    assert err.text == text
    assert "^" in str(err).splitlines()[-1]
    return err


def _run(backend, kernel, *args, **launch):
    """Launch on ``backend`` with NumPy arrays (and scalars); the arrays come back."""
    dev = [backend.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
           for a in args]
    kernel(*dev, **launch)
    backend.synchronize()
    return [backend.to_host(d) for a, d in zip(args, dev, strict=True)
            if isinstance(a, np.ndarray)]


# -- row 1: a[i, j] on a flat pointer (C's comma operator) ------------------------------------

COMMA_CASES = {
    "parameter": ("@kernel void f(float* a) {\n"
                  "    auto [i, j] = @index(Global, NTuple);\n"
                  "    a[i, j] = 1;\n}\n", 3, "'float a\\[:, :\\]'"),
    "pointer": ("@kernel void f(float* a, long n) {\n"
                "    auto [i, j] = @index(Global, NTuple);\n"
                "    float* row = a + i * n;\n"
                "    row[i, j] = 1;\n}\n", 4, "one linear index"),
    "localmem": ("@kernel void f(float* a) {\n"
                 "    @localmem float t[16][16];\n"
                 "    auto [i, j] = @index(Local, NTuple);\n"
                 "    t[i, j] = 1;\n    a[0] = t[0][0];\n}\n", 4, "t\\[i\\]\\[j\\]"),
    "private": ("@kernel void f(float* a) {\n"
                "    @private float acc[4][4];\n"
                "    auto [i, j] = @index(Global, NTuple);\n"
                "    acc[1][i, j] = 0;\n    a[0] = acc[0][0];\n}\n", 4, "means acc\\[j\\]"),
}


@pytest.mark.parametrize("case", sorted(COMMA_CASES))
def test_a_comma_in_a_flat_subscript_is_refused_at_the_comma(case):
    source, line, match = COMMA_CASES[case]
    err = refused(source, ",", match, line=line, ndim=2)
    assert "comma operator" in str(err)


def test_a_structured_binding_and_a_parenthesised_comma_are_not_subscripts():
    source = ("@kernel void f(float* a, long n) {\n"
              "    auto [i, j] = @index(Global, NTuple);\n"
              "    a[i * n + j] = 1;\n}\n")
    assert "a[i * n + j]" in pk.kernel(source).render("opencl", ndim=2)


# -- row 2: a private array with an initializer in a kernel with @synchronize ------------------

ACC = """
@kernel void acc(float* out, const float* x) {
    const long i = @index(Global, Linear);
    const long li = @index(Local, Linear);
    @localmem float buf[64];
    float acc[2] = { 0.f, 1.f };
    @private float grid[2][2] = { { 0.f, 0.f }, { x[i], 0.f } };
    for (int r = 0; r < 4; r++) {
        buf[li] = acc[r & 1];
        @synchronize();
        acc[r & 1] += buf[li ^ 1] + x[i];
        @synchronize();
    }
    out[i] = acc[0] + 2.f * acc[1] + grid[1][0];
}
"""


def _acc_expected(x: np.ndarray) -> np.ndarray:
    acc = np.zeros((2, len(x)), np.float32)
    acc[1] = 1
    partner = np.arange(len(x)) ^ 1
    for r in range(4):
        acc[r & 1] += acc[r & 1][partner] + x
    return acc[0] + 2 * acc[1] + x


@pytest.mark.parametrize("n", [256, 250], ids=["whole-groups", "partial-group"])
def test_private_arrays_with_initializers_on_every_target(backend, n):
    x = (np.arange(n, dtype=np.float32) % 7) - 3
    out, _ = _run(backend, pk.kernel(ACC), np.zeros(n, np.float32), x, ndrange=n,
                  workgroupsize=64)
    np.testing.assert_array_equal(out, _acc_expected(x))


def test_cpu_keeps_an_initialised_array_on_the_native_path():
    # It used to fall back to PoCL (NotLockstep), which gave 252 of 256 outputs wrong.
    from portakern.lower.lowering import lower_kernel

    k = pk.kernel(ACC)
    module, kdef = k.parsed("c")
    lowered = lower_kernel(kdef, module, 1, lockstep=True)
    text = k.render("c", ndim=1)
    assert lowered.lockstep and "pk_priv_acc[pk_items][2]" in text
    assert "pk_init_acc[2]  =  { 0.f, 1.f };" in text  # as written, copied per item


def test_an_unsized_initialised_array_around_a_barrier_needs_its_size():
    source = ("@kernel void f(float* y) {\n"
              "    const long i = @index(Global, Linear);\n"
              "    float w[] = { 1.f, 2.f };\n"
              "    @synchronize();\n"
              "    y[i] = w[i % 2];\n}\n")
    refused(source, "w", "needs its size written", line=3, target="opencl")  # the lowering


# -- row 3: @groupsize() in the condition of a loop around a barrier ---------------------------

LOOPS = {
    "while": ("long s = 1;", "while (s < @groupsize()) {", "s *= 2; }"),
    "for": ("", "for (long s = 1; s < @groupsize(0); s *= 2) {", "}"),
    "groups": ("long s = 1;", "while (s < 16 * @groups()) {", "s *= 2; }"),
}
TREE = """
@kernel void tree(float* out, const float* x) {
    const long i = @index(Global, Linear);
    const long li = @index(Local, Linear);
    @localmem float buf[64];
    buf[li] = i < @ndrange() ? x[i] : 0.f;
    @synchronize();
    PRE
    LOOP
        if (li % (2 * s) == 0) buf[li] += buf[li + s];
        @synchronize();
    END
    if (li == 0) out[@index(Group, Linear)] = buf[0];
}
"""


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_group_size_in_a_barrier_loop_header_on_every_target(backend, loop):
    pre, head, end = LOOPS[loop]
    k = pk.kernel(TREE.replace("PRE", pre).replace("LOOP", head).replace("END", end))
    x = np.arange(256, dtype=np.float32) % 5
    out, _ = _run(backend, k, np.zeros(4, np.float32), x, ndrange=256, workgroupsize=64)
    np.testing.assert_array_equal(out, x.reshape(4, 64).sum(axis=1))


def test_the_group_size_is_read_before_the_loop_in_the_opencl_rendering():
    pre, head, end = LOOPS["while"]
    text = pk.kernel(TREE.replace("PRE", pre).replace("LOOP", head).replace("END", end)
                     ).render("opencl", ndim=1)
    assert "const long pk_size0 = ((long)get_local_size(0));" in text
    assert "while (s < (pk_size0))" in text


# -- row 4: pointer casts and arrays of pointers ----------------------------------------------

def test_a_pointer_cast_is_refused_naming_load_and_store():
    source = ("@kernel void f(float* y, const uint8_t* src, long off) {\n"
              "    const long i = @index(Global, Linear);\n"
              "    y[i] = *((const float*)(src + off));\n}\n")
    err = refused(source, "(const", "casts a pointer", line=3)
    assert "@load(T, p, offset)" in str(err) and "@store(T, p, offset, v)" in str(err)


def test_a_cxx_pointer_cast_is_refused_too():
    source = ("@kernel void f(float* y, const uint8_t* src) {\n"
              "    y[0] = *reinterpret_cast<const float*>(src);\n}\n")
    refused(source, "reinterpret_cast", "@load", line=2)


def test_casts_of_values_and_sizeof_a_pointer_are_fine():
    source = ("@kernel void f(float* y, const int* x) {\n"
              "    const long i = @index(Global, Linear);\n"
              "    y[i] = (float)x[i] + (float)sizeof(float*);\n}\n")
    assert "(float)sizeof(float*)" in pk.kernel(source).render("opencl", ndim=1)


def test_an_array_of_pointers_is_refused():
    source = ("@kernel void f(float* y, const float* a, const float* b) {\n"
              "    const long i = @index(Global, Linear);\n"
              "    const float* p[2] = {a, b};\n"
              "    y[i] = p[i % 2][i];\n}\n")
    refused(source, "p[", "array of pointers", line=3)



@pytest.mark.parametrize("where", ["kernel", "helper"])
def test_a_pointer_to_an_array_variable_is_refused(where):
    # It used to fail to build on PoCL, on CUDA and on Metal (the native path ran it).
    body = ("    float (*rows)[4] = t;\n"
            "    return rows[r][0];\n")
    if where == "helper":
        source = ("float first(float t[][4], long r) {\n" + body + "}\n"
                  "@kernel void f(float* y) {\n    float t[2][4] = {};\n"
                  "    y[0] = first(t, 1);\n}\n")
        line = 2
    else:
        source = ("@kernel void f(float* y) {\n    @localmem float t[2][4];\n"
                  "    long r = 1;\n" + body.replace("return", "y[0] =") + "}\n")
        line = 4
    refused(source, "rows", "pointer to an array", line=line)


def test_a_pointer_to_an_array_parameter_is_fine():
    source = ("float first(const float (*b)[4], long r) { return b[r][0]; }\n"
              "@kernel void f(float* y) {\n    @localmem float t[2][4];\n"
              "    y[0] = first(t, 1);\n}\n")
    assert "float first_pk_l(__local const float (*b)[4], long r)" in pk.kernel(
        source).render("opencl")


@pytest.mark.parametrize("declaration, line", [
    ("    float (*f)(float) = sq;\n    y[0] = f(2.0f);\n", 3),
    ("    typedef float (*F)(float);\n    y[0] = 0.0f;\n", 3),
], ids=["variable", "typedef"])
def test_a_function_pointer_is_refused(declaration, line):
    # OpenCL C and Metal have none: it used to fail to build there (native and CUDA ran it).
    source = ("float sq(float v) { return v * v; }\n@kernel void f(float* y) {\n"
              + declaration + "}\n")
    name = "F" if "typedef" in declaration else "f)"
    refused(source, name, "function pointer", line=line)


def test_a_function_pointer_parameter_is_refused():
    source = ("float apply(float (*op)(float), float v) { return op(v); }\n"
              "@kernel void f(float* y) {\n    y[0] = 1.0f;\n}\n")
    refused(source, "op", "function pointer", line=1)

# -- row 5: a struct name as a parameter type -------------------------------------------------

Q4 = """typedef struct { half d; uint8_t qs[16]; } block_q4_0;

@kernel void dequant(float* y, const block_q4_0* x) {
    const long i = @index(Global, Linear);
    y[i] = 0.f;
}
"""


def test_a_struct_name_is_never_a_type_variable():
    # Structs are parameter element types now (tests/test_structs.py), never type variables.
    k = pk.kernel(Q4)
    assert k.type_vars == () and k.parsed("c")[1].params[1].type == "block_q4_0"


def test_a_struct_keyword_in_a_parameter_names_the_struct():
    source = ("struct pair { float a; float b; };\n"
              "@kernel void f(float* y, const struct pair* p) {\n    y[0] = 0.f;\n}\n")
    assert pk.kernel(source).parsed("c")[1].params[1].type == "pair"


def test_a_struct_used_inside_a_kernel_still_runs():
    source = """
typedef struct { float lo; float hi; } range;
static range widen(range r, float by) { range o; o.lo = r.lo - by; o.hi = r.hi + by; return o; }
@kernel void f(float* y, const float* x) {
    const long i = @index(Global, Linear);
    range r; r.lo = x[i]; r.hi = x[i];
    const range w = widen(r, 1.f);
    y[i] = w.hi - w.lo;
}
"""
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    pk.kernel(source)(y, x, ndrange=8)
    np.testing.assert_array_equal(y, np.full(8, 2, np.float32))


# -- row 6: KernelAbstractions' @print form ---------------------------------------------------

def test_kernelabstractions_print_form_is_refused_naming_printf():
    source = ('@kernel void f(float* y) {\n'
              '    const long i = @index(Global, Linear);\n'
              '    @print("item ", i, "\\n");\n}\n')
    err = refused(source, "@print", "one format string", line=3)
    assert '@print("item %ld\\n", i);' in str(err)


def test_print_with_a_wrong_number_of_values_is_refused():
    source = ('@kernel void f(float* y) {\n'
              '    const long i = @index(Global, Linear);\n'
              '    @print("i=%ld x=%f\\n", i);\n}\n')
    refused(source, "@print", "converts 2 values but 1 is given", line=3)


def test_print_in_printf_form_is_accepted():
    source = ('@kernel void f(float* y) {\n'
              '    const long i = @index(Global, Linear);\n'
              '    @print("i=%ld %% x=%5.2f w=%*d\\n", i, (double)y[i], 3, 4);\n}\n')
    assert "printf(" in pk.kernel(source).render("opencl", ndim=1)
