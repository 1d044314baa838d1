"""The hot launch path (DESIGN section 4: a warm ``CPU()`` launch under 3 us).

A launcher that ran the same arrays twice keeps one closure that checks a call by
identity and launches the prepared argument block. These tests check that the
warm calls really take it (the argument recall is never reached), and that
anything a first launch would see differently goes the long way: each result is
compared with a NumPy model.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import portakern as pk
import portakern.launch.launcher
from portakern.backends.native import NativeCPU
from portakern.errors import NDRangeError, PortakernError

pytestmark = pytest.mark.skipif(
    not NativeCPU.available(), reason=f"no native CPU path here: {NativeCPU.available().reason}")


@pytest.fixture(autouse=True)
def _native_path(monkeypatch):
    """These tests are about CPU()'s native path, whatever PORTAKERN_CPU a run sets."""
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)

AXPY = """
@kernel void hot_axpy(float* y, const float* x, float a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""
FILL = """
@kernel void hot_fill(T* y, T a) {
    const long i = @index(Global, Linear);
    y[i] = a;
}
"""


def _no_recall(monkeypatch):
    """Make the argument recall fail loudly: a hot launch must not need it."""
    def refuse(*args, **kw):
        raise AssertionError("the warm launch recalled its arguments")

    monkeypatch.setattr(portakern.launch.launcher, "recall", refuse)


@pytest.mark.parametrize("direct", [False, True])
@pytest.mark.parametrize("ndrange", [(64,), 64])
def test_warm_calls_take_the_hot_path(monkeypatch, direct, ndrange):
    kernel = pk.kernel(AXPY)
    launch = kernel if direct else kernel(pk.CPU())
    y, x, a = np.zeros(64, np.float32), np.arange(64, dtype=np.float32), 0.5
    for _ in range(3):
        launch(y, x, a, ndrange=ndrange)
    _no_recall(monkeypatch)
    for _ in range(5):
        handle = launch(y, x, a, ndrange=ndrange)
    assert isinstance(handle, pk.Launch) and handle.elapsed is None
    np.testing.assert_array_equal(y, 8 * np.float32(0.5) * x)


def _warm_fill(dtype=np.float32):
    launch = pk.kernel(FILL)(pk.CPU())
    y = np.full(16, 7, dtype)
    a = dtype(3)
    for _ in range(3):
        launch(y, a, ndrange=y.shape)
    np.testing.assert_array_equal(y, np.full(16, 3, dtype))
    return launch, y, a


def test_a_scalar_of_another_object_is_converted_again():
    launch, y, a = _warm_fill()
    # Equal by ==, different bits: the hot path compares objects, never values.
    launch(y, np.float32(-0.0), ndrange=y.shape)
    assert np.all(np.signbit(y))
    launch(y, 0.0, ndrange=y.shape)
    assert not np.any(np.signbit(y))
    for k in range(4):  # a new Python float each call
        launch(y, float(k) + 0.25, ndrange=y.shape)
        np.testing.assert_array_equal(y, np.full(16, k + 0.25, np.float32))
    launch(y, a, ndrange=y.shape)
    np.testing.assert_array_equal(y, np.full(16, 3, np.float32))


def test_an_array_changed_in_place_is_checked_again():
    launch, y, a = _warm_fill()
    y.shape = (4, 4)  # same memory, another shape: launches as a first launch would
    launch(y, np.float32(5), ndrange=(16,))
    np.testing.assert_array_equal(y, np.full((4, 4), 5, np.float32))
    y.shape = (16,)
    y.flags.writeable = False
    with pytest.raises(PortakernError, match="read-only"):
        launch(y, a, ndrange=y.shape)
    y.flags.writeable = True
    y.dtype = np.int32
    with pytest.raises(PortakernError, match="T is already|float32|int32"):
        launch(y, a, ndrange=y.shape)
    y.dtype = np.float32
    launch(y, a, ndrange=y.shape)
    np.testing.assert_array_equal(y, np.full(16, 3, np.float32))


def test_a_new_array_where_a_dead_one_was_is_launched_on():
    launch, y, a = _warm_fill()
    for k in range(6):  # new arrays, often at the address of the one just freed
        y = np.full(16, -1, np.float32)
        launch(y, a, ndrange=y.shape)
        launch(y, a, ndrange=y.shape)
        np.testing.assert_array_equal(y, np.full(16, 3, np.float32), err_msg=str(k))


def test_what_a_first_launch_refuses_is_refused_when_warm():
    launch, y, a = _warm_fill()
    before = y.copy()
    for bad in ((16.0,), (True,) * 1, np.float64(16), [16.5]):
        with pytest.raises(NDRangeError):
            launch(y, a, ndrange=bad)
    with pytest.raises(PortakernError):
        launch(y, a, a, ndrange=y.shape)  # one argument too many
    with pytest.raises(PortakernError):
        launch(y, ndrange=y.shape)
    with pytest.raises(PortakernError, match="overflows"):
        launch(y, 1e39, ndrange=y.shape)
    np.testing.assert_array_equal(y, before)  # nothing ran


def test_other_sizes_after_a_hot_launch_run_as_asked():
    launch, y, a = _warm_fill()
    launch(y, np.float32(1), ndrange=(8,))
    np.testing.assert_array_equal(y, np.r_[np.ones(8), np.full(8, 3)].astype(np.float32))
    launch(y, a, ndrange=np.int64(16))  # a NumPy integer: normalised, then run
    np.testing.assert_array_equal(y, np.full(16, 3, np.float32))
    launch(y, np.float32(2), ndrange=y.shape, workgroupsize=4)
    np.testing.assert_array_equal(y, np.full(16, 2, np.float32))


def test_a_timed_block_times_a_warm_launch():
    launch, y, a = _warm_fill()
    with pk.timed() as t:
        handle = launch(y, a, ndrange=y.shape)
    assert handle.elapsed is not None and handle.elapsed > 0
    assert len(t.launches) == 1
    assert launch(y, a, ndrange=y.shape).elapsed is None


def test_threads_sharing_a_warm_launcher_each_get_their_arrays():
    launch = pk.kernel(AXPY)(pk.CPU())
    x = np.arange(256, dtype=np.float32)
    outs = [np.zeros(256, np.float32) for _ in range(4)]
    errors: list = []

    def work(y: np.ndarray, a: float) -> None:
        try:
            for _ in range(50):
                launch(y, x, a, ndrange=y.shape)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(y, float(k + 1)))
               for k, y in enumerate(outs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    for k, y in enumerate(outs):
        np.testing.assert_array_equal(y, 50 * np.float32(k + 1) * x)
