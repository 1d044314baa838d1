"""Sanitizers (issue 28): crash reports, overruns refused before launch, debug-mode checks.

A check that crashes the process on purpose runs in a subprocess.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import portakern as pk
from portakern.backends.native import NativeCPU

ROOT = Path(__file__).resolve().parent.parent
native = pytest.mark.skipif(not NativeCPU.available().ok, reason="no C++ compiler with OpenMP")
posix = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PORTAKERN_CPU="native")
    env.pop("PORTAKERN_DEBUG", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=240, check=False)


# ---------------------------------------------------------------- crash reports (item 5)

_WILD = """
import numpy as np, portakern as pk
k = pk.kernel('''
@kernel void wild_{rank}(float* y, long stride) {{
    const long i = @index(Global, Linear);
    {local}
    y[i * stride] = 1.0f;
}}''')
y = np.zeros({shape}, np.float32)
k(y, 1, ndrange=y.shape)          # in bounds: the library is loaded and watched
assert y.min() == 1.0
print("launched", flush=True)
k(y, {stride}, ndrange=y.shape{wg})
print("survived", flush=True)
"""


@native
@posix
@pytest.mark.parametrize("case", [
    dict(rank=1, shape="(1 << 16,)", local="", stride=1 << 20, wg="",
         ndrange="(65536,)", workgroup=r"\(\d+,\)"),
    dict(rank=2, shape="(64, 64)", local="@localmem float t[1]; t[0] = 0; @synchronize;",
         stride=1 << 26, wg=", workgroupsize=(4, 16)", ndrange="(64, 64)",
         workgroup=r"\(4, 16\)"),
], ids=["plain", "lockstep-2d"])
def test_a_crash_inside_a_kernel_names_the_kernel_and_launch(case):
    done = _run(_WILD.format(**case))
    assert done.returncode == -signal.SIGSEGV, (done.returncode, done.stderr[-2000:])
    assert "launched" in done.stdout and "survived" not in done.stdout
    err = done.stderr
    assert "SIGSEGV" in err
    assert f"kernel 'wild_{case['rank']}'" in err
    m = re.search(r"ndrange=(\(.*?\)), workgroup=(\(.*?\))", err)
    assert m, err
    assert m.group(1) == case["ndrange"]
    assert re.fullmatch(case["workgroup"], m.group(2)), m.group(2)
    assert "rerun with PORTAKERN_DEBUG=1" in err


@native
@posix
def test_the_crash_report_comes_before_faulthandler_s_traceback():
    done = _run(_WILD.format(rank=1, shape="(1024,)", local="", stride=1 << 26, wg=""),
                "-X", "faulthandler")
    assert done.returncode == -signal.SIGSEGV, done.stderr[-2000:]
    err = done.stderr
    assert "kernel 'wild_1'" in err and "Fatal Python error: Segmentation fault" in err
    assert err.index("kernel 'wild_1'") < err.index("Fatal Python error")


@native
@posix
def test_a_crash_outside_a_kernel_is_not_blamed_on_one():
    done = _run("""
        import ctypes, numpy as np, portakern as pk
        k = pk.kernel('''@kernel void fine(float* y) { y[@index(Global, Linear)] = 2.0f; }''')
        y = np.zeros(64, np.float32)
        k(y, ndrange=y.shape)
        assert y.min() == 2.0
        print("launched", flush=True)
        ctypes.string_at(16)   # a crash in Python's own code, after the launch
    """)
    assert done.returncode == -signal.SIGSEGV, done.stderr[-2000:]
    assert "launched" in done.stdout
    assert "portakern" not in done.stderr, done.stderr


@native
@posix
def test_a_signal_sent_from_outside_still_kills():
    # The handler gives a kill()ed SIGBUS back to the default action, which kills.
    done = _run("""
        import os, signal, numpy as np, portakern as pk
        k = pk.kernel('''@kernel void fine(float* y) { y[@index(Global, Linear)] = 2.0f; }''')
        y = np.zeros(64, np.float32)
        k(y, ndrange=y.shape)
        os.kill(os.getpid(), signal.SIGBUS)
        print("survived", flush=True)
    """)
    assert done.returncode == -signal.SIGBUS, (done.returncode, done.stderr[-2000:])
    assert "survived" not in done.stdout


def test_the_record_layout_is_the_runtime_s():
    from portakern.backends.native_crash import RECORD_STRUCT

    k = pk.kernel("@kernel void r(float* y) { y[@index(Global, Linear)] = 1.0f; }")
    for ndim in (1, 2, 3):
        source = k.render("c", ndim=ndim)
        assert RECORD_STRUCT in source
        assert f'pk_crash_record = {{"r", 0, 0, {ndim}, {ndim}, ' in source
        # every size of the launch is recorded, and the launch counts itself in and out
        for d in range(ndim):
            assert f"pk_crash_record.n[{d}] = pk_n{d};" in source
            assert f"pk_crash_record.ls[{d}] = pk_ls{d};" in source
        assert source.count("&pk_crash_record.running") == 2
