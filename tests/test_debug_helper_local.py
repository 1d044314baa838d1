"""Debug mode's initcheck and racecheck inside helper functions (issue 28, docs/debugging.md).

A helper given a one-dimensional ``@localmem`` array (or a pointer into one) checks its
accesses like the kernel body does: a read of an element no work-item of the group wrote
since the group started, and two work-items touching one element between the same two
barriers (one of them writing), raise :class:`pk.KernelFaultError` naming the array, the
element, the helper's own line and the work-item; a helper's atomics are not races. Each
test runs on the CPU's native path, on PoCL, and on the CUDA and Metal stand-ins (the
``path`` fixture, tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


UNWRITTEN = """
float at(const float* t, long j) {
    return t[j];
}
float pick(const float* t, long j) {
    return at(t, j);
}
@kernel void helper_unwritten(float* y, const float* x, const long skip) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float tile[8];
    if (l != skip) {
        tile[l] = x[i];
    }
    @synchronize();
    y[i] = pick(tile, 7 - l);
}
"""


def test_a_helper_reading_an_unwritten_element_is_initchecked(path: Any) -> None:
    k = pk.kernel(UNWRITTEN, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(-1), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list(x.reshape(2, 8)[:, ::-1].ravel())
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(16, np.float32), x, np.int64(3), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index) == ("tile", 3)
    assert err.work_item[0] % 8 == 4 and err.lineno == line_of(UNWRITTEN, "return t[j]")
    assert "which no work-item of the group had written" in str(err)


VIEW_UNWRITTEN = """
float second(const float* t) {
    return t[1];
}
@kernel void helper_view_unwritten(float* y, const float* x) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float tile[9];
    tile[l] = x[i];
    @synchronize();
    y[i] = second(tile + l);
}
"""


def test_a_helper_given_a_pointer_into_localmem_is_initchecked(path: Any) -> None:
    k = pk.kernel(VIEW_UNWRITTEN, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8,
                 workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.work_item[0]) == ("tile", 8, 7)
    assert err.lineno == line_of(VIEW_UNWRITTEN, "return t[1]")


MOVED = """
float sum3(const float* a) {
    float s = 0.0f;
    for (int k = 0; k < 3; k++) {
        s += *a++;
    }
    return s;
}
@kernel void helper_moved(float* y, const float* x, const long skip) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float t[10];
    t[l] = x[i];
    if (l < 2 && l != skip) {
        t[8 + l] = x[i];
    }
    @synchronize();
    y[i] = sum3(t + l);
}
"""


def test_a_helper_moving_its_pointer_is_initchecked(path: Any) -> None:
    k = pk.kernel(MOVED, debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(k, np.zeros(8, np.float32), x, np.int64(-1), ndrange=8,
                  workgroupsize=8)[:1]
    ext = np.concatenate([x, x[:2]])
    assert list(y) == [ext[j] + ext[j + 1] + ext[j + 2] for j in range(8)]
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(1), ndrange=8, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.work_item) == ("t", 9, (7,))
    assert err.lineno == line_of(MOVED, "s += *a++")


def _race(sync: str, read: str = "get(t, l)") -> str:
    return f"""
