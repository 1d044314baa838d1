"""CPU()'s default workgroup: one rule on both paths (portakern.backends.native_groups).

A kernel that can tell its group's shape (local and group indices, @groupsize, barriers,
unsafe_indices) must mean the same on the native path and on PoCL when the launch gives
no workgroup size; a kernel that cannot tell keeps each path's own fast shape.
"""
from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.backends import native, opencl
from portakern.backends.native_groups import (
    CPU_GROUP_LIMIT,
    UNKNOWN,
    GroupFacts,
    cpu_workgroup,
    reads_group_shape,
)

pytestmark = [
    pytest.mark.skipif(not native.NativeCPU.available(),
                       reason=f"no native CPU path: {native.NativeCPU.available().reason}"),
    pytest.mark.skipif(not opencl.CPU.opencl_available(),
                       reason=f"no CPU OpenCL device: {opencl.CPU.opencl_available().reason}"),
]

# Every work-item writes what it knows of its group (1-D and 2-D ndranges alike).
SHAPE_1D = """
@kernel void shape(long* lid, long* size, long* group) {
    const long i = @index(Global, Linear);
    lid[i] = @index(Local, Linear);
    size[i] = @groupsize();
    group[i] = @index(Group, Linear);
}
"""
SHAPE_2D = """
@kernel void shape(long* lid, long* size, long* group) {
    auto [i, j] = @index(Global, NTuple);
    auto [li, lj] = @index(Local, NTuple);
    lid[i * @ndrange(1) + j] = li * 10000 + lj;
    size[i * @ndrange(1) + j] = @groupsize(0) * 10000 + @groupsize(1);
    group[i * @ndrange(1) + j] = @index(Group, Linear);
}
"""
# A barrier kernel with no per-item state and one small array: the kind whose groups
# grow (the histogram's); each group counts its items through @localmem.
COUNTED = """
@kernel void counted(int* size, int* items) {
    @localmem int t[2];
    if (@index(Local, Linear) == 0) { t[0] = (int)@groupsize(); t[1] = 0; }
    @synchronize();
    @atomic_add(&t[1], 1);
    @synchronize();
    if (@index(Local, Linear) == 0) {
        size[@index(Group, Linear)] = t[0];
        items[@index(Group, Linear)] = t[1];
    }
}
"""
# Every item of its groups runs, those past the ndrange included.
UNSAFE = """
@kernel(unsafe_indices) void unsafe(int* count) {
    @atomic_add(&count[0], 1);
}
"""
BLIND = """
@kernel void blind(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = 2.0f * x[i] + (float)@ndrange();
}
"""


def _launch(monkeypatch: pytest.MonkeyPatch, path: str, source: str, args: list,
            ndrange: tuple[int, ...]) -> tuple[pk.Backend, tuple]:
    """Run ``source`` on one of CPU()'s paths; the runner and the launch's local size."""
    if path == "native":
        monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    else:
        monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    launcher = pk.kernel(source)(pk.CPU())
    launcher(*args, ndrange=ndrange)
    plan, = launcher.plans.values()
    runner = launcher.runner
    assert isinstance(runner, native.NativeCPU if path == "native" else opencl.CPU)
    return runner, plan.local_size[::-1]


def _both(monkeypatch: pytest.MonkeyPatch, source: str, make: object,
          ndrange: tuple[int, ...]) -> dict[str, tuple[list, tuple]]:
    out = {}
    for path in ("native", "opencl"):
        args = make()  # type: ignore[operator]
        _, local = _launch(monkeypatch, path, source, args, ndrange)
        out[path] = (args, local)
    return out


@pytest.mark.parametrize("ndrange", [(1024,), (1000,), (1021,), (5000,), (1,), (70_001,),
                                     (64, 48), (33, 17), (3, 1000), (1, 1)],
                         ids=str)
