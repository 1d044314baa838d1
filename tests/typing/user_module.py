"""A small library on portakern, as its users write it; ``mypy --strict`` must pass on it.

tests/test_typing.py runs mypy on this file (and runs it, so it stays a real program).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

import portakern as pk

SAXPY = """
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

saxpy: pk.Kernel = pk.kernel(SAXPY)
saxpy_f32: pk.Kernel = saxpy.specialize(T="float")


def load(path: Path) -> pk.Kernel:
    """A kernel file next to the library's code."""
    return pk.kernel.from_file(path, "saxpy")


def load_class_form(path: Path) -> pk.Kernel:
    return pk.Kernel.from_file(path).relabel(x="input", y="out")


def load_shipped() -> pk.Kernel:
    return pk.kernel.from_resource("portakern.examples", "saxpy.pk")


def run_direct(y: npt.NDArray[np.float32], x: npt.NDArray[np.float32]) -> pk.Launch:
    return saxpy_f32(y, x, 2.0, ndrange=y.shape).wait()


def run_with_launcher(y: npt.NDArray[np.float32], x: npt.NDArray[np.float32]) -> None:
    backend: pk.Backend = pk.get_backend(y)
    launch: pk.Launcher = saxpy(backend, workgroupsize=64)
    with pk.timed() as timings:
        elapsed: float | None = launch(y, x, 2.0, ndrange=y.shape).elapsed
    backend.synchronize()
    assert elapsed is not None and timings.total >= elapsed
    assert timings.per_kernel()["saxpy"].launches == 1
    print(timings.summary())


def cuda_source() -> str:
    return saxpy.render("cuda", T="float")


def gpu_if_any() -> pk.Backend:
    status = pk.CUDA.available()
    if status:
        return pk.CUDA(device=0)
    return pk.CPU()


def describe(kernel: pk.Kernel) -> list[str]:
    return [param.name for param in kernel.params] + list(kernel.type_vars)


def main(tmp: Path) -> None:
    y, x = np.ones(1000, np.float32), np.arange(1000, dtype=np.float32)
    assert run_direct(y, x).kernel == "saxpy"
    run_with_launcher(y, x)
    np.testing.assert_allclose(y, 4.0 * x + 1.0)
    (tmp / "saxpy.pk").write_text(SAXPY)
    assert load(tmp / "saxpy.pk").name == "saxpy"
    assert load_shipped().name == "saxpy"
    assert load_class_form(tmp / "saxpy.pk").labels == {"x": "input", "y": "out"}
    assert "__global__" in cuda_source()
    assert describe(saxpy) == ["y", "x", "a", "T"]
    assert isinstance(gpu_if_any(), pk.Backend)
