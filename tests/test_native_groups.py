"""CPU()'s default group for barrier kernels (portakern.backends.native_groups).

Larger than the OpenCL path's base shape only for a kernel that keeps no per-item state
and whose arrays are all smaller than that shape, up to 4096 items on both paths
(tests/test_default_groups.py checks that the paths agree); the launches stay exact
(NumPy models), partial last groups included.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

import portakern as pk
from portakern import examples
from portakern.backends.base import cpu_groups
from portakern.backends.native import MAX_WORKGROUP, NativeCPU
from portakern.backends.native_groups import CPU_GROUP_LIMIT, lockstep_groups
from portakern.errors import NDRangeError

pytestmark = pytest.mark.skipif(
    not NativeCPU.available(), reason=f"no native CPU path here: {NativeCPU.available().reason}")


@pytest.fixture(autouse=True)
def _native_path(monkeypatch):
    """These tests are about CPU()'s native path, whatever PORTAKERN_CPU a run sets."""
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)

CORES = os.cpu_count() or 1

# Each group reports its size and how many of its items ran; one int of @localmem each.
SIZES = """
@kernel void group_sizes(int* size, int* items) {
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
# Per-item state across a barrier (v), and an array sized by a macro.
PER_ITEM = """
@kernel void keeps(float* y) {
    @localmem float t[4];
    float v = y[@index(Global, Linear)];
    if (@index(Local, Linear) == 0) { t[0] = 1.0f; }
    @synchronize();
    y[@index(Global, Linear)] = v + t[0];
}
"""
MACRO = """
#define N 8
@kernel void sized(float* y) {
    @localmem float t[N];
    if (@index(Local, Linear) == 0) { t[0] = 1.0f; }
    @synchronize();
    y[@index(Global, Linear)] += t[0];
}
"""
VECTOR = """
@kernel void vec(float* y) {
    @localmem float4 t[64];
    @localmem double u[3][5];
    if (@index(Local, Linear) == 0) { t[0].x = 1.0f; u[0][0] = 2.0; }
    @synchronize();
    y[@index(Global, Linear)] += t[0].x + (float)u[0][0];
}
"""


def _bound(kernel: pk.Kernel) -> int | None:
    """The ``group_bound`` fact beside the c rendering (never a line of its text)."""
    rendered = kernel.variant("c", (), 1)
    assert "group bound" not in rendered.source
    return rendered.fact("group_bound")


def test_group_bound_travels_beside_the_rendering():
    assert _bound(examples.get("histogram").load()) == 256
    assert _bound(pk.kernel(VECTOR)) == 64  # a vector type counts by elements
    assert _bound(pk.kernel(PER_ITEM)) is None  # v lives on as a per-item array
    assert _bound(pk.kernel(MACRO)) is None  # a size that is no literal: unknown


def _groups(nd: tuple[int, ...], shape: tuple[int, ...]) -> int:
    return math.prod(-(-n // w) for n, w in zip(nd, shape, strict=True))


@pytest.mark.parametrize("nd", [(16_000_000,), (100_003,), (5000,), (4000, 4000), (1000,),
                                (64, 64), (3, 999, 1001), (7,), (2**20 + 1,)])
@pytest.mark.parametrize("cores", [1, 2, 8, 64])
def test_lockstep_groups_grow_within_their_limits(nd, cores):
    base = cpu_groups(nd, MAX_WORKGROUP, (MAX_WORKGROUP,) * 3, cores, 256)
    assert lockstep_groups(nd, base, None, cores, CPU_GROUP_LIMIT) == base
    assert lockstep_groups(nd, base, math.prod(base), cores, CPU_GROUP_LIMIT) == base
    grown = lockstep_groups(nd, base, 1, cores, CPU_GROUP_LIMIT)
    assert len(grown) == len(nd)
    for n, b, g in zip(nd, base, grown, strict=True):
        assert g % b == 0 and (g == b or g <= n)
        if n % b == 0:
            assert n % g == 0  # a tiling default stays tiling
    if grown != base:
        assert math.prod(grown) <= CPU_GROUP_LIMIT
        assert _groups(nd, grown) >= 4 * cores


def test_a_histogram_sized_launch_gets_fewer_larger_groups():
    base = cpu_groups((16_000_000,), MAX_WORKGROUP, (MAX_WORKGROUP,) * 3, 2, 256)
    assert base == (2000,)
    # 4000, not the 16000 the native path once chose alone: PoCL runs at most 4096.
    assert lockstep_groups((16_000_000,), base, 256, 2, CPU_GROUP_LIMIT) == (4000,)


@pytest.mark.parametrize("n", [2**22, 2**22 + 1])
def test_a_kernel_without_per_item_state_runs_in_larger_groups(n):
    base = cpu_groups((n,), MAX_WORKGROUP, (MAX_WORKGROUP,) * 3, CORES, 256)
    want = lockstep_groups((n,), base, 2, CORES, CPU_GROUP_LIMIT)[0]
    groups = -(-n // want)
    size = np.full(groups + 1, -1, np.int32)
    items = np.full(groups + 1, -1, np.int32)
    pk.kernel(SIZES)(size, items, ndrange=n)
    assert np.all(size[:groups] == want) and size[groups] == -1
    expected = np.full(groups, want, np.int32)
    expected[-1] = n - (groups - 1) * want  # a partial last group runs only its items
    np.testing.assert_array_equal(items[:groups], expected)
    assert want <= MAX_WORKGROUP  # no more than PoCL runs, so the paths agree
    if CORES <= 64:
        assert want > base[0]


@pytest.mark.parametrize("n", [1_000_000, 16_000_000 // 4, 999_999])
def test_the_histogram_stays_exact_in_the_default_groups(n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    counts = np.zeros(256, np.uint32)
    ex = examples.get("histogram")
    launch = ex.load()(pk.CPU())
    launch(counts, data, ndrange=data.shape)
    launch(counts, data, ndrange=data.shape)
    np.testing.assert_array_equal(counts, 2 * np.bincount(data, minlength=256))


def test_a_kernel_with_per_item_state_keeps_the_opencl_paths_groups():
    n = 2**20
    y = np.arange(n, dtype=np.float32)
    launch = pk.kernel(PER_ITEM)(pk.CPU())
    launch(y, ndrange=y.shape)
    np.testing.assert_array_equal(y, np.arange(n, dtype=np.float32) + 1)
    plan, = launch.plans.values()
    base = cpu_groups((n,), MAX_WORKGROUP, (MAX_WORKGROUP,) * 3, CORES, 256)
    assert plan.local_size == base[::-1]


def test_a_caller_still_may_not_ask_for_more_than_4096_items():
    size = np.zeros(8, np.int32)
    items = np.zeros(8, np.int32)
    with pytest.raises(NDRangeError, match="4096"):
        pk.kernel(SIZES)(size, items, ndrange=16384, workgroupsize=8192)
    pk.kernel(SIZES)(size, items, ndrange=16384, workgroupsize=4096)
    np.testing.assert_array_equal(size[:4], 4096)
    np.testing.assert_array_equal(items[:4], 4096)
