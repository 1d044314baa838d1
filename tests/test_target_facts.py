"""The table of target facts (portakern/target_facts.py) and what reads it.

DESIGN section 1a, "Nothing passes silently": each row of the table either works on every
target (the C constants, the math functions portakern provides, MLX's generated names) or
is a PortabilityWarning at ``pk.kernel()`` naming the target (a math function, constant or
atomic element type the table says a target lacks).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import portakern as pk
from portakern.checks import metal_check_available
from portakern.cli import check_targets as target_checks
from portakern.errors import BackendUnavailableError, PortabilityWarning
from portakern.target_facts import CONSTANTS, MATH_FUNCTIONS, facts, mlx_renames

TARGETS = ("c", "cuda", "metal", "opencl")


def _warnings(source: str, **constants: object) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pk.kernel(source, **constants)
    return [str(w.message) for w in caught if issubclass(w.category, PortabilityWarning)]


def _check(kernel: pk.Kernel, target: str) -> None:
    """``portakern check``'s compile check of one target, skipped where it cannot run."""
    rendered = kernel.rendered(target, {}, 1)
    try:
        getattr(target_checks, f"check_{target}")(rendered, rendered.sources(), kernel)
    except BackendUnavailableError as exc:
        pytest.skip(f"no {target} compile check here: {exc}")


# -- constants -------------------------------------------------------------------------------

INTEGER_CONSTANTS = [n for n, c in CONSTANTS.items()
                     if c.ctype in ("int", "uint", "long", "ulong") and not n.startswith("DBL_")]
FLOAT_CONSTANTS = [n for n, c in CONSTANTS.items() if c.ctype == "float"
                   or (c.ctype == "double" and not n.startswith("DBL_"))]
DOUBLE_CONSTANTS = [n for n, c in CONSTANTS.items() if c.ctype == "double" or n.startswith("DBL_")]

CONSTANTS_KERNEL = "@kernel void constants(ulong* ints, float* floats) {\n" + "".join(
    f"    ints[{k}] = (ulong){name};\n" for k, name in enumerate(INTEGER_CONSTANTS)) + "".join(
    f"    floats[{k}] = (float){name};\n" for k, name in enumerate(FLOAT_CONSTANTS)) + "}\n"

DOUBLE_KERNEL = "@kernel void doubles(double* out) {\n" + "".join(
    f"    out[{k}] = {name};\n" for k, name in enumerate(DOUBLE_CONSTANTS)) + "}\n"


def test_the_usual_constants_are_in_the_table():
    wanted = """FLT_MIN FLT_MAX FLT_EPSILON INT_MAX INT_MIN UINT_MAX LONG_MAX LONG_MIN ULONG_MAX
        DBL_MIN DBL_MAX DBL_EPSILON M_PI M_E M_SQRT2 M_LN2 M_PI_F INFINITY NAN""".split()
    assert set(wanted) <= set(CONSTANTS)


def test_constants_mean_the_same_on_every_backend(backend):
    ints = backend.zeros(len(INTEGER_CONSTANTS), np.uint64)
    floats = backend.zeros(len(FLOAT_CONSTANTS), np.float32)
    pk.kernel(CONSTANTS_KERNEL)(ints, floats, ndrange=())
    backend.synchronize()
    got_ints, got_floats = backend.to_host(ints), backend.to_host(floats)
    for name, got in zip(INTEGER_CONSTANTS, got_ints, strict=True):
        assert int(got) == CONSTANTS[name].value % 2**64, name
    for name, got in zip(FLOAT_CONSTANTS, got_floats, strict=True):
        want = np.float32(CONSTANTS[name].value)
        assert got == want or (np.isnan(want) and np.isnan(got)), (name, got, want)


