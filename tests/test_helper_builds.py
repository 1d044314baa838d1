"""Code that builds on every target, in debug mode and out of it (issue 28; DESIGN section
1a: code portakern cannot run right on a target is refused or warned at ``pk.kernel()``,
never handed to one vendor's compiler to fail there).

Each launch test runs on the CPU's native path, on PoCL, and on the CUDA and Metal
stand-ins (marked ``gpu`` / ``metal``); the renderings also go through the real GPU
compilers' checks (NVRTC or nvcc to PTX, clang's Metal check) where they are installed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import portakern as pk


def compile_for_gpus(kernel: pk.Kernel, *, mlx: bool = True) -> None:
    """The CUDA rendering to PTX and the Metal one through clang, where each is here;
    with ``mlx``, also both as MLX wraps them (MLX takes no struct arrays)."""
    from portakern.backends import _mlx
    from portakern.backends.metal import mlx_source
    from portakern.checks.cuda import compile_cuda_ptx, cuda_check_available
    from portakern.checks.metal import check_metal, metal_check_available

    ok_metal, why_metal = metal_check_available()
    if ok_metal:
        r = kernel.rendered("metal", {}, 1)
        check_metal(r.source, sources=r.sources())
        if mlx:
            check_metal(mlx_source(r), sources=r.sources())
    ok_cuda, why_cuda = cuda_check_available()
    if ok_cuda:
        from portakern.backends.cuda import BASE_OPTIONS  # a launch's own options

        r = kernel.rendered("cuda", {}, 1)
        compile_cuda_ptx(r.source, options=BASE_OPTIONS)
        if mlx:
            compile_cuda_ptx(mlx_source(r, default_header=_mlx.CUDA_HEADER_STANDIN),
                             options=BASE_OPTIONS)
    if not (ok_metal or ok_cuda):
        pytest.skip(f"no Metal check ({why_metal}) and no CUDA compiler ({why_cuda})")


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


# -- 1. an array of a struct the source defines, in debug mode ----------------------------

POINTS = """
typedef struct { float x; float y; } P;
@kernel void sum_xy(float* out, const P* ps, const long off) {
    const long i = @index(Global, Linear);
    out[i] = ps[i + off].x + ps[i + off].y;
}
"""


def points(n: int) -> np.ndarray:
    ps = np.zeros(n, pk.struct_dtype(pk.kernel(POINTS), "P"))
    ps["x"], ps["y"] = np.arange(n), 10 * np.arange(n)
    return ps


@pytest.mark.parametrize("debug", [False, True])
def test_an_array_of_a_struct_in_debug_mode(path: Any, debug: bool) -> None:
    if path.where == "metal":
        pytest.skip("MLX arrays have no structured dtypes (tests/test_structs.py); the Metal "
                    "rendering goes through clang in the next test")
    k = pk.kernel(POINTS, debug=debug)
    ps = points(8)
    path.run(k, np.zeros(8, np.float32), ps, np.int64(0), ndrange=8)
    assert list(path.after[0]) == list(ps["x"] + ps["y"])
    if not debug:
        return
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), ps, np.int64(1), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.work_item) == ("ps", 8, 8, (7,))
    assert err.lineno == line_of(POINTS, "out[i] =")


def test_an_array_of_a_struct_compiles_for_the_gpu_compilers_in_debug_mode() -> None:
    compile_for_gpus(pk.kernel(POINTS, debug=True), mlx=False)


def test_portakern_debug_in_the_environment_builds_it_too(monkeypatch: pytest.MonkeyPatch,
                                                          ) -> None:
    from portakern.backends.native import NativeCPU

    if not NativeCPU.available():
        pytest.skip(f"no native CPU path here: {NativeCPU.available().reason}")
    monkeypatch.setenv("PORTAKERN_DEBUG", "1")
    monkeypatch.setenv("PORTAKERN_CPU", "native")
    k = pk.kernel(POINTS)
    assert k.debug
    out, ps = np.zeros(8, np.float32), points(8)
    with pytest.raises(pk.KernelFaultError, match="ps"):
        k(pk.CPU())(out, ps, np.int64(1), ndrange=8)
    assert list(out[:7]) == list(ps["x"][1:] + ps["y"][1:])


def test_the_struct_is_defined_before_its_accessor() -> None:
    for target in ("c", "opencl", "cuda", "metal"):
        text = pk.kernel(POINTS, debug=True).render(target)
        assert text.index("} P;") < text.index("pk_dbg_at_ps("), target


# -- 2. a helper taking a pointer, called in a group collective's value --------------------

GROUPREDUCE = """
float at(const float* p, long i) { return p[i]; }
float twice(float v) { return 2.0f * v; }
@kernel void totals(float* out, const float* x, const long off) {
    const long i = @index(Global, Linear);
    @localmem float tile[8];
    tile[@index(Local, Linear)] = x[i];
    @synchronize();
    const float* view = x + off;
    const float t = @groupreduce(add, at(view, i) + twice(at(tile, @index(Local, Linear))));
    if (@index(Local, Linear) == 0) out[@index(Group, Linear)] = t;
}
"""


@pytest.mark.parametrize("debug", [False, True])
def test_a_pointer_helper_inside_groupreduce_builds_everywhere(path: Any, debug: bool) -> None:
    k = pk.kernel(GROUPREDUCE, debug=debug)
    x = np.arange(16, dtype=np.float32)
    path.run(k, np.zeros(2, np.float32), x, np.int64(0), ndrange=16, workgroupsize=8)
    assert list(path.after[0]) == [3 * x[:8].sum(), 3 * x[8:].sum()]
    if not debug:
        return
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(2, np.float32), x, np.int64(1), ndrange=16, workgroupsize=8)
    assert (info.value.parameter, info.value.index, info.value.extent) == ("x", 16, 16)


@pytest.mark.parametrize("debug", [False, True])
def test_a_pointer_helper_inside_groupreduce_compiles_for_the_gpu_compilers(debug: bool) -> None:
    compile_for_gpus(pk.kernel(GROUPREDUCE, debug=debug))


def test_the_call_inside_groupreduce_names_the_opencl_copy() -> None:
    text = pk.kernel(GROUPREDUCE).render("opencl")
    # One copy per address space the helper is called with, and each call renamed.
    assert "float at_pk_g(__global const float* p" in text
    assert "float at_pk_l(__local const float* p" in text
    assert "at_pk_g(view, i) + twice(at_pk_l(tile" in text


# -- 3. a helper parameter declared as an array -------------------------------------------

ARRAY_PARAMETER = """
float sum3(const float b[], long i) { return b[i] + b[i + 1] + b[i + 2]; }
void put(float out[4], long i, float v);
void put(float out[4], long i, float v) { out[i] = v; }
@kernel void window(float* y, const float* x) {
    const long i = @index(Global, Linear);
    @localmem float tile[8];
    tile[@index(Local, Linear)] = x[i];
    @synchronize();
    put(y, i, sum3(x, i) + sum3(tile, 0));
}
"""


@pytest.mark.parametrize("debug", [False, True])
def test_an_array_parameter_of_a_helper_builds_everywhere(path: Any, debug: bool) -> None:
    k = pk.kernel(ARRAY_PARAMETER, debug=debug)
    x = np.arange(18, dtype=np.float32)
    path.run(k, np.zeros(16, np.float32), x, ndrange=16, workgroupsize=8)
    want = [x[i:i + 3].sum() + x[8 * (i // 8):8 * (i // 8) + 3].sum() for i in range(16)]
    assert list(path.after[0]) == want
    if not debug:
        return
    with pytest.raises(pk.KernelFaultError) as info:  # item 15 reads x[17]
        path.run(k, np.zeros(16, np.float32), x[:17], ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.work_item) == ("x", 17, 17, (15,))
    assert err.lineno == line_of(ARRAY_PARAMETER, "float sum3")


@pytest.mark.parametrize("debug", [False, True])
def test_an_array_parameter_of_a_helper_compiles_for_the_gpu_compilers(debug: bool) -> None:
    compile_for_gpus(pk.kernel(ARRAY_PARAMETER, debug=debug))


def test_an_array_parameter_is_rendered_as_a_pointer() -> None:
    k = pk.kernel(ARRAY_PARAMETER)
    assert "float sum3(const float *b, long long i)" in k.render("c")
    opencl = k.render("opencl")
    assert "float sum3_pk_g(__global const float *b, long i)" in opencl
    assert "float sum3_pk_l(__local const float *b, long i)" in opencl
    assert "void put_pk_g(__global float *out, long i, float v)" in opencl
    assert "b[]" not in opencl and "out[4]" not in opencl


def test_unnamed_array_parameters_of_a_prototype(path: Any) -> None:
    source = """
