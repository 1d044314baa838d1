"""portakern.launch.launcher: the warm path answers exactly as a first launch would."""
from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.backends.native import NativeCPU
from portakern.errors import NDRangeError, PortakernError

pytestmark = pytest.mark.skipif(
    not NativeCPU.available(), reason=f"no native CPU path here: {NativeCPU.available().reason}")

SAXPY = """
@kernel void warm_saxpy(float* y, const float* x, float a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""


def _warmed(direct: bool):
    """A kernel and a call that has run three times with the same arrays (prepared)."""
    kernel = pk.kernel(SAXPY)
    launcher = kernel(pk.CPU())
    y, x, a = np.zeros(64, np.float32), np.arange(64, dtype=np.float32), np.float32(2)

    def call(*args, **kw):
        return kernel(*args, **kw) if direct else launcher(*args, **kw)

    for _ in range(3):
        call(y, x, a, ndrange=(64,))
    np.testing.assert_array_equal(y, 3 * 2 * x)
    return call, y, x, a


@pytest.mark.parametrize("direct", [False, True])
def test_warm_launches_follow_new_arrays_scalars_and_ndranges(direct):
    call, y, x, a = _warmed(direct)
    y2 = np.ones(64, np.float32)
    call(y2, x, a, ndrange=(64,))
    np.testing.assert_array_equal(y2, 2 * x + 1)
    call(y, x, np.float32(-1), ndrange=(64,))
    np.testing.assert_array_equal(y, 6 * x - x)
    before = y.copy()
    call(y, x, a, ndrange=(10,))
    np.testing.assert_array_equal(y[:10], before[:10] + 2 * x[:10])
    np.testing.assert_array_equal(y[10:], before[10:])


@pytest.mark.parametrize("direct", [False, True])
def test_warm_launches_refuse_what_a_first_launch_refuses(direct):
    call, y, x, a = _warmed(direct)
    before = y.copy()
    with pytest.raises(NDRangeError, match=r"ndrange\[0\] must be an int"):
        call(y, x, a, ndrange=(64.0,))
    y.flags.writeable = False
    with pytest.raises(PortakernError, match="y"):
        call(y, x, a, ndrange=(64,))
    y.flags.writeable = True
    y.dtype = np.int32  # the same memory, another element type
    with pytest.raises(PortakernError, match="float32"):
        call(y, x, a, ndrange=(64,))
    y.dtype = np.float32
    np.testing.assert_array_equal(y, before)  # nothing ran
    call(y, x, a, ndrange=(64,))
    np.testing.assert_array_equal(y, before + 2 * x)
