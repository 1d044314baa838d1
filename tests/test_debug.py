"""Debug mode (portakern/debug.py, docs/debugging.md): bounds-checked subscripts.

Every path runs the same faulting kernels: the CPU's native path and its OpenCL
path (PoCL), and the CUDA and Metal renderings on their CPU stand-ins (tests
marked ``gpu`` / ``metal``, tests/conftest.py). Each checks what
:class:`~portakern.KernelFaultError` says and that no memory outside the arrays
changed (guard arrays passed on either side). Then the conformance suite runs in
debug mode on each path: no false faults.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern.testing import ConformanceSuite

GUARD = 7.0

WRITE = """
@kernel void write_past(float* lo, float* y, float* hi, const float* x, const long off) {
    const long i = @index(Global, Linear);
    y[i + off] = x[i];
}
"""

READ = """
@kernel void read_past(float* lo, float* y, float* hi, const float* x, const long off) {
    const long i = @index(Global, Linear);
    y[i] = x[i + off] + 1.0f;
}
"""


class Path:
    """One place a debug kernel runs: a backend and how arrays get there and back."""

    def __init__(self, backend: pk.Backend, where: str) -> None:
        self.backend = backend
        self.where = where

    def put(self, host: np.ndarray) -> Any:
        return self.backend.to_device(np.ascontiguousarray(host))

    def get(self, array: Any) -> np.ndarray:
        self.backend.synchronize()
        return np.asarray(self.backend.to_host(array))

    def run(self, kernel: pk.Kernel, *args: Any, **sizes: Any) -> list:
        dev = [self.put(a) if isinstance(a, np.ndarray) else a for a in args]
        try:
            kernel(self.backend, sizes.pop("workgroupsize", None))(*dev, **sizes)
        finally:
            self.after = [self.get(d) if isinstance(a, np.ndarray) else None
                          for a, d in zip(args, dev, strict=True)]
        return self.after


@pytest.fixture(params=[
    "native",
    "pocl",
    pytest.param("cuda", marks=pytest.mark.gpu),
    pytest.param("metal", marks=pytest.mark.metal),
])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = request.param
    if where in ("native", "pocl"):
        monkeypatch.setenv("PORTAKERN_CPU", "native" if where == "native" else "opencl")
        if where == "native":
            from portakern.backends.native import NativeCPU

            if not NativeCPU.available():
                pytest.skip(f"no native CPU path here: {NativeCPU.available().reason}")
        backend: Any = pk.CPU()
    else:
        backend = pk.CUDA() if where == "cuda" else pk.Metal()
    status = type(backend).available()
    if not status:
        pytest.skip(f"{where}: {status.reason}")
    return Path(backend, where)


def guards(n: int = 16) -> tuple[np.ndarray, np.ndarray]:
    return np.full(n, GUARD, np.float32), np.full(n, GUARD, np.float32)


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def test_an_out_of_bounds_write_is_reported_and_skipped(path: Path) -> None:
    n = 1000
    kernel = pk.kernel(WRITE, debug=True)
    lo, hi = guards()
    x = np.arange(n, dtype=np.float32) + 1
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(kernel, lo, np.zeros(n, np.float32), hi, x, np.int64(1), ndrange=n)
    err = info.value
    assert (err.kernel, err.parameter, err.argument) == ("write_past", "y", 1)
    assert (err.index, err.extent, err.work_item) == (n, n, (n - 1,))
    assert err.lineno == line_of(WRITE, "y[i + off]")
    assert isinstance(err, IndexError) and isinstance(err, pk.PortakernError)
    assert "y[1000]" in str(err) and "has 1000 elements" in str(err)
    lo_after, y_after, hi_after, x_after, _ = path.after
    assert (lo_after == GUARD).all() and (hi_after == GUARD).all()
    assert (y_after[1:] == x[:-1]).all() and y_after[0] == 0  # the items in range wrote
    assert (x_after == x).all()


def test_an_out_of_bounds_read_is_reported_and_reads_zero(path: Path) -> None:
    n = 5  # small: MLX passes a read-only input this size in Metal's constant space
    kernel = pk.kernel(READ, debug=True)
    lo, hi = guards()
    x = np.arange(n, dtype=np.float32) + 1
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(kernel, lo, np.zeros(n, np.float32), hi, x, np.int64(2), ndrange=n)
    err = info.value
    assert (err.parameter, err.argument, err.extent) == ("x", 3, n)
    # Items 3 and 4 fault (indices 5 and 6): whichever was first is recorded, consistently.
    assert err.work_item in ((3,), (4,)) and err.index == err.work_item[0] + 2
    assert err.lineno == line_of(READ, "x[i + off]")
    lo_after, y_after, hi_after, _, _ = path.after
    assert (lo_after == GUARD).all() and (hi_after == GUARD).all()
    assert (y_after == [4, 5, 6, 1, 1]).all()  # a faulting load reads 0


def test_negative_index_and_empty_array(path: Path) -> None:
    source = """