float sum2(const float[], long[], long);
float sum2(const float b[], long c[], long i) { return b[i] + (float)c[i]; }
@kernel void k(float* y, const float* x, long* n) {
    const long i = @index(Global, Linear);
    y[i] = sum2(x, n, i);
}
"""
    k = pk.kernel(source)
    text = k.render("c")
    assert "float sum2(const float[], long long[], long long);" in text
    assert "float sum2(const float *b, long long *c, long long i)" in text
    x, n = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.int64)
    path.run(k, np.zeros(4, np.float32), x, n, ndrange=4)
    assert list(path.after[0]) == list(x + n)


def test_other_brackets_in_a_helper_stay_as_written() -> None:
    source = """
float first(const float* b) { float w[2] = {b[0], b[1]}; return w[0] + w[1]; }
@kernel void k(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = first(x + i);
}
"""
    text = pk.kernel(source).render("opencl")
    assert "float w[2] = {b[0], b[1]};" in text


# -- 4. pointers into a @localmem array sized at launch (issue 36 gap 1) ------------------

LAUNCH_SIZED = """
void bump(float& a) { a += 100.0f; }
float get(const float* t, long k) { return t[k]; }
@kernel void flip(float* y, const float* x, const long n) {
    @localmem float tile[@groupsize()];
    @localmem float spare[n];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    float* p = tile + l;
    p[0] = x[i];
    float* q = &spare[l];
    *q = 1.0f;
    bump(spare[l]);
    @synchronize();
    y[i] = get(tile, @groupsize() - 1 - l) + get(spare, l);
}
"""


@pytest.mark.parametrize("debug", [False, True])
def test_pointers_into_launch_sized_localmem_build_everywhere(path: Any, debug: bool) -> None:
    k = pk.kernel(LAUNCH_SIZED, debug=debug)
    x = np.arange(32, dtype=np.float32)
    path.run(k, np.zeros(32, np.float32), x, np.int64(8), ndrange=32, workgroupsize=8)
    assert list(path.after[0]) == list(x.reshape(4, 8)[:, ::-1].ravel() + 101)
    if not debug:
        return
    with pytest.raises(pk.KernelFaultError) as info:  # spare has 4 slots for 8 items
        path.run(k, np.zeros(32, np.float32), x, np.int64(4), ndrange=32, workgroupsize=8)
    assert "spare" in str(info.value)


@pytest.mark.parametrize("debug", [False, True])
def test_pointers_into_launch_sized_localmem_compile_for_the_gpu_compilers(debug: bool,
                                                                            ) -> None:
    # MLX's CUDA path refuses a launch-sized @localmem at launch (a LaunchError from
    # portakern/backends/local_sizes.py), so only the Metal source MLX wraps is checked too.
    k = pk.kernel(LAUNCH_SIZED, debug=debug)
    compile_for_gpus(k, mlx=False)
    from portakern.backends.metal import mlx_source
    from portakern.checks.metal import check_metal, metal_check_available

    if metal_check_available()[0]:
        r = k.rendered("metal", {}, 1)
        check_metal(mlx_source(r), sources=r.sources())


def test_pointers_into_launch_sized_localmem_get_the_local_space() -> None:
    k = pk.kernel(LAUNCH_SIZED)
    opencl, metal = k.render("opencl"), k.render("metal")
    assert "__local float * p" in opencl and "__local float * q" in opencl
    assert "float get_pk_l(__local const float* t" in opencl
    assert "void bump_pk_l(__local float* a)" in opencl
    assert "threadgroup float * p" in metal and "threadgroup float * q" in metal
    assert "float get(threadgroup const float* t" in metal
    assert "__private" not in opencl and "thread float" not in metal


# -- 5. a helper parameter that is an array of arrays, T b[][4] (issue 36 gap 2) ----------

ROWS = """
float row_sum(const float b[][4], long r) { return b[r][0] + b[r][1] + b[r][2] + b[r][3]; }
void put(float t[][4], long r, float v) { t[r][0] = v; }
@kernel void rows(float* y, const float* x) {
    float mine[2][4];
    @localmem float tile[8][4];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    for (int c = 0; c < 4; c++) { tile[l][c] = x[4 * i + c]; mine[1][c] = (float)c; }
    @synchronize();
    put(mine, 0, 0.5f);
    y[i] = row_sum(tile, l) + row_sum(mine, 1) + mine[0][0];
}
"""


@pytest.mark.parametrize("debug", [False, True])
def test_an_array_of_arrays_parameter_builds_everywhere(path: Any, debug: bool) -> None:
    k = pk.kernel(ROWS, debug=debug)
    x = np.arange(64, dtype=np.float32)
    path.run(k, np.zeros(16, np.float32), x, ndrange=16, workgroupsize=8)
    assert list(path.after[0]) == list(x.reshape(16, 4).sum(1) + 6.5)


@pytest.mark.parametrize("debug", [False, True])
def test_an_array_of_arrays_parameter_compiles_for_the_gpu_compilers(debug: bool) -> None:
    compile_for_gpus(pk.kernel(ROWS, debug=debug))


def test_an_array_of_arrays_parameter_gets_each_address_space() -> None:
    k = pk.kernel(ROWS)
    opencl, metal = k.render("opencl"), k.render("metal")
    assert "float row_sum_pk_l(__local const float b[][4], long r)" in opencl
    assert "float row_sum_pk_p(__private const float b[][4], long r)" in opencl
    assert "void put_pk_p(__private float t[][4], long r, float v)" in opencl
    assert "row_sum_pk_l(tile, l) + row_sum_pk_p(mine, 1)" in opencl
    assert "float row_sum(threadgroup const float b[][4], long r)" in metal
    assert "float row_sum(thread const float b[][4], long r)" in metal
    assert "float row_sum(const float b[][4], long long r)" in k.render("c")


# -- all of them through nvcc ----------------------------------------------------------------

@pytest.mark.parametrize("debug", [False, True])
def test_the_cuda_renderings_compile_to_ptx_with_nvcc(debug: bool) -> None:
    from portakern.checks import cuda as cuda_module

    if cuda_module._find_nvcc() is None:
        pytest.skip("nvcc not found: install the CUDA toolkit")
    for source in (POINTS, GROUPREDUCE, ARRAY_PARAMETER, LAUNCH_SIZED, ROWS):
        r = pk.kernel(source, debug=debug).rendered("cuda", {}, 1)
        assert ".entry" in cuda_module.compile_cuda_ptx(r.source, compiler="nvcc")


# -- OpenCL's short unsigned type names on every target ------------------------------------
# C++ has only some of them (glibc's <sys/types.h> has no uchar) and NVRTC lacks uchar and
# ushort: a kernel using one fell back from the native path to OpenCL, or failed in NVRTC.

SHORT_NAMES = ("uchar", "ushort", "uint", "ulong")

SOURCE = """
{T} wrap({T} v) {{ return ({T})(v + 1); }}
@kernel void widen(float* y, const {T}* x) {{
    const long i = @index(Global, Linear);
    {T} c = wrap(x[i]);
    y[i] = (float)c;
}}
"""

DTYPES = {"uchar": np.uint8, "ushort": np.uint16, "uint": np.uint32, "ulong": np.uint64}


@pytest.mark.parametrize("name", SHORT_NAMES)
def test_a_short_type_name_runs_on_every_path(path: Any, name: str) -> None:
    k = pk.kernel(SOURCE.format(T=name))
    x = np.array([0, 7, 41, np.iinfo(DTYPES[name]).max], DTYPES[name])
    with warnings.catch_warnings():
        warnings.simplefilter("error", pk.NativeFallbackWarning)  # it builds as C++
        path.run(k, np.zeros(4, np.float32), x, ndrange=4)
    want = (x + np.array(1, DTYPES[name])).astype(np.float32)  # wraps like C
    assert list(path.after[0]) == list(want)


@pytest.mark.parametrize("name", SHORT_NAMES)
def test_a_short_type_name_compiles_for_the_gpu_compilers(name: str) -> None:
    compile_for_gpus(pk.kernel(SOURCE.format(T=name)))


# -- file-scope const tables (the 80-kernel probe: PoCL and NVRTC refused them) ------------

TABLES = """
const float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
static const int offsets[2] = {0, 1};
const float scale = 0.5f;
float pick(long i) { return table[(i + offsets[1]) % 4] * scale; }
@kernel void lookup(float* y) {
    const long i = @index(Global, Linear);
    y[i] = table[i % 4] + pick(i);
}
"""


@pytest.mark.parametrize("debug", [False, True])
def test_file_scope_const_tables_build_and_run_everywhere(path: Any, debug: bool) -> None:
    path.run(pk.kernel(TABLES, debug=debug), np.zeros(8, np.float32), ndrange=8)
    i = np.arange(8)
    want = np.float32([1, 2, 3, 4])[i % 4] + np.float32([1, 2, 3, 4])[(i + 1) % 4] * 0.5
    assert np.array_equal(path.after[0], want.astype(np.float32))


@pytest.mark.parametrize("debug", [False, True])
def test_file_scope_const_tables_compile_for_the_gpu_compilers(debug: bool) -> None:
    compile_for_gpus(pk.kernel(TABLES, debug=debug))


def test_a_file_scope_const_gets_each_target_s_constant_memory() -> None:
    k = pk.kernel(TABLES)
    prefix = {"opencl": "__constant", "metal": "constant", "cuda": "__device__", "c": ""}
    for target, word in prefix.items():
        text = k.render(target).replace("\n#line", " #line")
        for decl in ("const float table[4]", "static const int offsets[2]",
                     "const float scale ="):
            before = text.split(decl, 1)[0].rsplit(";", 1)[-1].rsplit("}", 1)[-1]
            if word:
                assert word in before, (target, decl, before)
            else:
                assert not any(w in before for w in prefix.values() if w), (decl, before)
    # a pointer, a function and a type keep their own spelling
    other = pk.kernel("const float* const none = 0;\n"
                      "typedef const float cfloat;\n"
                      "@kernel void k(float* y) { y[0] = 1.0f; }")
    assert "__constant" not in other.render("opencl").split("__kernel")[0]


STATIC_TABLES = """
float pick(long i) {
    static const float halves[2] = {10.0f, 20.0f};
    return halves[i % 2];
}
@kernel void lookup_static(float* y) {
    static const float lut[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    const long i = @index(Global, Linear);
    y[i] = lut[i % 4] + pick(i);
}
"""


@pytest.mark.parametrize("debug", [False, True])
def test_static_const_local_tables_build_and_run_everywhere(path: Any, debug: bool) -> None:
    # PoCL: "static local variable must reside in constant address space"
    path.run(pk.kernel(STATIC_TABLES, debug=debug), np.zeros(8, np.float32), ndrange=8)
    i = np.arange(8)
    want = np.float32([1, 2, 3, 4])[i % 4] + np.float32([10, 20])[i % 2]
    assert np.array_equal(path.after[0], want.astype(np.float32))
    opencl = pk.kernel(STATIC_TABLES).render("opencl")
    assert opencl.count("static __constant const float") == 2
    assert pk.kernel(STATIC_TABLES).render("metal").count("static constant const float") == 2


def test_static_const_local_tables_compile_for_the_gpu_compilers() -> None:
    compile_for_gpus(pk.kernel(STATIC_TABLES))
