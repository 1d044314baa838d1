"""Debug mode's cost on the native path (issue 28 item 6): what makes it cheaper keeps every check.

Reads of ``@localmem`` between two barriers where nothing writes the array skip the
racecheck's bookkeeping (``portakern.lower.racecheck.quiet_reads``); a work-item loop that
only reads ``@localmem`` gets a vectorised copy for when every element of what it reads is
written (``portakern.lower.initcheck.fast_runs``).
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


# A tile written in one run, read (nothing else) in the next, stored in the last.
_TILE = """
@kernel void tile(float* y, const float* x, long skip) {
    @localmem float t[8];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    float acc = 0.0f;
    if (l != skip) t[l] = x[i];
    @synchronize();
    acc += t[(l + 1) % 8];
    acc += t[l];
    @synchronize();
    y[i] = acc;
}"""


@native
def test_a_read_only_run_gets_a_fast_copy_behind_the_written_flag():
    k = pk.kernel(_TILE, debug=True)
    src = k.render("c", ndim=1)
    fast, checked = src.split("if (pk_wf_t) {", 1)[1].split(" } else { ", 1)
    checked = checked.split(" }", 1)[0]
    # the fast copy reads plainly and is vectorised; the other keeps initcheck, one item at a time
    assert "#pragma omp simd" in fast and "pk_dbg_rd(" not in fast
    assert "#pragma omp simd" not in checked and checked.count("pk_dbg_rd(") == 2
    # nothing writes t between the two barriers: its reads record nothing for the racecheck;
    # before them each work-item writes only its own t[l]: nor do those writes
    # (tests/test_debug_own_writes.py)
    assert "pk_dbg_race(pk_dbg_rd" not in src and "pk_dbg_race(pk_dbg_wr" not in src
    y, x = np.zeros(16, np.float32), np.arange(16, dtype=np.float32)
    k(y, x, -1, ndrange=16, workgroupsize=8)
    g = x.reshape(2, 8)
    assert np.array_equal(y, (np.roll(g, -1, axis=1) + g).ravel())


@native
def test_a_tile_left_partly_unwritten_still_faults_in_the_checked_copy():
    k = pk.kernel(_TILE, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        k(np.zeros(16, np.float32), np.ones(16, np.float32), 3, ndrange=16, workgroupsize=8)
    err = info.value  # item 2 reads t[3], which item 3 skipped
    assert (err.parameter, err.index, err.extent, err.work_item) == ("t", 3, 8, (2,))
    assert err.lineno == _line(_TILE, "acc += t[(l + 1)")
    assert "no work-item of the group had written" in str(err)


_LOOP_RACE = """
@kernel void loop_race(float* y, long n) {
    @localmem float t[8];
    const long l = @index(Local, Linear);
    float acc = 0.0f;
    for (long k = 0; k < n; ++k) {
        t[l] = (float)k;
        @synchronize();
        acc += t[(l + 1) % 8];
    }
    y[@index(Global, Linear)] = acc;
}"""


@native
def test_a_read_that_races_with_the_next_iteration_s_write_is_still_found():
    # No barrier ends the loop's body: the read of iteration k and the write of k + 1 share
    # an epoch, so those reads keep their bookkeeping (the stretch is not straight-line).
    k = pk.kernel(_LOOP_RACE, debug=True)
    y = np.zeros(8, np.float32)
    k(y, 1, ndrange=8, workgroupsize=8)  # one iteration: no race
    assert np.array_equal(y, np.zeros(8, np.float32))
    with pytest.raises(pk.KernelFaultError) as info:
        k(np.zeros(8, np.float32), 2, ndrange=8, workgroupsize=8)
    err = info.value  # item 7 read t[0] after the barrier; item 0 writes it in the next turn
    assert (err.parameter, err.index, err.extent) == ("t", 0, 8)
    assert (err.other_work_item, err.work_item) == ((7,), (0,))
    assert (err.other_lineno, err.lineno) == (_line(_LOOP_RACE, "acc += t["),
                                              _line(_LOOP_RACE, "t[l] = (float)k"))
    assert "race on element" in str(err)


@native
def test_matmul_tiled_in_debug_mode_agrees_with_numpy():
    ex = examples.get("matmul_tiled")
    args = ex.make_args(64)
    ex.load(debug=True)(pk.CPU(), ex.workgroupsize())(*args, ndrange=ex.ndrange(args))
    assert ex.agrees(ex.outputs(args), ex.reference(args))
    src = ex.load(debug=True).render("c", T="float", ndim=2)
    assert "if (pk_wf_ta && pk_wf_tb) {" in src
