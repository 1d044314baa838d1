"""``MLXCUDA`` refuses launches over CUDA's limits before MLX sees them, as ``pk.CUDA`` does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern.backends import base as backend_base
from portakern.backends.base import Availability
from portakern.backends.metal import MLXCUDA
from portakern.errors import NDRangeError

ADD2D = """
@kernel void add2d(float* y, const float* x) {
    auto [i, j] = @index(Global, NTuple);
    const long w = @ndrange(1);
    y[i * w + j] += x[i * w + j];
}
"""

ADD3D = """
@kernel void add3d(float* y, const float* x) {
    auto [i, j, k] = @index(Global, NTuple);
    const long w = @ndrange(2);
    const long h = @ndrange(1);
    y[(i * h + j) * w + k] += x[(i * h + j) * w + k];
}
"""


@pytest.fixture
def mx() -> Any:
    return pytest.importorskip("mlx.core")


@pytest.fixture
def launches(mx: Any, monkeypatch: pytest.MonkeyPatch) -> list:
    """MLXCUDA made available, with ``mx.fast.cuda_kernel`` recording each launch."""
    monkeypatch.setattr(MLXCUDA, "available", classmethod(lambda cls: Availability(True)))
    backend_base._AVAILABLE.discard(MLXCUDA)
    calls: list = []

    def factory(**made: Any) -> Any:
        def run(**call: Any) -> list:
            calls.append((made["name"], call))
            return [mx.zeros(shape, dtype=dt) for shape, dt in
                    zip(call["output_shapes"], call["output_dtypes"], strict=True)]
        return run

    monkeypatch.setattr(mx.fast, "cuda_kernel", factory, raising=False)
    yield calls
    backend_base._AVAILABLE.discard(MLXCUDA)


def test_limits_are_cuda_limits() -> None:
    assert MLXCUDA().max_workitem_sizes() == (1024, 1024, 64)
    assert MLXCUDA().max_workgroup_size(None) == 1024


def test_block_z_over_64_is_refused(mx: Any, launches: list) -> None:
    y, x = mx.zeros((128, 1, 1)), mx.zeros((128, 1, 1))
    with pytest.raises(NDRangeError, match="exceeds the device limit 64"):
        pk.kernel(ADD3D)(MLXCUDA())(y, x, ndrange=(128, 1, 1), workgroupsize=(128, 1, 1))
    assert launches == []


def test_block_over_1024_items_is_refused(mx: Any, launches: list) -> None:
    y, x = mx.zeros((4, 4096)), mx.zeros((4, 4096))
    with pytest.raises(NDRangeError, match="more than the 1024"):
        pk.kernel(ADD2D)(MLXCUDA())(y, x, ndrange=(4, 4096), workgroupsize=(2, 1024))
    assert launches == []


@pytest.mark.parametrize("ndrange, workgroupsize, axis", [
    ((200_000, 1), (1, 1), "y"),
    ((70_000, 1, 1), (1, 1, 1), "z"),
])
def test_grid_over_65535_blocks_along_y_or_z_is_refused(mx: Any, launches: list, ndrange,
                                                       workgroupsize, axis) -> None:
    source = ADD2D if len(ndrange) == 2 else ADD3D
    y, x = mx.zeros(ndrange), mx.zeros(ndrange)
    with pytest.raises(NDRangeError, match=f"hardware axis {axis}"):
        pk.kernel(source)(MLXCUDA())(y, x, ndrange=ndrange, workgroupsize=workgroupsize)
    assert launches == []
    assert np.array(y).sum() == 0


def test_launch_within_limits_reaches_mlx(mx: Any, launches: list) -> None:
    y, x = mx.zeros((300, 2)), mx.zeros((300, 2))
    pk.kernel(ADD2D)(MLXCUDA())(y, x, ndrange=(300, 2), workgroupsize=(1, 2))
    [call] = [call for name, call in launches if name.startswith("pk_add2d")]
    assert call["grid"] == (2, 300, 1) and call["threadgroup"] == (2, 1, 1)
