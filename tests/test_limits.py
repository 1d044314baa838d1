"""``backend.limits``: the device facts a library sizes its launches by (DESIGN §2a)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import REAL_CUDA

import portakern as pk
from portakern.backends.base import Backend, Limits


def _check_shape(limits: Limits) -> None:
    assert isinstance(limits, Limits)
    assert all(isinstance(v, int) for v in limits), limits
    assert limits.max_workgroup_size >= 1 and limits.local_memory > 0
    assert limits.subgroup_size >= 1 and limits.compute_units >= 0


def test_cpu_limits_hold_on_both_paths():
    cpu = pk.CPU()
    limits = cpu.limits
    _check_shape(limits)
    device = cpu.device  # PoCL (or the OpenCL CPU device found)
    assert limits.local_memory <= int(device.local_mem_size)
    assert limits.max_workgroup_size <= int(device.max_work_group_size)
    assert limits.compute_units >= 1


def test_a_kernel_sized_by_the_limits_runs_on_cpu():
    """A library sizes a workgroup by ``limits`` and the launch is accepted."""
    k = pk.kernel("@kernel void fill(long* y) { y[@index(Global, Linear)] = @groupsize(); }")
    group = min(64, pk.CPU().limits.max_workgroup_size)
    y = np.zeros(4 * group, np.int64)
    k(pk.CPU(), workgroupsize=group)(y, ndrange=y.shape)
    assert (y == group).all()


def test_native_local_memory_follows_the_stack_it_runs_on():
    code = ("from portakern.backends.cpu_paths import native_backend; "
            "paths = native_backend(); "
            "print(paths[0].limits.local_memory if paths else 'none')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**_env(), "OMP_STACKSIZE": "4M"}, check=True).stdout.strip()
    if out == "none":
        pytest.skip("no C++ compiler with OpenMP: the native path is off")
    assert int(out) == (4 << 20) - (1 << 20)  # OMP_STACKSIZE less the caller's 1 MiB


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "OMP_STACKSIZE"}


def test_opencl_reports_its_device():
    cl = pytest.importorskip("pyopencl")
    queue = cl.CommandQueue(pk.CPU().context)
    limits = pk.OpenCL(queue).limits
    _check_shape(limits)
    assert limits.local_memory == int(queue.device.local_mem_size)
    assert limits.compute_units == int(queue.device.max_compute_units)


@pytest.mark.gpu
def test_cuda_limits():
    limits = pk.CUDA().limits
    _check_shape(limits)
    assert limits.subgroup_size == 32
    if not REAL_CUDA:  # the stand-in imitates an H100 SXM (sm_90)
        assert limits == Limits(1024, 48 * 1024, 32, 132)


@pytest.mark.metal
def test_metal_limits():
    limits = pk.Metal().limits
    _check_shape(limits)
    assert limits == Limits(1024, 32 * 1024, 32, 0)


def test_a_plugin_without_limits_gets_the_conservative_default():
    class Plain(Backend, abstract=True):
        pass

    limits = Backend.limits.fget(Plain())  # type: ignore[attr-defined]
    assert limits == Limits(256, 32 * 1024, 32, 1)



def test_the_api_doc_example_runs_as_written():
    from conftest import _doc_blocks

    (block,) = [text for lang, text in _doc_blocks("api.md")
                if lang == "python" and ".limits" in text]
    exec(compile(block, "docs/api.md", "exec"), {})  # noqa: S102
