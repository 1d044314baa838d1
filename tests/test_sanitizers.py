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
from typing import Any

import numpy as np
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


# ------------------------------------------- overruns refused before launch (item 4)

@pytest.fixture(params=[
    "native",
    "pocl",
    pytest.param("cuda", marks=pytest.mark.gpu),
    pytest.param("metal", marks=pytest.mark.metal),
])
def where(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A backend of each path (the CPU's two, and the GPU ones or their stand-ins)."""
    name = request.param
    monkeypatch.delenv("PORTAKERN_DEBUG", raising=False)
    if name in ("native", "pocl"):
        monkeypatch.setenv("PORTAKERN_CPU", "native" if name == "native" else "opencl")
        if name == "native" and not NativeCPU.available():
            pytest.skip(f"no native CPU path here: {NativeCPU.available().reason}")
        backend: Any = pk.CPU()
    else:
        backend = pk.CUDA() if name == "cuda" else pk.Metal()
    status = type(backend).available()
    if not status:
        pytest.skip(f"{name}: {status.reason}")
    return backend


def _line(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def _on(backend: Any, *arrays: np.ndarray) -> list:
    return [backend.to_device(np.ascontiguousarray(a)) for a in arrays]


def _back(backend: Any, array: Any) -> np.ndarray:
    backend.synchronize()
    return np.asarray(backend.to_host(array))


_PAIRS = """
#define N 128
@kernel void pairs(uint* keys) {
    @localmem uint s[N];                       // two keys per work-item: 64 work-items
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    s[2 * l] = keys[2 * i];
    s[2 * l + 1] = keys[2 * i + 1];
    @synchronize();
    keys[2 * i] = s[2 * l + 1];
    keys[2 * i + 1] = s[2 * l];
}"""


def test_a_local_index_over_a_larger_workgroup_is_refused_before_launch(where):
    k = pk.kernel(_PAIRS)
    keys = np.arange(2 * 256, dtype=np.uint32)
    (dev,) = _on(where, keys)
    with pytest.raises(pk.KernelFaultError) as info:
        k(where, (128,))(dev, ndrange=256)
    err = info.value
    assert (err.parameter, err.argument, err.extent, err.dimension) == ("s", None, 128, 0)
    assert err.index == 128 and err.work_item == (64,)       # 2 * 64 is the first past the end
    assert err.lineno == _line(_PAIRS, "s[2 * l] = keys")
    text = str(err)
    for part in ("s[2 * l]", "@localmem array s[128]", "128 elements", "(128,)",
                 "Refused before launch", "at most 64 work-items"):
        assert part in text, (part, text)
    assert np.array_equal(_back(where, dev), keys)          # nothing ran
    k(where, (64,))(dev, ndrange=256)                         # a group that fits runs
    want = keys.reshape(-1, 2)[:, ::-1].ravel()
    assert np.array_equal(_back(where, dev), want)


def test_the_refusal_reads_the_workgroup_of_each_launch():
    k = pk.kernel(_PAIRS)
    keys = np.arange(2 * 64, dtype=np.uint32)
    k(keys, ndrange=64, workgroupsize=64)
    # A partial group: work-items 0..39 of one group of 128 run, 2 * 39 + 1 < 128.
    keys = np.arange(2 * 40, dtype=np.uint32)
    k(keys, ndrange=40, workgroupsize=128)
    assert np.array_equal(keys, np.arange(80, dtype=np.uint32).reshape(-1, 2)[:, ::-1].ravel())
    with pytest.raises(pk.KernelFaultError, match=r"work-item \(64,\)"):
        k(np.arange(2 * 65, dtype=np.uint32), ndrange=65, workgroupsize=128)


@pytest.mark.parametrize("decl, access, index, extent", [
    ("@private float acc[4];", "acc[4] = 1.0f;", 4, 4),
    ("float acc[4];", "acc[2 + 2] = 1.0f;", 4, 4),
    ("float acc[4];", "acc[-1] = 1.0f;", -1, 4),
    ("@localmem float t[8];", "t[8] = 1.0f;", 8, 8),
    ("@localmem float t[2][3];", "t[1][3] = 1.0f;", 3, 3),
])
def test_a_constant_index_past_the_end_is_refused(decl, access, index, extent):
    k = pk.kernel(f"""
@kernel void c(float* y) {{
    {decl}
    {access}
    y[@index(Global, Linear)] = 0.0f;
}}""")
    y = np.ones(8, np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        k(y, ndrange=8, workgroupsize=8)
    assert (info.value.index, info.value.extent, info.value.lineno) == (index, extent, 4)
    assert info.value.parameter == decl.split()[-1].split("[")[0]
    assert "Refused before launch" in str(info.value)
    assert y.min() == 1.0


@pytest.mark.parametrize("body", [
    # guarded, conditional or not provable: left to the kernel (and to debug mode)
    "if (l < 16) t[l] = 1.0f;",
    "for (int k = 0; k < 1; k++) t[l + 100] = 1.0f;",
    "t[l % 16] = 1.0f;",
    "t[l < 16 ? l : 0] = 1.0f;",
    "t[l / 4] = 1.0f;",
    "float* p = &t[16];",
])
def test_what_cannot_be_proved_is_not_refused(body):
    k = pk.kernel(f"""
@kernel void g(float* y) {{
    @localmem float t[16];
    const long l = @index(Local, Linear);
    {body}
    @synchronize();
    y[@index(Global, Linear)] = 2.0f;
}}""")
    y = np.zeros(64, np.float32)
    k(y, ndrange=64, workgroupsize=64)
    assert y.min() == 2.0


def test_a_define_and_a_declared_group_size_are_read():
    src = """
#define PER 2
@kernel(workgroupsize=32) void d(float* y) {
    @localmem float t[PER * @groupsize()];
    const long l = @index(Local, Linear);
    t[PER * l + 1] = 1.0f;
    t[PER * l + PER] = 1.0f;
    y[@index(Global, Linear)] = 3.0f;
}"""
    with pytest.raises(pk.KernelFaultError) as info:
        pk.kernel(src)(np.zeros(64, np.float32), ndrange=64)
    assert (info.value.index, info.value.extent, info.value.work_item) == (64, 64, (31,))
    assert "t[PER * l + PER]" in str(info.value)


def test_debug_mode_checks_at_run_time_instead():
    k = pk.kernel(_PAIRS, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        k(np.arange(2 * 256, dtype=np.uint32), ndrange=256, workgroupsize=128)
    assert "Refused before launch" not in str(info.value)
    assert info.value.parameter == "s" and info.value.extent == 128


def _pointers_example() -> str:
    text = (ROOT / "docs" / "language.md").read_text()
    blocks = re.findall(r"```c\n(.*?)```", text, re.DOTALL)
    (block,) = [b for b in blocks if "@localmem uint s[" in b and "order(" in b]
    return block


def test_the_pointers_example_of_the_language_page_runs_as_written(where):
    k = pk.kernel(_pointers_example())
    rng = np.random.default_rng(5)
    items, n = 100, 40                          # 100: the last group of 32 is partial
    x = rng.random((items, n), dtype=np.float32)
    w = rng.random(n, dtype=np.float32)
    keys = rng.integers(0, 1000, 2 * items).astype(np.uint32)
    y = np.zeros(items, np.float32)
    dy, dx, dw, dk = _on(where, y, x, w, keys)
    k(where)(dy, dx, dw, dk, np.int32(n), ndrange=items)
    pairs = keys.reshape(-1, 2)
    top = pairs.max(axis=1)
    np.testing.assert_allclose(_back(where, dy), 2 * (x @ w) + 1, rtol=1e-5)
    assert np.array_equal(_back(where, dk), np.stack([top, top], axis=1).ravel())


def test_the_pointers_example_sized_without_its_declared_group_is_refused():
    source = _pointers_example().replace("@kernel(workgroupsize=32)", "@kernel") \
        .replace("s[2 * @groupsize()]", "s[64]")
    k = pk.kernel(source)
    with pytest.raises(pk.KernelFaultError, match=r"s\[2 \* l\]"):
        k(np.zeros(64, np.float32), np.zeros((64, 8), np.float32), np.zeros(8, np.float32),
          np.zeros(128, np.uint32), np.int32(8), ndrange=64, workgroupsize=64)


# ----------------------------- debug mode: private arrays, views, pointer arithmetic (item 1)

_ACCESS = """
@kernel void k(float* y, const float* x, int n) {{
    const long i = @index(Global, Linear);
    {body}
}}"""


@pytest.mark.parametrize("body, what, index, extent", [
    ("float acc[4];\n    for (int k = 0; k < 4; k++) acc[k] = x[k];\n    y[i] = acc[n];",
     "acc", 8, 4),
    ("@private float acc[2][4];\n    acc[1][n] = x[i];\n    y[i] = acc[1][0];", "acc", 8, 4),
    ("const float* row = x + i * 4;\n    y[i] = row[n];", "x", 8, 32),
    ("const float* row = &x[i * 4];\n    y[i] = row[n + 1] + row[0];", "x", 9, 32),
    ("y[i] = *(x + i * 4 + n);", "x", 8, 32),
    ("const float* row = x + i * 4;\n    y[i] = *(row + n);", "x", 8, 32),
    ("const float* row = x + i * 4 + n;\n    y[i] = *row;", "x", 8, 32),
    ("float* out = y + i;\n    *(out + n) = 1.0f;", "y", 8, 8),
    ("float acc[4];\n    acc[0] = x[i];\n    @synchronize();\n    y[i] = acc[n];",
     "acc", 8, 4),
], ids=["private", "private-2d", "view", "view-of-element", "arithmetic", "view-arithmetic",
        "deref", "view-write", "private-across-barrier"])
def test_debug_mode_checks_private_arrays_views_and_pointer_arithmetic(where, body, what,
                                                                        index, extent):
    source = _ACCESS.format(body=body)
    k = pk.kernel(source, debug=True)
    x = np.arange(32, dtype=np.float32)
    y, dx = _on(where, np.zeros(8, np.float32), x)
    k(where)(y, dx, np.int32(0), ndrange=8)              # in bounds: runs
    with pytest.raises(pk.KernelFaultError) as info:
        k(where)(y, dx, np.int32(8), ndrange=8)
    err = info.value
    assert (err.parameter, err.extent) == (what, extent), str(err)
    if what == "acc":
        assert err.argument is None and err.index == index and "private array" in str(err)
    else:
        assert err.argument == ["y", "x"].index(what)
        # the first to fault is some work-item; its index is its own offset plus 8
        stride = 4 if what == "x" else 1  # x viewed by rows of 4, y by element
        assert err.work_item is not None and err.index == index + stride * err.work_item[0]
    assert 0 < err.lineno and source.split("\n")[err.lineno - 1].strip() in str(err)


def test_without_debug_mode_views_render_as_written():
    source = _ACCESS.format(body="const float* row = x + i * 4;\n    y[i] = *(row + n);")
    assert "*(row + n)" in pk.kernel(source).render("c", ndim=1)
    assert "(row - x)" in pk.kernel(source, debug=True).render("c", ndim=1)


@pytest.mark.parametrize("body", [
    "const float* row = x + i * 4;\n    row = x;\n    y[i] = row[n];",   # assigned again
    "const float* a = x + i;\n    { const float* a = x; y[i] = a[n]; }",  # declared twice
])
def test_a_view_whose_array_can_change_is_left_as_written(body):
    k = pk.kernel(_ACCESS.format(body=body), debug=True)
    assert "(row - x)" not in k.render("c", ndim=1) and "(a - x)" not in k.render("c", ndim=1)


# ------------------------------------------- debug mode: initcheck on the native path and PoCL

@pytest.fixture(params=["native", "pocl"])
def cpu_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``CPU()``'s two paths (PORTAKERN_CPU), each skipped where it cannot run."""
    monkeypatch.delenv("PORTAKERN_DEBUG", raising=False)
    if request.param == "native":
        if not NativeCPU.available():
            pytest.skip(f"no native CPU path here: {NativeCPU.available().reason}")
        monkeypatch.setenv("PORTAKERN_CPU", "native")
    else:
        if not pk.CPU.opencl_available():
            pytest.skip(f"no CPU OpenCL device: {pk.CPU.opencl_available().reason}")
        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    return request.param

_HIST = """
@kernel void hist(uint* out, const uint* x) {
    @localmem uint bins[16];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    if (l < 16) bins[l] = 0;                   // work-items outside the ndrange do not run
    @synchronize();
    @atomic_add(&bins[x[i] % 16], 1);
    @synchronize();
    if (l < 16) @atomic_add(&out[l], bins[l]);
}"""


def test_initcheck_finds_the_histogram_whose_masked_items_left_bins_unwritten(cpu_path):
    k = pk.kernel(_HIST, debug=True)
    x = np.arange(100, dtype=np.uint32)
    out = np.zeros(16, np.uint32)
    k(out, x, ndrange=100, workgroupsize=32)   # every bin read was zeroed first
    assert np.array_equal(out, np.bincount(x % 16, minlength=16))
    with pytest.raises(pk.KernelFaultError) as info:
        k(np.zeros(16, np.uint32), x[:10] + 5, ndrange=10, workgroupsize=32)
    err = info.value
    # items 0..9 zeroed bins 0..9; item 5 counts x = 10 into bin 10, which nothing wrote
    assert (err.parameter, err.index, err.extent, err.work_item) == ("bins", 10, 16, (5,))
    assert err.lineno == _line(_HIST, "@atomic_add(&bins")
    assert "no work-item of the group had written" in str(err)


@pytest.mark.parametrize("body, element, line_text", [
    ("t[l] = x[i];\n    @synchronize();\n    y[i] = t[(l + 1) % 8];", 4, "y[i] = t["),
    ("if (l > 0) t[l] = 1.0f;\n    @synchronize();\n    y[i] = t[l];", 0, "y[i] = t[l]"),
    ("t[l] += 1.0f;", 0, "t[l] +="),
    ("u[l][1] = 1.0f;\n    @synchronize();\n    y[i] = u[l][0];", 0, "y[i] = u[l][0]"),
], ids=["neighbour-masked", "one-slot-unwritten", "compound", "2-d"])
def test_initcheck_reports_each_kind_of_read(cpu_path, body, element, line_text):
    source = f"""
@kernel void r(float* y, const float* x) {{
    @localmem float t[8];
    @localmem float u[8][2];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    {body}
}}"""
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        k(np.zeros(4, np.float32), np.ones(4, np.float32), ndrange=4, workgroupsize=8)
    assert info.value.index == element * (2 if "u[" in line_text else 1)
    assert info.value.lineno == _line(source, line_text)


def test_initcheck_stays_quiet_when_every_read_element_was_written(cpu_path):
    k = pk.kernel("""
@kernel void s(float* y, const float* x) {
    @localmem float t[8];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    t[l] = x[i];
    t[l] *= 2.0f;
    @synchronize();
    float& r = t[l];                            // a reference: taken as written
    y[i] = t[(l + 1) % 8] + r;
}""", debug=True)
    y, x = np.zeros(16, np.float32), np.arange(16, dtype=np.float32)
    k(y, x, ndrange=16, workgroupsize=8)
    want = 2 * x.reshape(2, 8)
    assert np.array_equal(y, (np.roll(want, -1, axis=1) + want).ravel())
    for target in ("c", "opencl"):
        assert "pk_w_t" in k.render(target, ndim=1)
    assert "pk_w_t" in k.render("cuda", ndim=1) and "pk_w_t" in k.render("metal", ndim=1)


# ------------------------------------------- debug mode: racecheck on the native path and PoCL

_RACE = """
@kernel void race(float* y, const float* x) {{
    @localmem float t[8];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    t[l] = x[i];
    @synchronize();
    {body}
}}"""


@pytest.mark.parametrize("body, element, first, second, items", [
    # item 0 reads t[1] (a reader mark), then item 1 writes it
    ("t[l] = 2.0f * t[l];\n    y[i] = t[(l + 1) % 8];", 1, ("y[i] = t[(l", False),
     ("t[l] = 2.0f", True), (0, 1)),
    # item 0 writes t[0]; item 1 reads it
    ("if (l == 0) t[0] = 5.0f;\n    y[i] = t[0];", 0, ("t[0] = 5.0f", True), ("y[i] = t[0]", False),
     (0, 1)),
    # every item writes t[3]
    ("t[3] = (float)l;", 3, ("t[3] =", True), ("t[3] =", True), (0, 1)),
    # a compound update of a slot two items share
    ("t[l / 2] += 1.0f;", 0, ("t[l / 2]", True), ("t[l / 2]", True), (0, 1)),
], ids=["read-then-write", "write-then-read", "write-write", "update"])
def test_racecheck_names_both_accesses(cpu_path, body, element, first, second, items):
    source = _RACE.format(body=body)
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        k(np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8, workgroupsize=8)
    err = info.value   # one group: its items run in order on both paths
    assert (err.parameter, err.index, err.extent) == ("t", element, 8)
    assert (err.other_work_item, err.work_item) == ((items[0],), (items[1],))
    assert (err.other_lineno, err.lineno) == (_line(source, first[0]), _line(source, second[0]))
    message = str(err)
    assert "race on element" in message and "no @synchronize() between" in message
    assert f"work-item ({items[0]},) {'wrote' if first[1] else 'read'}" in message
    assert f"work-item ({items[1]},) {'wrote' if second[1] else 'read'}" in message


def test_racecheck_names_the_other_work_item_of_a_2d_group(cpu_path):
    source = """
@kernel void race2(float* y) {
    @localmem float t[2][4];
    auto [r, c] = @index(Local, NTuple);
    auto [gr, gc] = @index(Group, NTuple);
    const bool last = gr == 1 && gc == 1;
    t[r][c] = 1.0f;
    @synchronize();
    t[r][c] = 2.0f;
    y[@index(Global, Linear)] = last ? t[1 - r][c] : t[r][c];
}"""
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        k(np.zeros((4, 8), np.float32), ndrange=(4, 8), workgroupsize=(2, 4))
    err = info.value
    # in group (1, 1), item (2, 4) reads t[1][0]; then item (3, 4) writes it
    assert (err.parameter, err.index, err.extent) == ("t", 4, 8)
    assert (err.other_work_item, err.work_item) == ((2, 4), (3, 4))
    assert (err.other_lineno, err.lineno) == (_line(source, "? t[1 - r]"),
                                              _line(source, "t[r][c] = 2"))


@pytest.mark.parametrize("body", [
    # each barrier starts a new epoch, inside a loop too
    "for (long s = 4; s > 0; s /= 2) {\n        if (l < s) t[l] += t[l + s];\n"
    "        @synchronize();\n    }\n    y[i] = t[0];",
    # atomics are excepted
    "if (l > 0) @atomic_add(&t[0], 1.0f);\n    @synchronize();\n    y[i] = t[0];",
    # one item's own element, read and written
    "t[l] = t[l] + 1.0f;\n    y[i] = t[l];",
], ids=["tree-reduction", "atomics", "own-element"])
def test_racecheck_stays_quiet_without_a_race(cpu_path, body):
    k = pk.kernel(_RACE.format(body=body), debug=True)
    y, x = np.zeros(16, np.float32), np.arange(16, dtype=np.float32)
    k(y, x, ndrange=16, workgroupsize=8)
    groups = x.reshape(2, 8)
    if "s /= 2" in body:
        want = np.repeat(groups.sum(axis=1), 8)
    elif "atomic" in body:
        want = np.repeat(groups[:, 0] + 7, 8)
    else:
        want = x + 1
    assert np.array_equal(y, want)
    assert "pk_rcs_t" in k.render("c", ndim=1) and "pk_rcs_t" in k.render("opencl", ndim=1)
    assert "pk_rcs_t" not in pk.kernel(_RACE.format(body=body)).render("c", ndim=1)
