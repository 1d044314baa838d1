"""Debug mode through pointers into ``@localmem`` and private arrays (issue 28,
docs/debugging.md).

A pointer the kernel declares into a one-dimensional ``@localmem`` or private array
(``float* row = tile + l * 4;``, ``float* p = &acc[2];``) is checked against that array's
extent, and a helper given such a pointer checks its subscripts against it too. Each
test runs on the CPU's native path, on PoCL, and on the CUDA and Metal stand-ins (marked
``gpu`` / ``metal``): an access in range gives the right result, one out of range raises
:class:`pk.KernelFaultError` naming the array, the index, the extent, the line and the
work-item.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


LOCAL_VIEW = """
@kernel void local_view(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float tile[32];
    float* row = tile + l * 4;
    for (int k = 0; k < 4; k++) {
        row[k] = x[i] + k;
    }
    @synchronize();
    y[i] = row[0] + row[3 + off];
}
"""


def test_a_pointer_into_localmem_is_checked_against_its_extent(path: Any) -> None:
    k = pk.kernel(LOCAL_VIEW, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(0), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list(2 * x + 3)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(1), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("tile", 32, 32)
    assert err.work_item[0] % 8 == 7 and err.lineno == line_of(LOCAL_VIEW, "y[i] = row[0]")
    assert "@localmem array 'tile'" in str(err)


UNWRITTEN = """
@kernel void local_view_unwritten(float* y, const float* x) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float tile[32];
    float* row = &tile[l * 4];
    for (int k = 0; k < 3; k++) {
        row[k] = x[i];
    }
    @synchronize();
    y[i] = row[3];
}
"""


def test_a_read_through_a_localmem_view_is_initchecked(path: Any) -> None:
    k = pk.kernel(UNWRITTEN, debug=True)
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, ndrange=16, workgroupsize=8)
    err = info.value
    assert err.parameter == "tile" and err.index % 4 == 3
    assert err.lineno == line_of(UNWRITTEN, "y[i] = row[3]")
    assert "which no work-item of the group had written" in str(err)


PRIVATE_VIEW = """
@kernel void private_view(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    float acc[8];
    float* p = &acc[2];
    for (int j = 0; j < 6; j++) {
        p[j] = x[i] * j;
    }
    acc[0] = 0.0f;
    acc[1] = 0.0f;
    y[i] = *(p + 1) + p[5 + off];
}
"""


def test_a_pointer_into_a_private_array_is_checked_against_its_extent(path: Any) -> None:
    k = pk.kernel(PRIVATE_VIEW, debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8)[:1]
    assert list(y) == list(6 * x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(1), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", 8, 8)
    assert err.work_item[0] in range(8) and err.lineno == line_of(PRIVATE_VIEW, "y[i] = *(p")
    assert "private array 'acc'" in str(err)


REDUCE = """
void add_pair(float* s, long i, long k) {
    s[i] += s[i + k];
}
@kernel void helper_reduce(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float part[8];
    part[l] = x[i];
    @synchronize();
    for (long k = 4; k > 0; k /= 2) {
        if (l < k) {
            add_pair(part, l, k + off);
        }
        @synchronize();
    }
    if (l == 0) {
        y[i / 8] = part[0];
    }
}
"""


def test_a_helper_given_localmem_checks_it_against_its_extent(path: Any) -> None:
    k = pk.kernel(REDUCE, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(2, np.float32), x, np.int64(0), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list(x.reshape(2, 8).sum(1))
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(2, np.float32), x, np.int64(1), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("part", 8, 8)
    assert err.work_item[0] % 8 == 3 and err.lineno == line_of(REDUCE, "s[i] += s[i + k]")
    assert "@localmem array 'part'" in str(err)


PRIVATE_HELPER = """
float total(const float* a, long n) {
    float s = 0.0f;
    for (long j = 0; j < n; j++) {
        s += a[j];
    }
    return s;
}
@kernel void helper_private(float* y, const float* x, const long n) {
    const long i = @index(Global, Linear);
    float acc[4];
    for (int j = 0; j < 4; j++) {
        acc[j] = x[i] + j;
    }
    float* tail = acc + 1;
    y[i] = total(acc, 2) + total(tail, n);
}
"""


def test_a_helper_given_a_private_array_checks_it_against_its_extent(path: Any) -> None:
    k = pk.kernel(PRIVATE_HELPER, debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(3), ndrange=8)[:1]
    assert list(y) == list(2 * x + 1 + 3 * x + 6)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(4), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", 4, 4)
    assert err.work_item[0] in range(8) and err.lineno == line_of(PRIVATE_HELPER, "s += a[j]")
    assert "private array 'acc'" in str(err)


RACE = """
@kernel void local_view_race(float* y, const float* x) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float t[8];
    float* mine = t + l;
    t[l] = x[i];
    @synchronize();
    if (l == 0) {
        mine[0] = 5.0f;
    }
    y[i] = t[0];
}
"""


def test_a_write_through_a_localmem_view_is_racechecked(path: Any) -> None:
    k = pk.kernel(RACE, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8,
                 workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("t", 0, 8)
    assert line_of(RACE, "mine[0] = 5.0f") in (err.lineno, err.other_lineno)
    assert "race on element" in str(err)


SIZED = """
@kernel void sized_view(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float s[@groupsize()];
    float* here = &s[l];
    here[0] = x[i];
    @synchronize();
    y[i] = here[off];
}
"""


def test_a_launch_sized_localmem_is_checked_through_a_view(path: Any) -> None:
    x = np.arange(16, dtype=np.float32)
    try:
        path.run(pk.kernel(SIZED), np.zeros(16, np.float32), x, np.int64(0), ndrange=16,
                 workgroupsize=8)
    except pk.CompilationError as e:  # the address space of 'here' is not inferred there
        pytest.skip(f"{path.where}: a pointer into a launch-sized @localmem does not build "
                    f"outside debug mode either: {str(e).splitlines()[0]}")
    k = pk.kernel(SIZED, debug=True)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(0), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list(x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(1), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("s", 8, 8)
    assert err.work_item[0] % 8 == 7 and err.lineno == line_of(SIZED, "y[i] = here[off]")


SIZED_HELPER = """
float at(const float* s, long j) { return s[j]; }
@kernel void sized_helper(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float s[@groupsize()];
    s[l] = x[i];
    @synchronize();
    y[i] = at(s, @groupsize() - 1 - l + off);
}
"""


def test_a_helper_given_a_launch_sized_localmem_checks_its_launch_extent(path: Any) -> None:
    x = np.arange(16, dtype=np.float32)
    try:
        path.run(pk.kernel(SIZED_HELPER), np.zeros(16, np.float32), x, np.int64(0),
                 ndrange=16, workgroupsize=8)
    except (pk.CompilationError, pk.KernelSyntaxError) as e:
        pytest.skip(f"{path.where}: a helper given a launch-sized @localmem does not build "
                    f"outside debug mode either: {str(e).splitlines()[0]}")
    k = pk.kernel(SIZED_HELPER, debug=True)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(0), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list(x.reshape(2, 8)[:, ::-1].ravel())
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(1), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("s", 8, 8)
    assert err.work_item[0] % 8 == 0 and err.lineno == line_of(SIZED_HELPER, "return s[j]")


ACROSS = """
float first(const float* a) { return a[0]; }
@kernel void across_barrier(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float t[8];
    float acc[4];
    float* p = acc + 1;
    for (int j = 0; j < 4; j++) {
        acc[j] = x[i] + j;
    }
    t[l] = acc[3];
    @synchronize();
    y[i] = p[off] + first(p + off) + t[7 - l] - acc[3];
}
"""


def test_a_private_view_and_helper_across_a_barrier(path: Any, recwarn: Any) -> None:
    k = pk.kernel(ACROSS, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(2), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list((x + 3) + x.reshape(2, 8)[:, ::-1].ravel() + 3)
    # The debug rendering builds where the plain one does (no fallback to OpenCL).
    assert not [w for w in recwarn if issubclass(w.category, pk.NativeFallbackWarning)]
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(3), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", 4, 4)
    assert err.lineno in (line_of(ACROSS, "y[i] = p[off]"), line_of(ACROSS, "return a[0]"))
