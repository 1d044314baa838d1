"""Sizes chosen at launch (DESIGN §1a): a workgroup size given at instantiation is a
compile-time ``@groupsize``, as KernelAbstractions' ``kernel(backend, 16)`` makes it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import portakern as pk
from portakern.errors import NDRangeError

#: KernelAbstractions' shape: scratch memory sized by the workgroup size of the launcher.
REVERSE = """
@kernel void reverse_groups(T* y, const T* x) {
    @localmem T s[@groupsize()];
    long l = @index(Local, Linear);
    long g = @index(Global, Linear);
    s[l] = x[g];
    @synchronize();
    y[g] = s[@groupsize() - 1 - l];
}
"""


def _expected(x: np.ndarray, group: int) -> np.ndarray:
    return x.reshape(-1, group)[:, ::-1].reshape(-1)


@pytest.mark.parametrize("group", [8, 32])
def test_localmem_sized_by_the_launchers_workgroup_size(backend, group):
    k = pk.kernel(REVERSE)
    x = np.arange(4 * group, dtype=np.float32)
    y = backend.to_device(np.zeros_like(x))
    k(backend, workgroupsize=group)(y, backend.to_device(x), ndrange=x.shape)
    backend.synchronize()
    np.testing.assert_array_equal(backend.to_host(y), _expected(x, group))


def test_one_variant_per_size_and_the_rendering_declares_it():
    k = pk.kernel(REVERSE)
    s8, s16 = k.sized(8), k.sized(16)
    assert s8 is k.sized(8) and s8 is not s16
    assert "reqd_work_group_size(8, 1, 1)" in s8.render("opencl", T="float")
    assert "reqd_work_group_size(16, 1, 1)" in s16.render("opencl", T="float")
    assert "__launch_bounds__(16)" in s16.render("cuda", T="float")


def test_without_a_size_the_array_is_sized_at_launch():
    """No static size: ``@groupsize()`` in the size is read at launch (issue 25 item 2,
    tests/test_localmem_sizes.py), so the launch's own workgroup size sizes ``s``."""
    k = pk.kernel(REVERSE)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    k(y, x, ndrange=x.shape, workgroupsize=16)
    np.testing.assert_array_equal(y, _expected(x, 16))
    assert "extern __shared__" in k.render("cuda", T="float")


def test_another_size_at_launch_is_refused_naming_both():
    k = pk.kernel(REVERSE)
    x = np.arange(64, dtype=np.float32)
    launcher = k(pk.CPU(), workgroupsize=16)
    with pytest.raises(NDRangeError, match="16"):
        launcher(np.zeros_like(x), x, ndrange=x.shape, workgroupsize=32)


def test_kernels_that_do_not_read_groupsize_are_not_resized():
    k = pk.kernel("@kernel void inc(float* y) { y[@index(Global, Linear)] += 1; }")
    assert k(pk.CPU(), workgroupsize=16).kernel is k
    declared = pk.kernel("@kernel(workgroupsize=8) void f(float* y) "
                         "{ y[@index(Global, Linear)] = @groupsize(); }")
    assert declared.sized(8) is declared


def test_a_sized_launcher_pickles_with_its_size():
    launcher = pk.kernel(REVERSE)(pk.CPU(), workgroupsize=8)
    again = pickle.loads(pickle.dumps(launcher))
    x = np.arange(32, dtype=np.float32)
    y = np.zeros_like(x)
    again(y, x, ndrange=x.shape)
    np.testing.assert_array_equal(y, _expected(x, 8))
    assert again.kernel._groupsize == 8


def test_the_language_doc_shows_this_example():
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "language.md").read_text()
    shown = [line.strip() for line in doc.split("**Given at instantiation.**")[1]
             .split("```c")[1].split("```")[0].splitlines() if line.strip()]
    source = [line.strip() for line in REVERSE.strip().splitlines()]
    assert [line.split("//")[0].strip() for line in shown] == source
