"""Language additions (issue 14): declared workgroup sizes, ``@groups``, scalar
``@localmem``, ``@kernel(contract=false)`` and ``@print``.

Each feature runs on every backend of the ``backend`` fixture (CPU's native path,
PoCL, and the CUDA and Metal stand-ins where there is no GPU or Mac) against NumPy,
and its rendering is checked for all four targets.
"""

from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError, NDRangeError

TARGETS = ("opencl", "cuda", "metal", "c")

# Every @print kernel warns that Metal prints nothing; test_print_warns_for_metal checks it.
pytestmark = pytest.mark.filterwarnings("ignore:.*@print prints nothing:Warning")


def _run(backend, kernel, *arrays, **launch):
    """Launch on ``backend`` with NumPy arrays in and out; returns the arrays, on the host."""
    dev = [backend.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
           for a in arrays]
    kernel(*dev, **launch)
    backend.synchronize()
    return [backend.to_host(d) if isinstance(a, np.ndarray) else a
            for a, d in zip(arrays, dev, strict=True)]


def _syntax_error(source: str, needle: str, match: str, target: str = "opencl"):
    with pytest.raises(KernelSyntaxError, match=match) as info:
        pk.Kernel(source, filename="user.pk").render(target)
    err = info.value
    line = next(n for n, text in enumerate(source.split("\n"), 1) if needle in text)
    assert (err.filename, err.lineno) == ("user.pk", line), str(err)
    assert err.offset == source.split("\n")[line - 1].index(needle) + 1, str(err)
    return err


# -- @kernel(workgroupsize=...) ---------------------------------------------------------

TILED = """\
@kernel(workgroupsize=(4, 8)) void tiled(T* out, long* groups, const T* a) {
    @localmem T tile[@groupsize(0)][@groupsize(1) + 1];
    auto [i, j] = @index(Global, NTuple);
    auto [li, lj] = @index(Local, NTuple);
    tile[li][lj] = a[i * @ndrange(1) + j];
    @synchronize();
    out[i * @ndrange(1) + j] = tile[li][lj] * 2 + @groupsize();
    groups[i * @ndrange(1) + j] = @index(Group, Linear);
}
"""


def test_workgroupsize_option_is_parsed():
    k = pk.kernel(TILED)
    kdef = k.parsed("opencl")[1]
    assert (kdef.workgroupsize, kdef.contract, kdef.unsafe_indices) == ((4, 8), True, False)
    one = pk.kernel("@kernel(unsafe_indices, workgroupsize=64, contract=false) "
                    "void f(float* y) { y[0] = 1; }").parsed("opencl")[1]
    assert (one.workgroupsize, one.contract, one.unsafe_indices) == (64, False, True)
    # A Jinja constant renders as a literal.
    tile = pk.kernel("@kernel(workgroupsize=({{ W }}, {{ W }})) void f(float* y) { y[0] = 1; }",
                     W=16)
    assert tile.parsed("c")[1].workgroupsize == (16, 16)


@pytest.mark.parametrize(("option", "needle", "match"), [
    ("workgroupsize=n", "n)", "'n' is not an integer literal"),
    ("workgroupsize=(16, 0)", "0)", "must be >= 1"),
    ("workgroupsize=(1, 2, 3, 4)", "(1,", "1 to 3 integers"),
    ("workgroupsize", "workgroupsize", "needs a value"),
    ("contract=no", "no)", "contract takes true or false"),
    ("fastmath", "fastmath", "unknown @kernel option 'fastmath'; the options are"),
    ("contract=false, contract=true", "contract=true", "given twice"),
])
def test_bad_kernel_options_are_syntax_errors_at_the_option(option, needle, match):
    source = f"// a kernel\n@kernel({option}) void f(float* y) {{ y[0] = 1; }}\n"
    _syntax_error(source, needle, match)


def test_declared_size_renders_per_target():
    k = pk.kernel(TILED)
    opencl = k.render("opencl", T="float")
    # Hardware order: x is the last ndrange axis.
    assert "__kernel __attribute__((reqd_work_group_size(8, 4, 1))) void tiled(" in opencl
    assert "__local T tile[4][8 + 1];" in opencl
    cuda = k.render("cuda", T="float")
    assert 'extern "C" __global__ void __launch_bounds__(32) tiled(' in cuda
    assert "__shared__ T tile[4][8 + 1];" in cuda
    metal = k.render("metal", T="float")
    assert "[[kernel, max_total_threads_per_threadgroup(32)]] void tiled(" in metal
    c = k.render("c", T="float")
    assert "T tile[4][8 + 1];" in c
    # @groupsize() is the declared constant in the body as well.
    for text in (opencl, cuda, metal, c):
        assert "* 2 + 32;" in text


