"""Debug mode checks the subscripts of private arrays a helper function declares (issue 28,
docs/debugging.md).

``float acc[4];`` in a helper's body, declared once with a constant size, is checked as the
kernel body's private arrays are: an out-of-bounds subscript raises
:class:`pk.KernelFaultError` naming the array, the index, the extent, the dimension, the
helper's line and the work-item, and the access goes to element 0 of that dimension. Each
test runs on the CPU's native path, on PoCL, and on the CUDA and Metal stand-ins.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import portakern as pk


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


HELPER_PRIVATE = """
float spread(float v, long k) {
    float acc[4];
    for (int j = 0; j < 4; j++) {
        acc[j] = v * j;
    }
    return acc[k];
}
float grid_at(float v, long r, long c) {
    float g[2][3];
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 3; b++) {
            g[a][b] = v + 10 * a + b;
        }
    }
    return g[r][c];
}
@kernel void helper_private(float* y, const float* x, const long k, const long c) {
    const long i = @index(Global, Linear);
    y[i] = spread(x[i], k) + grid_at(x[i], 1, c);
}
"""


def test_a_helpers_private_array_is_checked(path: Any) -> None:
    k = pk.kernel(HELPER_PRIVATE, debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(3), np.int64(2), ndrange=8)[:1]
    assert list(y) == list(3 * x + x + 12)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(4), np.int64(0), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == ("acc", 4, 4, 0)
    assert err.lineno == line_of(HELPER_PRIVATE, "return acc[k]")
    assert err.work_item is not None and "private array 'acc'" in str(err)


def test_a_helpers_two_dimensional_private_array_is_checked_per_dimension(path: Any) -> None:
    k = pk.kernel(HELPER_PRIVATE, debug=True)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(0), np.int64(3), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == ("g", 3, 3, 1)
    assert err.lineno == line_of(HELPER_PRIVATE, "return g[r][c]")


def test_a_helper_with_a_private_array_takes_the_hidden_parameters() -> None:
    for target in ("c", "opencl", "cuda", "metal"):
        text = pk.kernel(HELPER_PRIVATE, debug=True).render(target)
        assert re.search(r"= spread\(.*, k, pk_dbg, ", text)  # the call passes the record
        assert "acc[pk_dbg ? " in text and "return acc[k];" not in text
        plain = pk.kernel(HELPER_PRIVATE).render(target)
        assert "pk_dbg" not in plain and "return acc[k];" in plain


METHOD = """
float spread(float v, long k) {
    float acc[4];
    for (int j = 0; j < 4; j++) {
        acc[j] = v * j;
    }
    return acc[k];
}
struct Acc {
    float s;
    float add(float v, long k) {
        s += spread(v, k);
        return s;
    }
};
@kernel void method_private(float* y, const float* x, const long k) {
    const long i = @index(Global, Linear);
    Acc a;
    a.s = 1.0f;
    y[i] = a.add(x[i], k) + spread(x[i], k);
}
"""


def test_a_helper_with_a_private_array_called_from_a_method(path: Any) -> None:
    """The method has no fault record to pass: the helper's checks are skipped there, and
    the build and the results are as without debug mode."""
    if path.where == "pocl":
        pytest.skip("OpenCL C has no struct methods")
    k = pk.kernel(METHOD, debug=True)
    x = np.arange(4, dtype=np.float32)
    y, = path.run(k, np.zeros(4, np.float32), x, np.int64(2), ndrange=4)[:1]
    assert list(y) == list(1 + 4 * x)
    text = k.render("c")
    assert "acc[pk_dbg ? " in text  # a null record (the method's call) skips the check