@pytest.mark.filterwarnings("ignore::portakern.errors.PortabilityWarning")  # Metal's
def test_double_constants_mean_the_same_where_there_is_double(backend):
    if backend.target == "metal":
        pytest.skip("Metal has no double (the DBL_* limits warn there, tested below)")
    out = backend.zeros(len(DOUBLE_CONSTANTS), np.float64)
    pk.kernel(DOUBLE_KERNEL)(out, ndrange=())
    backend.synchronize()
    for name, got in zip(DOUBLE_CONSTANTS, backend.to_host(out), strict=True):
        assert got == CONSTANTS[name].value, (name, got)


@pytest.mark.parametrize("target", TARGETS)
def test_constants_build_on_every_compile_check(target):
    assert not _warnings(CONSTANTS_KERNEL)
    _check(pk.kernel(CONSTANTS_KERNEL), target)


@pytest.mark.parametrize("target", TARGETS)
def test_a_prelude_defines_a_constant_only_where_the_kernel_names_it(target):
    uses = pk.kernel("@kernel void k(float* y) { y[0] = FLT_MAX + (float)M_PI + "
                     "(float)SHRT_MAX; }").render(target)
    plain = pk.kernel("@kernel void k(float* y) { y[0] = 1.0f; }").render(target)
    table = facts(target)
    for name in ("FLT_MAX", "M_PI", "SHRT_MAX"):
        assert f"#define {name} " not in plain
        assert (f"#define {name} " in uses) == (name not in table.native_constants), name


def test_double_limits_warn_on_metal_only():
    messages = _warnings("@kernel void k(float* y) { y[0] = (float)DBL_EPSILON; }")
    assert len(messages) == 1
    assert "DBL_EPSILON" in messages[0] and "(not portable to: Metal)" in messages[0]
    assert not _warnings("@kernel void k(float* y) { y[0] = (float)M_PI + FLT_EPSILON; }")


def test_double_types_warn_on_metal_only_once_each():
    messages = _warnings("@kernel void k(double* y, const double* x) {\n"
                         "    double t = x[0];\n"
                         "    double u = t * 2;\n"
                         "    y[0] = u;\n}")
    assert len(messages) == 2, messages
    assert "parameters 'y', 'x' are double" in messages[0]
    assert ":2:5: a double: there is no double there" in messages[1]
    assert all("(not portable to: Metal)" in m and "use float" in m for m in messages)
    # a cast for @print's format (which Metal drops), a member named double, and float code
    # warn nothing
    assert all("double" not in m for m in
               _warnings('@kernel void k(float* y) { @print("%f", (double)y[0]); }'))
    assert not _warnings("struct S { float v; };\n"
                         "@kernel void k(float* y) { S s; s.v = 1.0f; y[0] = s.v; }")


# -- math functions ---------------------------------------------------------------------------

#: The second argument of the two-argument functions.
_B = np.float32(0.7)
_BF = float(_B)
#: (function, call of {a}, reference, float32 inputs over the function's range).
_X = np.linspace(-3.9, 3.9, 157)
MATH_CASES = [
    ("erf", "erf({a})", math.erf, np.concatenate([_X, [-1e-3, 1e-30, 0.5, 5.0]])),
    ("erfc", "erfc({a})", math.erfc, np.concatenate([_X, np.linspace(4, 9.5, 23)])),
    ("tgamma", "tgamma({a})", math.gamma,
     np.concatenate([np.linspace(0.01, 34.5, 120), np.linspace(-9.95, -0.05, 60) + 0.013])),
    ("lgamma", "lgamma({a})", math.lgamma,
     np.concatenate([np.linspace(0.01, 40, 120), [1.001, 1.5, 1.999, 2.5, 3.3, 7.9, 8.1, 1e5],
                     np.linspace(-9.95, -0.05, 60) + 0.013])),
    ("cbrt", "cbrt({a})", lambda v: math.copysign(abs(v) ** (1 / 3), v),
     np.concatenate([_X * 1e3, [1e-30, -8.0, 27.0, 3e38]])),
    ("hypot", "hypot({a}, b)", lambda v: math.hypot(v, _BF), _X),
    ("logb", "logb({a})", lambda v: float(math.frexp(v)[1] - 1),
     np.concatenate([_X[_X != 0], [1e-40, 3e38, 1.0, 0.999]])),
    ("nearbyint", "nearbyint({a})", lambda v: float(round(v)),
     np.concatenate([_X, [0.5, 1.5, 2.5, -0.5, -2.5]])),
    ("remainder", "remainder({a}, b)", lambda v: math.remainder(v, _BF), _X * 10),
    ("log1p", "log1p({a})", math.log1p, np.concatenate([np.linspace(-0.99, 10, 150), [1e-30]])),
    ("expm1", "expm1({a})", math.expm1, np.concatenate([_X, [1e-30, -1e-5, 20.0]])),
    ("sinpi", "sinpi({a})", lambda v: math.sin(math.pi * v),
     np.array([0.25, 0.5, 1.5, -3.75, 0.1])),
    ("cospi", "cospi({a})", lambda v: math.cos(math.pi * v), np.array([0, 0.25, 1, 2, -3.75])),
    ("mad", "mad({a}, {a}, 1.0f)", lambda v: v * v + 1.0, _X),
]

