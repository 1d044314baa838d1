"""Debug mode on the native path: a work-item writing only its own ``@localmem`` element
between two barriers records nothing for the racecheck (``racecheck.quiet_reads``), and
every write that could race keeps its record (issue 28 item 6: debug mode's cost).

Each kernel below that races must still raise ``KernelFaultError``; each that cannot must
render without the write's race record and agree with NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern import examples
from portakern.backends.native import NativeCPU

native = pytest.mark.skipif(not NativeCPU.available().ok, reason="no C++ compiler with OpenMP")


@pytest.fixture(autouse=True)
def _native_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PORTAKERN_DEBUG", raising=False)
    monkeypatch.setenv("PORTAKERN_CPU", "native")


def _line(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def _recorded_writes(kernel: pk.Kernel, ndim: int = 1) -> int:
    return kernel.render("c", ndim=ndim).count("pk_dbg_race(pk_dbg_wr")


_OWN = """
@kernel void own(float* y, const float* x) {
    @localmem float t[8];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    t[l] = x[i];
    @synchronize();
    y[i] = t[(l + 1) % 8];
}"""


@native
def test_a_work_item_writing_its_own_element_records_no_race():
    k = pk.kernel(_OWN, debug=True)
    assert _recorded_writes(k) == 0
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    k(y, x, ndrange=16, workgroupsize=8)
    assert np.array_equal(y, np.roll(x.reshape(2, 8), -1, axis=1).ravel())


@native
def test_the_tiled_matmul_s_tile_loads_record_no_race_and_it_agrees_with_numpy():
    ex = examples.get("matmul_tiled")
    k = ex.load(debug=True)
    src = k.render("c", ndim=2, T="float")
    assert "pk_dbg_race(pk_dbg_wr" not in src
    assert src.count("pk_dbg_wr(") == 4  # initcheck still marks them
    args = ex.make_args(48)
    k(pk.CPU(), ex.workgroupsize())(*args, ndrange=ex.ndrange(args))
    assert ex.agrees(ex.outputs(args), ex.reference(args))


def _raises_race(source: str, *, ndrange, workgroupsize, ndim: int = 1, args=None) -> Exception:
    k = pk.kernel(source, debug=True)
    assert _recorded_writes(k, ndim) > 0
    y = np.zeros(int(np.prod(ndrange)), np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        k(y, *(args or ()), ndrange=ndrange, workgroupsize=workgroupsize)
    assert "race on element" in str(info.value)
    return info.value


_TWO_SUBSCRIPTS = """
@kernel void two(float* y) {
    @localmem float t[8];
    const long l = @index(Local, Linear);
    t[l] = 1.0f;
    t[(l + 1) % 8] = 2.0f;
    @synchronize();
    y[@index(Global, Linear)] = t[l];
}"""


@native
def test_two_writes_with_different_subscripts_keep_their_records():
    err = _raises_race(_TWO_SUBSCRIPTS, ndrange=8, workgroupsize=8)
    assert err.parameter == "t"
    assert {err.lineno, err.other_lineno} == {_line(_TWO_SUBSCRIPTS, "t[l] = 1.0f"),
                                              _line(_TWO_SUBSCRIPTS, "t[(l + 1) % 8]")}


_ONE_AXIS = """
@kernel void one_axis(float* y) {
    @localmem float t[4];
    auto [li, lj] = @index(Local, NTuple);
    t[lj] = (float)li;
    @synchronize();
    y[@index(Global, Linear)] = t[lj];
}"""


@native
def test_a_subscript_that_leaves_out_an_axis_keeps_its_record():
    # work-items (0, j) and (1, j) both write t[j]
    err = _raises_race(_ONE_AXIS, ndrange=(2, 4), workgroupsize=(2, 4), ndim=2)
    assert err.parameter == "t" and err.lineno == _line(_ONE_AXIS, "t[lj] = ")


_READ_BESIDE = """
@kernel void beside(float* y) {
    @localmem float t[8];
    const long l = @index(Local, Linear);
    t[l] = (float)l;
    if (l > 0) y[@index(Global, Linear)] = t[l - 1];
    @synchronize();
}"""


@native
def test_a_write_read_by_a_neighbour_before_the_barrier_keeps_its_record():
    err = _raises_race(_READ_BESIDE, ndrange=8, workgroupsize=8)
    assert err.parameter == "t"
    assert {err.lineno, err.other_lineno} == {_line(_READ_BESIDE, "t[l] = "),
                                              _line(_READ_BESIDE, "t[l - 1]")}


@pytest.mark.parametrize("spoil", [
    "l = l / 2;",
    "l /= 2;",
    "l >>= 1;",
    "long& r = l; r = r / 2;",
    "halve(l);",
], ids=["assigned", "compound", "shift", "reference", "by-reference-call"])
@native
def test_a_local_id_variable_that_may_change_keeps_its_writes_recorded(spoil: str):
    source = ("void halve(long& v) { v = v / 2; }\n"
              "@kernel void spoilt(float* y) {\n"
              "    @localmem float t[8];\n"
              "    long l = @index(Local, Linear);\n"
              f"    {spoil}\n"
              "    t[l] = 1.0f;\n"
              "    @synchronize();\n"
              "    y[@index(Global, Linear)] = t[l];\n"
              "}")
    err = _raises_race(source, ndrange=8, workgroupsize=8)  # items 2k and 2k+1 write t[k]
    assert err.parameter == "t" and err.lineno == _line(source, "t[l] = 1.0f")


_TRANSPOSED = """
@kernel void transposed(float* y) {
    @localmem float t[4][4];
    auto [li, lj] = @index(Local, NTuple);
    t[li][lj] = 1.0f;
    t[lj][li] = 2.0f;
    @synchronize();
    y[@index(Global, Linear)] = t[li][lj];
}"""


@native
def test_two_own_element_writes_with_the_axes_swapped_keep_their_records():
    # each is one element per work-item, but (0, 1)'s first is (1, 0)'s second
    err = _raises_race(_TRANSPOSED, ndrange=(4, 4), workgroupsize=(4, 4), ndim=2)
    assert err.parameter == "t"
    assert {err.lineno, err.other_lineno} == {_line(_TRANSPOSED, "t[li][lj] = 1.0f"),
                                              _line(_TRANSPOSED, "t[lj][li] = 2.0f")}


_SHADOWED = """
@kernel void shadowed(float* y) {
    @localmem float t[8];
    const long l = @index(Local, Linear);
    {
        const long l(3);
        t[l] = 1.0f;
    }
    @synchronize();
    y[@index(Global, Linear)] = t[3];
}"""


@native
def test_a_block_s_own_variable_of_the_same_name_keeps_the_writes_recorded():
    err = _raises_race(_SHADOWED, ndrange=8, workgroupsize=8)  # every item writes t[3]
    assert (err.parameter, err.index) == ("t", 3)
