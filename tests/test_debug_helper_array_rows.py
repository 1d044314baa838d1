"""Debug mode checks pointers into the rows of a helper's arrays of arrays (issue 28,
docs/debugging.md).

Two kinds of array of arrays in a helper function, and the pointers into their rows:

* the helper's own multi-dimensional private array (``float acc[2][4];``): ``float* row =
  acc[r]; row[k]``, ``&acc[r][c]``, ``*(acc[r] + k)``, and such a row passed on to another
  helper are checked against the array's flat extent (8), as the kernel body checks a
  pointer into its own multi-dimensional arrays;
* a parameter declared as an array of arrays (``const float b[][4]``): ``b[r]`` used as a
  pointer (``row = b[r]; row[c]``, ``*(b[r] + c)``, ``*b``, ``b[r] + c`` and ``&b[r][c]``
  passed on) is checked against the flat extent of the array the caller passed.

A pointer into a row may run on into the next one (no fault) but not past the array's last
element: that raises :class:`pk.KernelFaultError` naming the array, the flat index, the
extent, the helper's line and the work-item. Each test runs on the CPU's native path, on
PoCL, and on the CUDA and Metal stand-ins (the ``path`` fixture, tests/conftest.py).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import portakern as pk


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


TOTAL = """
float total(const float* a, long n) {
    float s = 0.0f;
    for (long j = 0; j < n; j++) {
        s += a[j];
    }
    return s;
}
"""


def _own(body: str) -> str:
    return TOTAL + f"""
float own(float v, long r, long k) {{
    float acc[2][4];
    for (int a = 0; a < 2; a++) {{
        for (int b = 0; b < 4; b++) {{
            acc[a][b] = v + 10 * a + b;
        }}
    }}
    {body}
}}
@kernel void own_rows(float* y, const float* x, const long r, const long k) {{
    const long i = @index(Global, Linear);
    y[i] = own(x[i], r, k);
}}
"""


def _acc(v: np.ndarray, f: int) -> np.ndarray:
    """Element ``f`` (flat) of ``own``'s ``acc`` for each value ``v``."""
    return v + 10 * (f // 4) + f % 4


#: (name, body of ``own``, the line that faults, its value for (r, k), the faulting (r, k)).
OWN = [
    ("view", "float* row = acc[r];\n    return row[k];", "return row[k]",
     lambda v, r, k: _acc(v, 4 * r + k), (1, 4)),
    ("view write", "float* row = acc[r];\n    row[k] = -v;\n    return acc[1][1];",
     "row[k] = -v", lambda v, r, k: -v if 4 * r + k == 5 else _acc(v, 5), (1, 4)),
    ("address view", "const float* p = &acc[r][1];\n    return p[k];", "return p[k]",
     lambda v, r, k: _acc(v, 4 * r + 1 + k), (1, 3)),
    ("deref sum", "return *(acc[r] + k);", "return *(acc[r] + k)",
     lambda v, r, k: _acc(v, 4 * r + k), (1, 4)),
    ("deref view", "const float* q = acc[r] + k;\n    return *q;", "return *q",
     lambda v, r, k: _acc(v, 4 * r + k), (1, 4)),
    ("row passed on", "return total(acc[r], k + 1);", "s += a[j]",
     lambda v, r, k: sum(_acc(v, f) for f in range(4 * r, 4 * r + k + 1)), (1, 4)),
    ("view passed on", "float* row = acc[r];\n    return total(row + 1, k);", "s += a[j]",
     lambda v, r, k: sum(_acc(v, f) for f in range(4 * r + 1, 4 * r + 1 + k)), (1, 4)),
    ("address passed on", "return total(&acc[r][1], k);", "s += a[j]",
     lambda v, r, k: sum(_acc(v, f) for f in range(4 * r + 1, 4 * r + 1 + k)), (1, 4)),
]


@pytest.mark.parametrize("name, body, marker, value, fault", OWN, ids=[o[0] for o in OWN])
def test_a_pointer_into_a_helpers_own_two_dimensional_array(
        path: Any, name: str, body: str, marker: str, value: Any, fault: tuple) -> None:
    source = _own(body)
    k = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32)
    # r = 0, k = 5: the pointers run from row 0 into row 1, inside the array: no fault.
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(0), np.int64(5), ndrange=8)[:1]
    assert np.allclose(y, value(x, 0, 5))
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, *(np.int64(a) for a in fault), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == ("acc", 8, 8, None)
    assert err.lineno == line_of(source, marker) and err.work_item is not None
    assert "private array 'acc'" in str(err) and "in helper 'own'" in str(err)


def test_a_pointer_before_a_helpers_own_array_is_a_fault(path: Any) -> None:
    source = _own("float* row = acc[r];\n    return row[k];")
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.ones(8, np.float32), np.int64(0),
                 np.int64(-1), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", -1, 8)
    assert err.lineno == line_of(source, "return row[k]")


def _param(body: str, declare: str = "@localmem float", skip: bool = False) -> str:
    sync = "@synchronize();" if declare.startswith("@localmem") else ""
    fill = ("if (l != skip) {\n        g[l / 4][l % 4] = x[i];\n    }" if skip
            else "g[l / 4][l % 4] = x[i];")
    if not declare.startswith("@localmem"):  # each work-item's own copy of the group's x
        fill = "for (int e = 0; e < 8; e++) {\n        g[e / 4][e % 4] = x[e];\n    }"
    return TOTAL + f"""
float from_rows(const float b[][4], long r, long c, long n) {{
    {body}
}}
@kernel void param_rows(float* y, const float* x, const long r, const long c, const long n,
                        const long skip) {{
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    {declare} g[2][4];
    {fill}
    {sync}
    y[i] = from_rows(g, r, c, n);
}}
"""


