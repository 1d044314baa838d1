"""The lockstep lowering runs a run's trailing strided loop interchanged (issue 27)."""

import numpy as np

import portakern as pk
from portakern.backends.opencl import CPU

_SRC = """
@kernel(workgroupsize=64, unsafe_indices) void rowsum(float* out, const float* x, long n) {
    const long row = @index(Group, Linear) * n;
    const long l = @index(Local, Linear);
    float acc = 0.0f;
    for (long j = l; j < n; j += 64) {
        acc += x[row + j]%s;
    }
    const float total = @groupreduce(add, acc);
    for (long j = l; j < n; j += 64) {
        out[row + j] = x[row + j] - total / (float)n;
    }
}
"""


def test_strided_loop_is_interchanged_and_agrees_with_numpy():
    k = pk.kernel(_SRC % "")
    assert k.render("c").count("for (long long pk_b = 0;") == 2
    x = np.random.default_rng(1).standard_normal((5, 301)).astype(np.float32)
    out = np.zeros_like(x)
    k(CPU(), 64)(out, x, np.int64(301), ndrange=5 * 64)
    np.testing.assert_allclose(out, x - x.mean(axis=1, keepdims=True), rtol=1e-4, atol=1e-5)


def test_a_loop_with_break_keeps_its_order():
    k = pk.kernel(_SRC % ";\n        if (acc > 1e30f) break")
    assert k.render("c").count("for (long long pk_b = 0;") == 1  # only the second loop
