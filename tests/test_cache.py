"""The disk cache: keys, atomic entries, corruption, read-only folders, concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import hammer_threads, unique_saxpy

import portakern as pk
from portakern.cache import store as cache
from portakern.cache.store import CacheWarning, DiskCache

pytestmark = pytest.mark.filterwarnings("error::portakern.cache.store.CacheWarning")


@pytest.fixture
def opencl_cpu(monkeypatch):
    """CPU() runs every kernel on its OpenCL device (PoCL), whose binaries are cached.

    The native path's shared objects have tests of their own in test_native.py.
    """
    monkeypatch.setenv("PORTAKERN_CPU", "opencl")


def _entries(d, kind: str) -> list:
    return sorted(p for p in (d / f"v{cache.FORMAT}" / kind).rglob("*")
                  if p.is_file() and not p.name.startswith(".tmp-"))


# -- DiskCache ------------------------------------------------------------------------------

def test_put_get_roundtrip(tmp_path):
    store = DiskCache(tmp_path)
    key = cache.make_key("test", "a")
    assert store.get("test", key) is None
    store.put("test", key, b"payload")
    assert store.get("test", key) == b"payload"
    # A second object on the same folder (another process) sees it too.
    assert DiskCache(tmp_path).get("test", key) == b"payload"
    assert (store.hits, store.misses) == (1, 1)


def test_overwrite_replaces_entry(tmp_path):
    store = DiskCache(tmp_path)
    store.put("test", "k" * 64, b"one")
    store.put("test", "k" * 64, b"two")
    assert store.get("test", "k" * 64) == b"two"
    assert len(_entries(tmp_path, "test")) == 1


def test_keys_depend_on_every_part():
    base = cache.make_key("render", "src", ("T", "float"), 1)
    assert base == cache.make_key("render", "src", ("T", "float"), 1)
    assert base != cache.make_key("render", "src", ("T", "double"), 1)
    assert base != cache.make_key("opencl", "src", ("T", "float"), 1)
    # Parts are length-prefixed: moving a boundary changes the key.
    assert cache.make_key("k", "ab", "c") != cache.make_key("k", "a", "bc")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "empty"])
def test_corrupt_entry_is_dropped_and_rebuilt(tmp_path, damage):
    store = DiskCache(tmp_path)
    key = cache.make_key("test", damage)
    store.put("test", key, b"x" * 1000)
    (path,) = _entries(tmp_path, "test")
    raw = path.read_bytes()
    path.write_bytes({"garbage": b"not an entry at all",
                      "truncated": raw[:len(raw) // 2],
                      "flipped": raw[:-1] + bytes([raw[-1] ^ 1]),
                      "empty": b""}[damage])
    assert store.get("test", key) is None
    assert not path.exists()
    store.put("test", key, b"rebuilt")
    assert store.get("test", key) == b"rebuilt"


def test_unwritable_folder_falls_back_to_memory_with_one_warning(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache folder cannot be created under a file")
    store = DiskCache(blocker / "cache")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store.put("test", "k1", b"one")
        store.put("test", "k2", b"two")
    assert [w.category for w in caught] == [CacheWarning]
    assert "PORTAKERN_CACHE_DIR" in str(caught[0].message)
    assert store.get("test", "k1") == b"one" and store.get("test", "k2") == b"two"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into read-only folders")
def test_read_only_folder_still_serves_its_entries(tmp_path):
    store = DiskCache(tmp_path)
    store.put("test", "k1", b"one")
    (tmp_path / f"v{cache.FORMAT}" / "test" / "k1"[:2]).chmod(0o555)
    (tmp_path / f"v{cache.FORMAT}" / "test").chmod(0o555)
    try:
        fresh = DiskCache(tmp_path)
        with pytest.warns(CacheWarning):
            fresh.put("test", "k2", b"two")
        assert fresh.get("test", "k1") == b"one"
        assert fresh.get("test", "k2") == b"two"
    finally:
        (tmp_path / f"v{cache.FORMAT}" / "test").chmod(0o755)
        (tmp_path / f"v{cache.FORMAT}" / "test" / "k1"[:2]).chmod(0o755)


def test_threads_writing_one_entry(tmp_path):
    store = DiskCache(tmp_path)
    payloads = [bytes([n]) * 100_000 for n in range(8)]
    barrier = threading.Barrier(len(payloads))

    def write(data: bytes) -> None:
        barrier.wait()
        for _ in range(20):
            store.put("test", "same", data)
            assert store.get("test", "same") in payloads

    threads = [threading.Thread(target=write, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get("test", "same") in payloads
    assert len(list((tmp_path / f"v{cache.FORMAT}" / "test").rglob("*"))) == 2  # dir + entry


def test_clear(tmp_path):
    store = DiskCache(tmp_path)
    store.put("a", "k1", b"1")
    store.put("b", "k2", b"2")
    assert store.clear() == 2
    assert store.get("a", "k1") is None


# -- configuration ------------------------------------------------------------------------

def test_cache_dir_env_moves_it(cache_dir):
    assert cache.cache_dir() == cache_dir
    assert cache.default_cache().directory == cache_dir


def test_default_cache_dir_is_platformdirs(monkeypatch):
    import platformdirs

    monkeypatch.delenv("PORTAKERN_CACHE_DIR", raising=False)
    assert str(cache.cache_dir()) == platformdirs.user_cache_dir("portakern", appauthor=False)


@pytest.mark.parametrize("value", ["0", "false", "OFF", "no"])
def test_disabled_cache_writes_nothing(cache_dir, monkeypatch, value):
    monkeypatch.setenv("PORTAKERN_CACHE", value)
    assert not cache.cache_enabled()
    assert cache.default_cache().directory is None
    k = pk.kernel(unique_saxpy())
    y, x = np.ones(64, np.float32), np.arange(64, dtype=np.float32)
    k(y, x, np.float32(2), ndrange=y.shape)
    np.testing.assert_array_equal(y, 2 * x + 1)
    assert not cache_dir.exists()


# -- kernels through the cache --------------------------------------------------------------

def test_kernel_fills_the_cache_and_a_new_kernel_hits_it(cache_dir, opencl_cpu):
    src = unique_saxpy()
    y, x = np.ones(1000, np.float32), np.arange(1000, dtype=np.float32)
    pk.kernel(src)(y, x, np.float32(2), ndrange=y.shape)
    assert _entries(cache_dir, "render") and _entries(cache_dir, "opencl")
    store = cache.default_cache()
    hits = store.hits
    # A new Kernel object has no memory cache: what it needs comes from disk.
    pk.kernel(src)(y, x, np.float32(2), ndrange=y.shape)
    assert store.hits >= hits + 1
    np.testing.assert_array_equal(y, 4 * x + 1)


def test_stale_binary_is_rebuilt(cache_dir, opencl_cpu):
    src = unique_saxpy()
    y, x = np.ones(1000, np.float32), np.arange(1000, dtype=np.float32)
    pk.kernel(src)(y, x, np.float32(2), ndrange=y.shape)
    (entry,) = _entries(cache_dir, "opencl")
    # A well-formed entry whose binary the driver rejects (a driver update, say).
    cache.default_cache().put("opencl", entry.name, b"\x7fELF not a program binary")
    pk.backends.opencl.CPU()._programs.clear()
    pk.kernel(src)(y, x, np.float32(2), ndrange=y.shape)
    np.testing.assert_array_equal(y, 4 * x + 1)
    assert cache.default_cache().get("opencl", entry.name) != b"\x7fELF not a program binary"


def test_undecodable_render_entry_is_rerendered(cache_dir):
    src = unique_saxpy()
    y, x = np.ones(100, np.float32), np.arange(100, dtype=np.float32)
    pk.kernel(src)(y, x, np.float32(2), ndrange=y.shape)
    for entry in _entries(cache_dir, "render"):
        cache.default_cache().put("render", entry.name, json.dumps({"old": 1}).encode())
    pk.kernel(src)(y, x, np.float32(2), ndrange=y.shape)
    np.testing.assert_array_equal(y, 4 * x + 1)


def test_threads_compile_one_kernel_at_once(cache_dir, opencl_cpu):
    hammer_threads(pk.kernel(unique_saxpy()))
    assert len(_entries(cache_dir, "opencl")) == 1


_CHILD = r"""
import json, sys
import numpy as np
import portakern as pk
from portakern.cache import store as cache
src = open(sys.argv[1]).read()
y, x = np.ones(5000, np.float32), np.arange(5000, dtype=np.float32)
pk.kernel(src)(y, x, np.float32(3), ndrange=y.shape)
store = cache.default_cache()
print(json.dumps({"ok": bool(np.array_equal(y, 3 * x + 1)), "hits": store.hits,
                  "misses": store.misses}))
