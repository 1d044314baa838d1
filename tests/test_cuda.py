"""The CUDA backend: resolution, argument checks, launch configuration and PTX checks
here; real launches (marked ``gpu``) where CuPy finds an NVIDIA GPU."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import portakern as pk
from portakern import examples
from portakern.backends import cuda as cuda_backend
from portakern.backends.base import Availability
from portakern.backends.cuda import CUDA, _Compiled, launch_config, nvrtc_options
from portakern.backends.cuda_support import ForeignArray
from portakern.checks import cuda_check_available
from portakern.errors import (
    BackendMismatchError,
    CompilationError,
    KernelArgumentError,
    KernelTypeError,
    LaunchError,
    NDRangeError,
)
from portakern.testing import ConformanceSuite
from portakern.types import type_name_of

ARCHES = ("compute_90", "compute_75")

_COMPILER, _COMPILER_WHY = cuda_check_available()
needs_compiler = pytest.mark.skipif(not _COMPILER, reason=_COMPILER_WHY)

_GPU = CUDA.available()
# Without a GPU, tests marked gpu run on the CPU stand-in (tests/conftest.py _cuda_standin),
# which skips them itself where it cannot build kernels.
gpu = pytest.mark.skipif(False, reason="")
# The stand-in runs each block on CPU threads (milliseconds a block): smaller sizes, same
# kernels, still with partial last workgroups.
BIG = 100_003 if _GPU else 4_099
SMALL = 333 if _GPU else 67

SAXPY = """
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

MATMUL_TILED = """
@kernel(unsafe_indices) void matmul_tiled(T* c, const T* a, const T* b, long n, long m, long p) {
    auto [gi, gj] = @index(Global, NTuple);
    auto [li, lj] = @index(Local, NTuple);
    @localmem T ta[{{ TILE }}][{{ TILE }}];
    @localmem T tb[{{ TILE }}][{{ TILE }}];
    T acc = 0;
    for (long t = 0; t < m; t += {{ TILE }}) {
        ta[li][lj] = (gi < n && t + lj < m) ? a[gi * m + t + lj] : (T)0;
        tb[li][lj] = (t + li < m && gj < p) ? b[(t + li) * p + gj] : (T)0;
        @synchronize();
        for (int k = 0; k < {{ TILE }}; ++k) {
            acc += ta[li][k] * tb[k][lj];
        }
        @synchronize();
    }
    if (gi < n && gj < p) {
        c[gi * p + gj] = acc;
    }
}
"""

ADD2D = """
@kernel void add2d(T* y, const T* x) {
    auto [i, j] = @index(Global, NTuple);
    const long w = @ndrange(1);
    y[i * w + j] += x[i * w + j] * (T)(i + 1) + (T)j;
}
"""

ADD3D = """
@kernel void add3d(T* y, const T* x) {
    auto [i, j, k] = @index(Global, NTuple);
    const long h = @ndrange(1), w = @ndrange(2);
    y[(i * h + j) * w + k] += x[(i * h + j) * w + k] + (T)(i * 100 + j * 10 + k);
}
"""

INT_TYPES = ("int", "uint", "long", "ulong")
FLOAT_TYPES = ("float", "double")
FLOAT_OPS = ("add", "sub", "min", "max", "xchg", "cas")
INT_OPS = (*FLOAT_OPS, "and", "or", "xor")


