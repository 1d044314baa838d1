"""The exception hierarchy: one root, and the standard category a Python user catches."""

from __future__ import annotations

import pickle
import traceback

import numpy as np
import pytest

import portakern as pk
from portakern import errors
from portakern.errors import (
    BackendMismatchError,
    BackendUnavailableError,
    CompilationError,
    KernelArgumentError,
    KernelFaultError,
    KernelSyntaxError,
    KernelTypeError,
    LaunchError,
    NDRangeError,
    PortakernError,
)

CATEGORIES = {
    KernelSyntaxError: SyntaxError,
    KernelArgumentError: ValueError,
    KernelTypeError: TypeError,
    NDRangeError: ValueError,
    BackendUnavailableError: ImportError,
    BackendMismatchError: TypeError,
    CompilationError: RuntimeError,
    LaunchError: RuntimeError,
    KernelFaultError: IndexError,
}


@pytest.mark.parametrize("cls, category", CATEGORIES.items(), ids=lambda c: c.__name__)
def test_every_error_has_root_and_category(cls, category):
    assert issubclass(cls, PortakernError)
    assert issubclass(cls, category)
    assert getattr(pk, cls.__name__) is cls


def test_all_errors_are_exported():
    assert set(errors.__all__) == {"PortakernError", "NativeFallbackWarning",
                                   "PortabilityWarning", *(c.__name__ for c in CATEGORIES)}
    # The warnings in errors.py are warnings, not errors a user would catch.
    for warning in (pk.NativeFallbackWarning, pk.PortabilityWarning):
        assert issubclass(warning, UserWarning)
        assert not issubclass(warning, PortakernError)


# KernelFaultError has fields of its own (tests/test_debug.py pickles it).
@pytest.mark.parametrize("cls", [c for c in CATEGORIES
                                 if c not in (KernelSyntaxError, KernelFaultError)],
                         ids=lambda c: c.__name__)
def test_errors_pickle(cls):
    err = pickle.loads(pickle.dumps(cls("what went wrong")))
    assert type(err) is cls and str(err) == "what went wrong"


def test_syntax_error_pickles_with_its_position():
    err = KernelSyntaxError("bad @index", "k.pk", 4, 9, "    y = @index(Foo, Linear);")
    back = pickle.loads(pickle.dumps(err))
    assert (back.msg, back.filename, back.lineno, back.offset, back.text) == (
        "bad @index", "k.pk", 4, 9, "    y = @index(Foo, Linear);")
    assert str(back) == str(err)


def test_syntax_error_formats_like_python():
    err = KernelSyntaxError("bad thing", "k.pk", 2, 5, "abc defg")
    assert str(err) == 'File "k.pk", line 2: bad thing\n    abc defg\n        ^'
    # The standard traceback machinery shows the same position.
    text = "".join(traceback.format_exception_only(type(err), err))
    assert 'File "k.pk", line 2' in text and "abc defg" in text
    no_text = KernelSyntaxError("oops", "k.pk", 7, 1, None)
    assert str(no_text) == 'File "k.pk", line 7: oops'
    default = KernelSyntaxError("m")
    assert (default.filename, default.lineno, default.offset) == ("<kernel>", 1, 1)


def test_compilation_error_attributes():
    cause = RuntimeError("vendor")
    try:
        try:
            raise cause
        except RuntimeError as exc:
            raise CompilationError("failed", log="LOG", source="SRC", target="cuda") from exc
    except CompilationError as err:
        assert (err.log, err.source, err.target) == ("LOG", "SRC", "cuda")
        assert err.__cause__ is cause
        back = pickle.loads(pickle.dumps(err))
        assert (back.log, back.source, back.target) == ("LOG", "SRC", "cuda")


