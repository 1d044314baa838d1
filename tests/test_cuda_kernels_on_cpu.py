"""The kernels tests/test_cuda.py launches on a GPU, run on the CPU backends here.

A kernel that is wrong on every target (not only on a GPU) shows up without one.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_cuda import MATMUL_TILED

import portakern as pk


@pytest.mark.parametrize("shape", [(100, 37, 65), (32, 16, 48)], ids=["partial", "exact"])
def test_tiled_matmul_of_the_gpu_tests_is_right_with_partial_groups(backend, shape):
    # Work-items of a partial last group must still load their tile elements:
    # the kernel needs @kernel(unsafe_indices) and a guarded final store.
    if backend.target not in ("opencl", "c"):
        pytest.skip("the GPU tests run it on the GPU")
    rng = np.random.default_rng(4)
    n, m, p = shape
    a, b = rng.random((n, m), np.float32), rng.random((m, p), np.float32)
    c = backend.zeros((n, p), np.float32)
    kernel = pk.kernel(MATMUL_TILED, TILE=16)
    kernel(backend, workgroupsize=(16, 16))(c, backend.to_device(a), backend.to_device(b),
                                            n, m, p, ndrange=(n, p))
    backend.synchronize()
    np.testing.assert_allclose(backend.to_host(c), a @ b, rtol=1e-5)