def atomics_source(type_name: str, space: str = "global") -> str:
    """One kernel exercising every ``@atomic_*`` the type has, on acc[0..8].

    ``space="local"`` does the same per workgroup on @localmem slots that start
    from ``init``, then adds each group's slots to acc.
    """
    ops = INT_OPS if type_name in INT_TYPES else FLOAT_OPS
    local = space == "local"
    target = "loc" if local else "acc"
    extra = f", const {type_name}* init" if local else ""
    lines = [f"@kernel void atomics_{type_name}_{space}({type_name}* acc, "
             f"const {type_name}* x{extra}) {{"]
    if local:
        lines += [f"    @localmem {type_name} loc[9];",
                  "    const long lid = @index(Local, Linear);",
                  "    if (lid < 9) { loc[lid] = init[lid]; }",
                  "    @synchronize();"]
    lines += [f"    const {type_name} v = x[@index(Global, Linear)];"]
    for n, op in enumerate(ops):
        if op == "cas":
            # Increment by one through a compare-and-swap loop: the count checks CAS.
            lines += [f"    {type_name} old = {target}[{n}];",
                      "    while (true) {",
                      f"        const {type_name} assumed = old;",
                      f"        old = @atomic_cas(&{target}[{n}], assumed, "
                      f"({type_name})(assumed + 1));",
                      "        if (old == assumed) break;",
                      "    }"]
        else:
            lines.append(f"    @atomic_{op}(&{target}[{n}], v);")
    if local:
        lines += ["    @synchronize();",
                  "    if (lid < 9) { @atomic_add(&acc[lid], loc[lid]); }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _rendered(kernel: pk.Kernel, ndim: int | None = None, **bindings: object):
    names = {k: type_name_of(np.dtype(v)) if not isinstance(v, str) else v
             for k, v in bindings.items()}
    from portakern.lower.lowering import infer_ndim

    if ndim is None:
        ndim = infer_ndim(kernel.parsed("cuda")[1])
    return kernel.rendered("cuda", names, ndim)


# -- import hygiene ---------------------------------------------------------------------

def test_import_and_numpy_resolution_import_no_cupy():
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import portakern as pk
        import portakern.backends.cuda
        from portakern.errors import BackendUnavailableError
        try:
            pk.get_backend(np.zeros(3))
        except BackendUnavailableError:
            pass  # no CPU OpenCL driver: resolution still ran
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("cupy", "cupy_backends")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# -- availability -----------------------------------------------------------------------

def test_unavailable_without_cupy_names_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes "import cupy" fail
    status = cuda_backend._probe()
    assert not status
    assert "CuPy" in status.reason and 'pip install "portakern[cuda]"' in status.reason


def test_unavailable_without_driver_names_install_command(monkeypatch):
    # CuPy imports without a GPU; its first runtime call is what fails.
    def no_driver():
        raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")

    fake = types.ModuleType("cupy")
    fake.__version__ = "14.0.0"
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_driver))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    status = cuda_backend._probe()
    assert not status
    assert "cudaErrorInsufficientDriver" in status.reason
    assert 'pip install "portakern[cuda]"' in status.reason


@pytest.mark.skipif(bool(_GPU), reason="this machine has a CUDA device")
def test_unavailable_backend_raises_importerror_on_use():
    backend = CUDA(0)
    with pytest.raises(ImportError, match="portakern\\[cuda\\]"):
        backend.allocate(4, np.float32)
    backend.synchronize()  # nothing was launched: waiting is a no-op


def test_device_argument_is_checked():
    with pytest.raises(ValueError, match=">= 0"):
        CUDA(-1)
    with pytest.raises(TypeError):
        CUDA("0")  # type: ignore[arg-type]
    assert CUDA(0) == CUDA(0) and hash(CUDA(0)) == hash(CUDA(0))
    assert repr(CUDA(0)) == "CUDA(device=0)"


# -- foreign CUDA arrays, without a device --------------------------------------------------

class CudaDuck:
    """A device array known only by ``__cuda_array_interface__`` (as Numba's is)."""

    _next_ptr = 0x7F0000000000

    def __init__(self, shape, dtype, *, strides=None, readonly=False, ptr=None, mask=None):
        if ptr is None:
            # Memory of its own (64 GiB apart), as two real arrays have: the launcher
            # refuses a const argument whose memory overlaps a written one.
            ptr = CudaDuck._next_ptr
            CudaDuck._next_ptr += 1 << 36
        self._cai = {
            "shape": tuple(shape), "typestr": np.dtype(dtype).str, "strides": strides,
            "data": (ptr, readonly), "version": 3, "stream": None, "mask": mask,
        }

    @property
    def __cuda_array_interface__(self):
        # A property, as on Numba's, CuPy's and torch's classes.
        return self._cai


