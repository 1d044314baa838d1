"""portakern.dask on a real dask.distributed LocalCluster (2 worker processes).

Every result is compared with the unchunked NumPy (or portakern) result. The
workers start with an empty portakern cache of their own, and the client never
compiles: everything is compiled on the workers.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np
import pytest

import portakern as pk

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import portakern.dask as pkd  # noqa: E402

# One cluster per run: with pytest-xdist's --dist loadgroup these tests share a worker.
pytestmark = pytest.mark.xdist_group("dask")

SAXPY = """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""

SINCOS = """\
@kernel void sincos(T* s, const T* x, T* c) {
    const long i = @index(Global, Linear);
    s[i] = sin(x[i]);
    c[i] = cos(x[i]);
}
"""

# A 5-point stencil over the chunk it is given (halo included): the chunk's own edge
# cells copy x (they are halo, trimmed away, except at the array's edge with
# boundary="none", where they are the array's edge).
STENCIL = """\
@kernel void five(T* y, const T* x) {
    auto [i, j] = @index(Global, NTuple);
    const long n = @ndrange(0), m = @ndrange(1);
    const long k = i * m + j;
    if (i == 0 || j == 0 || i == n - 1 || j == m - 1) { y[k] = x[k]; return; }
    y[k] = x[k] + 0.5f * (x[k - 1] + x[k + 1] + x[k - m] + x[k + m]);
}
"""

# Global coordinates: the value written depends on the cell's index in the whole array.
GLOBAL_INDEX = """\
@kernel void gidx(double* out, const double* x, long o0, long o1, long n0, long n1) {
    auto [i, j] = @index(Global, NTuple);
    const long m = @ndrange(1);
    out[i * m + j] = x[i * m + j] + (double)((o0 + i) * n1 + (o1 + j));
}
"""

# Jacobi step whose array-edge cells stay fixed, found by global coordinates.
JACOBI_EDGES = """\
@kernel void jacobi(T* y, const T* x, long o0, long o1, long n0, long n1) {
    auto [i, j] = @index(Global, NTuple);
    const long n = @ndrange(0), m = @ndrange(1);
    const long k = i * m + j;
    const long gi = o0 + i, gj = o1 + j;
    if (i == 0 || j == 0 || i == n - 1 || j == m - 1
        || gi <= 0 || gj <= 0 || gi >= n0 - 1 || gj >= n1 - 1) { y[k] = x[k]; return; }
    y[k] = 0.25f * (x[k - 1] + x[k + 1] + x[k - m] + x[k + m]);
}
"""

HIST = """\
@kernel void hist(int* bins, const float* x, int nbins) {
    const long i = @index(Global, Linear);
    int b = (int)(x[i] * nbins);
    b = b < 0 ? 0 : (b >= nbins ? nbins - 1 : b);
    @atomic_add(&bins[b], 1);
}
"""

IMIN = """\
@kernel void imin(int* m, const int* x) {
    @atomic_min(&m[0], x[@index(Global, Linear)]);
}
"""

ISUM = """\
@kernel void isum(int* s, const int* x) {
    @atomic_add(&s[0], x[@index(Global, Linear)]);
}
"""


#: Seconds the cluster gets to come up (about 3 s on an idle machine; room for a very busy
#: one). With Dask's defaults a worker that never starts holds the fixture for minutes.
CLUSTER_START_S = 60


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    cache = tmp_path_factory.mktemp("worker-cache")
    os.chmod(cache, 0o700)
    cluster = cl = failure = None
    started = time.monotonic()
    try:
        # death_timeout bounds each worker's start; the client's timeout its connection.
        cluster = distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
            env={"PORTAKERN_CACHE_DIR": str(cache)}, silence_logs=logging.ERROR,
            death_timeout=CLUSTER_START_S)
        cl = distributed.Client(cluster, timeout=CLUSTER_START_S)
        cl.wait_for_workers(2, timeout=CLUSTER_START_S)
    except Exception as exc:  # noqa: BLE001 - reported, with the cause, as the failure
        for thing in (cl, cluster):
            if thing is not None:
                thing.close()
        failure = (f"the Dask LocalCluster (2 worker processes) did not come up in "
                   f"{time.monotonic() - started:.0f} s (limit {CLUSTER_START_S} s): "
                   f"{type(exc).__name__}: {exc}")
    if failure:  # outside the except block: one line, not Dask's chain of tracebacks
        pytest.fail(failure, pytrace=False)
    cl.portakern_cache = cache  # for the cache test
    try:
        yield cl
    finally:
        cl.close()
        cluster.close()


