"""Debug mode in helper functions: what a helper is given, and the pointers it makes (issue 28,
docs/debugging.md "In a helper function" and "Limits").

* A helper given ``&tile[k]`` (or ``tile + k``, ``&grid[r][c]``) of a ``@localmem`` array
  checks its own accesses through it; the call marks nothing itself, so a read in the helper
  of an element no work-item wrote is an initcheck fault, and a write in the helper marks it.
* A pointer into a helper's own private array (``float* p = buf + 1;``), ``*(p + k)``, and
  such a pointer (or the array) passed on to another helper, are checked against the
  private array's extent.
* A helper parameter declared as an array of arrays (``const float b[][4]``, ``b[2][4]``)
  has ``b[r][c]`` checked against the argument's extent (flat, row-major) and ``c`` against
  the inner dimension.

Each test runs on the CPU's native path, on PoCL, and on the CUDA and Metal stand-ins (the
``path`` fixture, tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def _address(arg: str, declare: str = "@localmem float tile[8];",
             write: str = "tile[l] = x[i];") -> str:
    return f"""
float first(const float* t) {{
    return t[0];
}}
@kernel void helper_address(float* y, const float* x, const long skip) {{
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    {declare}
    if (l != skip) {{
        {write}
    }}
    @synchronize();
    y[i] = first({arg});
}}
"""


@pytest.mark.parametrize("arg", ["&tile[7 - l]", "tile + (7 - l)"])
def test_a_helper_reading_through_an_element_address_is_initchecked(path: Any,
                                                                    arg: str) -> None:
    source = _address(arg)
    k = pk.kernel(source, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(-1), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list(x.reshape(2, 8)[:, ::-1].ravel())
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(3), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index) == ("tile", 3)
    assert err.work_item[0] % 8 == 4 and err.lineno == line_of(source, "return t[0]")
    assert "which no work-item of the group had written" in str(err)


def test_a_helper_reading_through_a_row_elements_address_is_initchecked(path: Any) -> None:
    source = _address("&grid[1][7 - l]", "@localmem float grid[2][8];",
                      "grid[1][l] = x[i]; grid[0][l] = 0.0f;")
    k = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(-1), ndrange=8,
                  workgroupsize=8)[:1]
    assert list(y) == list(x[::-1])
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(2), ndrange=8, workgroupsize=8)
    err = info.value  # grid[1][2] is flat element 10 of 16
    assert (err.parameter, err.index, err.extent) == ("grid", 10, 16)
    assert err.lineno == line_of(source, "return t[0]")


WRITES_THROUGH = """
void put(float* t, float v) {
    t[0] = v;
}
void put_on(float* t, float v) {
    put(t, v);
}
@kernel void helper_writes_through(float* y, const float* x) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float tile[8];
    put_on(&tile[l], x[i]);
    @synchronize();
    y[i] = tile[7 - l];
}
"""


def test_a_helper_writing_through_an_element_address_marks_it(path: Any) -> None:
    """No false report: the helper's write (two calls down) marks the element."""
    k = pk.kernel(WRITES_THROUGH, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, ndrange=16, workgroupsize=8)[:1]
    assert list(y) == list(x.reshape(2, 8)[:, ::-1].ravel())


def test_a_helper_writing_a_neighbours_element_through_its_address_races(path: Any) -> None:
    source = WRITES_THROUGH.replace("put_on(&tile[l], x[i]);\n    @synchronize();",
                                    "tile[l] = x[i];\n    @synchronize();\n"
                                    "    const float mine = tile[l];\n"
                                    "    put_on(&tile[(l + 1) % 8], mine);\n"
                                    "    @synchronize();")
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8,
                 workgroupsize=8)
    err = info.value
    assert err.parameter == "tile" and "race on element" in str(err)
    assert line_of(source, "t[0] = v") in (err.lineno, err.other_lineno)


ATOMIC = """
void bump(int* h) {
    @atomic_add(h, 1);
}
@kernel void helper_atomic(int* out, const int* x, const int zero) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem int bins[4];
    if (l < 4 && zero) {
        bins[l] = 0;
    }
    @synchronize();
    bump(&bins[x[i] % 4]);
    @synchronize();
    if (l < 4) {
        out[l] = bins[l];
    }
}
"""


def test_an_atomic_through_a_handed_pointer_is_not_seen(path: Any) -> None:
    """The documented limit: the helper's ``@atomic_add(h, 1)`` is no subscript, so the
    element it counts into is as written as the group left it."""
    k = pk.kernel(ATOMIC, debug=True)
    x = np.arange(8, dtype=np.int32)
    out, = path.run(k, np.zeros(4, np.int32), x, np.int32(1), ndrange=8, workgroupsize=8)[:1]
    assert list(out) == [2, 2, 2, 2]
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(4, np.int32), x, np.int32(0), ndrange=8, workgroupsize=8)
    assert info.value.parameter == "bins"
    assert info.value.lineno == line_of(ATOMIC, "out[l] = bins[l]")