#: (name, body of ``from_rows``, the line that faults, its value for (r, c, n) from the
#: flat ``g``, the faulting (r, c, n)): each faults at flat element 8. With (0, 5, 3) each
#: pointer into row 0 runs on into row 1, inside ``g``: no fault.
PARAM = [
    ("view", "const float* row = b[r];\n    return row[c];", "return row[c]",
     lambda g, r, c, n: g[4 * r + c], (1, 4, 0)),
    ("deref sum", "return *(b[r] + c);", "return *(b[r] + c)", lambda g, r, c, n: g[4 * r + c],
     (1, 4, 0)),
    ("deref view", "const float* row = b[r] + c;\n    return *row;", "return *row",
     lambda g, r, c, n: g[4 * r + c], (1, 4, 0)),
    ("address view", "const float* row = &b[r][1];\n    return row[c];", "return row[c]",
     lambda g, r, c, n: g[4 * r + 1 + c], (1, 3, 0)),
    ("row sum passed on", "return total(b[r] + c, n);", "s += a[j]",
     lambda g, r, c, n: g[4 * r + c:4 * r + c + n].sum(), (1, 3, 2)),
    ("address passed on", "return total(&b[r][c], n);", "s += a[j]",
     lambda g, r, c, n: g[4 * r + c:4 * r + c + n].sum(), (1, 3, 2)),
    ("first row passed on", "return total(*b, n);", "s += a[j]", lambda g, r, c, n: g[:n].sum(),
     (0, 0, 9)),
    ("view passed on", "const float* row = b[r];\n    return total(row, 4 * r + n);",
     "s += a[j]", lambda g, r, c, n: g[4 * r:8 * r + n].sum(), (1, 0, 1)),
]


@pytest.mark.parametrize("name, body, marker, value, fault", PARAM, ids=[p[0] for p in PARAM])
def test_a_row_of_an_array_of_arrays_parameter(path: Any, name: str, body: str, marker: str,
                                               value: Any, fault: tuple) -> None:
    source = _param(body)
    k = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32) + 1
    args = (np.zeros(8, np.float32), x)
    y, = path.run(k, *args, np.int64(0), np.int64(5), np.int64(3), np.int64(-1), ndrange=8,
                  workgroupsize=8)[:1]
    assert np.allclose(y, value(x, 0, 5, 3))
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, *args, *(np.int64(a) for a in fault), np.int64(-1), ndrange=8,
                 workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == ("g", 8, 8, None)
    assert err.lineno == line_of(source, marker) and err.work_item is not None
    assert "@localmem array 'g'" in str(err)


def test_a_row_of_a_parameter_given_a_private_array(path: Any) -> None:
    source = _param("const float* row = b[r];\n    return row[c];", declare="float")
    k = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32) + 1
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(0), np.int64(6), np.int64(0),
                  np.int64(-1), ndrange=8)[:1]
    assert list(y) == [x[6]] * 8
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(1), np.int64(4), np.int64(0),
                 np.int64(-1), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("g", 8, 8)
    assert err.lineno == line_of(source, "return row[c]")
    assert "private array 'g'" in str(err)


def test_a_row_of_a_parameter_is_initchecked(path: Any) -> None:
    source = _param("const float* row = b[r];\n    return row[c];", skip=True)
    k = pk.kernel(source, debug=True)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:  # g[1][2] (flat 6) was not written
        path.run(k, np.zeros(8, np.float32), x, np.int64(1), np.int64(2), np.int64(0),
                 np.int64(6), ndrange=8, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("g", 6, 8)
    assert "which no work-item of the group had written" in str(err)
    assert err.lineno == line_of(source, "return row[c]")


def test_rows_in_helpers_render_unchanged_without_debug_mode() -> None:
    own = _own("float* row = acc[r];\n    return row[k] + *(acc[r] + k) + total(acc[r], k);")
    param = _param("const float* row = b[r];\n    return row[c] + total(*b, n);")
    for target in ("c", "opencl", "cuda", "metal"):
        # OpenCL names its copy of total for private pointers total_pk_p.
        assert re.search(r"return row\[k\] \+ \*\(acc\[r\] \+ k\) \+ total\w*\(acc\[r\], "
                         r"k\);", pk.kernel(own).render(target))
        assert re.search(r"return row\[c\] \+ total\w*\(\*b, n\);",
                         pk.kernel(param).render(target))
        assert "return row[k]" not in pk.kernel(own, debug=True).render(target)
        assert "return row[c]" not in pk.kernel(param, debug=True).render(target)


RACE = """
void put(float b[][4], long r, long c, float v) {
    float* row = b[r];
    row[c] = v;
}
@kernel void race_rows(float* y, const float* x, const long pair) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float g[2][4];
    put(g, 0, pair ? l / 2 : l, x[i]);
    @synchronize();
    y[i] = g[l / 4][l % 4];
}
"""


def test_a_write_through_a_row_of_a_parameter_is_racechecked(path: Any) -> None:
    k = pk.kernel(RACE, debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8, workgroupsize=8)[:1]
    assert list(y) == list(x)
    with pytest.raises(pk.KernelFaultError) as info:  # work-items 2m and 2m + 1 write g[0][m]
        path.run(k, np.zeros(8, np.float32), x, np.int64(1), ndrange=8, workgroupsize=8)
    err = info.value
    assert err.parameter == "g" and "race on element" in str(err)
    assert 0 <= err.index < 4 and err.extent == 8
    assert err.lineno == line_of(RACE, "row[c] = v")