class DlpackDuck(CudaDuck):
    """A CUDA array that also says its device through DLPack (as torch's does)."""

    def __init__(self, *args, device=(2, 0), **kwargs):
        super().__init__(*args, **kwargs)
        self._device = device

    def __dlpack_device__(self):
        return self._device


class HostTensor:
    """Like a torch CPU tensor: the type has the property, the object refuses it."""

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor type")

    def __dlpack_device__(self):
        return (1, 0)


def test_cuda_array_interface_resolves_to_cuda():
    duck = CudaDuck((10,), np.float32)
    backend = pk.get_backend(duck)
    assert isinstance(backend, CUDA)
    assert pk.get_backend(DlpackDuck((4,), np.float32, device=(2, 3))) == CUDA(3)


def test_array_info_of_cuda_array_interface():
    backend = CUDA(0)
    info = backend.array_info(CudaDuck((3, 4), np.int16, readonly=True))
    assert info.dtype == np.int16 and info.shape == (3, 4)
    assert info.c_contiguous and not info.writable
    assert isinstance(info.handle, ForeignArray)  # turned into a CuPy view only at launch
    # Explicit C strides, and an axis of length 1 with any stride, are contiguous.
    assert backend.array_info(CudaDuck((3, 4), "<f8", strides=(32, 8))).c_contiguous
    assert backend.array_info(CudaDuck((1, 4), "<f8", strides=(999, 8))).c_contiguous
    # A transposed or strided view is not.
    assert not backend.array_info(CudaDuck((3, 4), "<f8", strides=(8, 24))).c_contiguous
    assert not backend.array_info(CudaDuck((6,), "<u4", strides=(8,))).c_contiguous
    with pytest.raises(KernelArgumentError, match="mask"):
        backend.array_info(CudaDuck((3,), np.float32, mask=object()))


def test_host_memory_is_not_a_cuda_array():
    with pytest.raises(BackendMismatchError, match="HostTensor"):
        pk.get_backend(HostTensor())
    assert CUDA(0).array_info(HostTensor()) is None
    with pytest.raises(BackendMismatchError, match="not a CUDA array"):
        CUDA.for_array(HostTensor())


def test_argument_checks_on_cuda_array_interface():
    saxpy = pk.kernel(SAXPY)
    kdef = saxpy.parsed("cuda")[1]
    from portakern.launch.arguments import check_args

    backend = CUDA(0)
    y, x = CudaDuck((8,), np.float32), CudaDuck((8,), np.float32)
    args, bindings = check_args(kdef, (y, x, 2.0), backend, {})
    assert bindings == (("T", "float"),)
    assert type(args[2]) is np.float32
    with pytest.raises(KernelTypeError, match="argument 1 'x'.*float64, but T is already float"):
        check_args(kdef, (y, CudaDuck((8,), np.float64), 2.0), backend, {})
    with pytest.raises(KernelArgumentError, match="argument 0 'y'.*read-only"):
        check_args(kdef, (CudaDuck((8,), np.float32, readonly=True), x, 2.0), backend, {})
    with pytest.raises(KernelArgumentError, match="argument 1 'x'.*C-contiguous"):
        check_args(kdef, (y, CudaDuck((8,), np.float32, strides=(8,)), 2.0), backend, {})
    with pytest.raises(KernelTypeError, match="argument 1 'x'.*must be an array"):
        check_args(kdef, (y, HostTensor(), 2.0), backend, {})


