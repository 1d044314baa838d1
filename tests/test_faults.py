"""Faults and attacks that must not take the process down or run foreign code (issue 12).

Each test reproduces a finding of issue 12, in a child process where the finding
crashed one (a damaged shared object was SIGBUS or SIGSEGV there).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import unique_saxpy

import portakern as pk
from portakern.backends.native import NativeCPU
from portakern.cache import store as cache
from portakern.cache.store import DiskCache

native = pytest.mark.skipif(not NativeCPU.available(), reason="no C++ compiler with OpenMP")
root_only = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                               reason="giving a file to another user needs root")


def _objects(d) -> list:
    return sorted(p for p in (d / f"v{cache.FORMAT}" / "native").rglob("*.so")
                  if not p.name.startswith(".tmp-"))


_CHILD = r"""
import json, sys, warnings
import numpy as np
import portakern as pk
src = open(sys.argv[1]).read()
y, x = np.ones(5000, np.float32), np.arange(5000, dtype=np.float32)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pk.kernel(src)(y, x, np.float32(3), ndrange=y.shape)
print(json.dumps({"ok": bool(np.array_equal(y, 3 * x + 1)),
                  "native": "pyopencl" not in sys.modules,
                  "warnings": [str(w.message)[:600] for w in caught]}))
"""


def _child(src_file, env) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(src_file)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"child died ({done.returncode}): {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def built(cache_dir, tmp_path):
    """A kernel built once by a child: (source file, child env, its shared objects).

    Every shared object of the native path is damaged alike (the kernel's, and any
    library of portakern's own that the path keeps in the cache).
    """
    src_file = tmp_path / "saxpy.pk"
    src_file.write_text(unique_saxpy())
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(cache_dir))
    env.pop("PORTAKERN_CPU", None)
    got = _child(src_file, env)
    assert got["ok"] and got["native"]
    objects = _objects(cache_dir)
    assert objects
    return src_file, env, objects


def _all_good(cache_dir, objects) -> bool:
    store = DiskCache(cache_dir)
    return all(b"pk_launch" in (store.get("native", so.name) or b"") for so in objects)


def _text_section(raw: bytes) -> tuple[int, int]:
    """(offset, size) of .text in the ELF image inside ``raw`` (64-bit little-endian)."""
    base = raw.index(b"\x7fELF")
    shoff, = struct.unpack_from("<Q", raw, base + 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", raw, base + 0x3A)

    def section(i: int) -> tuple[int, int, int]:
        h = base + shoff + i * shentsize
        name, = struct.unpack_from("<I", raw, h)
        off, size = struct.unpack_from("<QQ", raw, h + 0x18)
        return name, off, size

    _, stroff, _ = section(shstrndx)
    for i in range(shnum):
        name, off, size = section(i)
        if raw[base + stroff + name:].startswith(b".text\0"):
            return base + off, size
    raise AssertionError("no .text section")


def _replace(path, data: bytes) -> None:
    tmp = path.with_name(".tmp-test")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


# -- 3. a damaged shared object is rebuilt, never loaded ---------------------------------

@native
@pytest.mark.skipif(sys.platform != "linux" or sys.byteorder != "little", reason="ELF64 LE")
@pytest.mark.parametrize("damage", [
    "truncated",
    pytest.param("text-zeroed", marks=pytest.mark.slow(
        reason="a second cold build; [truncated] and test_native.py::"
               "test_corrupt_shared_object_is_rebuilt check the same rebuild")),
])
def test_a_damaged_shared_object_is_rebuilt(cache_dir, built, damage):
    src_file, env, objects = built
    for so in objects:
        raw = so.read_bytes()
        if damage == "truncated":
            _replace(so, raw[:len(raw) // 2])
        else:
            off, size = _text_section(raw)
            _replace(so, raw[:off] + bytes(size) + raw[off + size:])
    assert not _all_good(cache_dir, objects)
    # Three runs in a row (each crashed before): the first rebuilds, the others load.
    for _ in range(3):
        assert _child(src_file, env)["ok"]
    assert _all_good(cache_dir, objects)


def _compile_library(tmp_path, body: str):
    src = tmp_path / "lib.cpp"
    src.write_text(body)
    out = tmp_path / "lib.so"
    subprocess.run([NativeCPU().toolchain.compiler, "-shared", "-fPIC", str(src), "-o",
                    str(out)], check=True, capture_output=True)
    return out


@native
def test_a_valid_library_without_pk_launch_is_rebuilt(cache_dir, built, tmp_path):
    src_file, env, objects = built
    other = _compile_library(tmp_path, 'extern "C" int something_else(void) { return 1; }')
    # Stored the way portakern stores one, digest and all: it loads, but is no kernel.
    for so in objects:
        DiskCache(cache_dir).put_library("native", so.name, other)
    assert not _all_good(cache_dir, objects)
    for _ in range(2):
        assert _child(src_file, env)["ok"]
    assert _all_good(cache_dir, objects)


# -- 2. cache poisoning ------------------------------------------------------------------

_EVIL = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void pwn(void) {
    const char* p = getenv("PK_MARKER");
    FILE* f = p ? fopen(p, "w") : 0;
    if (f) { fputs("ran", f); fclose(f); }
}
extern "C" __attribute__((visibility("default"))) void pk_launch(void** a, long long* g) {}
"""


@pytest.fixture
def planted(built, tmp_path):
    """A well-formed entry (right digest) whose library runs code when loaded."""
    src_file, env, objects = built
    evil = _compile_library(tmp_path, _EVIL)
    for so in objects:
        DiskCache(so.parents[3]).put_library("native", so.name, evil)
    marker = tmp_path / "marker"
    return src_file, dict(env, PK_MARKER=str(marker)), objects, marker


@native
@root_only
def test_a_library_swapped_in_by_another_user_is_never_loaded(planted):
    src_file, env, objects, marker = planted
    for so in objects:
        os.chown(so, 12345, -1)
    got = _child(src_file, env)
    assert got["ok"] and not marker.exists()
    assert {so.stat().st_uid for so in objects} == {os.geteuid()}  # rebuilt in place


@native
@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX modes")
def test_a_cache_folder_others_can_write_is_not_used(planted):
    src_file, env, objects, marker = planted
    objects[0].parents[3].chmod(0o777)
    got = _child(src_file, env)
    assert got["ok"] and not marker.exists()
    assert any("writable by other users" in w for w in got["warnings"]), got


@native
@root_only
def test_a_cache_folder_of_another_user_is_not_used(planted):
    src_file, env, objects, marker = planted
    os.chown(objects[0].parents[3], 12345, -1)
    got = _child(src_file, env)
    assert got["ok"] and not marker.exists()
    assert sum("owned by user id 12345" in w for w in got["warnings"]) == 1


def test_a_rewritten_render_entry_with_a_fresh_header_is_refused_from_a_foreign_folder(
        cache_dir):
    # The render cache's header is integrity, not authentication: what protects an
    # entry from another user is that the folder is private, and checked.
    y, x = np.ones(8, np.float32), np.arange(8, dtype=np.float32)
    src = unique_saxpy()
    pk.kernel(src)(y, x, np.float32(2), ndrange=8)
    store = DiskCache(cache_dir)
    for entry in sorted((cache_dir / f"v{cache.FORMAT}" / "render").rglob("*")):
        if entry.is_file():
            data = store.get("render", entry.name)
            store.put("render", entry.name, data.replace(b"a * x[i]", b"(a + 100) * x[i]"))
    cache_dir.chmod(0o777)
    cache._DEFAULT.clear()
    y[:] = 1
    with pytest.warns(cache.CacheWarning, match="writable by other users"):
        pk.kernel(src)(y, x, np.float32(2), ndrange=8)
    np.testing.assert_array_equal(y, 2 * x + 1)
    cache._DEFAULT.clear()


# -- 8. templates and constants ------------------------------------------------------------

def test_templates_render_in_the_sandbox(tmp_path):
    marker = tmp_path / "ran"
    src = ("{{ cycler.__init__.__globals__.os.system('touch " + str(marker) + "') }}\n"
           "@kernel void f(float* y) { y[@index(Global, Linear)] = 1.0f; }")
    with pytest.raises(pk.KernelSyntaxError, match="sandbox") as exc:
        pk.kernel(src).render("opencl")
    assert exc.value.lineno == 1 and isinstance(exc.value, pk.PortakernError)
    assert not marker.exists()


def test_templates_still_do_what_kernels_need():
    src = ("{% for i in range(N) %}// {{ '%d' % i }} {{ [1, 2]|sum }} {{ loop.index }}\n"
           "{% endfor %}@kernel void f(float* y) { y[0] = {{ N * 2 }}; }")
    text = pk.kernel(src, N=3).render("opencl")
    assert "// 2 3 3" in text and "y[0] = 6" in text


class _Sneaky(str):
    """A string that claims to equal every type name."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("float")


@pytest.mark.parametrize("how", ["kernel", "specialize", "render"])
def test_a_str_subclass_cannot_pass_for_a_type_name(how):
    src = "@kernel void f(T* y) { y[@index(Global, Linear)] = {{ N }}; }"
    evil = _Sneaky("float; system(0)")
    # As N it is an expression constant that {{ N }} may not paste (KernelSyntaxError);
    # as T no type name (KernelTypeError): refused either way, before anything renders.
    with pytest.raises((pk.KernelTypeError, pk.KernelSyntaxError)):
        if how == "kernel":
            pk.kernel(src, N=evil)
        elif how == "specialize":
            pk.kernel(src).specialize(T=evil, N=1)
        else:
            pk.kernel(src, N=1).render("opencl", T=evil)


def test_subclasses_of_numbers_are_coerced():
    class Int(int):
        def __str__(self) -> str:
            return "1; evil()"

        __repr__ = __str__

    class Float(float):
        def __repr__(self) -> str:
            return "1; evil()"

    k = pk.kernel("@kernel void f(float* y) { y[0] = {{ A }} + {{ B }}; }", A=Int(4),
                  B=Float(0.5))
    assert type(k.constants["A"]) is int and type(k.constants["B"]) is float
    assert "y[0] = 4 + 0.5" in k.render("opencl")


@pytest.mark.parametrize("value", [2**64 + 5, 10**400, -(2**63) - 1])
def test_integer_constants_out_of_range_are_refused(value):
    k = pk.kernel("@kernel void f(long* y) { y[0] = {{ N }}; }")
    with pytest.raises(pk.KernelTypeError, match=r"constant N=.* out of range"):
        k.specialize(N=value)


@pytest.mark.parametrize("value", [2**64 - 1, -(2**63)])
def test_integer_constants_at_the_ends_of_the_range_are_accepted(value):
    assert pk.kernel("@kernel void f(long* y) { y[0] = 1; }").specialize(N=value)


@pytest.mark.parametrize("name", ['evil\n#error injected\n.pk', 'a"b\\c.pk',
                                  "tab\there.pk"])
def test_file_names_are_escaped_in_line_directives(tmp_path, name):
    path = tmp_path / name
    path.write_text("@kernel void f(float* y) { y[@index(Global, Linear)] = 1.0f; }\n")
    for target in ("opencl", "c"):
        text = pk.Kernel.from_file(path).render(target)
        lines = [ln for ln in text.splitlines() if ln.startswith("#line")]
        assert lines and all(ln.endswith('.pk"') for ln in lines), lines
        assert not any(ln.startswith("#error") for ln in text.splitlines())


# -- 9. internal errors that leaked ---------------------------------------------------------

def test_a_lone_surrogate_is_an_error_at_kernel_creation():
    src = "@kernel void f(float* y) {\n  // caf\udce9\n  y[@index(Global, Linear)] = 1; }"
    with pytest.raises(pk.KernelSyntaxError, match="surrogate") as exc:
        pk.kernel(src)
    assert (exc.value.lineno, exc.value.offset) == (2, 9)


def test_a_type_variable_named_target_binds_through_render():
    k = pk.kernel("@kernel void f(target* y) { y[@index(Global, Linear)] = 1; }")
    assert "double* y" in k.render("opencl", target="double")


def test_render_target_keyword_still_works():
    k = pk.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = 1; }")
    assert "__global__" in k.render(target="cuda")


def test_a_backend_protocol_that_raises_is_wrapped():
    class Weird:
        @staticmethod
        def __portakern_backend__(array):
            raise RuntimeError("boom")

    k = pk.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = 1; }")
    with pytest.raises(pk.PortakernError, match="Weird.__portakern_backend__ raised") as exc:
        k(Weird(), ndrange=4)
    assert isinstance(exc.value.__cause__, RuntimeError)


def test_timedelta_for_a_long_names_the_parameter():
    k = pk.kernel("@kernel void f(float* y, long n) { y[@index(Global, Linear)] = n; }")
    with pytest.raises(pk.PortakernError, match="argument 1 'n'"):
        k(np.zeros(4, np.float32), np.timedelta64(5, "s"), ndrange=4)


def test_an_ndrange_error_on_first_call_has_no_internal_context():
    k = pk.kernel("@kernel void f(float* y) { y[@index(Global, Linear)] = 1; }")
    with pytest.raises(pk.NDRangeError) as exc:
        k(np.zeros(4, np.float32), ndrange=4, workgroupsize=10**6)
    assert exc.value.__context__ is None and exc.value.__cause__ is None


@native
def test_native_fallback_warning_points_at_the_callers_line(monkeypatch):
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    src = """
    @kernel void f(float* y) {
        const long i = @index(Global, Linear);
    {% if target == "opencl" %}
        y[i] = native_sin(1.0f);
    {% else %}
        y[i] = not_a_function();
    {% endif %}
    }"""
    y = np.zeros(8, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pk.kernel(src)(y, ndrange=8); line = sys._getframe().f_lineno  # noqa: E702
    (w,) = [w for w in caught if issubclass(w.category, pk.NativeFallbackWarning)]
    assert (w.filename, w.lineno) == (__file__, line)


# -- compiler children and their scratch folders -------------------------------------------

_SCRATCH = r"""
import json, os, sys
import numpy as np
import portakern as pk
from portakern.errors import CompilationError
done = []
y = np.zeros(64, np.float32)
pk.kernel("@kernel void ok(float* y) { y[@index(Global, Linear)] = 1; }")(y, ndrange=64)
done.append("native build" if y.sum() == 64 else "native build: wrong result")
try:
    pk.kernel("@kernel void bad(float* y) { y[@index(Global, Linear)] = nowhere; }")(
        y, ndrange=64)
except CompilationError:
    done.append("failed native build")
from portakern.emulate import cupy as standin
if standin.available()[0]:
    with standin.installed() as cp:
        g = cp.zeros(64, dtype=np.float32)
        pk.kernel("@kernel void ok2(float* y) { y[@index(Global, Linear)] = 2; }")(
            g, ndrange=64)
        done.append("stand-in build")
from portakern.checks import cuda, metal
if cuda._find_nvcc():
    cuda.compile_cuda_ptx("__global__ void k(float* y) { y[0] = 1; }", compiler="nvcc")
    try:
        cuda.compile_cuda_ptx("__global__ void k(float* y) { y[0] = nowhere; }",
                              compiler="nvcc")
    except CompilationError:
        done.append("nvcc checks")
if metal.metal_check_available()[0]:
    msl = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* y) "
    metal.check_metal(msl + "{ y[0] = 1; }")
    try:
        metal.check_metal(msl + "{ y[0] = nowhere; }")
    except CompilationError:
        done.append("metal checks")
