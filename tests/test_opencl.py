"""The OpenCL backends: ``CPU()`` on NumPy arrays and ``OpenCL(queue)`` on PyOpenCL arrays.

``CPU()`` is synchronous and zero-copy; ``OpenCL(queue)`` launches asynchronously on
the arrays' own queue. Both run on PoCL here.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import portakern as pk
from portakern.errors import BackendMismatchError, KernelArgumentError

cl = pytest.importorskip("pyopencl")
cla = pytest.importorskip("pyopencl.array")

pytestmark = pytest.mark.skipif(not pk.CPU.available(),
                                reason=f"no CPU OpenCL device: {pk.CPU.available().reason}")

SAXPY = """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

TRANSPOSE = """\
@kernel void transpose(T* out, const T* in) {
    auto [i, j] = @index(Global, NTuple);
    out[j * @ndrange(0) + i] = in[i * @ndrange(1) + j];
}
"""


@pytest.fixture(scope="module")
def queue():
    from portakern.backends.cl_devices import find_cpu_device as _find_cpu_device

    return cl.CommandQueue(cl.Context([_find_cpu_device(cl)]))


@pytest.fixture(scope="module")
def ocl(queue):
    return pk.OpenCL(queue)


# -- OpenCL(queue) ---------------------------------------------------------------------------


def test_opencl_arrays_run_on_their_queue(queue, ocl):
    k = pk.kernel(SAXPY)
    x_h = np.arange(1000, dtype=np.float32)
    y = cla.to_device(queue, np.ones(1000, np.float32))
    x = cla.to_device(queue, x_h)
    k(y, x, 2.0, ndrange=y.shape)
    np.testing.assert_allclose(y.get(), 2 * x_h + 1)
    backend = pk.get_backend(y)
    assert isinstance(backend, pk.OpenCL) and backend.queue == queue
    assert backend == ocl and hash(backend) == hash(ocl)
    assert backend.target == "opencl" and backend.name == "OpenCL"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize("shape, wg", [((7, 13), (2, 4)), ((16, 16), None), ((1, 5), (1, 8))])
def test_opencl_2d_transpose(queue, dtype, shape, wg):
    a = (np.arange(np.prod(shape)) % 200).astype(dtype).reshape(shape)
    out = cla.zeros(queue, shape[::-1], dtype)
    pk.kernel(TRANSPOSE)(out, cla.to_device(queue, a), ndrange=shape, workgroupsize=wg)
    np.testing.assert_array_equal(out.get(), a.T)


def test_opencl_launch_is_asynchronous(queue, ocl):
    # Block the in-order queue on a user event: the launch must still return at
    # once, and the result appears only after the event fires and we synchronize.
    k = pk.kernel(SAXPY)
    y = cla.to_device(queue, np.zeros(64, np.float32))
    x = cla.to_device(queue, np.ones(64, np.float32))
    queue.finish()
    gate = cl.UserEvent(queue.context)
    cl.enqueue_marker(queue, wait_for=[gate])
    done = threading.Event()

    def launch():
        k(ocl, workgroupsize=16)(y, x, 5.0, ndrange=64)
        done.set()

    t = threading.Thread(target=launch, daemon=True)
    t.start()
    try:
        assert done.wait(timeout=240), "the launch waited for the queue"
        host = np.empty(64, np.float32)
        # A non-blocking read queued behind the kernel is not done yet either.
        evt = cl.enqueue_copy(queue, host, y.data, is_blocking=False)
        assert evt.command_execution_status != cl.command_execution_status.COMPLETE
    finally:
        gate.set_status(cl.command_execution_status.COMPLETE)
    ocl.synchronize()
    evt.wait()
    np.testing.assert_array_equal(host, 5)
    np.testing.assert_array_equal(y.get(), 5)


def test_opencl_backend_helpers(ocl):
    a = ocl.allocate((3, 4), np.float32)
    assert isinstance(a, cla.Array) and a.shape == (3, 4) and a.dtype == np.float32
    z = ocl.zeros((5,), np.int32)
    np.testing.assert_array_equal(ocl.to_host(z), 0)
    host = np.arange(6, dtype=np.float64).reshape(2, 3)[:, ::-1]
    d = ocl.to_device(host)
    back = ocl.to_host(d)
    np.testing.assert_array_equal(back, host)
    assert isinstance(back, np.ndarray)
    assert pk.OpenCL.available()
    assert "OpenCL(device=" in repr(ocl)


def test_opencl_views_and_strides_are_rejected(queue):
    k = pk.kernel(SAXPY)
    y = cla.to_device(queue, np.zeros(8, np.float32))
    big = cla.to_device(queue, np.ones(16, np.float32))
    before = y.get()
    with pytest.raises(KernelArgumentError, match="argument 1 'x'.*offset"):
        k(y, big[8:], 1.0, ndrange=8)
    with pytest.raises(KernelArgumentError, match="argument 1 'x'.*C-contiguous"):
        k(y, big[::2], 1.0, ndrange=8)
    np.testing.assert_array_equal(y.get(), before)