"""


def _children(n: int, src_file, env) -> list[dict]:
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(src_file)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(n)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


@pytest.mark.slow(reason="three processes start PoCL cold; the same race on the native path "
                  "is test_native.py::test_two_processes_compile_one_kernel_at_once")
def test_two_processes_compile_one_kernel_at_once(cache_dir, opencl_cpu, tmp_path):
    src_file = tmp_path / "saxpy.pk"
    src_file.write_text(unique_saxpy())
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(cache_dir),
               POCL_CACHE_DIR=str(tmp_path / "pocl"))
    first = _children(2, src_file, env)
    assert all(r["ok"] for r in first)
    assert len(_entries(cache_dir, "opencl")) == 1
    assert len(_entries(cache_dir, "render")) >= 1
    # A third process finds everything on disk.
    (third,) = _children(1, src_file, env)
    assert third["ok"] and third["misses"] == 0 and third["hits"] >= 2


# -- a private folder (issue 12, DESIGN section 5) -------------------------------------------

posix_only = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX modes and owners")
root_only = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                               reason="giving a file to another user needs root")


@posix_only
def test_folders_are_0700_and_files_0600_even_under_umask_000(tmp_path):
    old = os.umask(0)
    try:
        root = tmp_path / "new" / "pkcache"
        DiskCache(root).put("test", cache.make_key("test", "m"), b"payload")
    finally:
        os.umask(old)
    folders = [root, *(p for p in root.rglob("*") if p.is_dir())]
    files = [p for p in root.rglob("*") if p.is_file()]
    assert len(folders) == 4 and len(files) == 1  # root, v2, test, xx; the entry
    assert {oct(p.stat().st_mode & 0o777) for p in folders} == {"0o700"}
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "new").stat().st_mode & 0o777) == "0o700"  # a parent we made


def _planted(root, kind: str = "test", payload: bytes = b"planted") -> str:
    """A well-formed entry, as another user with write access could make one."""
    key = cache.make_key(kind, "planted")
    DiskCache(root).put(kind, key, payload)
    return key


@posix_only
def test_a_folder_others_can_write_is_refused_with_one_warning(tmp_path):
    key = _planted(tmp_path)
    tmp_path.chmod(0o777)
    store = DiskCache(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert store.get("test", key) is None  # never read
        store.put("test", "k2", b"two")
        assert store.get("test", "k2") == b"two"  # memory only
        store.get("test", key)
    assert [w.category for w in caught] == [CacheWarning]
    assert "writable by other users" in str(caught[0].message)
    assert not _entries(tmp_path, "test")[1:]  # nothing written there
    assert "not used" in store.info()["status"]


@posix_only
def test_a_subfolder_others_can_write_is_refused(tmp_path):
    key = _planted(tmp_path)
    (tmp_path / f"v{cache.FORMAT}" / "test").chmod(0o757)
    with pytest.warns(CacheWarning, match="writable by other users"):
        assert DiskCache(tmp_path).get("test", key) is None


@root_only
def test_a_folder_of_another_user_is_refused(tmp_path):
    key = _planted(tmp_path)
    os.chown(tmp_path, 12345, -1)
    with pytest.warns(CacheWarning, match="owned by user id 12345"):
        assert DiskCache(tmp_path).get("test", key) is None


@root_only
def test_an_entry_of_another_user_is_never_read(tmp_path):
    # A file swapped in after it was written, by someone who could (root, or a
    # cache folder that used to be shared): well-formed, right digest, foreign.
    key = _planted(tmp_path)
    (entry,) = _entries(tmp_path, "test")
    os.chown(entry, 12345, -1)
    store = DiskCache(tmp_path)
    assert store.get("test", key) is None
    store.put("test", key, b"rebuilt")  # the rebuild replaces it
    assert store.get("test", key) == b"rebuilt" and entry.stat().st_uid == os.geteuid()


@posix_only
def test_an_entry_others_can_write_is_never_read(tmp_path):
    key = _planted(tmp_path)
    (entry,) = _entries(tmp_path, "test")
    entry.chmod(0o666)
    assert DiskCache(tmp_path).get("test", key) is None


def test_shared_objects_are_digest_checked_and_loaded_from_a_private_copy(tmp_path):
    store = DiskCache(tmp_path)
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"\x7fELF not really")
    store.put_library("native", "k.so", lib)
    (entry,) = _entries(tmp_path, "native")
    assert entry.read_bytes().endswith(lib.read_bytes())  # stored with its digest
    raw = entry.read_bytes()
    entry.write_bytes(raw[:-3] + b"BAD")
    # The digest fails: not loaded (dlopen never sees it), dropped for the rebuild.
    assert store.load_library("native", "k.so") is None and not entry.exists()


# -- size limit ------------------------------------------------------------------------

def test_least_recently_used_entries_go_past_the_limit(tmp_path):
    store = DiskCache(tmp_path, limit=10_000)
    keys = [cache.make_key("test", n) for n in range(30)]
    store.put("test", keys[0], b"0" * 1000)
    for n, key in enumerate(keys[1:], start=1):
        assert DiskCache(tmp_path, limit=None).get("test", keys[0])  # keep it in use
        store.put("test", key, bytes([n]) * 1000)
    on_disk = _entries(tmp_path, "test")
    assert sum(p.stat().st_size for p in on_disk) <= 10_000
    names = {p.name for p in on_disk}
    assert keys[0] in names and keys[-1] in names and keys[1] not in names
    assert DiskCache(tmp_path).get("test", keys[0]) == b"0" * 1000


@pytest.mark.parametrize(("text", "expected"), [
    ("", cache.DEFAULT_SIZE), ("1M", 2**20), ("2g", 2 * 2**30), ("4096", 4096),
    ("500MiB", 500 * 2**20), ("none", None)])
def test_size_limit_from_the_environment(monkeypatch, text, expected):
    monkeypatch.setenv("PORTAKERN_CACHE_SIZE", text)
    assert cache.size_limit() == expected
    assert DiskCache(None).limit == expected


def test_an_unreadable_size_limit_warns_and_uses_the_default(monkeypatch):
    monkeypatch.setenv("PORTAKERN_CACHE_SIZE", "lots")
    with pytest.warns(CacheWarning, match="PORTAKERN_CACHE_SIZE"):
        assert cache.size_limit() == cache.DEFAULT_SIZE


def test_cache_info_and_clear_on_the_command_line(cache_dir, monkeypatch):
    from portakern.cli import main as cli

    monkeypatch.setenv("PORTAKERN_CACHE_SIZE", "64M")
    store = DiskCache(cache_dir)
    store.put("render", cache.make_key("render", 1), b"x" * 2000)
    store.put("opencl", cache.make_key("opencl", 1), b"y" * 100)
    done = subprocess.run([sys.executable, "-m", "portakern", "cache", "info"],
                          capture_output=True, text=True, check=True,
                          env=dict(os.environ))
    assert str(cache_dir) in done.stdout and "in use" in done.stdout
    assert "of 64.0 MiB" in done.stdout and "entries: 2 (opencl 1, render 1)" in done.stdout
    assert cli.main(["cache", "clear"]) == 0
    assert DiskCache(cache_dir).info()["entries"] == 0


# -- compiler children and scratch folders ------------------------------------------------

_ORPHAN = r"""
import sys
from portakern.subprocesses import run
run([sys.executable, "-c",
     "import os, time; open(os.environ['PK_PIDFILE'], 'w').write(str(os.getpid())); "
     "time.sleep(120)"])
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.split()[1:2] == ["Z"] for line in f if line.startswith("State:"))
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_compiler_dies_with_its_parent(tmp_path):
    import signal
    import time

    pidfile = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", _ORPHAN],
                              env=dict(os.environ, PK_PIDFILE=str(pidfile)))
    deadline = time.monotonic() + 240  # hang guards: a busy machine may be slow
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.05)
    child = int(pidfile.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 240
    while not _gone(child):
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the compiler outlived its parent")
        time.sleep(0.05)


def test_scratch_folders_of_dead_processes_are_removed(tmp_path):
    import tempfile

    from portakern import subprocesses

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(done.stdout)
    left = Path(tempfile.gettempdir()) / f"portakern-build-{dead}-leftover"
    left.mkdir()
    (left / "kernel.cpp").write_text("// a build killed halfway")
    old = left.stat().st_mtime - subprocesses._STALE_S - 1
    os.utime(left, (old, old))
    young = Path(tempfile.gettempdir()) / f"portakern-build-{dead}-young"
    young.mkdir()  # perhaps a live process of another PID namespace: left alone
    mine = Path(tempfile.mkdtemp(prefix=f"portakern-build-{os.getpid()}-"))
    subprocesses._SWEPT.clear()
    try:
        with subprocesses.scratch_dir("build") as tmp:
            assert Path(tmp).name.startswith(f"portakern-build-{os.getpid()}-")
        assert not Path(tmp).exists()
        assert not left.exists() and mine.exists()  # a live process keeps its folders
        assert young.exists()
    finally:
        mine.rmdir()
        young.rmdir()


def test_the_render_cache_key_covers_every_module_of_the_package(tmp_path, monkeypatch):
    # A stale rendering served after the lowering changed is a wrong answer, so the
    # key's code digest must see a change in any module, a new subpackage's included.
    from portakern.cache import store as cache_module

    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "cache").mkdir()
    (pkg / "cache" / "store.py").write_text("# cache\n")
    (pkg / "sub" / "lowering_pass.py").write_text("X = 1\n")
    monkeypatch.setattr(cache_module, "__file__", str(pkg / "cache" / "store.py"))
    monkeypatch.setattr(cache_module, "_CODE", [])
    before = cache_module._code_digest()
    assert cache_module._code_digest() == before  # memoised, deterministic
    (pkg / "sub" / "lowering_pass.py").write_text("X = 22\n")
    cache_module._CODE.clear()
    changed = cache_module._code_digest()
    (pkg / "new_module.py").write_text("")
    cache_module._CODE.clear()
    assert len({before, changed, cache_module._code_digest()}) == 3


