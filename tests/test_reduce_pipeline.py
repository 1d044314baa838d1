"""The reduce and brightest_pixel pipelines (portakern/examples/reductions.py) run again.

A pipeline keeps its launchers and intermediate arrays between runs of the same size
(examples/reductions.py, ``_take``): these tests check that a later run never sees a
value of an earlier one, that concurrent runs do not share arrays, and that argmax's
int local index (examples/reduce.pk) finds the first of equal maxima wherever they
fall: at group boundaries, in a partial last group, for workgroup sizes that are not
powers of two. Both CPU paths (the native lockstep C++ and PoCL); NumPy is the model.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import portakern as pk
from portakern import examples


@pytest.fixture(params=["native", "opencl"])
def cpu(request, monkeypatch):
    """CPU() on its native path, and with every kernel on PoCL (PORTAKERN_CPU=opencl)."""
    if request.param == "opencl":
        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    else:
        monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    backend = pk.CPU()
    if not backend.available():
        pytest.skip(f"CPU() unavailable: {backend.available().reason}")
    return backend


def _argmax(backend, x, group):
    ex = examples.get("brightest_pixel")
    best, where, _ = ex.make_args(x.shape, np.random.default_rng(0), x.dtype, GROUP=group)
    return ex.run(backend, (best, where, x), GROUP=group)


def _check_argmax(got, x):
    pos = int(np.argmax(x))
    assert got["index"].tolist() == list(np.unravel_index(pos, x.shape))
    assert got["value"] == x.reshape(-1)[pos]


@pytest.mark.parametrize("group", [37, 64, 256])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_argmax_runs_again_on_new_data_of_the_same_size(cpu, group, dtype):
    rng = np.random.default_rng(group)
    for _ in range(4):  # the later runs reuse the first one's arrays
        x = rng.integers(-10**6, 10**6, size=(91, 133)).astype(dtype)
        _check_argmax(_argmax(cpu, x, group), x)


@pytest.mark.parametrize("group", [37, 64, 256])
def test_argmax_first_of_equal_maxima_anywhere(cpu, group):
    n = 20_011  # three passes for every group size here; the last group is partial
    rng = np.random.default_rng(n)
    x = rng.uniform(0, 1, n).astype(np.float32)
    # Ties inside one group, across a group boundary, in the partial last group, and
    # a later run whose first maximum comes after where the last run's was.
    for places in ([5, 6, 7], [group - 1, group], [n - 1, n - 2], [3 * group + 1, 9], [n - 1]):
        y = x.copy()
        y[places] = 2.0
        _check_argmax(_argmax(cpu, y, group), y)
    same = np.full(n, 0.25, np.float32)  # every element a maximum: the first one
    _check_argmax(_argmax(cpu, same, group), same)


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max"])
def test_reduction_runs_again_on_new_data_of_the_same_size(cpu, name):
    ex = examples.get(name)
    rng = np.random.default_rng(5)
    for _ in range(3):
        partial, x = ex.make_args(70_000, rng, np.int32)
        want = ex.run_reference((partial, x))["result"]
        assert ex.run(cpu, (partial, x))["result"] == want


def test_concurrent_runs_of_the_same_size_do_not_share_arrays():
    backend = pk.CPU()
    if not backend.available():
        pytest.skip(f"CPU() unavailable: {backend.available().reason}")
    data = [np.random.default_rng(s).uniform(0, 1, (250, 301)).astype(np.float32)
            for s in range(4)]
    errors: list = []

    def work(x):
        try:
            for _ in range(10):
                _check_argmax(_argmax(backend, x, 64), x)
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(x,)) for x in data]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