def test_device_mismatch_names_the_argument_and_both_devices():
    saxpy = pk.kernel(SAXPY)
    kdef = saxpy.parsed("cuda")[1]
    from portakern.launch.arguments import check_args

    on0 = DlpackDuck((8,), np.float32, device=(2, 0))
    on1 = DlpackDuck((8,), np.float32, device=(2, 1))
    with pytest.raises(BackendMismatchError,
                       match=r"argument 1 'x' .* on CUDA\(device=1\).* runs on CUDA\(device=0\)"):
        check_args(kdef, (on0, on1, 2.0), CUDA(0), {})
    # The direct form resolves each argument and lists them all.
    with pytest.raises(BackendMismatchError) as err:
        saxpy(on0, on1, np.float32(2.0), ndrange=8)
    assert "argument 0 'y'" in str(err.value) and "CUDA(device=0)" in str(err.value)
    assert "argument 1 'x'" in str(err.value) and "CUDA(device=1)" in str(err.value)


# -- launch configuration -----------------------------------------------------------------

def test_launch_config_is_ceil_of_global_over_local():
    assert launch_config((1024,), (256,)) == ((4, 1, 1), (256, 1, 1))
    assert launch_config((1000,), (256,)) == ((4, 1, 1), (256, 1, 1))
    assert launch_config((64, 32), (32, 4)) == ((2, 8, 1), (32, 4, 1))
    assert launch_config((8, 6, 5), (4, 2, 1)) == ((2, 3, 5), (4, 2, 1))
    assert launch_config((1,), (1,)) == ((1, 1, 1), (1, 1, 1))


def test_launch_config_rejects_a_grid_over_the_device_limit():
    with pytest.raises(NDRangeError, match="ndrange axis 0 .* hardware axis y"):
        launch_config((1, 70000), (1, 1))
    with pytest.raises(NDRangeError, match="ndrange axis 0 .* hardware axis z"):
        launch_config((1, 1, 70000), (1, 1, 1))
    assert launch_config((2**31 - 1,), (1,))[0] == (2**31 - 1, 1, 1)


H100_PROPS = {"maxThreadsPerBlock": 1024, "maxThreadsDim": (1024, 1024, 64),
              "maxGridSize": (2**31 - 1, 65535, 65535), "major": 9, "minor": 0}


class RecordingCUDA(CUDA):
    """A CUDA backend that compiles to PTX and records launches instead of running them.

    Everything between the argument checks and the driver call is the real code:
    rendering for the bound types, the workgroup checks, the grid arithmetic and
    the argument list.
    """

    @classmethod
    def available(cls) -> Availability:
        return Availability(True)

    @classmethod
    def device_count(cls) -> int:
        return 1

    def __init__(self) -> None:
        super().__init__(0)
        self._state = cuda_backend._DeviceState()  # keeps the fake limits to itself
        self.launches: list[tuple] = []

    def _props(self):
        return H100_PROPS

    def compile(self, rendered):
        if _COMPILER:
            CUDA.compile_check(rendered)
        return _Compiled(None, None, rendered.name, 1024, rendered.source)

    def _enqueue(self, compiled, grid, block, args):
        self.launches.append((compiled.name, grid, block, list(args)))


@pytest.mark.parametrize("ndrange, workgroupsize, grid, block", [
    ((1000,), None, (4, 1, 1), (256, 1, 1)),
    ((10**6,), 128, (7813, 1, 1), (128, 1, 1)),
    ((30, 50), (4, 32), (2, 8, 1), (32, 4, 1)),
    ((30, 50), None, (1, 8, 1), (64, 4, 1)),
    ((5, 6, 7), (1, 2, 4), (2, 3, 5), (4, 2, 1)),
    ((), None, (1, 1, 1), (1, 1, 1)),
])
def test_launcher_marshals_grid_block_and_arguments(ndrange, workgroupsize, grid, block):
    backend = RecordingCUDA()
    n = int(np.prod(ndrange))
    y, x = CudaDuck((max(n, 1),), np.float32), CudaDuck((max(n, 1),), np.float32)
    source = SAXPY.replace("@index(Global, Linear)", "0") if not ndrange else SAXPY
    pk.kernel(source)(backend, workgroupsize)(y, x, 2.0, ndrange=ndrange)
    ((name, got_grid, got_block, args),) = backend.launches
    assert (name, got_grid, got_block) == ("saxpy", grid, block)
    assert [a.array for a in args[:2]] == [y, x]
    assert type(args[2]) is np.float32 and args[2] == 2.0
    assert args[3:] == [np.int64(n) for n in ndrange]
    assert all(type(a) is np.int64 for a in args[3:])