def test_undeclared_size_renders_no_attribute():
    k = pk.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = 1; }")
    assert "reqd_work_group_size" not in k.render("opencl")
    assert "__launch_bounds__" not in k.render("cuda")
    assert "max_total_threads_per_threadgroup" not in k.render("metal")


def test_groupsize_in_localmem_needs_a_declared_size():
    source = ("@kernel void f(float* y) {\n"
              "    @localmem float tile[@groupsize(0)][2];\n"
              "    y[0] = tile[0];\n}\n")
    _syntax_error(source, "@groupsize", r"only a one-dimensional array may be sized at "
                  r"launch .*or declare a workgroup size, '@kernel\(workgroupsize=...\)'")


def test_declared_size_is_the_launch_default(backend):
    """No workgroupsize= at launch: the declared (4, 8) is used, on a ragged ndrange."""
    k = pk.kernel(TILED)
    shape = (10, 20)  # not a multiple of (4, 8): partial groups along both axes
    a = np.arange(200, dtype=np.float32).reshape(shape)
    out, groups, _ = _run(backend, k, np.zeros_like(a), np.zeros(shape, np.int64), a,
                          ndrange=shape)
    np.testing.assert_array_equal(out, a * 2 + 32)
    i, j = np.indices(shape)
    ngroups_1 = -(-shape[1] // 8)
    np.testing.assert_array_equal(groups, (i // 4) * ngroups_1 + j // 8)


def test_declared_int_size_for_one_axis(backend):
    k = pk.kernel("""
@kernel(workgroupsize=16) void f(long* y) {
    @localmem long slot[@groupsize()];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    slot[l] = i;
    @synchronize();
    y[i] = slot[@groupsize(0) - 1 - l] + 1000 * @index(Group, Linear);
}
""")
    n = 64
    (y,) = _run(backend, k, np.zeros(n, np.int64), ndrange=n)
    i = np.arange(n)
    np.testing.assert_array_equal(y, (i // 16) * 16 + 15 - i % 16 + 1000 * (i // 16))


def test_another_workgroupsize_is_an_ndrange_error_naming_both(backend):
    k = pk.kernel(TILED)
    a = np.zeros((8, 8), np.float32)
    args = [backend.to_device(x) for x in (a, np.zeros((8, 8), np.int64), a)]
    with pytest.raises(NDRangeError, match=r"workgroupsize=\(8, 8\) conflicts with "
                       r"workgroupsize=\(4, 8\), which kernel 'tiled' declares"):
        k(*args, ndrange=(8, 8), workgroupsize=(8, 8))
    with pytest.raises(NDRangeError, match=r"\(2, 2\) conflicts with workgroupsize=\(4, 8\)"):
        k(backend, workgroupsize=(2, 2))(*args, ndrange=(8, 8))
    k(*args, ndrange=(8, 8), workgroupsize=(4, 8))  # the same size is fine
    backend.synchronize()


def test_declared_rank_must_match_the_ndrange():
    k = pk.kernel(TILED)
    with pytest.raises(NDRangeError, match=r"declares workgroupsize=\(4, 8\) \(2 axes\) on "
                       r"line 1, but the ndrange has 1 axis"):
        k.render("opencl", ndim=1, T="float")
    y = np.zeros(8, np.float32)
    with pytest.raises(NDRangeError, match="declares workgroupsize"):
        pk.kernel("@kernel(workgroupsize=(2, 2)) void f(float* y) { y[0] = 1; }")(
            y, ndrange=8)


def test_declared_size_compiles_for_cuda_and_metal():
    from portakern.checks import (
        check_metal,
        cuda_check_available,
        metal_check_available,
    )

    k = pk.kernel(TILED)
    if cuda_check_available()[0]:
        ptx = pk.CUDA.compile_check(k.rendered("cuda", {"T": "float"}, 2))
        assert ".maxntid 32, 1, 1" in ptx
    if metal_check_available()[0]:
        rendered = k.rendered("metal", {"T": "float"}, 2)
        assert check_metal(rendered.source, sources=rendered.sources()) is None


# -- @groups and scalar @localmem ---------------------------------------------------------

GROUPS = """\
@kernel void g(long* y) {
    @localmem int count;
    auto [i, j] = @index(Global, NTuple);
    auto [li, lj] = @index(Local, NTuple);
    if (li == 0 && lj == 0) count = 0;
    @synchronize();
    @atomic_add(&count, 1);
    @synchronize();
    y[(i * @ndrange(1) + j) * 4 + 0] = @groups(0);
    y[(i * @ndrange(1) + j) * 4 + 1] = @groups(1);
    y[(i * @ndrange(1) + j) * 4 + 2] = @groups();
    y[(i * @ndrange(1) + j) * 4 + 3] = count;
}
"""


def test_groups_and_a_scalar_localmem(backend):
    k = pk.kernel(GROUPS)
    shape, wg = (6, 10), (2, 4)
    (y,) = _run(backend, k, np.zeros(shape + (4,), np.int64), ndrange=shape,
                workgroupsize=wg)
    ng = (3, 3)  # ceil(6 / 2), ceil(10 / 4)
    np.testing.assert_array_equal(y[..., 0], ng[0])
    np.testing.assert_array_equal(y[..., 1], ng[1])
    np.testing.assert_array_equal(y[..., 2], ng[0] * ng[1])
    # Only work-items inside the ndrange add: the last column of groups holds 2 of 4.
    i, j = np.indices(shape)
    expected = 2 * np.minimum(4, 10 - (j // 4) * 4)
    np.testing.assert_array_equal(y[..., 3], expected)


def test_groups_render_per_target():
    k = pk.kernel("@kernel void g(long* y) { y[0] = @groups(0) + @groups(); }")
    assert "get_num_groups(0)" in k.render("opencl")
    assert "gridDim.x" in k.render("cuda")
    assert "threadgroups_per_grid.x" in k.render("metal")
    assert "pk_ng0" in k.render("c")
    scalar = pk.kernel("@kernel void s(float* y) { @localmem float total; total = 0; "
                       "@synchronize(); y[0] = total; }")
    assert "__local float total;" in scalar.render("opencl")
    assert "__shared__ float total;" in scalar.render("cuda")
    assert "threadgroup float total;" in scalar.render("metal")


def test_scalar_localmem_takes_no_initializer():
    source = "@kernel void s(float* y) {\n    @localmem float total = 0;\n    y[0] = total;\n}\n"
    _syntax_error(source, "@localmem", r"or a type and a name for one element: "
                  r"'@localmem T x;' \(workgroup memory takes no initializer")


def test_bad_groups_axis_is_a_syntax_error():
    source = "@kernel void g(long* y) {\n    y[0] = @groups(x);\n}\n"
    _syntax_error(source, "@groups", r"@groups\(d\) takes one integer axis")
    with pytest.raises(NDRangeError, match=r"@groups\(1\) on line 1, but the ndrange has 1"):
        pk.kernel("@kernel void g(long* y) { y[0] = @groups(1); }").render("opencl", ndim=1)


# -- @kernel(contract=false) ------------------------------------------------------------------

MULADD = """\
@kernel{{ "(contract=false)" if not CONTRACT else "" }} void muladd(float* y, const float* a,
                                                              const float* b, const float* c) {
    const long i = @index(Global, Linear);
    y[i] = a[i] * b[i] + c[i];
}
"""


def _muladd_inputs(n: int = 4096) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(14)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    # (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the product rounds the 2^-24 away, an FMA keeps it.
    a[0] = b[0] = np.float32(1 + 2**-12)
    c[0] = -np.float32(1 + 2**-11)
    return a, b, c


def test_contract_false_matches_numpys_unfused_float32_bitwise(backend):
    a, b, c = _muladd_inputs()
    expected = a * b + c  # NumPy rounds the product, then the sum
    assert expected[0] == 0.0  # and fused it would be 2^-24
    k = pk.kernel(MULADD, CONTRACT=False)
    y, *_ = _run(backend, k, np.zeros_like(a), a, b, c, ndrange=a.size)
    np.testing.assert_array_equal(y.view(np.uint32), expected.view(np.uint32))


def test_contract_false_renders_per_target():
    k = pk.kernel(MULADD, CONTRACT=False)
    assert "#pragma OPENCL FP_CONTRACT OFF" in k.render("opencl")
    c = k.render("c")
    assert '#pragma GCC optimize("fp-contract=off")' in c
    assert "#pragma clang fp contract(off)" in c
    assert "#pragma clang fp contract(off)" in k.render("metal")
    from portakern.backends.cuda import nvrtc_options

    assert "--fmad=false" in nvrtc_options(k.rendered("cuda", {}, 1))
    fused = pk.kernel(MULADD, CONTRACT=True)
    for target in TARGETS:
        assert "PK_FP_CONTRACT_OFF" not in fused.render(target)
    assert "--fmad=false" not in nvrtc_options(fused.rendered("cuda", {}, 1))


def test_contract_false_reaches_the_cuda_compiler():
    from portakern.checks import cuda_check_available

    if not cuda_check_available()[0]:
        pytest.skip("no NVRTC or nvcc to compile CUDA to PTX")
    ptx = pk.CUDA.compile_check(pk.kernel(MULADD, CONTRACT=False).rendered("cuda", {}, 1))
    assert "fma.rn.f32" not in ptx and "mul.rn.f32" in ptx
    fused = pk.CUDA.compile_check(pk.kernel(MULADD, CONTRACT=True).rendered("cuda", {}, 1))
    assert "fma.rn.f32" in fused


# -- @print --------------------------------------------------------------------------------

PRINT = """\
@kernel void show(const T* x) {
    const long i = @index(Global, Linear);
    @print("item %ld of %ld: %.1f\\n", i, (long)@ndrange(), (double)x[i]);
}
"""


def _flush_c_stdio() -> None:
    ctypes.CDLL(None).fflush(None)  # PoCL's and the stand-ins' printf write through C stdio


def test_print_on_the_native_path_is_ordered_by_work_item(capfd):
    k = pk.kernel(PRINT)
    x = np.arange(8, dtype=np.float32) / 2
    print("before", flush=True)
    k(x, ndrange=8, workgroupsize=8)
    print("after", flush=True)
    _flush_c_stdio()
    out = capfd.readouterr().out.splitlines()
    assert out == ["before"] + [f"item {i} of 8: {i / 2:.1f}" for i in range(8)] + ["after"]


def test_print_on_every_backend_prints_each_work_item(backend, capfd):
    k = pk.kernel(PRINT)
    x = np.arange(12, dtype=np.float32) / 2
    _run(backend, k, x, ndrange=12, workgroupsize=4)
    _flush_c_stdio()
    lines = [s for s in capfd.readouterr().out.splitlines() if s.startswith("item ")]
    if not pk.targets.target_info(backend.target).prints:
        assert lines == []  # Metal: @print does nothing (and warned at creation)
        return
    # Groups may run concurrently: order is promised within a group on CPU() only.
    assert sorted(lines) == sorted(f"item {i} of 12: {i / 2:.1f}" for i in range(12))


def test_print_warns_for_metal_and_renders_per_target():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        k = pk.kernel(PRINT)
    messages = [str(w.message) for w in seen if issubclass(w.category, pk.PortabilityWarning)]
    assert len(messages) == 1 and "@print prints nothing" in messages[0]
    assert messages[0].endswith("(not portable to: Metal)")
    assert 'printf("item %ld of %ld: %.1f\\n", i' in k.render("opencl", T="float")
    assert 'printf("item %ld of %ld: %.1f\\n", i' in k.render("cuda", T="float")
    assert "fflush(stdout)" in k.render("c", T="float")
    assert "printf" not in k.render("metal", T="float").split("void show(")[1]


def test_print_needs_a_format_string_and_a_semicolon():
    source = "@kernel void f(float* y) {\n    @print(y[0]);\n}\n"
    _syntax_error(source, "y[0])", "@print takes a format string literal first")
    source = '@kernel void f(float* y) {\n    @print("x") + 1;\n}\n'
    _syntax_error(source, "@print", "is a statement of its own")
    source = '@kernel void f(float* y) {\n    y[0] = @print("x");\n}\n'
    _syntax_error(source, "@print", "is a statement of its own")
    ok = pk.kernel('@kernel void f(float* y) { if (y[0] > 0) @print("a"); else @print("b"); '
                   'for (int k = 0; k < 2; ++k) { @print("%d", k); } }')
    assert ok.render("c").count("printf(") == 3