def test_workers_start_with_an_empty_cache_of_their_own(client):
    dirs = client.run(lambda: os.environ.get("PORTAKERN_CACHE_DIR"))
    assert set(dirs.values()) == {str(client.portakern_cache)}
    pids = client.run(os.getpid)
    assert os.getpid() not in pids.values() and len(set(pids.values())) == 2


def test_elementwise_inout_and_outputs(client):
    rng = np.random.default_rng(0)
    x = rng.random(10_000, dtype=np.float32)
    y = rng.random(10_000, dtype=np.float32)
    saxpy = pk.kernel(SAXPY)
    r = pkd.map_blocks(saxpy, da.from_array(y, chunks=2_500), da.from_array(x, chunks=2_000),
                       np.float32(2.0), inout="y")
    assert not saxpy._compiled  # building the graph compiled nothing (meta= was given)
    np.testing.assert_allclose(r.compute(), 2 * x + y, rtol=1e-6)
    assert not saxpy._compiled, "the client compiled: the work must run on the workers"
    s, c = pkd.map_blocks(pk.kernel(SINCOS), da.from_array(x, chunks=3_000), out=["s", "c"])
    assert s.dtype == c.dtype == np.float32
    s, c = dask.compute(s, c)
    np.testing.assert_allclose(s, np.sin(x), atol=1e-6)
    np.testing.assert_allclose(c, np.cos(x), atol=1e-6)
    # the workers built what they ran, into their own fresh cache
    assert any(client.portakern_cache.iterdir())


def _count_compiler_runs():
    import portakern.subprocesses as sp

    if not hasattr(sp, "_pk_test_runs"):
        original = sp.run

        def counting(cmd, *args, **kwargs):
            sp._pk_test_runs.append([c for c in cmd if str(c).endswith((".cpp", ".c", ".so"))])
            return original(cmd, *args, **kwargs)

        sp.run = counting
    sp._pk_test_runs = []


def _compiler_runs():
    import portakern.subprocesses as sp

    return getattr(sp, "_pk_test_runs", [])


def test_workers_sharing_a_cache_build_a_new_variant_once(client):
    poly = pk.kernel("""
@kernel void poly(T* y, const T* x) {
    const long i = @index(Global, Linear);
    y[i] = x[i] * ({{ C }} + x[i] * (2 + x[i]));
}
""", C=int.from_bytes(os.urandom(3), "little"))  # a variant no cache has seen
    client.run(_count_compiler_runs)
    x = np.arange(40_000, dtype=np.float32)
    r = pkd.map_blocks(poly, da.from_array(x, chunks=10_000), out="y")
    c = poly.constants["C"]
    np.testing.assert_allclose(r.compute(), x * (c + x * (2 + x)), rtol=1e-6)
    runs = client.run(_compiler_runs)
    # (A fresh cache also builds portakern's native runtime once: not this kernel.)
    builds = {w: [c for c in cmds if any(a.endswith("/poly.cpp") for a in c)]
              for w, cmds in runs.items()}
    assert len(builds) == 2 and sum(map(len, builds.values())) == 1, runs


NP_MODES = {"reflect": "symmetric", "periodic": "wrap", "nearest": "edge"}


def _five(x):
    y = x.copy()
    y[1:-1, 1:-1] = x[1:-1, 1:-1] + np.float32(0.5) * (
        x[1:-1, :-2] + x[1:-1, 2:] + x[:-2, 1:-1] + x[2:, 1:-1])
    return y