print(json.dumps({"done": done, "tmp": sorted(os.listdir(os.environ["TMPDIR"]))}))
"""


@native
@pytest.mark.parametrize("cache", [
    "on",
    pytest.param("off", marks=pytest.mark.slow(
        reason="the same builds and checks again, cold, with the disk cache off; [on] "
               "checks the same clean-up of scratch and load folders")),
])
def test_builds_and_checks_leave_no_scratch_folders(tmp_path, cache):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PORTAKERN_CACHE_DIR=str(tmp_path / "c"),
               PORTAKERN_CACHE="1" if cache == "on" else "0")
    env.pop("PORTAKERN_CPU", None)
    done = subprocess.run([sys.executable, "-c", _SCRATCH], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["done"][:2] == ["native build", "failed native build"], got
    # While the process ran, only its own load folder (off: no cache folder to load from).
    assert [n for n in got["tmp"] if not n.startswith("portakern-load-")] == [], got
    # After it exited, nothing at all.
    assert sorted(p.name for p in tmp.iterdir()) == []


_FAKE_COMPILER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "clang version 17.0.0"; exit 0; fi
echo $$ > "{pidfile}.tmp" && mv "{pidfile}.tmp" "{pidfile}"
exec sleep 100000
"""

_HUNG = r"""
import sys
what, fake = sys.argv[1], sys.argv[2]
if what == "probe":
    from portakern.backends import native
    native.native_toolchain()
elif what == "nvcc":
    from portakern.checks import cuda
    cuda._compile_nvcc(fake, "__global__ void k() {}", "compute_90", "k.cu", [], [], {})
elif what == "emulate":
    from portakern.emulate import build
    build._run([fake, "-c", "x.cpp"], "compiling x.cpp")
elif what == "metal":
    from portakern.checks import metal  # finds the fake clang first on PATH
    metal.check_metal("kernel void k() {}")
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # reaped soon
    except OSError:
        return True


def _wait_for(condition, what: str, guard_s: float = 240) -> None:
    """Poll ``condition`` until true; fail (never hang) after ``guard_s``."""
    import time

    deadline = time.monotonic() + guard_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what} after {guard_s} s")
        time.sleep(0.05)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("what", ["probe", "nvcc", "emulate", "metal"])
def test_the_probe_checks_and_stand_ins_compilers_die_with_their_parent(tmp_path, what):
    import signal

    pidfile = tmp_path / "compiler.pid"
    fake = tmp_path / "bin" / "clang"
    fake.parent.mkdir()
    fake.write_text(_FAKE_COMPILER.format(pidfile=pidfile))
    fake.chmod(0o755)
    env = dict(os.environ, CXX=str(fake), PORTAKERN_CACHE_DIR=str(tmp_path / "c"),
               PATH=f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               TMPDIR=str(tmp_path))
    parent = subprocess.Popen([sys.executable, "-c", _HUNG, what, str(fake)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: pidfile.exists() or parent.poll() is not None, "the compiler")
        assert parent.poll() is None, parent.communicate()[1][-2000:]
        compiler = int(pidfile.read_text())
        assert not _gone(compiler)
        parent.send_signal(signal.SIGKILL)  # no cleanup, no exception handler runs
        parent.wait(timeout=240)
        _wait_for(lambda: _gone(compiler), f"compiler {compiler} to die with its parent")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=240)
        if pidfile.exists() and not _gone(int(pidfile.read_text())):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