def test_launcher_rejects_workgroups_over_cuda_limits():
    backend = RecordingCUDA()
    launch = pk.kernel(ADD2D)(backend)
    y, x = CudaDuck((4, 4096), np.float32), CudaDuck((4, 4096), np.float32)
    with pytest.raises(NDRangeError, match="more than the 1024"):
        launch(y, x, ndrange=(4, 4096), workgroupsize=(2, 1024))
    with pytest.raises(NDRangeError, match="exceeds the device limit 64"):
        pk.kernel(ADD3D)(backend)(CudaDuck((128, 1, 1), np.float32),
                                  CudaDuck((128, 1, 1), np.float32),
                                  ndrange=(128, 1, 1), workgroupsize=(128, 1, 1))
    with pytest.raises(NDRangeError, match="hardware axis y"):
        launch(CudaDuck((100000, 1), np.float32), CudaDuck((100000, 1), np.float32),
               ndrange=(100000, 1), workgroupsize=(1, 1))
    assert backend.launches == []


# -- PTX compile checks (no GPU) ----------------------------------------------------------

def _example_variants():
    for name, ex in examples.EXAMPLES.items():
        for dtype in ex.dtypes:
            for ndim in ex.ndims:
                yield pytest.param(name, dtype, ndim, id=f"{name}-{dtype}-{ndim}d")


@needs_compiler
@pytest.mark.parametrize("name, dtype, ndim", list(_example_variants()))
def test_example_compiles_to_ptx(name, dtype, ndim):
    ex = examples.get(name)
    kernel = ex.load()
    rendered = _rendered(kernel, ndim, **{tv: dtype for tv in kernel.type_vars})
    for arch in ARCHES:
        ptx = CUDA.compile_check(rendered, arch)
        assert f".entry {ex.kernel}(" in ptx, arch


@needs_compiler
@pytest.mark.parametrize("type_name", ["float", "double", "int", "long", "uint8_t"])
def test_saxpy_compiles_to_ptx(type_name):
    rendered = _rendered(pk.kernel(SAXPY), T=type_name)
    for arch in ARCHES:
        assert ".entry saxpy(" in CUDA.compile_check(rendered, arch)


@needs_compiler
def test_half_compiles_with_cuda_headers():
    rendered = _rendered(pk.kernel(SAXPY), T="half")
    assert "#include <cuda_fp16.h>" in rendered.source
    try:
        ptx = CUDA.compile_check(rendered, "compute_75")
    except CompilationError as exc:
        assert "nvidia-cuda-runtime" in str(exc)  # the clear error, not NVRTC's
        pytest.skip(f"no CUDA headers here: {exc}")
    assert ".entry saxpy(" in ptx


def test_half_without_headers_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(cuda_backend, "_fp16_include_dirs", lambda: ())
    rendered = _rendered(pk.kernel(SAXPY), T="half")
    with pytest.raises(CompilationError, match="cuda_fp16.h.*pip install nvidia-cuda-runtime"):
        nvrtc_options(rendered)
    assert nvrtc_options(_rendered(pk.kernel(SAXPY), T="float")) == (
        "-std=c++17", "--device-as-default-execution-space")
    with pytest.raises(TypeError, match="RenderedKernel"):
        nvrtc_options(rendered.source)  # the facts say what NVRTC needs, not the text


@needs_compiler
@pytest.mark.parametrize("space", ["global", "local"])
@pytest.mark.parametrize("type_name", [*INT_TYPES, *FLOAT_TYPES])
def test_every_atomic_overload_compiles(type_name, space):
    rendered = _rendered(pk.kernel(atomics_source(type_name, space)))
    for arch in ARCHES:
        ptx = CUDA.compile_check(rendered, arch)
        assert "atom." in ptx, arch