void put(float* t, long j, float v) {{
    t[j] = v;
}}
float get(const float* t, long j) {{
    return t[j];
}}
@kernel void helper_race(float* y, const float* x) {{
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float t[8];
    put(t, l, x[i]);
    @synchronize();
    const float mine = {read};
    {sync}
    put(t, (l + 1) % 8, mine);
    @synchronize();
    y[i] = get(t, l);
}}
"""


@pytest.mark.parametrize("read", ["get(t, l)", "t[l]"])
def test_a_helper_writing_a_neighbours_slot_is_racechecked(path: Any, read: str) -> None:
    source = _race("", read)
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8,
                 workgroupsize=8)
    err = info.value
    assert err.parameter == "t" and "race on element" in str(err)
    lines = {err.lineno, err.other_lineno}
    assert line_of(source, "t[j] = v") in lines
    assert lines <= {line_of(source, "t[j] = v"), line_of(source, "return t[j]"),
                     line_of(source, "const float mine")}
    assert err.work_item[0] != err.other_work_item


def _nested(source: str) -> str:
    """The race kernel writing its neighbour's slot through a helper that calls ``put``,
    given a pointer into ``t``."""
    return source.replace("float get(", "void put_at(float* base, long j, float v) {\n"
                          "    put(base + 1, j - 1, v);\n}\nfloat get(").replace(
        "put(t, (l + 1) % 8, mine);", "put_at(t, (l + 1) % 8, mine);")


def test_a_helper_called_by_a_helper_is_racechecked(path: Any) -> None:
    source = _nested(_race(""))
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8,
                 workgroupsize=8)
    err = info.value
    assert err.parameter == "t" and "race on element" in str(err)
    assert line_of(source, "t[j] = v") in (err.lineno, err.other_lineno)
    fixed = pk.kernel(_nested(_race("@synchronize();")), debug=True)
    x = np.arange(8, dtype=np.float32)
    y, = path.run(fixed, np.zeros(8, np.float32), x, ndrange=8, workgroupsize=8)[:1]
    assert list(y) == list(np.roll(x, 1))


@pytest.mark.parametrize("read", ["get(t, l)", "t[l]"])
def test_the_helper_with_a_barrier_passes(path: Any, read: str) -> None:
    k = pk.kernel(_race("@synchronize();", read), debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, ndrange=16, workgroupsize=8)[:1]
    assert list(y) == list(np.roll(x.reshape(2, 8), 1, axis=1).ravel())


HISTOGRAM = """
void bump(int* h, long j) {
    @atomic_add(&h[j], 1);
}
@kernel void helper_histogram(int* y, const int* x) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem int h[4];
    if (l < 4) {
        h[l] = 0;
    }
    @synchronize();
    bump(h, x[i] % 4);
    @synchronize();
    if (l < 4) {
        y[(i / 8) * 4 + l] = h[l];
    }
}
"""


def test_a_helpers_atomics_are_not_races(path: Any) -> None:
    k = pk.kernel(HISTOGRAM, debug=True)
    x = np.arange(16, dtype=np.int32)
    y, = path.run(k, np.zeros(8, np.int32), x, ndrange=16, workgroupsize=8)[:1]
    assert list(y) == [2] * 8


def test_a_helper_given_global_memory_is_unchanged(path: Any) -> None:
    """A helper also called with an array parameter keeps only its bounds check there."""
    source = UNWRITTEN.replace("y[i] = pick(tile, 7 - l);",
                               "y[i] = pick(tile, 7 - l) + pick(x, i);")
    k = pk.kernel(source, debug=True)
    x = np.arange(16, dtype=np.float32)
    y, = path.run(k, np.zeros(16, np.float32), x, np.int64(-1), ndrange=16,
                  workgroupsize=8)[:1]
    assert list(y) == list(x.reshape(2, 8)[:, ::-1].ravel() + x)


NO_LOCALMEM = """
float at(const float* t, long j) {
    return t[j];
}
@kernel void helper_global(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = at(x, i);
}
"""


@pytest.mark.parametrize("source", [UNWRITTEN, _race(""), HISTOGRAM, NO_LOCALMEM],
                         ids=["initcheck", "racecheck", "atomics", "no-localmem"])
def test_helper_renderings_compile_for_the_real_gpu_compilers(source: str) -> None:
    """NVRTC and clang's Metal check, stricter than the stand-ins."""
    from portakern.backends import _mlx
    from portakern.backends.metal import mlx_source
    from portakern.checks.cuda import compile_cuda_ptx, cuda_check_available
    from portakern.checks.metal import check_metal, metal_check_available

    kernel = pk.kernel(source, debug=True)
    ok, why = metal_check_available()
    if ok:
        r = kernel.rendered("metal", {}, 1)
        assert "pk_dbg_hl(" in r.source
        check_metal(r.source, sources=r.sources())
        check_metal(mlx_source(r, shapes={"x": (16,), "y": (16,)}), sources=r.sources())
    ok_cuda, why_cuda = cuda_check_available()
    if ok_cuda:
        r = kernel.rendered("cuda", {}, 1)
        assert "pk_dbg_hl(" in r.source
        compile_cuda_ptx(r.source)
        compile_cuda_ptx(mlx_source(r, default_header=_mlx.CUDA_HEADER_STANDIN))
    if not (ok or ok_cuda):
        pytest.skip(f"no Metal check ({why}) and no CUDA compiler ({why_cuda})")