#: Relative error allowed (float32: about 17 ulp; docs/metal.md gives the measured ones),
#: and an absolute error near the zeros of lgamma.
RTOL, LGAMMA_ATOL = 2e-6, 2e-7


def _math_kernel(cases: list) -> str:
    lines = [f"    y[{k} * n + i] = {call.format(a=f'x[{k} * n + i]')};\n"
             for k, (_, call, _, _) in enumerate(cases)]
    return ("@kernel void math(float* y, const float* x, float b, long n) {\n"
            "    const long i = @index(Global, Linear);\n" + "".join(lines) + "}\n")


def _reference(fn: object, x: float) -> float | None:
    try:
        want = fn(x)  # type: ignore[operator]
    except (ValueError, OverflowError):
        return None
    return want if math.isfinite(want) and abs(want) < 3.4e38 else None


def test_each_listed_function_is_in_the_table_and_claimed_everywhere():
    for name, *_ in MATH_CASES:
        assert name in MATH_FUNCTIONS
        for target in TARGETS:
            assert facts(target).has_function(name), (name, target)


def test_math_functions_agree_with_the_math_module(backend):
    n = max(len(c[3]) for c in MATH_CASES)
    x = np.zeros((len(MATH_CASES), n), np.float32)
    for k, (_, _, _, values) in enumerate(MATH_CASES):
        v = np.asarray(values, np.float32)
        x[k] = np.resize(v, n)
    y = backend.zeros(x.size, np.float32)
    kernel = pk.kernel(_math_kernel(MATH_CASES))
    kernel(y, backend.to_device(x.reshape(-1)), _B, n, ndrange=n)
    backend.synchronize()
    got = backend.to_host(y).reshape(x.shape)
    bad = []
    for k, (name, _, fn, _) in enumerate(MATH_CASES):
        for xv, g in zip(x[k], got[k], strict=True):
            want = _reference(fn, float(xv))
            if want is None:
                continue
            atol = LGAMMA_ATOL if name == "lgamma" else 1e-38
            if not abs(float(g) - want) <= RTOL * abs(want) + atol:
                bad.append(f"{name}({float(xv)!r}) = {float(g)!r}, want {want!r}")
    assert not bad, f"{backend.target}: " + "; ".join(bad[:10])