def test_a_rendering_read_from_disk_renders_again_through_its_kernel(cache_dir):
    # The Metal launchers render a variant again in MLX's shape (RenderedKernel.variant),
    # which needs the lowered tree a disk entry does not keep: the entry asks its kernel.
    src = ("@kernel void scale_disk(T* y, const T* x, T a) {\n"
           "    const long i = @index(Global, Linear);\n    y[i] = a * x[i];\n}")
    bindings = (("T", "float"),)
    first = pk.kernel(src).variant("metal", bindings, 1)
    assert first.lowered is not None
    second = pk.kernel(src).variant("metal", bindings, 1)  # a new kernel: from disk
    assert second.lowered is None and second.source == first.source
    assert second.with_lowered().lowered is not None
    shaped = dict(template="metal/mlx.j2", mlx_fused=(), mlx_staged=(), mlx_cast64=False,
                  mlx_vectors=())
    assert second.variant(**shaped).source == first.variant(**shaped).source


def test_the_templates_digest_walks_files_in_path_order(tmp_path, monkeypatch):
    import hashlib

    root = tmp_path / "templates"
    for rel in ("a-c.j2", "a/b.j2", "a/z/deep.j2", "B.j2", ".hidden", "b/x.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel * 3)
    (root / "linked").symlink_to(root / "a", target_is_directory=True)  # not entered
    (root / "alias.j2").symlink_to(root / "B.j2")
    (root / "dangling").symlink_to(root / "missing")
    expected = hashlib.sha256()  # the digest as pathlib's walk made it
    for p in sorted(root.rglob("*")):
        if p.is_file():
            expected.update(str(p.relative_to(root)).encode() + b"\0")
            expected.update(hashlib.sha256(p.read_bytes()).digest())
    from portakern.render import emit

    monkeypatch.setattr(emit, "template_dirs", lambda: [root, tmp_path / "none"])
    monkeypatch.setattr(cache, "_TEMPLATES", {})
    assert cache.templates_digest() == expected.hexdigest()
    names = [parts for parts, _ in cache._template_files(str(root))]
    assert names.index(("a", "b.j2")) < names.index(("a-c.j2",)) and ("linked", "b.j2") not in names
