"""Tests for the MLX launchers (portakern/backends/metal.py and _mlx.py).

What runs where:

* everywhere (MLX from ``mlx[cpu]``): resolution, availability, argument checks
  up to the MLX call (with ``mx.fast.metal_kernel`` replaced by a recorder), the
  write-back analysis, and the MLX marshalling run for real, every example
  included, with ``mx.fast.metal_kernel`` replaced by the CPU stand-in
  (portakern/emulate/mlx.py, which runs the Metal source MLX would compile);
* with clang: every example kernel's Metal source, standalone and wrapped as
  MLX wraps it, passes the Metal syntax check, and seeded errors are caught at
  the user's line; with NVRTC the same for MLX's CUDA shape;
* on a Mac only (``pytest -m metal``): real Metal launches, skipped elsewhere
  with the reason "no Metal device".
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from conftest import REAL_METAL

import portakern as pk
from portakern import examples
from portakern.backends import _mlx
from portakern.backends import base as backend_base
from portakern.backends.base import Availability
from portakern.backends.metal import MLXCUDA, Metal, mlx_source
from portakern.checks import (
    check_metal,
    compile_cuda_ptx,
    cuda_check_available,
    metal_check_available,
)
from portakern.errors import (
    BackendUnavailableError,
    CompilationError,
    KernelArgumentError,
    KernelTypeError,
)
from portakern.types import type_name_of

SAXPY = """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

HISTOGRAM = """\
@kernel void hist(uint* counts, const uint* data) {
    const long i = @index(Global, Linear);
    @atomic_add(&counts[data[i] % 4], 1u);
}
"""


# -- fixtures -----------------------------------------------------------------------------------

@pytest.fixture
def mx() -> Any:
    return pytest.importorskip("mlx.core")


@pytest.fixture
def clang() -> None:
    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no clang for the Metal syntax check: {why}")


@pytest.fixture
def nvrtc() -> None:
    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(why)


def _forget_availability(*classes: type) -> None:
    # check_available() remembers a positive answer per class.
    for cls in classes:
        backend_base._AVAILABLE.discard(cls)


class Recorder:
    """Stands in for ``mx.fast.metal_kernel``: records what MLX would receive."""

    def __init__(self, mx: Any, fail: Exception | None = None) -> None:
        self.mx = mx
        self.fail = fail
        self.made: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.made.append(kwargs)
        made = kwargs

        def run(**call: Any) -> list:
            self.calls.append({"kernel": made, **call})
            if self.fail is not None and not made["name"].startswith("pk_copy"):
                raise self.fail
            return [self.mx.full(shape, 7, dtype=dt)
                    for shape, dt in zip(call["output_shapes"], call["output_dtypes"],
                                         strict=True)]

        return run


