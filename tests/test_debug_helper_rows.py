"""Debug mode's initcheck and racecheck follow a row of a multi-dimensional ``@localmem``
array into a helper function (issue 28, docs/debugging.md).

A helper given ``grid[r]``, ``grid[r] + c`` or ``&grid[r][c]`` of ``@localmem float
grid[R][C]`` checks its accesses as the kernel body does through such a pointer: the
element is the flat offset into ``grid``, so a read of an unwritten element is an
initcheck fault and two work-items touching one element between the same two barriers
(one writing) are a race, each naming ``grid``, the flat element and the helper's line.
Each test runs on the CPU's native path, on PoCL, and on the CUDA and Metal stand-ins
(the ``path`` fixture, tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


UNWRITTEN_ROW = """
float total(const float* a, long n) {
    float s = 0.0f;
    for (long j = 0; j < n; j++) {
        s += a[j];
    }
    return s;
}
@kernel void helper_unwritten_row(float* y, const float* x, const long skip) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float grid[2][8];
    grid[0][l] = x[i];
    if (l != skip) {
        grid[1][l] = x[i];
    }
    @synchronize();
    y[i] = total(grid[1], 4) + total(&grid[0][4], 4);
}
"""


def test_a_helper_reading_an_unwritten_element_of_a_row_is_initchecked(path: Any) -> None:
    k = pk.kernel(UNWRITTEN_ROW, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(-1), ndrange=16,
                  workgroupsize=8)[:1]
    g = x.reshape(2, 8)
    assert list(y) == list((g[:, :4].sum(1) + g[:, 4:].sum(1)).repeat(8))
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(2), ndrange=16, workgroupsize=8)
    err = info.value
    # grid[1][2] is flat element 10 of the 16.
    assert (err.parameter, err.index, err.extent) == ("grid", 10, 16)
    assert err.lineno == line_of(UNWRITTEN_ROW, "s += a[j]")
    assert "which no work-item of the group had written" in str(err)


def _race(sync: str) -> str:
    return f"""
void put(float* t, long j, float v) {{
    t[j] = v;
}}
@kernel void helper_race_row(float* y, const float* x) {{
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float grid[2][8];
    put(&grid[1][0], l, x[i]);
    grid[0][l] = 0.0f;
    @synchronize();
    const float mine = grid[1][l];
    {sync}
    put(grid[1], (l + 1) % 8, mine);
    @synchronize();
    y[i] = grid[1][l];
}}
"""


def test_a_helper_writing_a_neighbours_slot_of_a_row_is_racechecked(path: Any) -> None:
    source = _race("")
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8,
                 workgroupsize=8)
    err = info.value
    assert err.parameter == "grid" and "race on element" in str(err)
    assert 8 <= err.index < 16 and err.extent == 16  # an element of row 1, flat
    assert line_of(source, "t[j] = v") in (err.lineno, err.other_lineno)


def test_the_row_helper_with_a_barrier_passes(path: Any) -> None:
    k = pk.kernel(_race("@synchronize();"), debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, ndrange=8, workgroupsize=8)[:1]
    assert list(y) == list(np.roll(x, 1))


def test_a_row_helper_out_of_the_array_is_still_a_bounds_fault(path: Any) -> None:
    k = pk.kernel(UNWRITTEN_ROW.replace("total(grid[1], 4)", "total(grid[1] + 4, 4 - 5 * skip)"),
                  debug=True)
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(-1), ndrange=16, workgroupsize=8)
    err = info.value  # grid[1] + 4 is flat element 12: its ninth element is past the end
    assert (err.parameter, err.index, err.extent, err.dimension) == ("grid", 16, 16, None)
    assert "through a pointer" in str(err)