def test_local_index_and_groupsize_mean_the_same_on_both_paths(
        monkeypatch: pytest.MonkeyPatch, ndrange: tuple[int, ...]) -> None:
    source = SHAPE_1D if len(ndrange) == 1 else SHAPE_2D
    n = int(np.prod(ndrange))
    got = _both(monkeypatch, source, lambda: [np.full(n, -1, np.int64) for _ in range(3)],
                ndrange)
    (native_out, native_local), (pocl_out, pocl_local) = got["native"], got["opencl"]
    assert native_local == pocl_local
    for name, a, b in zip(("local index", "group size", "group index"), native_out, pocl_out,
                          strict=True):
        np.testing.assert_array_equal(a, b, err_msg=f"{name}, ndrange {ndrange}")
        assert (a >= 0).all()  # every item wrote
    # What the arrays say is the shape both launched (a model, not the backends' word).
    if len(ndrange) == 1:
        g = native_local[0]
        i = np.arange(n)
        np.testing.assert_array_equal(native_out[0], i % g)
        np.testing.assert_array_equal(native_out[1], g)
        np.testing.assert_array_equal(native_out[2], i // g)


@pytest.mark.parametrize("n", [2**20, 16_000_000 // 8, 999_999, 4096 * 3 + 5])
def test_barrier_kernels_get_the_same_groups_on_both_paths(
        monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """Also where the groups grow (no per-item state): both paths grow them alike."""
    def make() -> list:
        return [np.full(n, -1, np.int32), np.full(n, -1, np.int32)]

    got = _both(monkeypatch, COUNTED, make, (n,))
    (native_out, native_local), (pocl_out, pocl_local) = got["native"], got["opencl"]
    assert native_local == pocl_local
    assert native_local[0] <= CPU_GROUP_LIMIT
    np.testing.assert_array_equal(native_out[0], pocl_out[0])
    np.testing.assert_array_equal(native_out[1], pocl_out[1])
    g = native_local[0]
    groups = -(-n // g)
    np.testing.assert_array_equal(native_out[0][:groups], g)
    expected = np.full(groups, g, np.int32)
    expected[-1] = n - (groups - 1) * g  # a partial last group runs only its items
    np.testing.assert_array_equal(native_out[1][:groups], expected)


def test_a_histogram_sized_launch_still_grows_its_groups() -> None:
    """The growth of issue 13 stays, within what both paths can run (4096 items)."""
    base = cpu_workgroup((16_000_000,), GroupFacts(True, None), 4096, (4096,) * 3)
    grown = cpu_workgroup((16_000_000,), GroupFacts(True, 256), 4096, (4096,) * 3)
    assert grown[0] > base[0] and grown[0] % base[0] == 0 and grown[0] <= CPU_GROUP_LIMIT
    assert 16_000_000 % grown[0] == 0
    # A limit above PoCL's (another driver's) does not give the native path a larger one.
    assert cpu_workgroup((16_000_000,), GroupFacts(True, 256), 8192, (8192,) * 3) == grown


@pytest.mark.parametrize("n", [1000, 1021, 5000])
def test_unsafe_indices_run_the_same_items_on_both_paths(
        monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    got = _both(monkeypatch, UNSAFE, lambda: [np.zeros(1, np.int32)], (n,))
    (native_out, native_local), (pocl_out, pocl_local) = got["native"], got["opencl"]
    assert native_local == pocl_local
    g = native_local[0]
    assert native_out[0][0] == pocl_out[0][0] == -(-n // g) * g


def test_a_kernel_blind_to_its_groups_keeps_each_paths_own_shape(
        monkeypatch: pytest.MonkeyPatch) -> None:
    n = 1 << 20
    x = np.arange(n, dtype=np.float32)
    runner, local = _launch(monkeypatch, "native", BLIND, [np.empty_like(x), x], (n,))
    assert local == (1024,)  # the native path's rows: the result cannot differ
    y = np.empty_like(x)
    runner, pocl_local = _launch(monkeypatch, "opencl", BLIND, [y, x], (n,))
    assert pocl_local == runner.default_workgroupsize((n,), None)
    np.testing.assert_array_equal(y, 2 * x + n)


@pytest.mark.parametrize(("body", "reads"), [
    ("y[@index(Global, Linear)] = 1.0f;", False),
    ("auto [i, j] = @index(Global, NTuple); y[i] = (float)@ndrange(1);", False),
    ("@atomic_add(&y[0], 1.0f);", False),
    ("@uniform const long n = @ndrange(); y[0] = (float)n;", False),
    ("y[@index(Global, Linear)] = (float)@index(Local, Linear);", True),
    ("y[@index(Global, Linear)] = (float)@index(Group, Linear);", True),
    ("y[@index(Global, Linear)] = (float)@groupsize();", True),
    ("y[@index(Global, Linear)] = (float)@groups();", True),
    ("@synchronize(); y[@index(Global, Linear)] = 1.0f;", True),
])
def test_reads_group_shape(body: str, reads: bool) -> None:
    source = f"@kernel void k(float* y) {{ {body} }}"
    k = pk.kernel(source)
    assert k.facts("c").reads_group_shape is reads  # the published fact of the body
    assert reads_group_shape(k.parsed("c")[1], k.facts("c")) is reads
    unsafe = pk.kernel(source.replace("@kernel", "@kernel(unsafe_indices)"))
    assert reads_group_shape(unsafe.parsed("c")[1], unsafe.facts("c")) is True


def test_default_workgroupsize_without_facts_is_the_shared_shape() -> None:
    """A caller of the Backend method (no kernel facts) gets the shape both paths share."""
    for nd in [(1024,), (5000,), (33, 17)]:
        shape = native.NativeCPU().default_workgroupsize(nd, None)
        assert shape == cpu_workgroup(nd, UNKNOWN, 4096, (4096,) * 3)
        assert shape == opencl.CPU().cpu_workgroupsize(nd, UNKNOWN, None)