def test_metal_math_special_values():
    # IEEE special cases of the Metal prelude's functions, on the Metal stand-in.
    mx = pytest.importorskip("mlx.core")
    from portakern.emulate import mlx as standin

    ok, why = standin.available()
    if not ok:
        pytest.skip(f"no Metal stand-in here: {why}")
    inf, nan = float("inf"), float("nan")
    cases = [("erf({a})", inf, 1.0), ("erf({a})", -inf, -1.0), ("erfc({a})", inf, 0.0),
             ("erfc({a})", -inf, 2.0), ("tgamma({a})", 0.0, inf), ("tgamma({a})", -0.0, -inf),
             ("tgamma({a})", -2.0, nan), ("tgamma({a})", inf, inf), ("lgamma({a})", 0.0, inf),
             ("lgamma({a})", -3.0, inf), ("lgamma({a})", -inf, inf), ("cbrt({a})", -inf, -inf),
             ("cbrt({a})", -0.0, -0.0), ("hypot({a}, 0.0f)", -inf, inf),
             ("hypot({a}, {a})", 3e38, inf),
             ("logb({a})", 0.0, -inf), ("logb({a})", -inf, inf), ("remainder({a}, 0.0f)", 1.0, nan),
             ("remainder({a}, 2.0f)", -3.0, 1.0), ("remainder({a}, 2.0f)", -1.0, -1.0),
             ("remainder({a}, 2.0f)", -0.0, -0.0),
             ("log1p({a})", -1.0, -inf), ("expm1({a})", -inf, -1.0), ("nearbyint({a})", 2.5, 2.0)]
    body = "".join(f"    y[{k}] = {call.format(a=f'x[{k}]')};\n"
                   for k, (call, _, _) in enumerate(cases))
    kernel = pk.kernel("@kernel void special(float* y, const float* x) {\n" + body + "}\n")
    with standin.installed():
        y = mx.zeros(len(cases), mx.float32)
        kernel(y, mx.array(np.array([c[1] for c in cases], np.float32)), ndrange=())
        got = np.array(y)
    for (call, x, want), g in zip(cases, got, strict=True):
        want32 = np.float32(want)
        if np.isnan(want32):
            assert np.isnan(g), (call, x, g)
        else:
            assert g == want32 and np.signbit(g) == np.signbit(want32), (call, x, g, want)


# Every function the table claims for a target builds there (the compile checks), and
# every one it says a target lacks warns at pk.kernel() naming that target.
_ARITY = {"atan2": 2, "copysign": 2, "fdim": 2, "fmax": 2, "fmin": 2, "fmod": 2, "hypot": 2,
          "nextafter": 2, "pow": 2, "remainder": 2, "min": 2, "max": 2, "fma": 3, "mad": 3,
          "clamp": 3}


def _call(name: str) -> str:
    if name == "ldexp":
        return "ldexp(v, 2)"
    if name == "ilogb":
        return "(float)ilogb(v)"
    if name == "frexp":
        return "frexp(v, &e)"
    if name == "modf":
        return "modf(v, &w)"
    return f"{name}({', '.join(['v'] * _ARITY.get(name, 1))})"


@pytest.mark.filterwarnings("ignore::portakern.errors.PortabilityWarning")  # other targets
@pytest.mark.parametrize("target", TARGETS)
def test_every_function_the_table_claims_builds_there(target):
    claimed = sorted(f for f in MATH_FUNCTIONS if facts(target).has_function(f))
    body = "".join(f"    r += {_call(f)};\n" for f in claimed)
    kernel = pk.kernel("@kernel void all_math(float* y, const float* x) {\n"
                       "    const long i = @index(Global, Linear);\n"
                       "    const float v = x[i];\n    int e = 0;\n    float w = 0.0f;\n"
                       "    float r = 0.0f;\n" + body + "    y[i] = r + (float)e + w;\n}\n")
    _check(kernel, target)


def test_every_function_a_target_lacks_warns_naming_it():
    for target in TARGETS:
        for name in sorted(f for f in MATH_FUNCTIONS if facts(target).lacks_function(f)):
            source = ("@kernel void k(float* y, const float* x) {\n"
                      "    const long i = @index(Global, Linear);\n    int e = 0;\n"
                      "    float w = 0.0f;\n    const float v = x[i];\n"
                      f"    y[i] = {_call(name)} + (float)e + w;\n}}\n")
            messages = [m for m in _warnings(source) if f"{name}()" in m]
            assert len(messages) == 1, (target, name)
            assert "<kernel source>:6:" in messages[0]
            assert facts(target).name in messages[0].lower() or target == "c", messages[0]