@pytest.mark.parametrize("boundary", ["none", "reflect", "periodic", "nearest", 1.5])
def test_stencil_each_boundary_mode(client, boundary):
    x = np.random.default_rng(1).random((40, 30), dtype=np.float32)
    r = pkd.map_overlap(pk.kernel(STENCIL), da.from_array(x, chunks=(15, 11)), depth=1,
                        boundary=boundary, out="y").compute()
    if boundary == "none":
        expected = _five(x)
    elif isinstance(boundary, float):
        expected = _five(np.pad(x, 1, constant_values=boundary))[1:-1, 1:-1]
    else:
        expected = _five(np.pad(x, 1, mode=NP_MODES[boundary]))[1:-1, 1:-1]
    np.testing.assert_allclose(r, expected, rtol=1e-6)


def test_reductions(client):
    rng = np.random.default_rng(2)
    x = rng.random(50_000, dtype=np.float32)
    hist = pkd.reduce(pk.kernel(HIST), da.from_array(x, chunks=7_000), 64, out="bins",
                      shape=(64,), dtype=np.int32)
    assert hist.shape == (64,)
    np.testing.assert_array_equal(hist.compute(), np.histogram(x, 64, range=(0, 1))[0])
    xi = rng.integers(-1000, 1000, size=(300, 200), dtype=np.int32)
    xd = da.from_array(xi, chunks=(70, 90))
    lo = pkd.reduce(pk.kernel(IMIN), xd, out="m", combine="min", dtype=np.int32)
    total = pkd.reduce(pk.kernel(ISUM), xd, out="s", combine="sum", dtype=np.int32)
    lo, total = dask.compute(lo, total)
    assert lo.shape == () and int(lo) == xi.min()
    assert int(total) == int(xi.sum())


def test_global_coordinates_chunked_equals_unchunked(client):
    x = np.random.default_rng(3).random((37, 29))
    k = pk.kernel(GLOBAL_INDEX)
    ref = np.empty_like(x)
    k(ref, x, 0, 0, *x.shape, ndrange=x.shape)  # the plain launch over the whole array
    np.testing.assert_array_equal(ref, x + np.arange(x.size).reshape(x.shape))
    r = pkd.map_blocks(k, da.from_array(x, chunks=(10, 8)), out="out", global_args=True)
    np.testing.assert_array_equal(r.compute(), ref)

    xf = np.random.default_rng(4).random((33, 45), dtype=np.float32)
    jac = pk.kernel(JACOBI_EDGES)
    ref = np.empty_like(xf)
    jac(ref, xf, 0, 0, *xf.shape, ndrange=xf.shape)
    for boundary in ("none", "periodic"):  # the kernel's own edges win over the padding
        r = pkd.map_overlap(jac, da.from_array(xf, chunks=(10, 12)), depth=1,
                            boundary=boundary, out="y", global_args=True)
        np.testing.assert_allclose(r.compute(), ref, rtol=1e-6)
    hist = pkd.reduce(pk.kernel(GLOBAL_ROWSUM), da.from_array(xf, chunks=(10, 12)),
                      out="rows", shape=(xf.shape[0],), dtype=np.float32, global_args=True)
    np.testing.assert_allclose(hist.compute(), xf.sum(axis=1), rtol=1e-5)


GLOBAL_ROWSUM = """\
@kernel void rowsum(float* rows, const float* x, long o0, long o1, long n0, long n1) {
    auto [i, j] = @index(Global, NTuple);
    @atomic_add(&rows[o0 + i], x[i * @ndrange(1) + j]);
}
"""


def test_apply_gufunc(client):
    rng = np.random.default_rng(5)
    x = rng.random((100, 80), dtype=np.float32)
    y = rng.random((100, 80), dtype=np.float32)
    f = pkd.ufunc(pk.kernel(SAXPY), inout="y", a=np.float32(3.0))
    r = da.apply_gufunc(f, "(),()->()", da.from_array(y, chunks=(30, 40)),
                        da.from_array(x, chunks=(30, 40)), meta=np.empty((0, 0), np.float32))
    np.testing.assert_allclose(r.compute(), 3 * x + y, rtol=1e-6)
    before = y.copy()
    np.testing.assert_allclose(f(y, x), 3 * x + y, rtol=1e-6)  # plain NumPy call
    np.testing.assert_array_equal(y, before)  # y itself is never written