@kernel void shift(float* y, const float* e, const long off) {
    const long i = @index(Global, Linear);
    y[i - off] = 2.0f;
    if (off == 0) y[i] = e[i];
}
"""
    kernel = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(kernel, np.zeros(8, np.float32), np.zeros(0, np.float32), np.int64(1),
                 ndrange=8)
    assert (info.value.parameter, info.value.index, info.value.work_item) == ("y", -1, (0,))
    assert (path.after[0][:7] == 2).all() and path.after[0][7] == 0
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(kernel, np.zeros(8, np.float32), np.zeros(0, np.float32), np.int64(0),
                 ndrange=8)
    assert (info.value.parameter, info.value.extent) == ("e", 0)
    assert "it is empty" in str(info.value)


def test_work_item_is_the_ndrange_index_in_2d(path: Path) -> None:
    source = """
@kernel void corner(float* a, const long cols) {
    auto [r, c] = @index(Global, NTuple);
    const long k = r * cols + c;
    if (r == 2 && c == 3) a[k + 100] = 1.0f;
}
"""
    kernel = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(kernel, np.zeros(20, np.float32), np.int64(5), ndrange=(4, 5),
                 workgroupsize=(2, 1))
    assert info.value.work_item == (2, 3) and info.value.index == 113
    assert (path.after[0] == 0).all()


def test_barrier_kernel_faults_inside_and_outside_the_work_item_loops(path: Path) -> None:
    source = """
@kernel void staged(float* y, const float* x, const int* sizes) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float tile[8];
    @uniform const int m = sizes[1];
    tile[l] = x[i + m];
    @synchronize();
    y[i] = tile[7 - l];
}
"""
    kernel = pk.kernel(source, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(kernel, np.zeros(16, np.float32), x, np.array([0, 0], np.int32),
                  ndrange=16, workgroupsize=8)[:1]
    assert (y == x.reshape(2, 8)[:, ::-1].ravel()).all()  # no false fault
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(kernel, np.zeros(16, np.float32), x, np.array([0], np.int32), ndrange=16,
                 workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("sizes", 1, 1)
    # On the native path (lockstep loops) the @uniform line runs once per group: no
    # work-item; elsewhere every work-item runs it.
    if path.where == "native":
        assert err.work_item is None and "once per workgroup" in str(err)
    else:
        assert err.work_item[0] in range(16)


def test_localmem_subscripts_are_checked_per_dimension(path: Path) -> None:
    source = """
@kernel void tiles(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float flat[8];
    @localmem float grid[2][4];
    flat[l] = x[i];
    grid[l / 4][l % 4] = x[i];
    @synchronize();
    y[i] = flat[7 - l] + grid[(7 - l) / 4][(7 - l) % 4 + off];
}
"""
    kernel = pk.kernel(source, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(kernel, np.zeros(16, np.float32), x, np.int64(0), ndrange=16,
                  workgroupsize=8)[:1]
    assert (y == 2 * x.reshape(2, 8)[:, ::-1].ravel()).all()  # no false fault
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(kernel, np.zeros(16, np.float32), x, np.int64(1), ndrange=16,
                 workgroupsize=8)
    err = info.value
    assert (err.parameter, err.argument, err.dimension, err.extent) == ("grid", None, 1, 4)
    assert err.index == 4 and err.work_item[0] % 8 in (0, 4)  # (7 - l) % 4 == 3
    assert err.lineno == line_of(source, "y[i] = flat")
    assert "@localmem array 'grid' (dimension 1)" in str(err)


def test_debug_variant_is_cached_apart_and_kept_by_specialize(cache_dir, monkeypatch) -> None:
    monkeypatch.delenv("PORTAKERN_DEBUG", raising=False)
    plain = pk.kernel(WRITE)
    debug = pk.kernel(WRITE, debug=True)
    assert (plain.debug, debug.debug) == (False, True)
    for target in ("c", "opencl", "cuda", "metal"):
        assert "pk_dbg" not in plain.render(target)
        assert "pk_dbg_at_y(y, i + off, pk_dbg" in debug.render(target)
    # The disk cache: the debug variant is not the plain one read back, nor the reverse.
    assert "pk_dbg" in debug.variant("opencl", (), 1).source
    assert "pk_dbg" not in pk.kernel(WRITE).variant("opencl", (), 1).source
    assert "pk_dbg" in pk.kernel(WRITE, debug=True).variant("opencl", (), 1).source
    assert debug.specialize(N=3).debug
    monkeypatch.setenv("PORTAKERN_DEBUG", "1")
    assert pk.kernel(WRITE).debug and not pk.kernel(WRITE, debug=False).debug


def test_from_file_takes_debug(tmp_path) -> None:
    f = tmp_path / "w.pk"
    f.write_text(WRITE)
    kernel = pk.Kernel.from_file(f, debug=True)
    lo, hi = guards()
    with pytest.raises(pk.KernelFaultError) as info:
        kernel(lo, np.zeros(4, np.float32), hi, np.ones(4, np.float32), np.int64(4),
               ndrange=4)
    assert info.value.filename == str(f) and f"{f}:{line_of(WRITE, 'y[i + off]')}" in str(
        info.value)


@pytest.mark.parametrize("t", ["float", "int", "half", "bool"])
def test_debug_renderings_compile_for_the_real_gpu_compilers(t: str) -> None:
    """NVRTC and clang's Metal check (stricter than the stand-ins): module and MLX shapes."""
    from portakern.backends import _mlx
    from portakern.backends.metal import mlx_source
    from portakern.checks.cuda import compile_cuda_ptx, cuda_check_available
    from portakern.checks.metal import check_metal, metal_check_available

    source = """
@kernel void k(T* y, const T* x, const T* small, long n) {
    const long i = @index(Global, Linear);
    y[i] = x[i + n] + small[0];
}
"""
    kernel = pk.kernel(source, debug=True)
    ok, why = metal_check_available()
    if ok:
        r = kernel.rendered("metal", {"T": t}, 1)
        check_metal(r.source, sources=r.sources())
        # A read-only input of under 8 elements is in MLX's constant address space.
        check_metal(mlx_source(r, shapes={"small": (1,), "x": (100,), "y": (100,)}),
                    sources=r.sources())
    ok_cuda, why_cuda = cuda_check_available()
    if ok_cuda:
        r = kernel.rendered("cuda", {"T": t}, 1)
        compile_cuda_ptx(r.source)
        compile_cuda_ptx(mlx_source(r, default_header=_mlx.CUDA_HEADER_STANDIN))
    if not (ok or ok_cuda):
        pytest.skip(f"no Metal check ({why}) and no CUDA compiler ({why_cuda})")