def test_a_helper_of_the_same_name_is_the_users_own():
    source = """
int ilogb(float x) { return (int)x; }
@kernel void k(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = (float)ilogb(x[i]);
}"""
    assert not _warnings(source)
    called = _warnings("float f(float x) { return ilogb(x); }\n"
                       "@kernel void k(float* y) { y[0] = f(1.0f); }")
    assert len(called) == 1 and "ilogb()" in called[0]


def test_metal_stand_in_builds_log1p_and_expm1_as_the_check_passes_them():
    # The Metal check passed them while the stand-in had no metal::precise.
    mx = pytest.importorskip("mlx.core")
    from portakern.emulate import mlx as standin

    ok, why = standin.available()
    if not ok:
        pytest.skip(f"no Metal stand-in here: {why}")
    kernel = pk.kernel("@kernel void k(float* y, const float* x) {\n"
                       "    const long i = @index(Global, Linear);\n"
                       "    y[i] = log1p(x[i]) + expm1(x[i]);\n}\n")
    if metal_check_available()[0]:
        _check(kernel, "metal")
    x = np.array([1e-6, 0.1, 2.0], np.float32)
    with standin.installed():
        y = mx.zeros(3, mx.float32)
        kernel(y, mx.array(x), ndrange=3)
        got = np.array(y)
    want = [math.log1p(float(v)) + math.expm1(float(v)) for v in x]
    np.testing.assert_allclose(got, want, rtol=1e-6)


# -- names MLX generates -------------------------------------------------------------------------

SHAPE_NAMES = """
int x_ndim(int k) { return k + 1; }
@kernel void shapes(float* y, const float* x, const int* x_shape, int x_strides) {
    const long i = @index(Global, Linear);
    const int x_ndim_v = x_ndim(2);
    y[i] = x[i] + (float)x_shape[0] + (float)x_strides + (float)x_ndim_v;
}
"""


def test_mlx_renames_only_names_of_an_input_plus_a_suffix():
    renames = mlx_renames(["x", "y"], "x_shape + y_ndim(z_shape, x, xshape) pkshape_of_x")
    assert renames == {"x_shape": "pkshape_of_x_", "y_ndim": "pkndim_of_y"}
    for new in renames.values():
        assert not any(s in new for s in ("_shape", "_strides", "_ndim"))


def test_parameters_named_like_mlx_shapes_run_on_every_backend(backend):
    x = np.arange(8, dtype=np.float32)
    y = backend.zeros(8, np.float32)
    pk.kernel(SHAPE_NAMES)(y, backend.to_device(x), backend.to_device(np.array([10, 0],
                                                                      np.int32)),
                           np.int32(100), ndrange=8)
    backend.synchronize()
    np.testing.assert_array_equal(backend.to_host(y), x + 113)


def test_parameters_named_like_mlx_shapes_pass_the_metal_check():
    if not metal_check_available()[0]:
        pytest.skip("no clang for the Metal syntax check")
    _check(pk.kernel(SHAPE_NAMES), "metal")
    assert not _warnings(SHAPE_NAMES)


def test_the_mlx_rendering_keeps_file_names_in_line_directives():
    from portakern.backends import _mlx

    kernel = pk.kernel(SHAPE_NAMES.replace("y[i] =", "y[i] = 0.0f +"))
    rendered = kernel.rendered("metal", {}, 1)
    program = _mlx.build_program(rendered, "metal")
    text = program.header + program.source
    assert "x_shape" not in text.replace('"', " ").split() and "pkshape_of_x" in text
    assert [s.name for s in program.inputs][:4] == ["x", "pkshape_of_x", "pkstrides_of_x",
                                                   "pk_work_y"] or "pkshape_of_x" in [
        s.name for s in program.inputs]


# -- atomics ------------------------------------------------------------------------------------

@pytest.mark.parametrize("ctype", ["long", "ulong", "int64_t", "double"])
def test_64_bit_atomics_warn_naming_metal_and_the_type(ctype):
    messages = _warnings(f"@kernel void k({ctype}* c) {{\n"
                         f"    const long i = @index(Global, Linear);\n"
                         f"    @atomic_add(&c[0], ({ctype})i);\n}}\n")
    # a double kernel also warns that Metal has no double at all
    assert len(messages) == (3 if ctype == "double" else 1), messages
    messages = [m for m in messages if "@atomic" in m]
    assert len(messages) == 1, messages
    assert "<kernel source>:3:5" in messages[0]
    assert f"@atomic_add on {ctype}" in messages[0] and "(not portable to: Metal)" in messages[0]
    assert "no matching function" not in messages[0]


