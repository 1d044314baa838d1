"""portakern.testing: assert_backends_agree, available_backends, and adopting the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern.testing import assert_backends_agree, available_backends
from portakern.testing.agree import default_tolerance

ROOT = Path(__file__).resolve().parent.parent

SAXPY = pk.kernel("""
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
""")

SPLIT = pk.kernel("""
@kernel void split(long* even, int* odd, const long* x) {
    const long i = @index(Global, Linear);
    even[i] = x[i] * 2;
    odd[i] = (int)(x[i] * 2 + 1);
}
""")


def saxpy_args() -> tuple:
    return np.ones(1000, np.float32), np.arange(1000, dtype=np.float32), np.float32(2)


class CorruptCPU(pk.CPU):
    """A deliberately wrong backend: runs the kernel, then spoils one written element."""

    name = "CorruptCPU"

    def __eq__(self, other: object) -> bool:
        return type(other) is CorruptCPU

    def __hash__(self) -> int:
        return hash(CorruptCPU)

    def __repr__(self) -> str:
        return "CorruptCPU()"

    def launch(self, compiled: Any, args: list, global_size: tuple, local_size: tuple) -> None:
        first = args[0]  # the CPU launcher swaps arrays for buffers in args
        super().launch(compiled, args, global_size, local_size)
        first.reshape(-1)[3] += 1


class FailingCPU(CorruptCPU):
    name = "FailingCPU"

    def __eq__(self, other: object) -> bool:
        return type(other) is FailingCPU

    def __hash__(self) -> int:
        return hash(FailingCPU)

    def __repr__(self) -> str:
        return "FailingCPU()"

    def launch(self, *args: Any) -> None:
        raise pk.LaunchError("device lost")


def test_available_backends_starts_with_cpu() -> None:
    reasons: dict[str, str] = {}
    found = available_backends(reasons)
    assert found[0] == pk.CPU()
    names = {b.name for b in found} | set(reasons)
    assert {"CPU", "OpenCL", "CUDA", "Metal"} <= names
    for name, why in reasons.items():
        assert why, name  # every missing backend says why


def test_agreeing_backends_return_their_results() -> None:
    results = assert_backends_agree(SAXPY, saxpy_args, ndrange=1000)
    backends = list(results)
    assert backends[0] == pk.CPU()
    for out in results.values():
        np.testing.assert_array_equal(out["y"], 2 * np.arange(1000) + 1)
        assert list(out) == ["y"]  # only the arrays the kernel writes


def test_make_args_may_take_the_backend_and_return_a_dict() -> None:
    seen = []

    def make(backend: Any) -> dict:
        seen.append(backend)
        return {"a": np.float32(3), "x": np.arange(64, dtype=np.float32),
                "y": backend.to_device(np.zeros(64, np.float32))}

    assert_backends_agree(SAXPY, make, ndrange=64, backends=["CPU", pk.OpenCL],
                          workgroupsize=16)
    assert seen[0] == pk.CPU() and isinstance(seen[1], pk.OpenCL)


def test_reference_implementation_is_the_baseline() -> None:
    def reference(y: np.ndarray, x: np.ndarray, a: Any) -> None:
        y += a * x

    results = assert_backends_agree(SAXPY, saxpy_args, 1000, reference=reference)
    assert list(results)[0] == "reference"

    def wrong(y: np.ndarray, x: np.ndarray, a: Any) -> None:
        y += a * x
        y[10] = -1

    with pytest.raises(AssertionError, match=r"different results than the NumPy reference"):
        assert_backends_agree(SAXPY, saxpy_args, 1000, reference=wrong)


def test_a_wrong_backend_is_named_with_the_argument_and_the_place() -> None:
    with pytest.raises(AssertionError) as info:
        assert_backends_agree(SAXPY, saxpy_args, ndrange=1000,
                              backends=[pk.CPU(), CorruptCPU(), pk.CPU()])
    msg = str(info.value)
    assert "kernel 'saxpy' (ndrange=1000) gives different results than CPU()" in msg
    assert "argument 0 'y' (T*, float32) on CorruptCPU()" in msg
    assert "1 of 1000 elements differ (rtol=1e-05, atol=1e-06)" in msg
    assert "first at index 3: got 8.0, expected 7.0" in msg
    assert msg.count("\n  ") == 1  # CPU() agrees with itself: only one line of differences


def test_every_written_array_is_compared_exactly_for_integers() -> None:
    make = lambda: (np.zeros((4, 5), np.int64), np.zeros((4, 5), np.int32),  # noqa: E731
                    np.arange(20, dtype=np.int64).reshape(4, 5))
    assert_backends_agree(SPLIT, make, ndrange=20)
    with pytest.raises(AssertionError) as info:
        assert_backends_agree(SPLIT, make, ndrange=20, backends=["CPU", CorruptCPU()])
    msg = str(info.value)
    assert "argument 0 'even' (long*, int64) on CorruptCPU()" in msg
    assert "first at index (0, 3): got 7, expected 6" in msg
    assert "'odd'" not in msg  # the second written array agrees


def test_tolerances_apply_to_floats() -> None:
    # CorruptCPU adds 1 to y[3] = 7: a relative error of 1/7.
    assert_backends_agree(SAXPY, saxpy_args, 1000, backends=["CPU", CorruptCPU()], rtol=0.2)
    with pytest.raises(AssertionError, match="rtol=0.1"):
        assert_backends_agree(SAXPY, saxpy_args, 1000, backends=["CPU", CorruptCPU()],
                              rtol=0.1)
    assert default_tolerance(np.float32) == (1e-5, 1e-6)
    assert default_tolerance(np.int16) == (0.0, 0.0)


def test_a_failing_launch_names_the_backend() -> None:
    with pytest.raises(AssertionError, match=r"on FailingCPU\(\): the launch raised "
                                             r"LaunchError: device lost") as info:
        assert_backends_agree(SAXPY, saxpy_args, 1000, backends=["CPU", FailingCPU()])
    assert isinstance(info.value.__cause__, pk.LaunchError)
    with pytest.raises(AssertionError, match="failed on the reference backend FailingCPU"):
        assert_backends_agree(SAXPY, saxpy_args, 1000, backends=[FailingCPU(), "CPU"])


def test_argument_errors_of_the_helper() -> None:
    reader = pk.kernel("@kernel void r(const float* x) { }")
    with pytest.raises(ValueError, match="writes no array"):
        assert_backends_agree(reader, lambda: (np.zeros(1, np.float32),), ndrange=1)
    with pytest.raises(TypeError, match="must return a tuple"):
        assert_backends_agree(SAXPY, lambda: np.zeros(3), ndrange=3)
    with pytest.raises(TypeError, match="must be a portakern Kernel"):
        assert_backends_agree("saxpy", saxpy_args, ndrange=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="backends is empty"):
        assert_backends_agree(SAXPY, saxpy_args, ndrange=3, backends=[])


SUITE_USER = """
import portakern as pk
from portakern.backends.base import Availability
from portakern.testing import ConformanceSuite
from test_testing import CorruptCPU


class Unavailable(pk.CPU):
    name = "Unavailable"

    @classmethod
    def available(cls):
        return Availability(False, "no such device; pip install nothing")


class TestUnavailable(ConformanceSuite):
    backend = Unavailable


class TestCorrupt(ConformanceSuite):
    backend = CorruptCPU
"""


def test_the_suite_skips_an_unavailable_backend_and_catches_a_wrong_one(tmp_path: Path) -> None:
    (tmp_path / "test_suite_user.py").write_text(textwrap.dedent(SUITE_USER))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider",
         f"--rootdir={tmp_path}", str(tmp_path / "test_suite_user.py"),
         "-k", "global_linear_partial or localmem_reduction or contract"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tests")})
    out = proc.stdout
    assert "backend unavailable: no such device; pip install nothing" in out
    assert "FAILED" in out and "TestCorrupt::test_global_linear_partial_groups" in out
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert any("TestCorrupt::test_localmem_reduction" in line for line in failed), out[-3000:]
    assert not any("test_contract_attributes" in line for line in failed), out[-3000:]
    assert proc.returncode == 1, out[-3000:]


def test_docs_portable_kernels_examples_run(run_doc: Any) -> None:
    run_doc("portable-kernels.md")
