"""The disk cache trusts nothing it did not write for this key (issue 29, items 1 and 3).

A valid entry of another kernel copied over this one (a sync tool, a backup restore, a
shared cache gone wrong) passes a digest of its own bytes; so every entry records the
kind, key and identity it was written for, and a load checks them. Each case here copies
one kernel's entry over another's, for each kind of entry, then runs the other kernel in
a new process: the right answer comes back, and the entry on disk is rebuilt for its key.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import numpy as np
import pytest

from portakern.cache import disk as disk_cache
from portakern.cache import shared_objects
from portakern.cache import store as cache
from portakern.cache.store import CacheWarning, DiskCache

_TAG = uuid.uuid4().hex  # a fresh source each session: nothing of an earlier run is reused
SOURCES = {
    "saxpy": f"// {_TAG}\n@kernel void saxpy(T* y, const T* x, T a) {{\n"
             f"    const long i = @index(Global, Linear);\n    y[i] = a * x[i] + y[i];\n}}\n",
    # The same signature: a swapped library runs without a crash, and gives saxpy's answer.
    "rsub": f"// {_TAG}\n@kernel void rsub(T* y, const T* x, T a) {{\n"
            f"    const long i = @index(Global, Linear);\n    y[i] = x[i] - a * y[i];\n}}\n",
}
X = np.arange(1, 9, dtype=np.float32)
EXPECTED = {"saxpy": (2 * X + 10).tolist(), "rsub": (X - 2 * 10).tolist()}

_SCRIPT = r"""
import json, sys, warnings
import numpy as np
import portakern as pk
sources = json.loads(sys.argv[1])
out = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for name in sys.argv[2:]:
        x = np.arange(1, 9, dtype=np.float32)
        y = np.full(8, 10, dtype=np.float32)
        pk.kernel(sources[name])(y, x, np.float32(2), ndrange=8)
        out[name] = y.tolist()