@needs_compiler
def test_float64_atomic_add_is_native_and_has_a_fallback():
    rendered = _rendered(pk.kernel(atomics_source("double")))
    for arch in ARCHES:
        assert "atom.global.add.f64" in CUDA.compile_check(rendered, arch)
    # Devices before sm_60 take the compare-and-swap branch; make it compile here.
    source = rendered.source.replace("__CUDA_ARCH__ >= 600", "0")
    assert source != rendered.source
    ptx = CUDA.compile_check(type(rendered)(**{**rendered.__dict__, "source": source}))
    assert "atom.global.add.f64" not in ptx and "atom.global.cas.b64" in ptx


@needs_compiler
def test_tiled_matmul_and_ntuple_kernels_compile():
    for kernel, binding in [(pk.kernel(MATMUL_TILED, TILE=16), "float"),
                            (pk.kernel(ADD2D), "double"), (pk.kernel(ADD3D), "int")]:
        rendered = _rendered(kernel, T=binding)
        for arch in ARCHES:
            ptx = CUDA.compile_check(rendered, arch)
            assert f".entry {rendered.name}(" in ptx
    assert "__syncthreads()" in pk.kernel(MATMUL_TILED, TILE=16).render("cuda", T="float")
    assert "bar.sync" in CUDA.compile_check(_rendered(pk.kernel(MATMUL_TILED, TILE=16),
                                                      T="float"))


@needs_compiler
def test_compile_error_names_the_users_line(tmp_path):
    path = tmp_path / "bad.pk"
    path.write_text("@kernel void bad(float* y) {\n"
                    "    const long i = @index(Global, Linear);\n"
                    "    y[i] = undefined_name;\n"
                    "}\n")
    rendered = _rendered(pk.kernel.from_file(path))
    with pytest.raises(CompilationError) as err:
        CUDA.compile_check(rendered)
    msg = str(err.value)
    assert f"{path}:3" in msg and "undefined_name" in msg
    assert "    y[i] = undefined_name;" in msg  # the user's line, quoted
    assert err.value.target == "cuda"


# -- on a GPU ---------------------------------------------------------------------------------

@pytest.fixture
def cp():
    # The real CuPy on a GPU, else the stand-in that _cuda_standin installed as "cupy".
    return pytest.importorskip("cupy")


@pytest.fixture
def backend():
    return CUDA()


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_gpu_saxpy_on_cupy_arrays(cp, dtype):
    n = BIG  # a partial last workgroup
    rng = np.random.default_rng(0)
    x, y = rng.random(n).astype(dtype), rng.random(n).astype(dtype)
    dx, dy = cp.asarray(x), cp.asarray(y)
    backend = pk.get_backend(dy, dx)
    assert isinstance(backend, CUDA)
    pk.kernel(SAXPY)(dy, dx, dtype(2.5), ndrange=n)
    backend.synchronize()
    tol = 1e-2 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(cp.asnumpy(dy), dtype(2.5) * x + y, rtol=tol)


def _example_cases():
    for name, ex in examples.EXAMPLES.items():
        for dtype in ex.dtypes:
            yield pytest.param(name, dtype, id=f"{name}-{dtype}")


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("name, dtype", list(_example_cases()))
def test_gpu_example_matches_numpy(backend, name, dtype):
    ex = examples.get(name)
    size = SMALL if ex.ndims != (1,) or ex.has_pipeline else BIG
    args = ex.make_args(size, np.random.default_rng(1), dtype=dtype)
    if ex.has_pipeline:
        want = ex.run_reference(args)
        got = ex.run(backend, ex.to_device(args, backend))
    else:
        want = ex.reference(args)
        dev = ex.to_device(args, backend)
        ex.launch(backend, dev)
        got = ex.outputs(dev, backend)
    assert ex.agrees(got, want), f"max error {ex.max_error(got, want)}"