PRIVATE_VIEW = """
float at(const float* a, long k) {
    return a[k];
}
float pick(float v, long k, long m) {
    float buf[4];
    for (int j = 0; j < 4; j++) {
        buf[j] = v + j;
    }
    float* p = buf + 1;
    const float* q = &p[1];
    return p[k] + *(q + m) + at(p, m) + at(buf, m);
}
@kernel void helper_private_view(float* y, const float* x, const long k, const long m) {
    const long i = @index(Global, Linear);
    y[i] = pick(x[i], k, m);
}
"""


def test_a_pointer_into_a_helpers_private_array_is_checked(path: Any) -> None:
    k = pk.kernel(PRIVATE_VIEW, debug=True)
    x = np.arange(4, dtype=np.float32)
    y, = path.run(k, np.zeros(4, np.float32), x, np.int64(2), np.int64(1), ndrange=4)[:1]
    assert list(y) == list((x + 3) + (x + 3) + (x + 2) + (x + 1))
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(4, np.float32), x, np.int64(3), np.int64(0), ndrange=4)
    err = info.value  # p[3] is buf[4]
    assert (err.parameter, err.index, err.extent) == ("buf", 4, 4)
    assert err.lineno == line_of(PRIVATE_VIEW, "return p[k]")
    assert "in helper 'pick'" in str(err) and err.work_item is not None


def test_pointer_arithmetic_on_a_helpers_private_view_is_checked(path: Any) -> None:
    k = pk.kernel(PRIVATE_VIEW.replace("at(p, m) + at(buf, m)", "0.0f"), debug=True)
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(4, np.float32), x, np.int64(0), np.int64(2), ndrange=4)
    err = info.value  # *(q + 2) is buf[4]
    assert (err.parameter, err.index, err.extent) == ("buf", 4, 4)


@pytest.mark.parametrize("arg", ["p", "buf"])
def test_a_helpers_private_array_passed_on_is_checked(path: Any, arg: str) -> None:
    source = PRIVATE_VIEW.replace("at(p, m) + at(buf, m)", f"at({arg}, m)").replace(
        "*(q + m)", "*q")
    k = pk.kernel(source, debug=True)
    x = np.arange(4, dtype=np.float32)
    y, = path.run(k, np.zeros(4, np.float32), x, np.int64(0), np.int64(0), ndrange=4)[:1]
    assert list(y) == list((x + 1) + (x + 2) + (x + (arg == "p")))
    with pytest.raises(pk.KernelFaultError) as info:  # at(p, 3) and at(buf, 4): buf[4]
        path.run(k, np.zeros(4, np.float32), x, np.int64(0), np.int64(3 + (arg == "buf")),
                 ndrange=4)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("buf", 4, 4)
    assert err.lineno == line_of(source, "return a[k]")


def _grid(param: str, declare: str) -> str:
    sync = "@synchronize();" if declare.startswith("@localmem") else ""
    return f"""
float cell({param}, long r, long c) {{
    return b[r][c];
}}
float cell_on({param}, long r, long c) {{
    return cell(b, r, c);
}}
@kernel void helper_grid(float* y, const float* x, const long r, const long c,
                         const long skip) {{
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    {declare} g[2][4];
    if (l < 4) {{
        g[0][l] = x[i];
        if (l != skip) {{
            g[1][l] = 2.0f * x[i];
        }}
    }}
    {sync}
    y[i] = cell_on(g, r, c);
}}
"""


GRIDS = [("const float b[][4]", "@localmem float"), ("const float b[2][4]", "@localmem float"),
         ("const float b[][4]", "float")]


