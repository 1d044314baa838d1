"""An ndrange that provably overruns an array is refused before launch (analysis.bounds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import portakern as pk
from portakern.analysis import bounds

HEAD = "@kernel void k(float* y, const float* x, long n) {\n"
LINEAR = "  const long i = @index(Global, Linear);\n"


def fact(source: str) -> list[str]:
    return sorted(bounds.overrun_params(*pk.kernel(source).parsed("opencl")))


@pytest.mark.parametrize("body, want", [
    # Every work-item reaches the subscript: refused when the ndrange is too large.
    (LINEAR + "  y[i] = x[i] * 2.0f;", ["x", "y"]),
    ("  y[@index(Global, Linear)] += 1.0f;", ["y"]),
    ("  long i = @index(Global, Linear);\n  y[i] = 1.0f;", ["y"]),
    (LINEAR + "  const float v = x[i];\n  y[i] = v * v;", ["x", "y"]),
    (LINEAR + "  y[(i)] = 1.0f;", ["y"]),
    (LINEAR + "  if (n > 3) { y[i] = 2.0f; }\n  y[i] += 1.0f;", ["y"]),  # one unconditional
    (LINEAR + "  y[i] = x[i] + x[i + 1];", ["y"]),       # x has another subscript
    (LINEAR + "  for (long k = 0; k < n; ++k) y[i] += x[k];\n  y[i] = 0;", ["y"]),
    ("  auto [i, j] = @index(Global, NTuple);\n  y[i * @ndrange(1) + j] = 1.0f;", ["y"]),
    ("  auto [i, j] = @index(Global, NTuple);\n  const long w = @ndrange(1);\n"
     "  y[i * w + j] = 1.0f;", ["y"]),
    ("  auto [i, j, k] = @index(Global, NTuple);\n"
     "  y[(i * @ndrange(1) + j) * @ndrange(2) + k] = 1.0f;", ["y"]),
    ("  auto [i] = @index(Global, NTuple);\n  y[i] = 1.0f;", ["y"]),
    # Guarded, or not provably the linear index: never refused.
    (LINEAR + "  if (i < n) y[i] = x[i];", []),
    (LINEAR + "  if (i < n) { y[i] = x[i]; }", []),
    (LINEAR + "  if (i >= n) return;\n  y[i] = x[i];", []),
    (LINEAR + "  if (i >= n) { return; }\n  y[i] = x[i];", []),
    (LINEAR + "  y[i < n ? i : 0] = 1.0f;", []),
    (LINEAR + "  y[i] = i < n ? x[i] : 0.0f;", []),
    (LINEAR + "  i < n && (y[i] = 1.0f);", []),
    (LINEAR + "  for (int r = 0; r < 2; ++r) y[i] += 1.0f;", []),
    (LINEAR + "  while (n > 0) { y[i] = 1.0f; break; }", []),
    (LINEAR + "  switch (n) { case 1: y[i] = 1.0f; }", []),
    ("  long i = @index(Global, Linear);\n  i += 1;\n  y[i] = 1.0f;", []),
    ("  long i = @index(Global, Linear);\n  ++i;\n  y[i] = 1.0f;", []),
    ("  long i = @index(Global, Linear);\n  i = i % n;\n  y[i] = 1.0f;", []),
    ("  long i = @index(Global, Linear);\n  long* p = &i;\n  *p = 0;\n  y[i] = 1.0f;", []),
    (LINEAR + "  { long i = 0; y[i] = 1.0f; }\n  y[i] = 2.0f;", []),
    (LINEAR + "  y[i / 2] = 1.0f;", []),
    (LINEAR + "  y[i] = 1.0f;\n  float* p = y;\n  p[0] = 2.0f;", []),
    (LINEAR + "  @atomic_add(&y[i], 1.0f);", []),
    ("  auto [i, j] = @index(Global, NTuple);\n  y[j * @ndrange(0) + i] = 1.0f;", []),
    ("  auto [i, j] = @index(Global, NTuple);\n  y[i] = 1.0f;", []),
    ("  auto [i, j] = @index(Global, NTuple);\n  if (i < n) y[i * @ndrange(1) + j] = 1.0f;",
     []),
    ("  const long i = @index(Local, Linear);\n  y[i] = 1.0f;", []),
    ("  const float i = @index(Global, Linear);\n  y[(long)i] = 1.0f;", []),
    ("#if 1\n" + LINEAR + "#endif\n  y[i] = 1.0f;", []),
])
def test_the_fact(body, want):
    assert fact(HEAD + body + "\n}") == want


def test_unsafe_indices_is_never_refused():
    src = "@kernel(unsafe_indices) void k(float* y) { y[@index(Global, Linear)] = 1.0f; }"
    assert fact(src) == []
    y = np.zeros(64, np.float32)
    pk.kernel(src)(y[:64], ndrange=64)  # not refused (and in bounds: nothing overruns)


def test_a_call_of_a_helper_with_the_index_is_not_trusted():
    src = ("void bump(long* k) { *k += 1; }\n" + HEAD + "  long i = @index(Global, Linear);\n"
           "  bump(&i);\n  y[i] = 1.0f;\n}")
    assert fact(src) == []


@pytest.mark.parametrize("helpers, want", [
    ("#define SCALE 2.0f\n#define SQ(v) ((v) * (v))\n", ["y"]),  # plain macros: fine
    ("#define GUARD if (i >= n) return;\n", []),
    ("#define GUARD(k) if ((k) >= n) return\n", []),
    ("#define PICK(c, a) ((c) ? (a) : 0.0f)\n", []),
    ("#define DONE \\\n  return;\n", []),
    ("#include <stdint.h>\n", []),  # its macros cannot be seen
])
def test_a_macro_that_may_hide_a_condition_is_not_trusted(helpers, want):
    use = {"#define SCALE": "  y[@index(Global, Linear)] = SQ(SCALE);",
           "#define GUARD if": "  const long i = @index(Global, Linear);\n  GUARD y[i] = 1.0f;",
           "#define GUARD(k)": "  GUARD(@index(Global, Linear));\n"
                               "  y[@index(Global, Linear)] = 1.0f;",
           "#define PICK": "  y[@index(Global, Linear)] = PICK(n, 1.0f);",
           "#define DONE": "  if (n == 0) DONE\n  y[@index(Global, Linear)] = 1.0f;",
           "#include": "  y[@index(Global, Linear)] = 1.0f;"}
    body = next(v for k, v in use.items() if helpers.startswith(k))
    assert fact(helpers + HEAD + body + "\n}") == want


SAXPY = ("@kernel void saxpy(T* y, const T* x, T a) {\n"
         "    const long i = @index(Global, Linear);\n"
         "    y[i] = a * x[i] + y[i];\n}\n")
GUARDED = ("@kernel void guarded(T* y, const T* x, long n) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    if (i < n) y[i] = 2 * x[i];\n}\n")


def _host(backend, a):
    return backend.to_host(a)


def test_an_overrunning_launch_is_refused_before_anything_runs(backend):
    y = backend.zeros(1000, np.float32)
    x = backend.zeros(2000, np.float32)
    k = pk.kernel(SAXPY)
    with pytest.raises(pk.NDRangeError) as err:
        k(backend)(y, x, np.float32(2), ndrange=2000)
    msg = str(err.value)
    assert "'saxpy'" in msg and "'y'" in msg and "1000 elements" in msg and "(2000,)" in msg
    assert "ndrange=y.shape" in msg
    assert isinstance(err.value, ValueError)
    # x (2000 elements) is not the one named: the first that overruns is.
    k(backend)(y, x, np.float32(2), ndrange=1000)  # exactly the array: runs
    np.testing.assert_array_equal(_host(backend, y), np.zeros(1000, np.float32))


def test_a_guarded_kernel_with_a_larger_ndrange_runs(backend):
    y = backend.zeros(1000, np.float32)
    x = backend.zeros(1000, np.float32)
    pk.kernel(GUARDED)(backend)(y, x, 1000, ndrange=1024)  # a rounded-up ndrange is fine


def test_the_check_follows_every_change_of_arrays_and_ndrange():
    k = pk.kernel(SAXPY)
    launcher = k(pk.CPU())
    big, small = np.zeros(100, np.float32), np.zeros(50, np.float32)
    x = np.zeros(100, np.float32)
    for _ in range(3):  # warm: the arguments are remembered, the plans cached
        launcher(big, x, np.float32(1), ndrange=100)
        launcher(small, x, np.float32(1), ndrange=50)
    launcher(small, x, np.float32(1), ndrange=50)
    x[:] = 1
    before = small.copy()
    with pytest.raises(pk.NDRangeError, match="'y'.* 50 elements"):
        launcher(small, x, np.float32(1), ndrange=100)  # same arrays, a cached plan
    np.testing.assert_array_equal(small, before)  # refused before anything ran
    launcher(big, x, np.float32(1), ndrange=100)
    with pytest.raises(pk.NDRangeError, match="'y'.* 50 elements"):
        launcher(small, x, np.float32(1), ndrange=100)  # new arrays, same ndrange
    with pytest.raises(pk.NDRangeError, match="'x'.* 99 elements"):
        launcher(big, x[:99], np.float32(1), ndrange=100)
    with pytest.raises(pk.NDRangeError, match=r"\(10, 11\)"):
        launcher(big, x, np.float32(1), ndrange=(10, 11))  # 110 items, linear index
    launcher(big, x, np.float32(1), ndrange=(10, 10))


def test_ntuple_indices_in_order():
    src = ("@kernel void fill(T* c) {\n  auto [i, j] = @index(Global, NTuple);\n"
           "  const long N = @ndrange(1);\n  c[i * N + j] = (T)(i + j);\n}")
    c = np.zeros((4, 5), np.float32)
    pk.kernel(src)(c, ndrange=c.shape)
    np.testing.assert_array_equal(c, np.add.outer(np.arange(4), np.arange(5)))
    with pytest.raises(pk.NDRangeError, match="'fill'.*'c'.*20 elements"):
        pk.kernel(src)(c, ndrange=(5, 5))


def test_an_empty_ndrange_never_overruns():
    y, x = np.zeros(0, np.float32), np.zeros(0, np.float32)
    pk.kernel(SAXPY)(y, x, np.float32(1), ndrange=0)
    with pytest.raises(pk.NDRangeError, match="0 elements"):
        pk.kernel(SAXPY)(y, x, np.float32(1), ndrange=())  # a 0-axis ndrange: one item


EXAMPLES = Path(pk.__file__).parent / "examples"


@pytest.mark.parametrize("name, want", [
    ("saxpy.pk", ["x", "y"]), ("vector_add.pk", ["a", "b", "c"]),
    ("polynomial.pk", ["x", "y"]), ("matmul.pk", ["c"]),
    ("translate.pk", []),  # guarded: writes that land outside are dropped
])
def test_what_the_examples_publish(name, want):
    # Each example runs with its intended ndrange in test_examples: none is refused.
    assert fact((EXAMPLES / name).read_text()) == want


_WORDS = ["y", "x", "i", "j", "n", "[", "]", "(", ")", "{", "}", ";", ",", "=", "+", "*", "&",
          "?", ":", "<", "++", "if", "for", "return", "auto", "const", "long", "@ndrange(1)",
          "@index(Global, Linear)", "@index(Global, NTuple)", " ", "0", "1"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_WORDS), max_size=40).map(" ".join))
def test_the_analysis_never_fails_on_a_body_that_parses(text):
    try:
        module, kdef = pk.kernel(HEAD + LINEAR + text + "\n}").parsed("opencl")
    except pk.PortakernError:
        return
    names = bounds.overrun_params(module, kdef)
    assert names <= {"x", "y"}
    if names:  # every named array is subscripted somewhere in the body
        body = "".join(t.text for t in kdef.body)
        assert all(f"{n}[" in body.replace(" ", "") for n in names)
