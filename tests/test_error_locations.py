"""Every error about the user's code names the user's file and line (issue 29 item 4).

Each case is a mutated kernel (a wrong dtype, a missing return, a broken lockstep body,
an identifier only a compiler finds): the error must carry ``filename`` and ``lineno``
of the user's ``.pk`` file, quote that line, and never point into portakern's
generated sources (the temporary ``.cpp``, PoCL's cache) or at line 1 by default.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import portakern as pk
from portakern.backends.native import NativeCPU
from portakern.lower.lowering import NotLockstep

native = pytest.mark.skipif(not NativeCPU.available().ok, reason="no C++ compiler with OpenMP")
pocl = pytest.mark.skipif(not pk.CPU.opencl_available().ok, reason="no CPU OpenCL device")

#: Parameters on lines of their own, so each error's line says which one it means.
SAXPY = """\
// saxpy, one parameter a line
@kernel void saxpy(float* y,
                   const float* x,
                   float a,
                   uint8_t n) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i] + n;
}
"""
LINE = {"kernel": 2, "y": 2, "x": 3, "a": 4, "n": 5}


def _generated(text: str, path: Path | None = None) -> bool:
    """Whether a message points into a generated file rather than the user's (``path``)."""
    if path is not None:
        text = text.replace(str(path), "<user's file>")
    return bool(re.search(r"\.cpp\b|\.cl\b|/tmp/|pocl|portakern-build", text))


def _at(err: BaseException, path: Path, line: int, text: str | None = None) -> None:
    """``err`` names ``path`` and ``line`` (attributes and message), quoting ``text``."""
    assert (err.filename, err.lineno) == (str(path), line), (err.filename, err.lineno, err)
    msg = str(err)
    assert f'File "{path}", line {line}' in msg or f"{path}:{line}" in msg, msg
    if text is not None:
        assert text in msg, msg
    assert not _generated(msg, path), msg


@pytest.fixture
def saxpy(tmp_path: Path):
    path = tmp_path / "saxpy.pk"
    path.write_text(SAXPY)
    return pk.kernel.from_file(path), path


def _arrays(n: int = 8) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(n, np.float32), np.ones(n, np.float32)


# -- launch-time argument errors: the parameter's declaration ------------------------------

@pytest.mark.parametrize("case, param, exc, fragment", [
    ("dtype", "x", pk.KernelTypeError, "must have dtype float32, got float64; convert it "
                                       "(x.astype(numpy.float32))"),
    ("contiguous", "x", pk.KernelArgumentError, "(numpy.ascontiguousarray(x))"),
    ("range", "n", pk.KernelArgumentError, "= 300 is out of range for uint8"),
    ("scalar type", "a", pk.KernelTypeError, "must be a number, got str"),
    ("read-only", "y", pk.KernelArgumentError, "is read-only"),
    ("alias", "x", pk.KernelArgumentError, "shares memory with argument 0 'y'"),
    ("array for scalar", "a", pk.KernelTypeError, "takes a number, got a numpy.ndarray of "
                                                  "shape (8,)"),
    ("float for array", "x", pk.KernelTypeError, "expects an array, got a Python float 1.5"),
    ("count", "kernel", pk.KernelTypeError, "takes 4 arguments"),
])
@pytest.mark.parametrize("how", ["call", "launcher"])
def test_argument_errors_name_the_parameters_line(saxpy, case, param, exc, fragment, how):
    kernel, path = saxpy
    y, x = _arrays()
    args = {
        "dtype": (y, x.astype(np.float64), 2.0, 1),
        "contiguous": (y, np.ones(16, np.float32)[::2], 2.0, 1),
        "range": (y, x, 2.0, 300),
        "scalar type": (y, x, "2", 1),
        "read-only": (np.zeros(8, np.float32), x, 2.0, 1),
        "alias": (y, y, 2.0, 1),
        "array for scalar": (y, x, x, 1),
        "float for array": (y, 1.5, 2.0, 1),
        "count": (y, x, 2.0),
    }[case]
    if case == "read-only":
        args[0].setflags(write=False)
    launch = kernel if how == "call" else kernel(pk.CPU())
    with pytest.raises(exc) as info:
        launch(*args, ndrange=8)
    assert fragment in str(info.value)
    declared = SAXPY.splitlines()[LINE[param] - 1].strip()
    _at(info.value, path, LINE[param], declared)
    where = "in kernel 'saxpy'" + ("" if param == "kernel" else f", parameter {param!r}")
    assert where in str(info.value)
    np.testing.assert_array_equal(y, 0)  # nothing ran


