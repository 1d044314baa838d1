"""The disk cache: keys, atomic entries, corruption, read-only folders, concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
from conftest import hammer_threads, unique_saxpy

import portakern as pk
from portakern import cache
from portakern.cache import CacheWarning, DiskCache

pytestmark = pytest.mark.filterwarnings("error::portakern.cache.CacheWarning")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh cache folder for this test, used by the default cache."""
    d = tmp_path / "pkcache"
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(d))
    monkeypatch.delenv("PORTAKERN_CACHE", raising=False)
    return d


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
from portakern import cache
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