def test_a_64_bit_atomic_bound_at_launch_fails_on_metal_at_the_users_line():
    # T is bound by the arrays, after pk.kernel(): the MLX rendering says why, at the line.
    mx = pytest.importorskip("mlx.core")
    from portakern.emulate import mlx as standin

    ok, why = standin.available()
    if not ok:
        pytest.skip(f"no Metal stand-in here: {why}")
    kernel = pk.kernel("@kernel void k(T* c, const int* x) {\n"
                       "    const long i = @index(Global, Linear);\n"
                       "    @atomic_add(&c[0], (T)x[i]);\n}\n")
    with standin.installed():
        c = mx.zeros(2, mx.int32)
        kernel(c, mx.ones(16, mx.int32), ndrange=16)
        assert np.array(c).tolist() == [16, 0]
        # Refused before MLX compiles it (portakern.analysis.atomic_checks), at the line.
        with pytest.raises(pk.KernelTypeError) as info:
            kernel(mx.zeros(2, mx.int64), mx.ones(16, mx.int32), ndrange=16)
    text = str(info.value)
    assert "<kernel source>:3:5" in text and "metal has no atomics on long" in text
    assert "@atomic_add on &c[0]" in text and "no matching function" not in text


def test_atomics_on_local_memory_and_pointer_arithmetic_find_the_type():
    messages = _warnings("""@kernel void k(int* y) {
    const long i = @index(Global, Linear);
    @localmem ulong acc[4];
    @atomic_max(&acc[0], (ulong)i);
    @atomic_add(y + 1, 1);
}""")
    assert len(messages) == 1 and "@atomic_max on ulong" in messages[0]


def test_32_bit_atomics_do_not_warn():
    assert not _warnings("""@kernel void k(int* a, uint* b, float* c) {
    @atomic_add(&a[0], 1);
    @atomic_or(&b[0], 1u);
    @atomic_add(c, 1.0f);
}""")


def test_the_table_is_reached_from_each_target_and_keeps_its_reserved_words():
    from portakern.targets import target_info

    for target in TARGETS:
        assert target_info(target).facts() is facts(target)
    assert "threadgroup" in target_info("metal").reserved_words
    assert "generic" in target_info("opencl").reserved_words  # OpenCL 2's address space


def test_a_kernel_named_after_a_reserved_word_is_warned_at_creation():
    with pytest.warns(pk.PortabilityWarning, match=r"kernel name 'generic' is a reserved "
                                                   r"word; rename it \(not portable to: OpenCL"):
        pk.kernel("@kernel void generic(float* y) { y[@index(Global, Linear)] = 1.f; }")
    assert facts("metal").reserved_suffixes == ("_shape", "_strides", "_ndim")


def test_the_table_says_where_64_bit_atomics_exist():
    assert facts("metal").atomics64 == "no" and facts("metal").atomic_lacks("long")
    assert facts("cuda").atomics64 == "yes" and not facts("cuda").atomic_lacks("int64_t")
    assert facts("opencl").atomics64 == "device"
    assert not facts("metal").atomic_lacks("uint32_t")


# -- device features ----------------------------------------------------------------------------

def test_half_arithmetic_is_a_device_feature_on_opencl():
    assert facts("opencl").half_arithmetic == "device"
    assert {facts(t).half_arithmetic for t in ("c", "cuda", "metal")} == {"yes"}
    from portakern.backends.opencl import CPU

    if not CPU.opencl_available():
        return
    device = CPU().device
    if "cl_khr_fp16" not in device.extensions:
        # PoCL's CPU device: the table may not claim half there.
        assert facts("opencl").half_arithmetic != "yes"
