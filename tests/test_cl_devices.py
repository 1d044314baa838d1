"""An OpenCL device whose compiler refuses every program is passed over, with a warning.

PoCL 3.0 from the PyOpenCL wheel (LLVM 14) on a CPU newer than LLVM 14 knows builds
nothing ("unknown target CPU 'generic'"); the fakes below stand for such a driver beside
one that works, so the choice is tested on every machine.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import pytest

import portakern as pk
from portakern.backends import cl_devices

_REFUSAL = "\nerror: unknown target CPU 'generic'\nDevice pthread-AMD EPYC failed to build\n"


class _Device:
    def __init__(self, name: str, version: str, builds: bool) -> None:
        self.name = name
        self.platform = SimpleNamespace(name="Portable Computing Language", version=version)
        self.builds = builds


class _FakeCL:
    """Just what the device choice calls: Context and Program(...).build()."""

    def Context(self, devices):  # noqa: N802 - PyOpenCL's spelling
        return devices[0]

    def Program(self, device, source):  # noqa: N802
        def build():
            if not device.builds:
                raise RuntimeError("clBuildProgram failed: BUILD_PROGRAM_FAILURE" + _REFUSAL)
        return SimpleNamespace(build=build)


def test_a_device_that_builds_nothing_is_passed_over_with_a_warning():
    broken = _Device("pthread-AMD EPYC", "OpenCL 3.0 PoCL 3.0-rc2 LLVM 14.0.6", False)
    works = _Device("pthread-skylake-avx512", "OpenCL 3.0 PoCL 3.1 LLVM 15.0.6", True)
    with pytest.warns(RuntimeWarning, match="unknown target CPU 'generic'") as record:
        chosen = cl_devices.first_that_builds(_FakeCL(), [broken, works], "CPU OpenCL device")
    assert chosen is works
    assert "PoCL 3.0-rc2" in str(record[0].message)
    assert "pthread-skylake-avx512" in str(record[0].message)


def test_a_device_that_builds_is_taken_without_a_warning():
    works = _Device("pthread-skylake-avx512", "OpenCL 3.0 PoCL 3.1", True)
    other = _Device("pthread-AMD EPYC", "OpenCL 3.0 PoCL 3.0-rc2", False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cl_devices.first_that_builds(_FakeCL(), [works, other], "CPU OpenCL device") \
            is works


def test_no_device_that_builds_is_an_error_naming_each_reason_and_the_fix():
    broken = _Device("pthread-AMD EPYC", "OpenCL 3.0 PoCL 3.0-rc2", False)
    with pytest.raises(pk.BackendUnavailableError) as info:
        cl_devices.first_that_builds(_FakeCL(), [broken], "CPU OpenCL device")
    text = str(info.value)
    assert "no CPU OpenCL device here can build kernels" in text
    assert "pthread-AMD EPYC (OpenCL 3.0 PoCL 3.0-rc2): error: unknown target CPU" in text
    assert "apt-get install pocl-opencl-icd" in text
    assert "PORTAKERN_CPU_PLATFORM" in text


def test_the_device_cpu_uses_builds_kernels():
    cl = pytest.importorskip("pyopencl")
    try:
        device = cl_devices.find_cpu_device(cl)
    except pk.BackendUnavailableError as exc:
        pytest.skip(str(exc))
    assert cl_devices.compiler_failure(cl, device) is None