def test_opencl_array_from_another_context(queue, ocl):
    from portakern.backends.cl_devices import find_cpu_device as _find_cpu_device

    other_q = cl.CommandQueue(cl.Context([_find_cpu_device(cl)]))
    y = cla.to_device(queue, np.zeros(8, np.float32))
    x = cla.to_device(other_q, np.ones(8, np.float32))
    with pytest.raises(BackendMismatchError, match="argument 1 'x'"):
        pk.kernel(SAXPY)(ocl)(y, x, 1.0, ndrange=8)
    # Each queue is its own backend; each compiles for its own context.
    k = pk.kernel(SAXPY)
    k(x, cla.to_device(other_q, np.ones(8, np.float32)), 1.0, ndrange=8)
    np.testing.assert_array_equal(x.get(), 2)
    assert pk.get_backend(x) != ocl


def test_opencl_programs_are_cached(queue, ocl, monkeypatch):
    k = pk.kernel(SAXPY)
    calls = []
    original = type(ocl).compile

    def counting(self, rendered):
        calls.append(rendered.name)
        return original(self, rendered)

    monkeypatch.setattr(type(ocl), "compile", counting)
    y = cla.to_device(queue, np.zeros(32, np.float32))
    x = cla.to_device(queue, np.ones(32, np.float32))
    for step in range(5):
        k(y, x, float(step), ndrange=32, workgroupsize=8)
    assert len(calls) == 1
    np.testing.assert_array_equal(y.get(), 0 + 1 + 2 + 3 + 4)
    k(y.astype(np.float64), x.astype(np.float64), 1.0, ndrange=32, workgroupsize=8)
    assert len(calls) == 2  # a new binding of T is a new variant


def test_opencl_zero_size_and_zero_axis(queue):
    src = "@kernel void f(int* y) { y[0] += 1; }"
    y = cla.to_device(queue, np.zeros(1, np.int32))
    pk.kernel(src)(y, ndrange=(0,))
    pk.kernel(src)(y, ndrange=(4, 0))
    assert y.get()[0] == 0
    pk.kernel(src)(y, ndrange=())
    assert y.get()[0] == 1


# -- CPU() -------------------------------------------------------------------------------------


def test_cpu_backend_is_shared_and_synchronous():
    a, b = pk.CPU(), pk.CPU()
    assert a == b and hash(a) == hash(b)
    assert a.name == "CPU" and a.target == "opencl" and a.synchronous
    assert repr(a) == "CPU()"
    assert pk.get_backend(np.zeros(3)) == a
    assert pk.CPU.available()


def test_cpu_helpers_copy():
    backend = pk.CPU()
    host = np.arange(6.0).reshape(2, 3)[:, ::-1]
    d = backend.to_device(host)
    assert d.flags.c_contiguous and d is not host
    np.testing.assert_array_equal(d, host)
    h = backend.to_host(d)
    h[0, 0] = -1
    assert d[0, 0] != -1
    assert backend.allocate((2, 2), np.int8).dtype == np.int8
    np.testing.assert_array_equal(backend.zeros(3, np.float32), 0)


def test_cpu_writes_land_in_the_callers_array():
    # Zero-copy: the very array object passed in holds the result (no copy back
    # to a new array), views included as long as they are contiguous.
    k = pk.kernel(SAXPY)
    base = np.zeros(20, np.float32)
    view = base[5:15]
    k(view, np.ones(10, np.float32), 1.0, ndrange=10)
    np.testing.assert_array_equal(base, np.r_[np.zeros(5), np.ones(10), np.zeros(5)])


def test_cpu_default_workgroup_for_awkward_sizes():
    k = pk.kernel(SAXPY)
    for n in (1, 2, 3, 97, 1000, 4099):
        y = np.zeros(n, np.float32)
        x = np.arange(n, dtype=np.float32)
        k(y, x, 1.0, ndrange=n)
        np.testing.assert_array_equal(y, x)


def test_cpu_3d_default_workgroup():
    src = """
    @kernel void f(T* out, const T* a) {
        auto [i, j, k] = @index(Global, NTuple);
        const long o = (i * @ndrange(1) + j) * @ndrange(2) + k;
        out[o] = a[o] * 2 + (T)k;
    }"""
    a = np.arange(3 * 5 * 7, dtype=np.int32).reshape(3, 5, 7)
    out = np.zeros_like(a)
    pk.kernel(src)(out, a, ndrange=a.shape)
    np.testing.assert_array_equal(out, a * 2 + np.arange(7))