def test_the_place_survives_the_remembered_arguments_and_pickling(saxpy):
    kernel, path = saxpy
    y, x = _arrays()
    kernel(y, x, 2.0, 1, ndrange=8)  # now remembered: the warm path checks first
    with pytest.raises(pk.KernelArgumentError) as info:
        kernel(y, x, 2.0, 300, ndrange=8)
    _at(info.value, path, LINE["n"])
    back = pickle.loads(pickle.dumps(info.value))
    assert (back.filename, back.lineno, str(back)) == (str(path), LINE["n"], str(info.value))


def test_a_relabelled_kernel_keeps_the_place(saxpy):
    kernel, path = saxpy
    y, x = _arrays()
    with pytest.raises(pk.KernelTypeError) as info:
        kernel.relabel(x="source")(y, x.astype(np.int32), 2.0, 1, ndrange=8)
    assert str(info.value).startswith("argument 'source' (const float*) must have dtype")
    assert "source.astype(numpy.float32)" in str(info.value)
    _at(info.value, path, LINE["x"])


def test_a_numpy_scalar_for_an_array_is_refused_by_name(saxpy):
    kernel, path = saxpy
    y, _ = _arrays()
    with pytest.raises(pk.KernelTypeError) as info:
        kernel(y, np.float32(2.0), 2.0, 1, ndrange=8)
    assert "argument 1 'x' (const float*) expects an array, got a NumPy float32 scalar 2.0" \
        in str(info.value)
    assert "numpy.full(n, 2.0, numpy.float32)" in str(info.value)
    assert "register" not in str(info.value)
    _at(info.value, path, LINE["x"])


# -- refused before any compiler: a helper without return, a keyword type --------------------

MISSING_RETURN = """\
// a helper that forgets its return
float twice(float v) {
    float r = v * 2.0f;
}

@kernel void f(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = twice(x[i]);
}
"""


def test_a_helper_without_return_is_refused_at_its_line(tmp_path):
    path = tmp_path / "twice.pk"
    path.write_text(MISSING_RETURN)
    with pytest.raises(pk.KernelSyntaxError) as info:  # at pk.kernel(), for every target
        pk.kernel.from_file(path)
    err = info.value
    assert (err.filename, err.lineno) == (str(path), 2)
    assert err.offset == 7  # the helper's name
    msg = str(err)
    assert "helper twice() returns float but can reach its closing '}' (line 4) without a " \
           "'return'" in msg
    assert "float twice(float v) {" in msg and "Ctrl-C" not in msg


@native
def test_a_helper_without_return_never_launches(tmp_path):
    path = tmp_path / "twice.pk"
    path.write_text(MISSING_RETURN)
    y, x = _arrays()
    with pytest.raises(pk.KernelSyntaxError, match="without a 'return'") as info:
        pk.kernel.from_file(path)(y, x, ndrange=8)
    assert info.value.lineno == 2 and "SIGINT" not in str(info.value)


@pytest.mark.parametrize("body", [
    "{ if (v > 0) return 1; else if (v < 0) return -1; else return 0; }",
    "{ for (;;) { if (v > 3) return v; v++; } }",
    "{ while (true) { v++; if (v > 9) return v; } }",
    "{ switch (v) { case 0: return 1; default: return 2; } }",
    "{ do { return v; } while (v); }",
    "{ if (v) return 1; abort(); }",
    "{ while (FOREVER) { return v; } }",
    "{ { return v; } }",
    "{ int r = 0; if (v) goto done; r = 1; done: return r; }",
])
def test_helpers_that_always_return_are_accepted(body):
    src = (f"#define FOREVER 1\nint pick(int v) {body}\n"
           "@kernel void f(int* y) { const long i = @index(Global, Linear); y[i] = pick(i); }")
    assert "pick" in pk.kernel(src).render("opencl")