def test_standard_categories_catch_real_errors():
    src = "@kernel void f(float* y, int n) { y[@index(Global, Linear)] = n; }"
    k = pk.kernel(src)
    y = np.zeros(4, np.float32)
    with pytest.raises(SyntaxError):
        pk.kernel("@kernel void f(float* y) { @bogus; }").render()
    with pytest.raises(TypeError):
        k(y, 2.5, ndrange=4)  # a float for an int
    with pytest.raises(ValueError):
        k(y, 2**40, ndrange=4)  # out of range
    with pytest.raises(ValueError):
        k(y, 1, ndrange=(-1,))
    with pytest.raises(TypeError):
        k(y, ndrange=4)  # wrong count
    with pytest.raises(RuntimeError):
        pk.kernel("@kernel void f(float* y) { y[0] = nope; }")(y, ndrange=1)
    np.testing.assert_array_equal(y, 0)


def test_missing_backend_is_an_import_error():
    err = BackendUnavailableError("CUDA backend unavailable: pip install cupy-cuda12x")
    with pytest.raises(ImportError, match="pip install"):
        raise err


def test_backend_check_available_raises_with_reason(monkeypatch):
    from portakern.backends import base
    from portakern.backends.base import Availability

    backend = pk.CPU()
    monkeypatch.setattr(base, "_AVAILABLE", set())  # positive answers are remembered
    monkeypatch.setattr(type(backend), "available",
                        classmethod(lambda cls: Availability(False, "no driver; install it")))
    with pytest.raises(BackendUnavailableError, match="CPU backend unavailable: no driver"):
        backend.check_available()


# -- errors that point at the user's source (errors.locate) ---------------------------------

LOCATABLE = [KernelArgumentError, KernelTypeError, NDRangeError, BackendMismatchError,
             CompilationError, LaunchError]


@pytest.mark.parametrize("cls", LOCATABLE, ids=lambda c: c.__name__)
def test_located_errors_name_the_file_and_line_like_a_traceback(cls):
    plain = cls("what went wrong")
    assert (plain.filename, plain.lineno) == (None, None)  # nothing is made up
    err = errors.locate(cls("what went wrong"), "k.pk", 3, "    const float* x,",
                        "in kernel 'f', parameter 'x'")
    assert (err.filename, err.lineno) == ("k.pk", 3)
    assert str(err).splitlines() == ["what went wrong",
                                     "  File \"k.pk\", line 3, in kernel 'f', parameter 'x'",
                                     "    const float* x,"]
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), back.filename, back.lineno, str(back)) == (cls, "k.pk", 3, str(err))


def test_the_innermost_place_wins_and_syntax_errors_keep_their_own():
    err = errors.locate(KernelTypeError("bad"), "a.pk", 7)
    assert errors.locate(err, "b.pk", 1) is err
    assert (err.filename, err.lineno) == ("a.pk", 7) and "b.pk" not in str(err)
    syntax = KernelSyntaxError("oops", "k.pk", 4, 2, "text")
    errors.locate(syntax, "other.pk", 9)
    assert (syntax.filename, syntax.lineno) == ("k.pk", 4)
    # A compiler's message already quotes its lines: locate only records the place.
    compiled = errors.locate(CompilationError("k.pk:5:3: error: no"), "k.pk", 5, quote=False)
    assert (compiled.lineno, str(compiled)) == (5, "k.pk:5:3: error: no")


def test_compiler_errors_carry_the_first_users_line():
    from types import SimpleNamespace

    from portakern.checks.diagnostics import compilation_error

    rendered = SimpleNamespace(filename="k.pk", source="generated",
                               sources=lambda: {"k.pk": "a\nb\n    y = nope;\n"})
    log = ("/tmp/build/f.cpp:40:2: warning: unused\n"
           "k.pk:3:9: error: 'nope' was not declared in this scope\n")
    err = compilation_error("C++ compilation of kernel 'f' failed", log, rendered, "c")
    assert (err.filename, err.lineno, err.log) == ("k.pk", 3, log)
    assert "k.pk:3:9: error" in str(err) and "y = nope;" in str(err)
    assert "/tmp/build" not in str(err)
    # Only the generated file: the whole log, and no place is invented.
    only = compilation_error("failed", "/tmp/build/f.cpp:40:2: error: x\n", rendered, "c")
    assert only.filename is None and only.lineno is None