out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
print(json.dumps(out))
"""


def _run(cache_root: Path, cpu: str, *names: str) -> dict:
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(cache_root), PORTAKERN_CPU=cpu)
    env.pop("PORTAKERN_CACHE", None)
    done = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(SOURCES), *names],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _entries(root: Path) -> dict[str, bytes]:
    """Every entry under ``root``, by path relative to it (no temporaries, no load copies)."""
    base = root / f"v{cache.FORMAT}"
    return {str(p.relative_to(base)): p.read_bytes() for p in base.rglob("*")
            if p.is_file() and not p.name.startswith(".tmp-")}


def _record(raw: bytes) -> dict:
    decoded = disk_cache._decode(raw)
    assert decoded is not None, "not a whole entry"
    return decoded[0]


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """Caches holding saxpy's and rsub's entries, per CPU path: (root, saxpy's, rsub's)."""

    class Filled(dict):
        def __missing__(self, cpu):
            if cpu == "opencl":
                pytest.importorskip("pyopencl")
            root = tmp_path_factory.mktemp(f"filled-{cpu}")
            assert _run(root, cpu, "saxpy")["saxpy"] == EXPECTED["saxpy"]
            first = _entries(root)
            assert _run(root, cpu, "rsub")["rsub"] == EXPECTED["rsub"]
            both = _entries(root)
            self[cpu] = (root, first, {p: both[p] for p in both if p not in first})
            return self[cpu]

    return Filled()


def _runtime_entry(entries: dict) -> str:
    from portakern.backends.native import native_toolchain, runtime_file_name

    name = runtime_file_name(native_toolchain())
    (path,) = [p for p in entries if p.endswith(name)]
    return path


def _one(entries: dict, kind: str, skip: tuple = ()) -> str:
    paths = sorted(p for p in entries if p.startswith(kind + "/") and p not in skip)
    assert paths, f"no {kind} entry in {sorted(entries)}"
    return paths[0]


def _swap_case(filled, tmp_path, cpu: str, kind: str) -> tuple[Path, str, bytes]:
    """A copy of the filled cache with saxpy's ``kind`` entry copied over rsub's."""
    src_root, saxpy, rsub = filled[cpu]
    root = tmp_path / "cache"
    shutil.copytree(src_root, root)
    base = root / f"v{cache.FORMAT}"
    runtime = _runtime_entry(saxpy) if cpu == "native" else None
    if kind == "runtime":  # a kernel's library over the native runtime's
        target, donor = runtime, _one(rsub, "native")
    elif kind == "native-probe":  # another kind's entry over the toolchain probe's
        target, donor = _one(saxpy, "native-probe"), _one(rsub, "native")
    else:
        target, donor = _one(rsub, kind), _one(saxpy, kind, skip=(runtime,))
    foreign = (base / donor).read_bytes()
    (base / target).write_bytes(foreign)
    return root, target, foreign


CASES = [("native", "render"), ("native", "native"), ("native", "runtime"),
         ("native", "native-probe"), ("opencl", "render"), ("opencl", "opencl")]


@pytest.mark.parametrize(("cpu", "kind"), CASES)
def test_an_entry_copied_over_another_kernels_is_rebuilt_never_run(filled, tmp_path, cpu, kind):
    root, target, foreign = _swap_case(filled, tmp_path, cpu, kind)
    for _ in range(2):  # and in every later process
        got = _run(root, cpu, "rsub", "saxpy")
        assert got["rsub"] == EXPECTED["rsub"] and got["saxpy"] == EXPECTED["saxpy"]
        assert not [w for w in got["warnings"] if "Cache" in w], got["warnings"]
    path = root / f"v{cache.FORMAT}" / target
    rebuilt = path.read_bytes()
    assert rebuilt != foreign
    assert _record(rebuilt)["key"] == path.name and _record(rebuilt)["kind"] == target.split("/")[0]


@pytest.mark.parametrize("which", ["kernel", "runtime"])
def test_a_library_without_portakerns_entry_points_is_refused_and_rebuilt(filled, tmp_path,
                                                                           which):
    # A record that names the right key and compiler, holding the wrong library: the
    # entry-point check is what stands between it and a launch.
    src_root, saxpy, rsub = filled["native"]
    root = tmp_path / "cache"
    shutil.copytree(src_root, root)
    base = root / f"v{cache.FORMAT}"
    runtime, kernel = _runtime_entry(saxpy), _one(rsub, "native")
    target, donor = (kernel, runtime) if which == "kernel" else (runtime, kernel)
    identity = _record(rsub[kernel])["identity"]
    payload = disk_cache._decode((base / donor).read_bytes())[1]
    (base / target).write_bytes(disk_cache._encode("native", Path(target).name, identity,
                                                   payload))
    got = _run(root, "native", "rsub")
    assert got["rsub"] == EXPECTED["rsub"]
    missing = "pk_attach" if which == "kernel" else "pk_rt_install"
    assert [w for w in got["warnings"] if "refused the cached library" in w
            and missing in w and "rebuilt" in w], got["warnings"]
    assert disk_cache._decode((base / target).read_bytes())[1] != payload
    assert not _run(root, "native", "rsub")["warnings"]  # the rebuilt entry is used quietly


# -- DiskCache: the record --------------------------------------------------------------

def test_an_entry_records_its_kind_key_and_identity(tmp_path):
    store = DiskCache(tmp_path)
    key = cache.make_key("test", "a")
    store.put("test", key, b"payload", "g++ 13")
    (path,) = (tmp_path / f"v{cache.FORMAT}" / "test").rglob(key)
    assert _record(path.read_bytes()) == {"kind": "test", "key": key, "identity": "g++ 13"}
    assert store.get("test", key, "g++ 13") == b"payload"


@pytest.mark.parametrize("kind", ["render", "native", "opencl", "emulate", "native-probe"])
def test_another_keys_valid_entry_is_dropped(tmp_path, kind):
    store = DiskCache(tmp_path)
    mine, theirs = cache.make_key(kind, "mine"), cache.make_key(kind, "theirs")
    store.put(kind, mine, b"mine")
    store.put(kind, theirs, b"theirs")
    base = tmp_path / f"v{cache.FORMAT}" / kind
    (base / mine[:2] / mine).write_bytes((base / theirs[:2] / theirs).read_bytes())
    assert DiskCache(tmp_path).get(kind, mine) is None
    assert not (base / mine[:2] / mine).exists()  # gone, for the rebuild to replace
    assert DiskCache(tmp_path).get(kind, theirs) == b"theirs"


def test_an_entry_of_another_kind_under_the_same_key_is_dropped(tmp_path):
    store = DiskCache(tmp_path)
    key = cache.make_key("x", 1)
    store.put("opencl", key, b"binary")
    src = tmp_path / f"v{cache.FORMAT}" / "opencl" / key[:2] / key
    dst = tmp_path / f"v{cache.FORMAT}" / "render" / key[:2] / key
    dst.parent.mkdir(parents=True, mode=0o700)
    (tmp_path / f"v{cache.FORMAT}" / "render").chmod(0o700)
    shutil.copy(src, dst)
    assert DiskCache(tmp_path).get("render", key) is None and not dst.exists()


def test_an_entry_of_another_compiler_is_stale(tmp_path):
    store = DiskCache(tmp_path)
    key = cache.make_key("native", "src")
    store.put("native", key, b"built by the old compiler", "g++ 12")
    fresh = DiskCache(tmp_path)
    assert fresh.get("native", key, "g++ 13") is None and fresh.foreign == 1
    assert not list((tmp_path / f"v{cache.FORMAT}" / "native").rglob(key))


def test_an_entry_of_the_previous_format_is_not_an_entry():
    payload = b"x" * 100
    import hashlib

    old = b"PKC2" + hashlib.sha256(payload).digest() + payload
    assert disk_cache._decode(old) is None
    assert disk_cache._decode(disk_cache._encode("k", "key", "", payload)) == (
        {"kind": "k", "key": "key", "identity": ""}, payload)


# -- no copies left behind ---------------------------------------------------------------

def test_a_full_disk_leaves_no_load_copies(tmp_path, monkeypatch):
    import errno

    store = DiskCache(tmp_path)
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"\x7fELF" + b"\0" * 4096)
    store.put_library("native", "k.so", lib)
    real = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    def fdopen(fd, mode="r", *args, **kwargs):
        f = real(fd, mode, *args, **kwargs)
        return Full(f) if "w" in mode else f

    monkeypatch.setattr(os, "fdopen", fdopen)
    monkeypatch.setattr(shared_objects, "_LOAD_DIR", [])
    for _ in range(5):
        assert store.load_library("native", "k.so") is None
    monkeypatch.setattr(os, "fdopen", real)
    leftovers = [p for p in tmp_path.rglob(".tmp-load-*")]
    if shared_objects._LOAD_DIR:
        leftovers += list(Path(shared_objects._LOAD_DIR[0][1]).glob(".tmp-load-*"))
    assert leftovers == []
    # The entry itself was fine: it is kept, not deleted for the disk's fault.
    assert DiskCache(tmp_path).get("native", "k.so") == lib.read_bytes()


def test_copies_of_a_dead_process_are_swept(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(done.stdout)
    store = DiskCache(tmp_path)
    folder = store._load_folder()  # the first use sweeps: made before the leftover
    left = folder / f".tmp-load-{dead}-1-k.so"
    left.write_bytes(b"a copy its process was killed before deleting")
    os.utime(left, (0, 0))
    young = folder / f".tmp-load-{dead}-2-k.so"
    young.write_bytes(b"perhaps a live process of another PID namespace")
    assert DiskCache(tmp_path)._load_folder() == folder
    assert not left.exists() and young.exists()


# -- a clear racing a write (item 3) -------------------------------------------------------

def _sabotaged_mkstemp(monkeypatch, root: Path, times: int) -> list:
    """mkstemp that, the first ``times`` calls, removes the whole cache folder after
    making the temporary file, as a ``portakern cache clear`` or ``rm -r`` would."""
    real = disk_cache.tempfile.mkstemp
    calls = []

    def mkstemp(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append(out[1])
        if len(calls) <= times:
            shutil.rmtree(root)
        return out

    monkeypatch.setattr(disk_cache.tempfile, "mkstemp", mkstemp)
    return calls


def test_a_cache_folder_removed_while_writing_is_made_again(tmp_path, monkeypatch):
    root = tmp_path / "pkcache"
    store = DiskCache(root)
    store.put("test", cache.make_key("test", 0), b"first")
    calls = _sabotaged_mkstemp(monkeypatch, root, times=1)
    key = cache.make_key("test", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.put("test", key, b"written again")
    assert len(calls) == 2
    assert DiskCache(root).get("test", key) == b"written again"  # on disk, not in memory
    assert (root.stat().st_mode & 0o777) == 0o700


def test_a_folder_that_keeps_vanishing_warns_what_happened_and_the_cache_stays_on(
        tmp_path, monkeypatch):
    root = tmp_path / "pkcache"
    store = DiskCache(root)
    _sabotaged_mkstemp(monkeypatch, root, times=3)
    key = cache.make_key("test", 1)
    with pytest.warns(CacheWarning) as caught:
        store.put("test", key, b"kept in memory")
    (w,) = caught
    text = str(w.message)
    assert "was removed while an entry was written" in text and "cache clear" in text
    assert "stays on" in text
    assert store.get("test", key) == b"kept in memory"
    later = cache.make_key("test", 2)
    store.put("test", later, b"on disk again")
    assert DiskCache(root).get("test", later) == b"on disk again"
    assert store.info()["status"] == "in use"


def test_cache_clear_leaves_a_writers_temporary_alone(tmp_path, monkeypatch):
    root = tmp_path / "pkcache"
    store = DiskCache(root)
    store.put("test", cache.make_key("test", 0), b"old")
    real = disk_cache.tempfile.mkstemp
    cleared = []

    def mkstemp(*args, **kwargs):
        out = real(*args, **kwargs)
        cleared.append(DiskCache(root).clear())  # another process, between write and move
        return out

    monkeypatch.setattr(disk_cache.tempfile, "mkstemp", mkstemp)
    key = cache.make_key("test", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.put("test", key, b"new")
    assert cleared == [1]  # the old entry went, the temporary stayed
    assert DiskCache(root).get("test", key) == b"new"


def test_a_launch_racing_a_removal_of_the_cache_keeps_the_cache_on(cache_dir, monkeypatch):
    import portakern as pk
    from portakern import subprocesses

    monkeypatch.setenv("PORTAKERN_CPU", "native")
    real = subprocesses.run
    removed = []

    def compile_then_clear(cmd, **kwargs):
        done = real(cmd, **kwargs)
        if cache_dir.exists():
            shutil.rmtree(cache_dir)  # `portakern cache clear` and more, mid-launch
            removed.append(cmd[-1])
        return done

    monkeypatch.setattr(subprocesses, "run", compile_then_clear)
    src = SOURCES["rsub"].replace(_TAG, uuid.uuid4().hex)
    x = X.copy()
    y = np.full(8, 10, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        pk.kernel(src)(y, x, np.float32(2), ndrange=8)
    assert removed and y.tolist() == EXPECTED["rsub"]
    store = cache.default_cache()
    assert store.info()["status"] == "in use"
    assert list((cache_dir / f"v{cache.FORMAT}" / "native").rglob("*.so"))  # written again