def test_int64_sizes_beyond_int32_are_passed_as_long():
    src = "@kernel void f(long* y, long big) { y[@index(Global, Linear)] = big + @ndrange(0); }"
    y = np.zeros(3, np.int64)
    pk.kernel(src)(y, 2**40, ndrange=3)
    np.testing.assert_array_equal(y, 2**40 + 3)


def test_cpu_resolution_imports_no_gpu_library():
    # get_backend on a NumPy array, and a launch on it, must not import an array
    # library the caller did not import (array-api-compat's sys.modules technique).
    import subprocess
    import sys

    script = """
import sys
import numpy as np
import portakern
backend = portakern.get_backend(np.zeros(3))
assert backend == portakern.CPU(), backend
y = np.zeros(4, np.float32)
portakern.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = 1; }")(y, ndrange=4)
assert (y == 1).all()
heavy = sorted(m for m in sys.modules
               if m.split(".")[0] in ("cupy", "cupyx", "mlx", "torch", "jax", "tensorflow"))
print("IMPORTED:" + ",".join(heavy))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(s for s in proc.stdout.splitlines() if s.startswith("IMPORTED:"))
    assert line == "IMPORTED:", line


def test_copying_cpu_driver_still_returns_results(monkeypatch):
    """The map-after-launch path used when a CPU driver works on a copy of host memory."""
    from portakern.backends import opencl_host

    backend = pk.CPU()
    monkeypatch.setattr(backend, "_map_after", True)
    k = pk.kernel("@kernel void twice(float* y) { y[@index(Global, Linear)] *= 2; }")
    y = np.arange(1000, dtype=np.float32)
    k(backend)(y, ndrange=y.shape)
    np.testing.assert_array_equal(y, 2 * np.arange(1000, dtype=np.float32))
    # The probe that decides the path sees PoCL's zero-copy behaviour.
    assert opencl_host.writes_reach_host(cl, backend.context, backend.queue)


def test_cpu_runs_ndarray_subclasses_such_as_memmap(tmp_path):
    # array_info accepts ndarray subclasses; each must be wrapped in a buffer like a
    # plain ndarray, not handed to set_args as an array (INVALID_ARG_SIZE).
    k = pk.kernel("@kernel void inc(float* y) { y[@index(Global, Linear)] += 1; }")
    m = np.memmap(tmp_path / "m.bin", np.float32, "w+", shape=(8,))
    k(m, ndrange=m.shape)
    k(m, ndrange=m.shape)
    np.testing.assert_array_equal(np.asarray(m), np.full(8, 2, np.float32))

    class Sub(np.ndarray):
        pass

    s = np.zeros(5, np.float32).view(Sub)
    k(s, ndrange=s.shape)
    np.testing.assert_array_equal(np.asarray(s), np.ones(5, np.float32))


def test_an_unused_opencl_backend_lets_its_queue_go():
    import gc
    import weakref

    from portakern.backends import opencl

    queue = cl.CommandQueue(pk.CPU().context)
    a = cla.zeros(queue, 4, np.float32)
    backend = pk.get_backend(a)
    assert pk.get_backend(a) is backend  # one backend per queue while it lives
    gone = weakref.ref(backend)
    del backend
    gc.collect()
    assert gone() is None and queue.int_ptr not in opencl._BY_QUEUE


def test_relaunch_on_the_same_pyopencl_arrays_skips_the_full_checks(queue, ocl, monkeypatch):
    import gc
    import importlib
    import weakref

    kernel_module = importlib.import_module("portakern.launch.launcher")
    k = pk.kernel(SAXPY)
    launch = k(ocl)
    y = cla.to_device(queue, np.zeros(8, np.float32))
    x = cla.to_device(queue, np.ones(8, np.float32))
    launch(y, x, 1.0, ndrange=8)
    entries, template, _ = launch._memo
    assert template[:2] == [None, None]  # no buffer handle is kept by the memo
    calls = []
    real = kernel_module.check_args
    monkeypatch.setattr(kernel_module, "check_args",
                        lambda *a, **kw: calls.append(1) or real(*a, **kw))
    launch(y, x, 2.0, ndrange=8)
    queue.finish()
    assert calls == [] and y.get().tolist() == [3.0] * 8
    # Another array object: checked in full (and a wrong dtype is still refused).
    x64 = cla.to_device(queue, np.ones(8, np.float64))
    with pytest.raises(pk.KernelTypeError, match="argument 1 'x'"):
        launch(y, x64, 1.0, ndrange=8)
    assert calls == [1]
    # The memo holds arrays weakly: a dropped array is not kept alive by it.
    z = cla.to_device(queue, np.zeros(8, np.float32))
    launch(z, x, 1.0, ndrange=8)
    gone = weakref.ref(z)
    del z
    gc.collect()
    assert gone() is None