def test_debug_must_be_a_bool() -> None:
    with pytest.raises(pk.KernelTypeError, match="debug must be True or False"):
        pk.kernel(WRITE, debug="yes")


def test_a_debug_kernel_pickles_as_one(monkeypatch) -> None:
    import pickle

    monkeypatch.delenv("PORTAKERN_DEBUG", raising=False)
    plain, debug = pk.kernel(WRITE), pk.kernel(WRITE, debug=True)
    for _ in range(2):  # interning the plain one must not hand it out for the debug one
        assert pickle.loads(pickle.dumps(plain)) is plain
        back = pickle.loads(pickle.dumps(debug))
        assert back.debug and back is not plain
    assert debug.__dask_tokenize__() != plain.__dask_tokenize__()


def test_fault_error_pickles() -> None:
    import pickle

    err = pk.KernelFaultError("k", "y", 0, 10, 10, (9,), "f.pk", 4, "y[i + 1] = 0;")
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.work_item == (9,)


# -- the conformance suite in debug mode: no false faults on any path ----------------------------

class _DebugMode:
    @pytest.fixture(autouse=True)
    def _debug_mode(self, monkeypatch):
        from portakern.testing.conformance import suite_kernel

        monkeypatch.setenv("PORTAKERN_DEBUG", "1")
        suite_kernel.cache_clear()  # fresh kernels, made in debug mode
        yield
        suite_kernel.cache_clear()


@pytest.mark.slow
class TestCPUDebug(_DebugMode, ConformanceSuite):
    backend = pk.CPU


@pytest.mark.slow
class TestCPUOpenCLPathDebug(_DebugMode, ConformanceSuite):
    backend = pk.CPU

    @pytest.fixture(autouse=True)
    def _opencl_path(self, monkeypatch, request):
        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
        if "float16" in request.node.name and not pk.CPU().supports("half_arithmetic"):
            pytest.skip("debug mode's checked half accesses need cl_khr_fp16 on the OpenCL "
                        "path (refused with a KernelTypeError; see test_half_debug_refused)")


@pytest.mark.slow
@pytest.mark.gpu
class TestCUDADebug(_DebugMode, ConformanceSuite):
    backend = "CUDA"


@pytest.mark.slow
@pytest.mark.metal
class TestMetalDebug(_DebugMode, ConformanceSuite):
    backend = "Metal"


def test_the_debugging_page_runs(run_doc) -> None:
    run_doc("debugging.md")


def test_half_debug_refused_on_opencl_without_half_arithmetic(monkeypatch):
    # Half storage (vload_half/vstore_half) does not yet cover debug mode's checked
    # accesses: on a device without cl_khr_fp16 the launch is refused, not miscompiled.
    monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    if pk.CPU().supports("half_arithmetic"):
        pytest.skip("this OpenCL device has half arithmetic")
    k = pk.kernel("@kernel void f(half* y) { const long i = @index(Global, Linear); "
                  "y[i] = y[i] * 2; }", debug=True)
    y = np.ones(8, np.float16)
    with pytest.raises(pk.KernelTypeError, match="debug mode.*PORTAKERN_CPU=native"):
        k(y, ndrange=y.shape)
    assert (y == 1).all()