@pytest.mark.parametrize("param, declare", GRIDS)
def test_an_array_of_arrays_parameter_is_checked_against_the_argument(
        path: Any, param: str, declare: str) -> None:
    source = _grid(param, declare)
    k = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32)
    args = (np.zeros(8, np.float32), x)
    if declare == "float":  # each work-item's own grid: work-item 0 wrote g[0][0] = x[0]
        y, = path.run(k, *args, np.int64(0), np.int64(0), np.int64(-1), ndrange=8,
                      workgroupsize=8)[:1]
        assert y[0] == x[0]
    else:
        y, = path.run(k, *args, np.int64(1), np.int64(3), np.int64(-1), ndrange=8,
                      workgroupsize=8)[:1]
        assert list(y) == [6.0] * 8
    with pytest.raises(pk.KernelFaultError) as info:  # row 2 of a 2-row argument
        path.run(k, *args, np.int64(2), np.int64(0), np.int64(-1), ndrange=8,
                 workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == ("g", 8, 8, None)
    assert err.lineno == line_of(source, "return b[r][c]")


@pytest.mark.parametrize("param, declare", GRIDS)
def test_the_inner_dimension_of_an_array_of_arrays_parameter_is_checked(
        path: Any, param: str, declare: str) -> None:
    source = _grid(param, declare)
    k = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:  # b[0][4]: inside g, past its row
        path.run(k, np.zeros(8, np.float32), x, np.int64(0), np.int64(4), np.int64(-1),
                 ndrange=8, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == ("b", 4, 4, 1)
    assert err.lineno == line_of(source, "return b[r][c]")
    assert "helper 'cell'" in str(err) and err.argument is None


def test_an_array_of_arrays_parameter_is_initchecked(path: Any) -> None:
    source = _grid("const float b[][4]", "@localmem float")
    k = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:  # g[1][2] was not written
        path.run(k, np.zeros(8, np.float32), x, np.int64(1), np.int64(2), np.int64(2),
                 ndrange=8, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("g", 6, 8)
    assert "which no work-item of the group had written" in str(err)
    assert err.lineno == line_of(source, "return b[r][c]")


def test_an_array_of_arrays_parameter_renders_unchanged_without_debug_mode() -> None:
    source = _grid("const float b[][4]", "@localmem float")
    for target in ("c", "opencl", "cuda", "metal"):
        assert "return b[r][c];" in pk.kernel(source).render(target)
        assert "return b[r][c];" not in pk.kernel(source, debug=True).render(target)


THREE = """
#define C 3
float at3(const float b[][2][C], long p, long r, long c) {
    return b[p][r][c];
}
float mid(long p, long r, long c) {
    float g[2][2][C];
    for (int a = 0; a < 2; a++) {
        for (int d = 0; d < 2; d++) {
            for (int e = 0; e < C; e++) {
                g[a][d][e] = 100 * a + 10 * d + e;
            }
        }
    }
    return at3(g, p, r, c);
}
@kernel void helper_three(float* y, const long p, const long r, const long c) {
    const long i = @index(Global, Linear);
    y[i] = mid(p, r, c);
}
"""


@pytest.mark.parametrize("args, fault", [
    ((0, 2, 0), ("b", 2, 2, 1)), ((0, 0, 3), ("b", 3, 3, 2)), ((2, 0, 0), ("g", 12, 12, None))])
def test_a_helpers_three_dimensional_private_array_passed_whole(path: Any, args: tuple,
                                                                fault: tuple) -> None:
    """Each inner size of ``b[][2][C]`` (a macro) is checked, and the whole element against
    the helper ``mid``'s own array ``g``, passed whole."""
    k = pk.kernel(THREE, debug=True)
    y, = path.run(k, np.zeros(4, np.float32), np.int64(1), np.int64(1), np.int64(2),
                  ndrange=4)[:1]
    assert list(y) == [112.0] * 4
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(4, np.float32), *(np.int64(a) for a in args), ndrange=4)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == fault
    assert err.lineno == line_of(THREE, "return b[p][r][c]")
    assert ("helper 'at3'" if fault[0] == "b" else "in helper 'mid'") in str(err)


COPIES = """
float f(const float* a, long k) {
    float acc[4];
    for (int j = 0; j < 4; j++) {
        acc[j] = a[0] + j;
    }
    return acc[k];
}
float g(long k) {
    float other[4];
    for (int j = 0; j < 4; j++) {
        other[j] = j;
    }
    return other[k % 4];
}
@kernel void helper_copies(float* y, const float* x, const long k) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float t[4];
    t[l] = x[i];
    @synchronize();
    y[i] = f(x + i, 0) + f(t + l, k) + g(0);
}
"""


def test_a_private_array_of_a_helper_copied_per_address_space_is_named(path: Any) -> None:
    """On OpenCL ``f`` has a copy for global and one for local pointers; both name ``acc``
    (the copies once shifted the codes, and the report named ``other`` in ``g``)."""
    k = pk.kernel(COPIES, debug=True)
    x = np.arange(4, dtype=np.float32)
    y, = path.run(k, np.zeros(4, np.float32), x, np.int64(1), ndrange=4,
                  workgroupsize=4)[:1]
    assert list(y) == list(2 * x + 1)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(4, np.float32), x, np.int64(4), ndrange=4, workgroupsize=4)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", 4, 4)
    assert "in helper 'f'" in str(err)