def test_graph_keys_are_deterministic(client):
    x = da.ones(1000, chunks=100, dtype=np.float32)
    a = pkd.map_blocks(pk.kernel(SAXPY), x, x, np.float32(2), inout="y")
    b = pkd.map_blocks(pk.kernel(SAXPY), x, x, np.float32(2), inout="y")
    c = pkd.map_blocks(pk.kernel(SAXPY).specialize(T="float"), x, x, np.float32(2),
                       inout="y")
    assert a.name == b.name != c.name
    assert pkd.ufunc(pk.kernel(SAXPY), inout="y").__dask_tokenize__() == \
        pkd.ufunc(pk.kernel(SAXPY), inout="y").__dask_tokenize__()


def test_argument_errors():
    x = da.ones(10, chunks=5, dtype=np.float32)
    with pytest.raises(ValueError, match="'z' is not a parameter"):
        pkd.map_blocks(pk.kernel(SAXPY), x, x, 1.0, inout="z")
    with pytest.raises(ValueError, match="must be writable arrays"):
        pkd.map_blocks(pk.kernel(SAXPY), x, x, 1.0, out="x")
    with pytest.raises(TypeError, match="takes 3 argument"):
        pkd.map_blocks(pk.kernel(SAXPY), x, x, inout="y")
    with pytest.raises(ValueError, match="name the parameters the kernel writes"):
        pkd.map_blocks(pk.kernel(SAXPY), x, x, 1.0)
    with pytest.raises(ValueError, match="combine must be one of"):
        pkd.reduce(pk.kernel(ISUM), x, out="s", combine="mean")


def test_cupy_chunks_with_the_cuda_stand_in():
    from portakern.emulate import cupy as standin

    ok, why = standin.available()
    if not ok:
        pytest.skip(why)
    with standin.installed() as cp:
        y = cp.asarray(np.ones(100, np.float32))
        x = cp.asarray(np.arange(100, dtype=np.float32))
        # One array per chunk: the stand-in's views (x[30:60]) report their base's
        # pointer in .data.ptr, unlike CuPy's, so a view launched directly reads the
        # wrong elements (a stand-in bug, reported); whole arrays are exact.
        def chunked(a, name):
            graph = {(name, b): a[i:i + 30].copy() for b, i in enumerate(range(0, 100, 30))}
            return da.Array(graph, name, chunks=((30, 30, 30, 10),), meta=cp.empty(0, a.dtype))

        yd, xd = chunked(y, "standin-y"), chunked(x, "standin-x")
        r = pkd.map_blocks(pk.kernel(SAXPY), yd, xd, np.float32(2), inout="y")
        assert type(r._meta) is cp.ndarray
        # (Dask cannot concatenate the stand-in's arrays: take the chunks one by one.
        # The stand-in lives in this process, so this runs on the threaded scheduler.)
        blocks = dask.compute(*r.to_delayed().ravel(), scheduler="threads")
        assert all(type(b) is cp.ndarray for b in blocks)
        got = np.concatenate([cp.asnumpy(b) for b in blocks])
        np.testing.assert_allclose(got, 1 + 2 * np.arange(100))
        np.testing.assert_array_equal(cp.asnumpy(y), 1)  # chunks are never written in place


@pytest.mark.slow(reason="docs/dask.md starts a cluster of its own; its calls are checked on "
                  "this module's cluster by the tests above")
def test_docs_dask_examples_run(run_doc):
    run_doc("dask.md")


def test_bench_dask_rows(client):
    from portakern import bench
    from portakern.bench import dask_rows as bench_dask

    rows = bench_dask.run(quick=True, repeats=1, client=client)
    assert [r.name for r in rows] == ["saxpy", "polynomial", "jacobi (map_overlap)",
                                      "histogram (reduce)"]
    assert all(r.ok for r in rows), bench.format_table(rows)
    assert all(r.seconds > 0 and r.baseline_seconds > 0 for r in rows)