@pytest.mark.gpu
@gpu
def test_gpu_ntuple_2d_3d(cp, backend):
    rng = np.random.default_rng(2)
    for source, shape in [(ADD2D, (37, 129)), (ADD3D, (5, 17, 33))]:
        x = rng.random(shape)
        y = np.zeros(shape)
        dy, dx = backend.to_device(y), backend.to_device(x)
        pk.kernel(source)(dy, dx, ndrange=shape)
        idx = np.indices(shape)
        if len(shape) == 2:
            want = x * (idx[0] + 1) + idx[1]
        else:
            want = x + idx[0] * 100 + idx[1] * 10 + idx[2]
        np.testing.assert_allclose(backend.to_host(dy), want)


def expected_atomics(init: np.ndarray, x: np.ndarray, group: int | None) -> np.ndarray:
    """What ``atomics_source`` leaves in acc: one pass over x from init, or (local,
    acc starting at zero) the sum of one pass per workgroup, each from init."""
    chunks = [x] if group is None else [x[s:s + group] for s in range(0, x.size, group)]
    total = np.zeros_like(init)
    with np.errstate(over="ignore"):
        for xs in chunks:
            loc = init.copy()
            loc[0] += xs.sum(dtype=x.dtype)
            loc[1] -= xs.sum(dtype=x.dtype)
            loc[2] = min(loc[2], xs.min())
            loc[3] = max(loc[3], xs.max())
            loc[5] += xs.size
            if x.dtype.kind in "iu":
                loc[6] &= np.bitwise_and.reduce(xs)
                loc[7] |= np.bitwise_or.reduce(xs)
                loc[8] ^= np.bitwise_xor.reduce(xs)
            if group is None:
                total = loc
            else:
                total += loc
    return total


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("space", ["global", "local"])
@pytest.mark.parametrize("type_name", [*INT_TYPES, *FLOAT_TYPES])
def test_gpu_atomics_match_numpy(backend, type_name, space):
    dtype = pk.types.TYPE_DTYPES[type_name]
    n, group = 10_000, 256
    x = np.random.default_rng(3).integers(1, 100, n).astype(dtype)
    all_ones = np.array(-1).astype(dtype) if dtype.kind in "iu" else 0
    # Small integers: every float sum below is exact.
    init = np.array([1000, 0, 10**4, 0, 7, 0, all_ones, 0, 0], dtype)
    kernel = pk.kernel(atomics_source(type_name, space))
    if space == "global":
        acc = backend.to_device(init)
        kernel(acc, backend.to_device(x), ndrange=n, workgroupsize=group)
    else:
        acc = backend.zeros(init.shape, dtype)
        kernel(acc, backend.to_device(x), backend.to_device(init), ndrange=n,
               workgroupsize=group)
    got = backend.to_host(acc)
    want = expected_atomics(init, x, group if space == "local" else None)
    if space == "global":
        assert got[4] in set(x.tolist())  # xchg: some work-item's value was last
    checked = [0, 1, 2, 3, 5, *([6, 7, 8] if dtype.kind in "iu" else [])]
    np.testing.assert_array_equal(got[checked], want[checked])


@pytest.mark.gpu
@gpu
def test_gpu_tiled_matmul(backend):
    rng = np.random.default_rng(4)
    n, m, p = 100, 37, 65
    a, b = rng.random((n, m), np.float32), rng.random((m, p), np.float32)
    c = backend.zeros((n, p), np.float32)
    kernel = pk.kernel(MATMUL_TILED, TILE=16)
    kernel(c, backend.to_device(a), backend.to_device(b), n, m, p, ndrange=(n, p),
           workgroupsize=(16, 16))
    np.testing.assert_allclose(backend.to_host(c), a @ b, rtol=1e-5)


@pytest.mark.gpu
@gpu
def test_gpu_launch_follows_the_current_stream(cp, backend):
    n = 1 << 20 if _GPU else 1 << 12
    y, x = cp.zeros(n, cp.float32), cp.ones(n, cp.float32)
    with cp.cuda.Stream(non_blocking=True):
        for _ in range(20):
            pk.kernel(SAXPY)(y, x, np.float32(1.0), ndrange=n)
    backend.synchronize()  # waits on the stream the launches went to
    assert float(y[0]) == 20.0 and float(y[-1]) == 20.0