@pytest.mark.parametrize("body, closing", [
    ("{ while (v) { return v; } }", 1),
    ("{ switch (v) { case 0: return 1; } }", 1),
    ("{ for (;;) { if (v) break; return 2; } }", 1),
    ("{ do { if (v) break; return 1; } while (1); }", 1),
    ("{\n  if (v > 0)\n    return 1;\n}", 4),
    ("{ }", 1),
])
def test_helpers_that_can_fall_off_their_end_are_refused(body, closing):
    src = (f"int pick(int v) {body}\n"
           "@kernel void f(int* y) { const long i = @index(Global, Linear); y[i] = pick(i); }")
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.kernel(src, filename="pick.pk").render("c")
    assert (info.value.filename, info.value.lineno) == ("pick.pk", 1)
    assert f"closing '}}' (line {closing}) without a 'return'" in str(info.value)


def test_a_type_variable_named_like_a_keyword_is_refused_at_its_line():
    src = "@kernel void f(float* y,\n               const if* x) {\n  y[0] = x[0];\n}"
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.kernel(src, filename="kw.pk").render("c")
    err = info.value
    assert (err.filename, err.lineno, err.offset) == ("kw.pk", 2, 22)
    assert "parameter 'x' of kernel 'f' has type 'if', a keyword" in str(err)
    assert "typedef" not in str(err)


def test_several_kernels_without_a_name_point_at_the_second():
    src = "@kernel void a(float* y) { y[0] = 1; }\n\n@kernel void b(float* y) { y[0] = 2; }\n"
    with pytest.raises(pk.KernelSyntaxError, match="several @kernel functions") as info:
        pk.kernel(src, filename="two.pk").render("c")
    assert (info.value.filename, info.value.lineno) == ("two.pk", 3)


# -- compiler errors: the user's line, never the generated file ------------------------------

UNDEFINED = """\
// an identifier only a compiler finds
@kernel void f(float* y,
               const float* x) {
    const long i = @index(Global, Linear);
    y[i] = x[i] + undefined_thing;
}
"""


@native
@pytest.mark.parametrize("path_name", ["native", "pocl"])
def test_compiler_errors_carry_the_users_file_and_line(tmp_path, path_name):
    if path_name == "pocl" and not pk.CPU.opencl_available().ok:
        pytest.skip("no CPU OpenCL device")
    path = tmp_path / "undefined.pk"
    path.write_text(UNDEFINED)
    kernel = pk.kernel.from_file(path)
    y, x = _arrays()
    if path_name == "native":
        run = kernel
    else:
        backend = pk.OpenCL()
        run = kernel(backend)
        y, x = backend.to_device(y), backend.to_device(x)
    with pytest.raises(pk.CompilationError) as info:
        run(y, x, ndrange=8)
    _at(info.value, path, 5, "y[i] = x[i] + undefined_thing;")
    assert "undefined_thing" in str(info.value)


LOCKSTEP = """\
// a barrier kernel whose loop header is broken
@kernel void red(float* y, const float* x, long n) {
    @localmem float s[64];
    const long li = @index(Local, Linear);
    const long i = @index(Global, Linear);
    long acc = 0;
    for (MUTATION k = 0; k < n; k++) {
        s[li] = x[i] + k;
        @synchronize();
        acc += (long)s[63 - li];
        @synchronize();
    }
    y[i] = acc;
}
"""


def test_not_lockstep_names_a_variable_and_the_users_line(tmp_path):
    path = tmp_path / "red.pk"
    path.write_text(LOCKSTEP.replace("MUTATION", "acc"))
    with pytest.raises(NotLockstep) as info:
        pk.kernel.from_file(path).render("c")  # the lockstep lowering, no fallback
    _at(info.value, path, 7, "for (acc k = 0; k < n; k++) {")
    assert "'acc' (line 7) has a value per work-item" in str(info.value)


