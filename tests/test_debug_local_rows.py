"""Debug mode through pointers into multi-dimensional ``@localmem`` and private arrays
(issue 28, docs/debugging.md).

A pointer into a row of ``grid[R][C]`` (``float* row = grid[r];``, ``&grid[r][c]``,
``grid[r] + c``, ``*(grid[r] + c)``) is checked against the whole array's flat extent
``R * C``, as compute-sanitizer checks the allocation: running past row ``r`` into row
``r + 1`` stays inside the array and is no fault, past the last element is. The fault
names the array, the flat index, the flat extent, the line and the work-item; the
initcheck and the racecheck see such an access as one of the element at that flat
offset (as their reports name a multi-dimensional array's elements). Each test runs on
the CPU's native path, on PoCL, and on the CUDA and Metal stand-ins
(tests/test_debug_local_views.py has the one-dimensional cases).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


LOCAL_ROWS = """
@kernel void local_rows(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float grid[4][8];
    for (int r = 0; r < 4; r++) {
        float* row = grid[r];
        row[l] = x[i] + r;
    }
    @synchronize();
    const float* last = &grid[3][0];
    const float* mid = &grid[2][l];
    y[i] = last[7 - l + off] + *(grid[1] + l) + mid[8] + *(grid[0] + l + 8 * off);
}
"""


def test_a_row_pointer_into_localmem_is_checked_against_its_flat_extent(path: Any) -> None:
    k = pk.kernel(LOCAL_ROWS, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(0), ndrange=16,
                  workgroupsize=8)[:1]
    # mid[8] runs past row 2 into row 3: inside the array, so no fault.
    rev = x.reshape(2, 8)[:, ::-1].ravel()
    assert list(y) == list((rev + 3) + (x + 1) + (x + 3) + x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(1), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("grid", 32, 32)
    assert err.work_item[0] % 8 == 0 and err.lineno == line_of(LOCAL_ROWS, "y[i] = last[")
    assert "@localmem array 'grid'" in str(err) and "through a pointer" in str(err)


DEREF_ROW = """
@kernel void deref_row(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float grid[2][8];
    grid[0][l] = x[i];
    grid[1][l] = 2.0f * x[i];
    @synchronize();
    y[i] = *(grid[1] + l + off);
}
"""


def test_a_deref_of_a_row_plus_an_offset_is_checked(path: Any) -> None:
    k = pk.kernel(DEREF_ROW, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(0), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list(2 * x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(1), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("grid", 16, 16)
    assert err.work_item[0] % 8 == 7 and err.lineno == line_of(DEREF_ROW, "y[i] = *(grid")


PRIVATE_ROWS = """
@kernel void private_rows(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    float acc[3][4];
    for (int r = 0; r < 3; r++) {
        float* row = acc[r];
        for (int c = 0; c < 4; c++) {
            row[c] = x[i] * r + c;
        }
    }
    float* p = &acc[1][2];
    y[i] = p[3] + *(acc[2] + 1) + p[off];
}
"""


def test_a_row_pointer_into_a_private_array_is_checked_against_its_flat_extent(
        path: Any) -> None:
    k = pk.kernel(PRIVATE_ROWS, debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8)[:1]
    # p[3] is acc[2][1] (past row 1 into row 2: no fault); p[0] is acc[1][2].
    assert list(y) == list((2 * x + 1) + (2 * x + 1) + (x + 2))
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(6), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", 12, 12)
    assert err.work_item[0] in range(8) and err.lineno == line_of(PRIVATE_ROWS, "y[i] = p[3]")
    assert "private array 'acc'" in str(err) and "through a pointer" in str(err)


HELPER_ROWS = """
float total(const float* a, long n) {
    float s = 0.0f;
    for (long j = 0; j < n; j++) {
        s += a[j];
    }
    return s;
}
@kernel void helper_rows(float* y, const float* x, const long n) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float grid[2][8];
    float acc[2][4];
    for (int c = 0; c < 4; c++) {
        acc[0][c] = x[i];
        acc[1][c] = c;
    }
    grid[0][l] = 1.0f;
    grid[1][l] = x[i];
    @synchronize();
    const float* row = grid[1];
    y[i] = total(grid[0], 8) + total(row, n) + total(&acc[1][0], 4) + total(acc[0] + 2, 2);
}
"""


def test_a_helper_given_a_row_pointer_checks_it_against_the_flat_extent(path: Any) -> None:
    k = pk.kernel(HELPER_ROWS, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(8), ndrange=16,
                  workgroupsize=8)[:1]
    sums = x.reshape(2, 8).sum(1).repeat(8)
    assert list(y) == list(8 + sums + 6 + 2 * x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(9), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("grid", 16, 16)
    assert err.work_item is not None and err.lineno == line_of(HELPER_ROWS, "s += a[j]")
    assert "@localmem array 'grid'" in str(err)


HELPER_PRIVATE_ROW = """
float total(const float* a, long n) {
    float s = 0.0f;
    for (long j = 0; j < n; j++) {
        s += a[j];
    }
    return s;
}
@kernel void helper_private_row(float* y, const float* x, const long n) {
    const long i = @index(Global, Linear);
    float acc[2][4];
    for (int c = 0; c < 4; c++) {
        acc[0][c] = x[i];
        acc[1][c] = c;
    }
    y[i] = total(acc[1] + 1, n);
}
"""


def test_a_helper_given_a_private_row_checks_it_against_the_flat_extent(path: Any) -> None:
    k = pk.kernel(HELPER_PRIVATE_ROW, debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(3), ndrange=8)[:1]
    assert list(y) == [6.0] * 8
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(4), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", 8, 8)
    assert err.lineno == line_of(HELPER_PRIVATE_ROW, "s += a[j]")
    assert "private array 'acc'" in str(err)


UNWRITTEN_ROW = """
@kernel void unwritten_row(float* y, const float* x) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float grid[2][8];
    float* row = grid[1];
    grid[0][l] = x[i];
    if (l < 7) {
        row[l] = x[i];
    }
    @synchronize();
    y[i] = row[7 - l];
}
"""


def test_a_read_through_a_row_pointer_is_initchecked(path: Any) -> None:
    k = pk.kernel(UNWRITTEN_ROW, debug=True)
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, ndrange=16, workgroupsize=8)
    err = info.value
    # grid[1][7] is flat element 15 of the 16.
    assert (err.parameter, err.index, err.extent) == ("grid", 15, 16)
    assert err.lineno == line_of(UNWRITTEN_ROW, "y[i] = row[7 - l]")
    assert "which no work-item of the group had written" in str(err)


def test_reads_through_a_row_pointer_of_written_elements_pass(path: Any) -> None:
    k = pk.kernel(UNWRITTEN_ROW.replace("l < 7", "l < 8"), debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, ndrange=16, workgroupsize=8)[:1]
    assert list(y) == list(x.reshape(2, 8)[:, ::-1].ravel())


RACE_ROW = """
@kernel void race_row(float* y, const float* x) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float grid[2][8];
    float* row = &grid[1][0];
    grid[0][l] = x[i];
    grid[1][l] = x[i];
    @synchronize();
    if (l == 0) {
        row[3] = 5.0f;
    }
    y[i] = grid[1][3];
}
"""


def test_a_write_through_a_row_pointer_is_racechecked(path: Any) -> None:
    k = pk.kernel(RACE_ROW, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8,
                 workgroupsize=8)
    err = info.value
    # grid[1][3] is flat element 11 of the 16, as the report of grid[1][3] names it.
    assert (err.parameter, err.index, err.extent) == ("grid", 11, 16)
    assert line_of(RACE_ROW, "row[3] = 5.0f") in (err.lineno, err.other_lineno)
    assert "race on element" in str(err)


CUBE = """
@kernel void cube_rows(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float cube[2][2][4];
    float* pair = &cube[l / 4][(l / 2) % 2][(l % 2) * 2];
    pair[0] = x[i];
    pair[1] = -x[i];
    @synchronize();
    const float* q = cube[1][1];
    const float* r = q + 1;
    y[i] = *r + r[2 * l - 13 + off];
}
"""


def test_a_view_of_a_row_of_a_three_dimensional_array(path: Any) -> None:
    k = pk.kernel(CUBE, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(0), ndrange=16,
                  workgroupsize=8)[:1]
    # *r is flat element 13, item 6's pair[1]; r[2l - 13] is item l's pair[0].
    assert list(y) == list(-x.reshape(2, 8)[:, 6].repeat(8) + x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(2), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("cube", 16, 16)
    assert err.work_item[0] % 8 == 7 and err.lineno == line_of(CUBE, "y[i] = *r")


ACROSS_ROWS = """
@kernel void across_rows(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float t[8];
    float acc[2][4];
    float* p = acc[1];
    for (int j = 0; j < 4; j++) {
        acc[0][j] = x[i];
        acc[1][j] = x[i] + j;
    }
    t[l] = acc[1][3];
    @synchronize();
    y[i] = p[off] + t[7 - l];
}
"""


def test_a_private_row_pointer_across_a_barrier(path: Any) -> None:
    k = pk.kernel(ACROSS_ROWS, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(2), ndrange=16,
                  workgroupsize=8)[:1]
    # Each work-item reads its own acc through p (on the native path too, where the
    # items of a group run one after another and acc must outlive the first loop).
    assert list(y) == list((x + 2) + x.reshape(2, 8)[:, ::-1].ravel() + 3)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(4), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", 8, 8)
    assert err.lineno == line_of(ACROSS_ROWS, "y[i] = p[off]")
