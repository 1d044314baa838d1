"""Launch handles and ``pk.timed()``: what each backend measures, and what it costs."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import portakern as pk
from portakern.backends.base import Backend

SAXPY = """
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}"""
SCALE = """
@kernel void scale(T* y, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * y[i];
}"""


@pytest.fixture
def arrays() -> tuple[np.ndarray, np.ndarray]:
    return np.ones(4096, np.float32), np.arange(4096, dtype=np.float32)


def test_untimed_launch_returns_one_reused_handle(arrays):
    y, x = arrays
    k = pk.kernel(SAXPY)
    first = k(y, x, 2.0, ndrange=y.shape)
    second = k(y, x, 2.0, ndrange=y.shape)
    assert isinstance(first, pk.Launch)
    assert first is second  # no allocation per launch when nothing is timed
    assert first.kernel == "saxpy" and first.backend == pk.CPU()
    assert first.elapsed is None and "not measured" in repr(first)
    assert first.wait() is first
    np.testing.assert_allclose(y, 4.0 * x + 1.0)


def test_launcher_form_and_empty_ndrange_return_handles(arrays):
    y, x = arrays
    launch = pk.kernel(SAXPY)(pk.CPU(), workgroupsize=64)
    assert isinstance(launch(y, x, 2.0, ndrange=y.shape), pk.Launch)
    assert isinstance(launch(y, x, 2.0, ndrange=0), pk.Launch)


def test_timed_collects_per_kernel_times_on_cpu(arrays):
    y, x = arrays
    saxpy, scale = pk.kernel(SAXPY), pk.kernel(SCALE)
    saxpy(y, x, 2.0, ndrange=y.shape)  # compiled outside the block
    scale(y, 1.0, ndrange=y.shape)
    with pk.timed() as t:
        handles = [saxpy(y, x, 2.0, ndrange=y.shape) for _ in range(3)]
        handles.append(pk.kernel(SCALE)(pk.CPU())(y, 0.5, ndrange=y.shape))
    assert len({id(h) for h in handles}) == 4  # timed launches get handles of their own
    assert all(h.elapsed is not None and h.elapsed > 0 for h in handles)
    per = t.per_kernel()
    assert set(per) == {"saxpy", "scale"}
    assert (per["saxpy"].launches, per["saxpy"].measured) == (3, 3)
    assert per["saxpy"].total == pytest.approx(sum(h.elapsed or 0 for h in handles[:3]))
    assert per["saxpy"].best == min(h.elapsed or 0 for h in handles[:3])
    assert t.total == pytest.approx(per["saxpy"].total + per["scale"].total)
    text = t.summary()
    assert text.splitlines()[0].split() == ["kernel", "backend", "launches", "total", "mean",
                                            "best"]
    assert any(line.split()[:3] == ["saxpy", "CPU()", "3"] for line in text.splitlines())
    assert text.splitlines()[-1].startswith("4 launches, ")
    # After the block, launches are untimed again.
    assert saxpy(y, x, 2.0, ndrange=y.shape).elapsed is None


def test_timed_blocks_nest_and_ignore_other_threads(arrays):
    y, x = arrays
    k = pk.kernel(SAXPY)
    k(y, x, 2.0, ndrange=y.shape)
    other_done = threading.Event()
    with pk.timed() as outer:
        k(y, x, 2.0, ndrange=y.shape)
        with pk.timed() as inner:
            k(y, x, 2.0, ndrange=y.shape)
        thread = threading.Thread(target=lambda: (k(y.copy(), x, 1.0, ndrange=y.shape),
                                                  other_done.set()))
        thread.start()
        thread.join()
    assert other_done.is_set()
    assert len(inner.launches) == 1 and len(outer.launches) == 2
    assert inner.launches[0] is outer.launches[1]


def test_opencl_queue_with_profiling_measures_events():
    cl = pytest.importorskip("pyopencl")
    cla = pytest.importorskip("pyopencl.array")
    status = pk.OpenCL.available()
    if not status:
        pytest.skip(status.reason)
    base = pk.OpenCL()
    profiled = cl.CommandQueue(base.context, base.device,
                               properties=cl.command_queue_properties.PROFILING_ENABLE)
    k = pk.kernel(SCALE)
    for queue, measured in ((profiled, True), (base.queue, False)):
        backend = pk.OpenCL(queue)
        y = cla.to_device(queue, np.ones(4096, np.float32))
        k(y, 2.0, ndrange=y.shape)
        with pk.timed() as t:
            handle = k(y, 2.0, ndrange=y.shape)
        assert handle.backend == backend
        if measured:
            assert handle.elapsed is not None and 0 < handle.elapsed < 10
        else:
            assert handle.elapsed is None
            assert "not measured on this backend" in t.summary()
        np.testing.assert_allclose(y.get(), 4.0)


@pytest.mark.gpu
def test_cuda_launch_is_timed_with_events():
    cp = pytest.importorskip("cupy")  # the real CuPy on a GPU, else the stand-in
    y = cp.asarray(np.ones(4096, np.float32))
    k = pk.kernel(SCALE)
    k(y, 2.0, ndrange=y.shape)
    with pk.timed() as t:
        handle = k(y, 2.0, ndrange=y.shape)
    assert handle.elapsed is not None and 0 < handle.elapsed < 10
    assert t.per_kernel()["scale"].measured == 1
    np.testing.assert_allclose(cp.asnumpy(y), 4.0)


def test_backend_contract_default_times_synchronous_backends_only():
    calls = []

    class Sync(Backend, abstract=True):
        synchronous = True

        def launch(self, *args: object) -> None:
            calls.append(args)

    class Async(Sync, abstract=True):
        synchronous = False

    seconds = Sync.timed_launch(object.__new__(Sync), "c", [], (1,), (1,))
    assert isinstance(seconds, float) and seconds >= 0
    assert Async.timed_launch(object.__new__(Async), "c", [], (1,), (1,)) is None
    assert len(calls) == 2  # launched either way
    assert "timed_launch" in __import__("portakern.backends.base", fromlist=["MAY"]).MAY