@native
@pocl
@pytest.mark.parametrize("mutation, variable", [("acc", "'acc'"), ("long", None)])
def test_not_lockstep_keeps_the_compilers_error(tmp_path, mutation, variable):
    # 'long long = 0;' once made the lowering call the keyword 'long' a variable and
    # hide the compiler's error; now the compiler's error is the one raised.
    path = tmp_path / "red.pk"
    src = LOCKSTEP.replace("MUTATION", "long")
    if mutation == "long":
        src = src.replace("long acc = 0;", "long long = 0;")
    else:
        src = LOCKSTEP.replace("MUTATION", "acc")
    path.write_text(src)
    y, x = _arrays(64)
    with pytest.raises(pk.CompilationError) as info:
        pk.kernel.from_file(path)(y, x, 2, ndrange=64, workgroupsize=64)
    err = info.value
    msg = str(err)
    assert "'long' (line" not in msg
    assert err.filename == str(path) and err.lineno in (6, 7), (err.lineno, msg)
    assert re.search(rf"{re.escape(str(path))}:{err.lineno}:\d+: error", msg), msg
    assert not _generated(msg, path), msg
    if variable is not None:
        assert isinstance(err, NotLockstep)
        assert isinstance(err.__cause__, pk.CompilationError)  # the OpenCL build's error
        assert str(err.__cause__).splitlines()[1] in msg
        assert f"{variable} (line 7) has a value per work-item" in msg


# -- the native path's stop report ---------------------------------------------------------

@native
def test_a_stop_without_a_sigint_is_not_reported_as_ctrl_c():
    code = """
    import types, numpy as np, portakern as pk
    from portakern.backends.native_args import stopped
    from portakern.errors import LaunchError
    y = np.zeros(4, np.float32)
    pk.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = 1; }")(y, ndrange=4)
    try:
        stopped(types.SimpleNamespace(name="f", path="x.so"))
    except LaunchError as exc:
        print(exc)
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "no SIGINT (Ctrl-C) has come" in out and "'return'" in out, out
    assert "stopped by Ctrl-C" not in out


BARRIER_UNDEFINED = """\
@kernel void red(float* y, const float* x) {
    @localmem float s[64];
    const long li = @index(Local, Linear);
    const long i = @index(Global, Linear);
    s[li] = x[i];
    @synchronize();
    long k = s[63 - li] + undefined_thing;
    y[i] = k;
}
"""


@native
def test_a_lockstep_bodys_compiler_error_has_the_users_column(tmp_path):
    # The lockstep lowering writes the statement unindented ('long long k = ...'): the
    # compiler's column is counted in that line, the caret must sit in the user's.
    path = tmp_path / "red.pk"
    path.write_text(BARRIER_UNDEFINED)
    y, x = _arrays(64)
    with pytest.raises(pk.CompilationError) as info:
        pk.kernel.from_file(path)(y, x, ndrange=64, workgroupsize=64)
    column = BARRIER_UNDEFINED.splitlines()[6].index("undefined_thing") + 1
    msg = str(info.value)
    assert f"{path}:7:{column}: error" in msg, msg
    line, caret = msg.splitlines()[2:4]
    assert line.strip() == "long k = s[63 - li] + undefined_thing;"
    assert caret.index("^") == line.index("undefined_thing"), msg


def test_columns_move_to_the_users_line():
    from portakern.checks.diagnostics import Diagnostic, user_columns

    generated = '#line 3 "k.pk"\nlong long k = nope;\n#line 4 "k.pk"\ny = k + nope2;\n'
    user = {"k.pk": "a\nb\n    long k = nope;\n        y = k + nope2;\n"}
    diags = [Diagnostic("k.pk", 3, 15, "error", "nope"),
             Diagnostic("k.pk", 4, 9, "error", "nope2"),
             Diagnostic("k.pk", 2, 1, "error", "no generated line: kept")]
    assert [d.column for d in user_columns(diags, generated, user)] == [14, 17, 1]


def test_a_workgroup_size_against_the_declared_one_names_the_declaration(tmp_path):
    path = tmp_path / "wg.pk"
    path.write_text("// declared size\n@kernel(workgroupsize=64) void f(float* y) {\n"
                    "    y[@index(Global, Linear)] = 1;\n}\n")
    y = np.zeros(128, np.float32)
    with pytest.raises(pk.NDRangeError, match=r"conflicts with workgroupsize=\(64,\)") as info:
        pk.kernel.from_file(path)(y, ndrange=128, workgroupsize=32)
    _at(info.value, path, 2, "@kernel(workgroupsize=64) void f(float* y) {")
