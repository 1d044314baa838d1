"""Kernels, launchers and backends pickle by recipe and are rebuilt (interned) on arrival."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import portakern as pk

SAXPY = """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

SCALE = """\
@kernel void scale(T* y) {
    const long i = @index(Global, Linear);
    y[i] = y[i] * {{ K }};
}
"""

PICKLERS = [pickle]
try:
    import cloudpickle

    PICKLERS.append(cloudpickle)
except ImportError:  # pragma: no cover - installed with the test extra
    pass


def _ids(mod):
    return mod.__name__


@pytest.fixture(params=PICKLERS, ids=_ids)
def dumper(request):
    return request.param


def _saxpy_run(k, n=1000):
    y = np.ones(n, np.float32)
    x = np.arange(n, dtype=np.float32)
    k(y, x, np.float32(2.0), ndrange=y.shape)
    return y


def test_kernel_round_trip_is_the_same_object(dumper):
    k = pk.kernel(SAXPY)
    _saxpy_run(k)  # after a launch: compiled state (ctypes pointers) must not travel
    assert dumper.loads(dumper.dumps(k)) is k
    spec = k.specialize(T="float")
    again = dumper.loads(dumper.dumps(spec))
    assert again.constants == {"T": "float"}
    assert dumper.loads(dumper.dumps(spec)) is again


def test_recipe_keeps_name_filename_and_constants(tmp_path, dumper):
    path = tmp_path / "two.pk"
    path.write_text(SAXPY + SCALE.replace("scale", "other"))
    k = pk.kernel.from_file(path, "other", K=3)
    data = dumper.dumps(k)
    assert b"_template" not in data and b"ctypes" not in data
    from portakern.launch import recipes as _recipes

    _recipes._KERNELS.clear()  # as in a fresh process
    k2 = dumper.loads(data)
    assert k2 is not k
    assert (k2.name, k2._template.filename, k2.constants) == ("other", str(path), {"K": 3})
    assert dumper.loads(data) is k2  # interned
    y = np.ones(4, np.float32)
    k2(y, ndrange=4)
    assert (y == 3).all()


def test_launcher_and_backends(dumper):
    k = pk.kernel(SAXPY)
    launch = k(pk.CPU(), workgroupsize=64)
    assert dumper.loads(dumper.dumps(launch)) is launch
    from portakern.launch import recipes as _recipes

    data = dumper.dumps(launch)
    _recipes._KERNELS.clear()  # as in a fresh process
    _recipes._LAUNCHERS.clear()
    l2 = dumper.loads(data)
    assert l2 is not launch and l2.backend == pk.CPU() and l2.static_workgroupsize == 64
    assert dumper.loads(data) is l2
    np.testing.assert_allclose(_saxpy_run(l2), 1 + 2 * np.arange(1000))
    cpu = pk.CPU()
    cpu.synchronize()
    assert dumper.loads(dumper.dumps(cpu)) == cpu
    assert dumper.loads(dumper.dumps(pk.CUDA(0))) == pk.CUDA(0)
    assert repr(dumper.loads(dumper.dumps(pk.CUDA(0)))) == "CUDA(device=0)"
    metal = pk.Metal(float64="cast")
    assert dumper.loads(dumper.dumps(metal)) == metal


def test_opencl_backend_refuses_with_the_fix(dumper):
    if not pk.OpenCL.available():
        pytest.skip(f"no OpenCL device: {pk.OpenCL.available().reason}")
    with pytest.raises(TypeError, match=r"pk\.OpenCL\(queue\) inside the task"):
        dumper.dumps(pk.OpenCL())


def test_dask_tokens_deterministic_and_distinct():
    tokenize = pytest.importorskip("dask.base").tokenize
    k = pk.kernel(SCALE)
    assert tokenize(k) == tokenize(k) == tokenize(pk.kernel(SCALE))
    tokens = {tokenize(k.specialize(K=v)) for v in (1, 2, 1.0, True)}
    assert len(tokens) == 4
    assert tokenize(k.specialize(K=2, T="float")) != tokenize(k.specialize(K=2, T="double"))
    la, lb = k(pk.CPU()), k(pk.CPU(), workgroupsize=32)
    assert tokenize(la) == tokenize(k(pk.CPU())) != tokenize(lb)
    # ... and equal in another process
    code = ("import portakern as pk; from dask.base import tokenize; "
            f"print(tokenize(pk.kernel({SCALE!r}).specialize(K=2)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.strip() == tokenize(k.specialize(K=2))


def _launch_in_child(payload: bytes, loader: str) -> tuple:
    mod = __import__(loader)
    k = mod.loads(payload)
    twice = mod.loads(payload)
    y = np.ones(1000, np.float32)
    x = np.arange(1000, dtype=np.float32)
    k(y, x, np.float32(2.0), ndrange=y.shape)
    return y, twice is k, os.getpid()


def test_pickled_kernels_launch_in_a_spawned_process(dumper, tmp_path, monkeypatch):
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(tmp_path / "cache"))  # a cold cache there
    k = pk.kernel(SAXPY)
    _saxpy_run(k)
    objs = [k, k.specialize(T="float"), k(pk.CPU(), workgroupsize=100)]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        results = [pool.apply(_launch_in_child, (dumper.dumps(obj), dumper.__name__))
                   for obj in objs]
    for y, interned, pid in results:
        assert pid != os.getpid()
        assert interned
        np.testing.assert_allclose(y, 1 + 2 * np.arange(1000, dtype=np.float32))