@pytest.fixture
def claim_available(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make both MLX launchers claim to be available (restored afterwards)."""
    for cls in (Metal, MLXCUDA):
        monkeypatch.setattr(cls, "available", classmethod(lambda cls: Availability(True)))
    _forget_availability(Metal, MLXCUDA)
    yield
    _forget_availability(Metal, MLXCUDA)


@pytest.fixture
def recorder(mx: Any, monkeypatch: pytest.MonkeyPatch, claim_available: None) -> Recorder:
    """Metal made available, with ``mx.fast.metal_kernel`` recording instead of compiling."""
    rec = Recorder(mx)
    monkeypatch.setattr(mx.fast, "metal_kernel", rec)
    return rec


# -- resolution and availability -----------------------------------------------------------------

def test_import_does_not_import_mlx() -> None:
    code = ("import sys, portakern, portakern.backends.metal\n"
            "assert not any(m == 'mlx' or m.startswith('mlx.') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_get_backend_resolves_mlx_arrays_to_metal(mx: Any) -> None:
    backend = pk.get_backend(mx.zeros(3))
    expected = MLXCUDA if _mlx_uses_cuda() else Metal
    assert type(backend) is expected
    assert backend.target == ("cuda" if expected is MLXCUDA else "metal")
    assert pk.get_backend(mx.ones(2)) is backend


def _mlx_uses_cuda() -> bool:
    from portakern.backends.metal import mlx_uses_cuda

    return mlx_uses_cuda()


def test_metal_on_an_mlx_cuda_build_resolves_to_mlxcuda(mx: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from portakern.backends import metal

    monkeypatch.setattr(metal, "mlx_uses_cuda", lambda: True)
    assert type(Metal.for_array(mx.zeros(1))) is MLXCUDA


def test_available_says_why_not(mx: Any) -> None:
    status = Metal.available()
    if status:
        pytest.skip("this machine has a Metal device")
    assert status.reason.startswith("no Metal device: ")
    assert "Metal" in status.reason and "MLX" in status.reason
    cuda = MLXCUDA.available()
    if not cuda:
        assert cuda.reason.startswith("no CUDA device for MLX")


def test_available_without_mlx_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from portakern.backends import metal

    monkeypatch.setattr(metal, "_mlx_core", lambda: None)
    status = Metal.available()
    assert not status
    assert "portakern[metal]" in status.reason


def test_float64_option_is_checked() -> None:
    with pytest.raises(TypeError, match="'error'.*'cast'"):
        Metal(float64="round")
    assert Metal() == Metal() and Metal() != Metal(float64="cast")
    assert repr(Metal(float64="cast")) == "Metal(float64='cast')"
    assert Metal().cache_key != Metal(float64="cast").cache_key


# -- argument checks run before "unavailable" --------------------------------------------------

def test_launch_checks_arguments_then_says_unavailable(mx: Any) -> None:
    if Metal.available():
        pytest.skip("this machine has a Metal device")
    saxpy = pk.kernel(SAXPY)
    y, x = mx.ones(10), mx.arange(10, dtype=mx.float32)
    with pytest.raises(KernelTypeError, match="takes 3 arguments"):
        saxpy(y, x, ndrange=10)
    with pytest.raises(TypeError, match=r"argument 1 'x'.*float32"):
        saxpy(y, mx.arange(10, dtype=mx.int32), np.float32(2), ndrange=10)
    y64 = mx.ones(10, dtype=mx.float64)
    with pytest.raises(TypeError, match=r"argument 0 'y'.*float64"):
        saxpy(y64, x.astype(mx.float64), 2.0, ndrange=10)
    with pytest.raises(TypeError, match="numpy"):
        saxpy(y, np.ones(10, np.float32), np.float32(2), ndrange=10)
    with pytest.raises(BackendUnavailableError, match="no Metal device"):
        saxpy(y, x, np.float32(2), ndrange=10)
    # float64="cast" passes the checks, then meets the same missing device.
    launch = saxpy(Metal(float64="cast"))
    with pytest.raises(ImportError, match="no Metal device"):
        launch(y64, x.astype(mx.float64), 2.0, ndrange=10)
    np.testing.assert_array_equal(np.array(y), np.ones(10, np.float32))


# -- which write-back each example gets -----------------------------------------------------------

def _modes(source: str, ndim: int = 1, **constants: Any) -> dict[str, str]:
    kernel = pk.kernel(source, **constants)
    rendered = kernel.rendered("metal", {tv: "float" for tv in kernel.type_vars}, ndim)
    return _mlx.writeback_modes(rendered.lowered, rendered.helpers)


@pytest.mark.parametrize("name, expected", [
    ("saxpy", {"y": "fused"}),
    ("particle_push", {"pos": "fused", "vel": "fused"}),
    ("histogram", {"counts": "staged"}),
    ("reduce_sum", {"partial": "staged"}),
    ("matmul_tiled", {"c": "staged"}),
])
def test_writeback_mode_of_examples(name: str, expected: dict[str, str]) -> None:
    ex = examples.get(name)
    kernel = ex.load()
    rendered = kernel.rendered("metal", {tv: "float" for tv in kernel.type_vars}, ex.ndims[0])
    assert _mlx.writeback_modes(rendered.lowered, rendered.helpers) == expected


@pytest.mark.parametrize("body, mode", [
    ("const long i = @index(Global, Linear); y[i] = 2 * y[i];", "fused"),
    ("const long i = @index(Global, Linear); const long n = @ndrange(); "
     "y[1 * n + i] = y[i];", "fused"),
    ("const long i = @index(Global, Linear); y[i + 1] = 0;", "staged"),
    ("long i = @index(Global, Linear); i += 1; y[i] = 0;", "staged"),
    ("const long i = @index(Global, Linear); const long j = i; y[j] = 0;", "staged"),
    ("const long i = @index(Local, Linear); y[i] = 0;", "staged"),
    ("const long i = @index(Global, Linear); float* p = y; p[i] = 0;", "staged"),
    ("const long i = @index(Global, Linear); @atomic_add(&y[i], 1.0f);", "staged"),
    ("const long i = @index(Global, Linear); for (int i = 0; i < 2; i++) { y[i] = 0; }",
     "staged"),
])
def test_writeback_analysis_is_conservative(body: str, mode: str) -> None:
    source = f"@kernel void k(float* y) {{\n    {body}\n}}\n"
    assert _modes(source) == {"y": mode}


def test_writeback_analysis_sees_through_2d_linear_but_not_macros() -> None:
    linear = "@kernel void k(float* y) { const long i = @index(Global, Linear); y[i] = 1; }"
    assert _modes(linear, ndim=2) == {"y": "fused"}
    tuple2 = "@kernel void k(float* y) { auto [i, j] = @index(Global, NTuple); y[i] = 1; }"
    assert _modes(tuple2, ndim=2) == {"y": "staged"}
    hidden = ("#define STORE(v) y[0] = v\n"
              "@kernel void k(float* y) { const long i = @index(Global, Linear); y[i] = 1; }")
    assert _modes(hidden) == {"y": "staged"}
    unsafe = ("@kernel(unsafe_indices) void k(float* y) "
              "{ const long i = @index(Global, Linear); y[i] = 1; }")
    assert _modes(unsafe) == {"y": "staged"}


# -- the Metal syntax check on every example ------------------------------------------------------

def _variants() -> list[Any]:
    out = []
    for name in examples.names():
        ex = examples.get(name)
        for dt in ex.dtypes:
            for ndim in ex.ndims:
                out.append(pytest.param(name, np.dtype(dt), ndim,
                                        id=f"{name}-{np.dtype(dt).name}-{ndim}d"))
    return out


def _rendered(name: str, dtype: np.dtype, ndim: int, target: str = "metal") -> tuple:
    kernel = examples.get(name).load()
    bindings = {tv: type_name_of(dtype) for tv in kernel.type_vars}
    return kernel.rendered(target, bindings, ndim), bindings


@pytest.mark.parametrize("name, dtype, ndim", _variants())
def test_example_metal_sources_pass_the_check(clang: None, name: str, dtype: np.dtype,
                                              ndim: int) -> None:
    rendered, bindings = _rendered(name, dtype, ndim)
    cast = dtype == np.float64
    if not cast:
        # Metal has no double: float64 examples exist only through float64="cast".
        check_metal(rendered.source, sources=rendered.sources())
    program = _mlx.build_program(rendered, "metal", cast64=cast)
    check_metal(_mlx.translation_unit(program, bindings), sources=rendered.sources())
    # MLX puts inputs of fewer than 8 elements in the constant address space.
    small = {s.name: (4,) for s in program.inputs if s.kind in ("array", "current")}
    check_metal(_mlx.translation_unit(program, bindings, small), sources=rendered.sources())


@pytest.mark.parametrize("name, dtype, ndim", _variants())
def test_example_mlx_cuda_sources_compile(nvrtc: None, name: str, dtype: np.dtype,
                                          ndim: int) -> None:
    if np.dtype(dtype).kind == "c":
        pytest.skip("MLX's CUDA kernels take complex64 as cuComplex: refused "
                    "(docs/language.md, \"Complex numbers\")")
    rendered, bindings = _rendered(name, dtype, ndim, target="cuda")
    program = _mlx.build_program(rendered, "cuda")
    source = _mlx.translation_unit(program, bindings,
                                   default_header=_mlx.CUDA_HEADER_STANDIN)
    compile_cuda_ptx(source, sources=rendered.sources())


SEEDED = {
    "undefined name": ("    y[i] = a * x[i] + undefined_thing;\n", "undefined_thing"),
    "bad barrier flag": (
        '{% if target == "metal" %}\n    threadgroup_barrier(mem_flags::mem_bogus);\n'
        "{% endif %}\n", "mem_bogus"),
    "write through a const pointer": ("    x[i] = a;\n", "x[i] = a;"),
}


@pytest.mark.parametrize("what", list(SEEDED))
@pytest.mark.parametrize("shape", ["standalone", "mlx"])
def test_seeded_errors_are_caught_at_the_users_line(clang: None, what: str,
                                                    shape: str) -> None:
    line, needle = SEEDED[what]
    source = ("@kernel void saxpy(float* y, const float* x, float a) {\n"
              "    const long i = @index(Global, Linear);\n"
              + line + "}\n")
    kernel = pk.kernel(source, filename="seeded.pk")
    rendered = kernel.rendered("metal", {}, 1)
    text = rendered.source
    if shape == "mlx":
        text = _mlx.translation_unit(_mlx.build_program(rendered, "metal"))
    with pytest.raises(CompilationError) as info:
        check_metal(text, sources=rendered.sources())
    bad_line = 4 if what == "bad barrier flag" else 3
    message = str(info.value)
    assert f"seeded.pk:{bad_line}:" in message
    assert needle in message


def test_mlx_source_is_what_metal_hands_to_mlx(clang: None) -> None:
    kernel = examples.get("histogram").load()
    rendered = kernel.rendered("metal", {}, 1)
    source = mlx_source(rendered)
    assert "device uint* counts = (device uint*)pk_work_counts;" in source
    assert "const device uint8_t* data [[buffer(1)]]" in source
    check_metal(source, sources=rendered.sources())


def test_mlx_signature_matches_mlx(mx: Any) -> None:
    kernel = pk.kernel(SAXPY)
    program = _mlx.build_program(kernel.rendered("metal", {"T": "float"}, 1), "metal")
    unit = _mlx.translation_unit(program, {"T": "float"}, {"pk_in_y": (3,), "x": (100,)})
    assert ("[[kernel]] void custom_kernel_" + program.name
            + "_floatc_float_floats_int64_tc_float(\n") in unit
    assert "  const constant float* pk_in_y [[buffer(0)]],\n" in unit
    assert "  const device float* x [[buffer(1)]],\n" in unit
    assert "  const constant float& a [[buffer(2)]],\n" in unit
    assert "  const constant int64_t* pk_dims [[buffer(3)]],\n" in unit
    assert "  device float* y [[buffer(4)]],\n" in unit
    assert "  uint3 thread_position_in_grid [[thread_position_in_grid]]) {\n" in unit


# -- marshalling up to the MLX call ----------------------------------------------------------------

def test_saxpy_marshalling(mx: Any, recorder: Recorder) -> None:
    saxpy = pk.kernel(SAXPY)
    y, x = mx.ones(1000), mx.arange(1000, dtype=mx.float32)
    backend = pk.get_backend(y)
    backend.reset_counters()
    saxpy(y, x, np.float32(2), ndrange=1000)
    [made] = recorder.made
    assert made["name"].startswith("pk_saxpy_")
    assert made["input_names"] == ["pk_in_y", "x", "a", "pk_dims"]
    assert made["output_names"] == ["y"]
    assert made["ensure_row_contiguous"] is True
    assert "typedef float T;" in made["header"] and made["header"].endswith("\n")
    assert "y[i] = a * x[i] + y[i];" in made["source"]
    assert "pk_in_y[pk_k]" in made["source"]
    [call] = recorder.calls
    inputs = call["inputs"]
    assert inputs[0] is not None and inputs[0].shape == (1000,)
    assert inputs[1] is x
    assert inputs[2].shape == () and inputs[2].dtype == mx.float32 and inputs[2].item() == 2
    assert inputs[3].dtype == mx.int64 and inputs[3].tolist() == [1000, 1000]
    assert call["output_shapes"] == [(1000,)] and call["output_dtypes"] == [mx.float32]
    assert call["grid"] == (1024, 1, 1) and call["threadgroup"] == (256, 1, 1)
    assert call["stream"] == mx.gpu
    # The caller's array object now holds the kernel's output.
    assert np.array(y).tolist() == [7.0] * 1000
    assert (backend.copies, backend.copied_bytes) == (1, 4000)


def test_2d_grid_counts_threads_rounded_to_groups(mx: Any, recorder: Recorder) -> None:
    k = pk.kernel("@kernel void k(float* y) "
                  "{ const long i = @index(Global, Linear); y[i] = 1; }")
    y = mx.zeros((5, 7))
    k(y, ndrange=(5, 7), workgroupsize=(2, 4))
    [call] = recorder.calls
    assert call["grid"] == (8, 6, 1) and call["threadgroup"] == (4, 2, 1)
    assert call["inputs"][-1].tolist() == [5, 7, 35]
    assert call["output_shapes"] == [(5, 7)]


def test_staged_writeback_copies_in_then_out(mx: Any, recorder: Recorder) -> None:
    hist = pk.kernel(HISTOGRAM)
    counts = mx.zeros(4, dtype=mx.uint32)
    data = mx.arange(100, dtype=mx.uint32)
    backend = pk.get_backend(counts)
    backend.reset_counters()
    hist(counts, data, ndrange=100)
    copy_in, main, copy_out = recorder.calls
    assert copy_in["kernel"]["name"] == "pk_copy_in_uint32"
    assert copy_in["output_shapes"] == [(8,)]          # padded out of constant memory
    assert main["kernel"]["input_names"] == ["pk_work_counts", "data", "pk_dims"]
    assert main["kernel"]["output_names"] == ["pk_done"]
    assert "device uint* counts = (device uint*)pk_work_counts;" in main["kernel"]["source"]
    assert main["output_dtypes"] == [mx.uint8]
    assert copy_out["kernel"]["name"] == "pk_copy_out_uint32"
    assert copy_out["kernel"]["input_names"] == ["src", "n", "after"]
    assert copy_out["output_shapes"] == [(4,)]
    assert np.array(counts).tolist() == [7, 7, 7, 7]
    assert (backend.copies, backend.copied_bytes) == (2, 32)


def test_float64_cast_converts_in_and_out(mx: Any, recorder: Recorder) -> None:
    saxpy = pk.kernel(SAXPY)
    backend = Metal(float64="cast")
    y, x = mx.ones(10, dtype=mx.float64), mx.arange(10, dtype=mx.float64)
    saxpy(backend)(y, x, 2.0, ndrange=10)
    [call] = recorder.calls
    assert "#define double float" in call["kernel"]["header"]
    assert [a.dtype for a in call["inputs"][:3]] == [mx.float32] * 3
    assert call["output_dtypes"] == [mx.float32]
    assert y.dtype == mx.float64 and np.array(y).tolist() == [7.0] * 10
    # y and x in, y back out, and the fused copy of y inside the kernel.
    assert backend.copies == 4
    with pytest.raises(KernelArgumentError, match="overflows float32"):
        saxpy(backend)(y, x, 1e300, ndrange=10)


def test_one_array_for_two_written_parameters_is_refused(mx: Any, recorder: Recorder) -> None:
    k = pk.kernel("@kernel void k(float* a, float* b) "
                  "{ const long i = @index(Global, Linear); a[i] = b[i]; }")
    y = mx.zeros(4)
    with pytest.raises(KernelArgumentError, match="same MLX array"):
        k(y, y, ndrange=4)
    assert recorder.calls == []


def test_compiler_errors_from_mlx_quote_the_users_line(mx: Any, recorder: Recorder) -> None:
    source = SAXPY.replace("y[i] = a * x[i] + y[i];", "y[i] = a * x[i] + oops;")
    saxpy = pk.kernel(source, filename="bad.pk")
    recorder.fail = RuntimeError(
        "[metal::Device] Unable to build metal library from source\n"
        "bad.pk:3:24: error: use of undeclared identifier 'oops'\n")
    y = mx.ones(16)
    with pytest.raises(CompilationError) as info:
        saxpy(y, mx.ones(16), np.float32(1), ndrange=16)
    assert "bad.pk:3:24" in str(info.value) and "oops;" in str(info.value)
    assert "custom_kernel_pk_saxpy" in info.value.source
    assert np.array(y).tolist() == [1.0] * 16


@pytest.mark.parametrize("backend, message", [(Metal, "No Metal back-end"),
                                              (MLXCUDA, "No CUDA back-end")])
@pytest.mark.parametrize("source", [SAXPY, HISTOGRAM], ids=["fused", "staged"])
def test_real_mlx_accepts_the_arguments(mx: Any, claim_available: None, backend: type,
                                        message: str, source: str) -> None:
    # MLX parses the arguments before it looks for a GPU: reaching "No ... back-end"
    # (not a TypeError) shows the binding takes what portakern passes.
    kernel = pk.kernel(source)
    first = mx.ones(64, dtype=mx.float32 if source is SAXPY else mx.uint32)
    args = (first, mx.ones(64), np.float32(1)) if source is SAXPY else (
        first, mx.arange(64, dtype=mx.uint32))
    if (backend is Metal and mx.metal.is_available()) or (
            backend is MLXCUDA and _mlx_uses_cuda()):
        pytest.skip("this machine has the GPU; the launch tests cover it")
    with pytest.raises(pk.LaunchError, match=message):
        kernel(backend())(*args, ndrange=64)
    assert np.array(first).tolist() == [1] * 64


def test_mlx_cuda_marshalling(mx: Any, monkeypatch: pytest.MonkeyPatch,
                              claim_available: None) -> None:
    rec = Recorder(mx)
    monkeypatch.setattr(mx.fast, "cuda_kernel", rec, raising=False)
    saxpy = pk.kernel(SAXPY)
    y = mx.ones(300)
    saxpy(MLXCUDA())(y, mx.ones(300), np.float32(3), ndrange=300)
    [made] = rec.made
    assert made["input_names"] == ["pk_in_y", "x", "pk_arg_a", "pk_dims"]
    assert "const float a = *pk_arg_a;" in made["source"]
    assert "blockIdx.x" in made["source"]
    [call] = rec.calls
    assert call["grid"] == (512, 1, 1) and call["threadgroup"] == (256, 1, 1)
    assert np.array(y).tolist() == [7.0] * 300


# -- the marshalling run for real, on the Metal stand-in ------------------------------------------
# portakern/emulate/mlx.py stands in for mx.fast.metal_kernel: the source MLX would compile
# (its signature included) is compiled for the CPU against an executable metal_stdlib and
# run with one thread per Metal thread, threadgroups one at a time, real barriers and
# poisoned threadgroup memory (tests/test_emulate_metal.py tests the stand-in itself).

@pytest.fixture
def standin(mx: Any) -> Any:
    """``pk.Metal()`` with ``mx.fast.metal_kernel`` replaced by the CPU stand-in."""
    from portakern.emulate import mlx as emulate_mlx

    ok, why = emulate_mlx.available()
    if not ok:
        pytest.skip(f"no Metal stand-in here: {why}")
    with emulate_mlx.installed():
        yield Metal()


def _standin_cases() -> list[Any]:
    out = []
    for name in examples.names():
        ex = examples.get(name)
        for dt in ex.dtypes:
            if np.dtype(dt) == np.float64:
                continue  # Metal has none; float64="cast" is tested below
            out.append(pytest.param(name, np.dtype(dt), id=f"{name}-{np.dtype(dt).name}"))
    return out


@pytest.mark.parametrize("name, dtype", _standin_cases())
def test_examples_through_the_mlx_marshalling(standin: Metal, mx: Any, name: str,
                                              dtype: np.dtype) -> None:
    ex = examples.get(name)
    for ndim in ex.ndims:
        host = _args_for(ex, ndim, dtype)
        args = ex.to_device(host, standin)
        if ex.has_pipeline:
            got = ex.run(standin, args)
            want = ex.run_reference(host)
        else:
            want = ex.reference(host)
            ids = {k: id(v) for k, v in ex.written(args).items()}
            ex.launch(standin, args)
            got = ex.outputs(args, standin)
            # Writes reach the caller's own array objects.
            assert {k: id(v) for k, v in ex.written(args).items()} == ids
        assert ex.agrees(got, want), f"{name} ({dtype}, {ndim}D): {ex.max_error(got, want)}"


def _args_for(ex: examples.Example, ndim: int, dtype: np.dtype) -> tuple:
    # Small sizes (one OS thread per Metal thread), each with a partial last workgroup,
    # so masking and the copies' tails are exercised.
    for size in ({1: 1001, 2: (37, 45), 3: (7, 9, 11)}[ndim], 37):
        try:
            return ex.make_args(size, np.random.default_rng(1), dtype=dtype)
        except ValueError:
            continue
    raise AssertionError(f"no size fits example {ex.name!r}")


@pytest.mark.parametrize("group", [32, 64])
def test_reduction_with_partial_groups_through_the_marshalling(standin: Metal, mx: Any,
                                                               group: int) -> None:
    ex = examples.get("reduce_sum")
    host = ex.make_args(200, np.random.default_rng(5), GROUP=group)
    args = ex.to_device(host, standin)
    ex.launch(standin, args, GROUP=group)
    got = ex.outputs(args, standin)
    assert ex.agrees(got, ex.reference(host, GROUP=group))


def test_staged_writes_keep_elements_nobody_writes(standin: Metal, mx: Any) -> None:
    k = pk.kernel("@kernel void k(float* y) "
                  "{ const long i = @index(Global, Linear); if (i % 2 == 0) { y[i / 2] = -1; } }")
    y = mx.arange(10, dtype=mx.float32)
    k(standin)(y, ndrange=6)
    assert np.array(y).tolist() == [-1, -1, -1, 3, 4, 5, 6, 7, 8, 9]


def test_fused_writes_keep_elements_beyond_the_ndrange(standin: Metal, mx: Any) -> None:
    saxpy = pk.kernel(SAXPY)
    y, x = mx.ones(1000), mx.ones(1000)
    saxpy(standin)(y, x, np.float32(2), ndrange=300)
    assert np.array(y).tolist() == [3.0] * 300 + [1.0] * 700


def test_scalars_reach_the_kernel_as_mlx_passes_them(standin: Metal, mx: Any) -> None:
    # 0-d inputs by reference in the constant address space, bools and halves included.
    k = pk.kernel("@kernel void k(float* y, bool b, half h, long n) "
                  "{ const long i = @index(Global, Linear); "
                  "y[i] = (b ? (float)h : -1.0f) + (float)(n >> 38); }")
    y = mx.zeros(5)
    k(standin)(y, True, np.float16(1.5), np.int64(2**40), ndrange=5)
    assert np.array(y).tolist() == [5.5] * 5


def test_float64_cast_through_the_marshalling(standin: Metal, mx: Any) -> None:
    backend = Metal(float64="cast")
    ex = examples.get("saxpy")
    host = ex.make_args(1000, np.random.default_rng(2), dtype=np.float64)
    args = ex.to_device(host, backend)
    ex.launch(backend, args)
    got = ex.outputs(args, backend)
    assert got["y"].dtype == np.float64
    np.testing.assert_allclose(got["y"], ex.reference(host)["y"], rtol=1e-5, atol=1e-6)


# -- real Metal (a Mac) ---------------------------------------------------------------------------

@pytest.mark.metal
@pytest.mark.parametrize("name", ["saxpy", "particle_push", "histogram", "matmul_tiled",
                                  "reduce_sum"])
def test_examples_on_metal(mx: Any, name: str) -> None:
    if not REAL_METAL:
        pytest.skip("the examples' default sizes are for a Mac; on the CPU stand-in every "
                    "example runs at small sizes in test_examples_through_the_mlx_marshalling")
    backend = Metal()
    ex = examples.get(name)
    host = ex.make_args(None, np.random.default_rng(3))
    args = ex.to_device(host, backend)
    if ex.has_pipeline:
        got, want = ex.run(backend, args), ex.run_reference(host)
    else:
        want = ex.reference(host)
        ex.launch(backend, args)
        got = ex.outputs(args, backend)
    assert ex.agrees(got, want), ex.max_error(got, want)