@pytest.mark.gpu
@gpu
def test_gpu_foreign_array_is_written_in_place(cp, backend):
    class Foreign:
        def __init__(self, arr):
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    n = 1000
    y, x = cp.zeros(n, cp.float32), cp.arange(n, dtype=cp.float32)
    pk.kernel(SAXPY)(Foreign(y), Foreign(x), np.float32(3.0), ndrange=n)
    backend.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(y), 3.0 * np.arange(n, dtype=np.float32))


@pytest.mark.gpu
@gpu
def test_gpu_torch_tensors_zero_copy(backend):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    y = torch.zeros(1000, device="cuda")
    x = torch.arange(1000, device="cuda", dtype=torch.float32)
    assert isinstance(pk.get_backend(y), CUDA)
    pk.kernel(SAXPY)(y, x, np.float32(2.0), ndrange=1000)
    pk.get_backend(y).synchronize()
    assert torch.equal(y, 2 * x)


@pytest.mark.gpu
@gpu
def test_gpu_compile_error_is_a_compilation_error(backend):
    bad = pk.kernel("@kernel void bad(float* y) { y[0] = nope; }")
    with pytest.raises(CompilationError, match="nope") as err:
        bad(backend.zeros(1, np.float32), ndrange=1)
    assert err.value.target == "cuda" and err.value.__cause__ is not None


@pytest.mark.gpu
@gpu
def test_gpu_device_limits(backend):
    assert backend.max_workitem_sizes()[0] >= 1024
    assert backend.supports("float64") and backend.supports("int64_atomics")
    assert backend.compute_capability() >= (5, 0)


@pytest.mark.gpu
@gpu
def test_gpu_device_mismatch_on_two_devices(cp):
    if CUDA.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    with cp.cuda.Device(1):
        x = cp.ones(8, cp.float32)
    y = cp.zeros(8, cp.float32)
    with pytest.raises(BackendMismatchError, match="argument 1 'x'.*CUDA\\(device=1\\)"):
        pk.kernel(SAXPY)(CUDA(0))(y, x, np.float32(1.0), ndrange=8)


@pytest.mark.gpu
@gpu
def test_gpu_kernel_fault_is_a_launch_error():
    if not _GPU:
        pytest.skip("a memory fault needs a real GPU: the CPU stand-in shares the process's "
                    "memory, so the out-of-bounds write would corrupt this process")
    # A fault poisons the CUDA context, so it happens in a process of its own.
    code = textwrap.dedent("""
        import numpy as np, cupy as cp, portakern as pk
        from portakern.errors import LaunchError
        oob = pk.kernel(
            "@kernel void oob(float* y) { y[@index(Global, Linear) + (1L << 40)] = 1; }")
        y = cp.zeros(4, cp.float32)
        try:
            oob(y, ndrange=4)
            pk.get_backend(y).synchronize()
        except LaunchError as exc:
            print("LAUNCHERROR", exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert "LAUNCHERROR" in out.stdout, out.stdout + out.stderr
    assert "'oob'" in out.stdout and "grid (1, 1, 1)" in out.stdout
    assert issubclass(LaunchError, pk.PortakernError)


class ReadOnlyView:
    """A read-only alias of a CuPy array, through ``__cuda_array_interface__``
    (CuPy arrays themselves have no read-only flag)."""

    def __init__(self, array):
        self.base = array  # keeps the memory alive
        self._cai = dict(array.__cuda_array_interface__)
        self._cai["data"] = (self._cai["data"][0], True)

    @property
    def __cuda_array_interface__(self):
        return self._cai


@pytest.mark.gpu
class TestCUDAConformance(ConformanceSuite):
    """The shared conformance suite on CUDA (skipped, with the reason, without a GPU)."""

    backend = CUDA

    def make_readonly(self, host):
        return ReadOnlyView(self.to_device(host))
