"""Choosing an OpenCL device whose compiler works on this machine.

A driver can list a device and then fail to build any program for it. PoCL 3.0 in the
PyOpenCL wheel links LLVM 14, which does not know every newer CPU (seen: an AMD EPYC with
Zen 5's instruction set): it names such a CPU "generic", and every build fails with
"unknown target CPU 'generic'". A device whose compiler refuses a one-line kernel is
passed over for the next one, with a warning that names the reason; when none is left,
the error names each device's reason and the fix. Each device is tried once a process.
"""

from __future__ import annotations

import functools
import os
import platform
import warnings
from typing import Any

from ..errors import BackendUnavailableError

__all__ = ["compiler_failure", "cpu_install_hint", "find_cpu_device", "first_that_builds",
           "is_pocl"]

_PROBE = "__kernel void pk_probe(__global uchar* a) { a[get_global_id(0)] = 7; }"


def _device_name(device: Any) -> str:
    return f"{device.name.strip()} ({device.platform.version.strip()})"


@functools.cache
def compiler_failure(cl: Any, device: Any) -> str | None:
    """None where a one-line kernel builds for ``device``, else the compiler's complaint."""
    try:
        cl.Program(cl.Context([device]), _PROBE).build()
    except Exception as exc:  # noqa: BLE001 - a driver fails to build in many ways
        lines = [ln.strip() for ln in str(exc).splitlines() if "error" in ln.lower()]
        return lines[-1] if lines else str(exc).strip().splitlines()[0]
    return None


def first_that_builds(cl: Any, devices: list[Any], what: str) -> Any:
    """The first of ``devices`` whose compiler works; a warning for each one passed over.

    ``what`` names the kind of device in the error ("CPU OpenCL device").
    """
    refused = []
    for device in devices:
        why = compiler_failure(cl, device)
        if why is None:
            for name, reason in refused:
                warnings.warn(
                    f"OpenCL device {name} cannot build kernels ({reason}); using "
                    f"{_device_name(device)} instead", RuntimeWarning, stacklevel=3)
            return device
        refused.append((_device_name(device), why))
    listed = "; ".join(f"{name}: {reason}" for name, reason in refused)
    raise BackendUnavailableError(
        f"no {what} here can build kernels ({listed}). PoCL 3.0 from the PyOpenCL wheel "
        "(LLVM 14) does not know every newer CPU; on Debian or Ubuntu install the "
        "distribution's PoCL (apt-get install pocl-opencl-icd), or select another driver "
        "with PORTAKERN_CPU_PLATFORM")


def cpu_install_hint() -> str:
    """The command that installs a CPU OpenCL driver on this platform."""
    system, machine = platform.system(), platform.machine().lower()
    if system == "Linux" and machine in ("x86_64", "amd64"):
        return 'pip install "pyopencl[pocl]"  (or: pip install pocl-binary-distribution)'
    if system == "Linux":
        return "apt-get install pocl-opencl-icd  (Debian/Ubuntu; PoCL has no PyPI wheel here)"
    if system == "Darwin":
        return "macOS ships a CPU OpenCL driver; reinstall pyopencl if it is not found"
    return "install your CPU vendor's OpenCL runtime (Intel oneAPI or AMD), then pyopencl"


def is_pocl(platform: Any) -> bool:
    # PoCL's platform is named "Portable Computing Language"; its version says PoCL.
    return "pocl" in f"{platform.name} {platform.version}".lower()


def find_cpu_device(cl: Any) -> Any:
    """The CPU device ``CPU()`` uses: PoCL first, ``PORTAKERN_CPU_PLATFORM`` to pick one."""
    wanted = os.environ.get("PORTAKERN_CPU_PLATFORM", "")
    candidates = []
    for p in cl.get_platforms():
        if wanted and wanted.lower() not in p.name.lower():
            continue
        try:
            devices = p.get_devices(device_type=cl.device_type.CPU)
        except cl.Error:
            continue
        for d in devices:
            # PoCL first: it is the driver the wheels ship and the one we test.
            candidates.append((0 if is_pocl(p) else 1, d))
    if not candidates:
        raise BackendUnavailableError(
            "no CPU OpenCL device found" + (f" on a platform matching {wanted!r}" if wanted else "")
            + "; install one with: " + cpu_install_hint())
    candidates.sort(key=lambda c: c[0])
    return first_that_builds(cl, [d for _, d in candidates], "CPU OpenCL device")
