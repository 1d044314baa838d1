"""Debug mode's initcheck and racecheck on the CUDA and Metal renderings (docs/debugging.md).

Each test runs on the CUDA stand-in (marked ``gpu``) and the Metal stand-in (marked
``metal``), or on the real device where there is one (tests/conftest.py). A block's
threads run at once there, one OS thread each, so which of several faulting work-items
is reported, and which of two racing accesses came first, is up to the scheduler: the
tests check that the reported fault is one of those the kernel has, and that it names
both accesses of a race consistently. The clean kernels (the tiled matrix multiply, the
reductions, the histogram) run in debug mode with no fault and the right answer.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern import examples


@pytest.fixture(params=[pytest.param("cuda", marks=pytest.mark.gpu),
                        pytest.param("metal", marks=pytest.mark.metal)])
def gpu(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> pk.Backend:
    """``pk.CUDA()`` or ``pk.Metal()``: their stand-ins where there is no device."""
    monkeypatch.delenv("PORTAKERN_DEBUG", raising=False)
    backend = pk.CUDA() if request.param == "cuda" else pk.Metal()
    status = type(backend).available()
    if not status:
        pytest.skip(f"{request.param}: {status.reason}")
    return backend


def _run(backend: Any, kernel: pk.Kernel, *args: Any, workgroupsize: Any = None,
         ndrange: Any) -> list:
    """Launch on ``backend`` with NumPy arguments copied there; the arrays come back."""
    dev = [backend.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
           for a in args]
    kernel(backend, workgroupsize)(*dev, ndrange=ndrange)
    backend.synchronize()
    return [np.asarray(backend.to_host(d)) if isinstance(a, np.ndarray) else None
            for a, d in zip(args, dev, strict=True)]


def _line(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


# ------------------------------------------------------------------------------ initcheck

_HIST = """
@kernel void hist(uint* out, const uint* x) {
    @localmem uint bins[16];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    if (l < 16) bins[l] = 0;                   // work-items outside the ndrange do not run
    @synchronize();
    @atomic_add(&bins[x[i] % 16], 1);
    @synchronize();
    if (l < 16) @atomic_add(&out[l], bins[l]);
}"""


def test_initcheck_finds_the_histogram_whose_masked_items_left_bins_unwritten(gpu):
    k = pk.kernel(_HIST, debug=True)
    x = np.arange(100, dtype=np.uint32)
    out, _ = _run(gpu, k, np.zeros(16, np.uint32), x, ndrange=100, workgroupsize=32)
    assert np.array_equal(out, np.bincount(x % 16, minlength=16))  # every bin read was zeroed
    with pytest.raises(pk.KernelFaultError) as info:
        _run(gpu, k, np.zeros(16, np.uint32), x[:10] + 5, ndrange=10, workgroupsize=32)
    err = info.value
    # Items 0..9 zeroed bins 0..9; items 5..9 count x = 10..14 into bins nothing wrote.
    # They run at once: any of them may be the first to report.
    assert (err.parameter, err.extent) == ("bins", 16)
    assert 10 <= err.index <= 14 and err.work_item == (err.index - 5,)
    assert err.lineno == _line(_HIST, "@atomic_add(&bins")
    assert "no work-item of the group had written" in str(err)


@pytest.mark.parametrize("body, element, line_text", [
    ("t[l] = x[i];\n    @synchronize();\n    y[i] = t[(l + 1) % 8];", 4, "y[i] = t["),
    ("if (l > 0) t[l] = 1.0f;\n    @synchronize();\n    y[i] = t[l];", 0, "y[i] = t[l]"),
    ("u[l][1] = 1.0f;\n    @synchronize();\n    y[i] = u[l][0];", None, "y[i] = u[l][0]"),
], ids=["neighbour-masked", "one-slot-unwritten", "2-d"])
def test_initcheck_reports_each_kind_of_read(gpu, body, element, line_text):
    source = f"""
@kernel void r(float* y, const float* x) {{
    @localmem float t[8];
    @localmem float u[8][2];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    {body}
}}"""
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        _run(gpu, k, np.zeros(4, np.float32), np.ones(4, np.float32), ndrange=4,
             workgroupsize=8)
    err = info.value
    if element is None:  # every item reads its own unwritten u[l][0]: element 2 * l
        assert err.parameter == "u" and err.index == 2 * err.work_item[0]
    else:
        assert (err.parameter, err.index) == ("t", element)
    assert err.lineno == _line(source, line_text)


# ------------------------------------------------------------------------------ racecheck

_RACE = """
@kernel void race(float* y, const float* x) {{
    @localmem float t[8];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    t[l] = x[i];
    @synchronize();
    {body}
}}"""

_WHO = re.compile(r"work-item \((\d+),\) (wrote|read) it at [^:]*:(\d+)")


def _accesses(err: pk.KernelFaultError) -> set[tuple[int, int, bool]]:
    """The race's two accesses as (work-item, line, wrote), from the error's attributes and
    its message (which says which of them wrote)."""
    found = _WHO.findall(str(err))
    assert len(found) == 2, str(err)
    (a, a_kind, a_line), (b, b_kind, b_line) = found
    assert (int(a), int(a_line)) == (err.other_work_item[0], err.other_lineno)
    assert (int(b), int(b_line)) == (err.work_item[0], err.lineno)
    return {(int(a), int(a_line), a_kind == "wrote"), (int(b), int(b_line), b_kind == "wrote")}


@pytest.mark.parametrize("body, case", [
    ("t[l] = 2.0f * t[l];\n    y[i] = t[(l + 1) % 8];", "read-then-write"),
    ("if (l == 0) t[0] = 5.0f;\n    y[i] = t[0];", "write-then-read"),
    ("t[3] = (float)l;", "write-write"),
    ("t[l / 2] += 1.0f;", "update"),
], ids=lambda v: v if "-" in v or v == "update" else "")
def test_racecheck_finds_a_missing_synchronize(gpu, body, case):
    source = _RACE.format(body=body)
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        _run(gpu, k, np.zeros(8, np.float32), np.ones(8, np.float32), ndrange=8,
             workgroupsize=8)
    err = info.value
    assert (err.parameter, err.extent) == ("t", 8)
    assert "race on element" in str(err) and "no @synchronize() between" in str(err)
    e, got = err.index, _accesses(err)
    if case == "read-then-write":   # item e writes t[e], item e - 1 reads it
        assert got == {(e, _line(source, "t[l] = 2.0f"), True),
                       ((e - 1) % 8, _line(source, "y[i] = t[(l"), False)}
    elif case == "write-then-read":  # item 0 writes t[0], any other reads it
        (reader, *_), = [a for a in got if a[0] != 0]
        assert e == 0 and got == {(0, _line(source, "t[0] = 5.0f"), True),
                                  (reader, _line(source, "y[i] = t[0]"), False)}
    elif case == "write-write":      # every item writes t[3]
        line = _line(source, "t[3] =")
        assert e == 3 and len({a[0] for a in got}) == 2
        assert {(a[1], a[2]) for a in got} == {(line, True)}
    else:                            # items 2e and 2e + 1 update t[e]
        line = _line(source, "t[l / 2]")
        assert got == {(2 * e, line, True), (2 * e + 1, line, True)}


@pytest.mark.parametrize("ndrange", [(4, 8), (4, 6)], ids=["whole-groups", "partial-groups"])
def test_racecheck_names_the_other_work_item_of_a_2d_group(gpu, ndrange):
    """On Metal the groups at the far edge are smaller (4 x 6 in groups of 2 x 4): the other
    item is still named by its place in the launch's group shape."""
    source = """
@kernel void race2(float* y) {
    @localmem float t[2][4];
    auto [r, c] = @index(Local, NTuple);
    auto [gr, gc] = @index(Group, NTuple);
    const bool last = gr == 1 && gc == 1;
    t[r][c] = 1.0f;
    @synchronize();
    t[r][c] = 2.0f;
    y[@index(Global, Linear)] = last ? t[1 - r][c] : t[r][c];
}"""
    k = pk.kernel(source, debug=True)
    with pytest.raises(pk.KernelFaultError) as info:
        _run(gpu, k, np.zeros(ndrange, np.float32), ndrange=ndrange, workgroupsize=(2, 4))
    err = info.value
    # In group (1, 1), item (2 + r, 4 + c) writes t[r][c] and item (3 - r, 4 + c) reads it.
    assert (err.parameter, err.extent) == ("t", 8)
    r, c = divmod(err.index, 4)
    assert c < ndrange[1] - 4
    writer, reader = (2 + r, 4 + c), (3 - r, 4 + c)
    wrote = (_line(source, "t[r][c] = 2"), writer)
    read = (_line(source, "? t[1 - r]"), reader)
    assert {(err.other_lineno, err.other_work_item), (err.lineno, err.work_item)} == {wrote, read}


@pytest.mark.parametrize("body", [
    # each barrier clears the race shadows, inside a loop too
    "for (long s = 4; s > 0; s /= 2) {\n        if (l < s) t[l] += t[l + s];\n"
    "        @synchronize();\n    }\n    y[i] = t[0];",
    # one item's own element, read and written
    "t[l] = t[l] + 1.0f;\n    y[i] = t[l];",
    # many readers of one element
    "y[i] = t[0] + t[7];",
], ids=["tree-reduction", "own-element", "readers"])
def test_racecheck_stays_quiet_without_a_race(gpu, body):
    k = pk.kernel(_RACE.format(body=body), debug=True)
    x = np.arange(16, dtype=np.float32)
    y, _ = _run(gpu, k, np.zeros(16, np.float32), x, ndrange=16, workgroupsize=8)
    groups = x.reshape(2, 8)
    if "s /= 2" in body:
        want = np.repeat(groups.sum(axis=1), 8)
    elif "t[7]" in body:
        want = np.repeat(groups[:, 0] + groups[:, 7], 8)
    else:
        want = x + 1
    assert np.array_equal(y, want)


def test_atomics_on_one_element_are_not_a_race(gpu):
    """Metal has no float atomics on threadgroup memory: a uint counter."""
    source = """
@kernel void count(uint* y) {
    @localmem uint c[2];
    const long l = @index(Local, Linear);
    if (l < 2) c[l] = 0;
    @synchronize();
    if (l > 0) @atomic_add(&c[0], 1u);
    @atomic_add(&c[1], (uint)l);
    @synchronize();
    y[@index(Global, Linear)] = c[0] + c[1];
}"""
    k = pk.kernel(source, debug=True)
    y, = _run(gpu, k, np.zeros(16, np.uint32), ndrange=16, workgroupsize=8)
    assert np.array_equal(y, np.full(16, 7 + 28, np.uint32))


# -------------------------------------------------------------- clean kernels: no false faults

@pytest.mark.parametrize("name, size", [
    ("matmul_tiled", (37, 29, 41)),    # partial tiles on every edge
    ("reduce_sum", 1000),
    ("brightest_pixel", (30, 40)),
    ("histogram", 1000),               # a partial last group clears and flushes every bin
])
def test_example_kernels_pass_in_debug_mode(gpu, name, size):
    ex = examples.get(name)
    args = ex.make_args(size, np.random.default_rng(3))
    expected = ex.reference(args)
    constants = ex.merged_constants()
    if name == "matmul_tiled":
        constants["TILE"] = 8          # 64 threads a group: quick on the stand-ins
    kernel = pk.Kernel.from_file(ex.path, ex.kernel, debug=True, **constants)
    dev = ex.to_device(args, gpu)
    kernel(gpu, ex.workgroupsize(**constants))(*dev, ndrange=ex.ndrange(args))
    got = ex.outputs(dev, gpu)
    for out, want in expected.items():
        rtol, atol = ex.tolerance(np.asarray(want).dtype)
        np.testing.assert_allclose(np.asarray(got[out]), want, rtol=rtol, atol=atol)
    if name in ("matmul_tiled", "histogram"):   # the @localmem kernels were checked
        source = kernel.render(gpu.target, **({"T": "float"} if name == "matmul_tiled" else {}))
        assert "pk_ic_rd" in source and "pk_rc_note" in source


# --------------------------------------------------------------- the real compilers accept it

@pytest.mark.parametrize("name", ["histogram", "matmul_tiled"])
def test_sanitized_renderings_compile_for_the_real_gpu_compilers(name):
    """NVRTC (to PTX) and clang's Metal check, module and MLX shapes, of kernels whose
    @localmem reads are initchecked and racechecked."""
    from portakern.backends import _mlx
    from portakern.backends.metal import mlx_source
    from portakern.checks.cuda import compile_cuda_ptx, cuda_check_available
    from portakern.checks.metal import check_metal, metal_check_available

    ex = examples.get(name)
    kernel = pk.Kernel.from_file(ex.path, ex.kernel, debug=True, **ex.merged_constants())
    types = {"T": "float"} if name == "matmul_tiled" else {}
    ndim = 2 if name == "matmul_tiled" else 1
    ok, why = metal_check_available()
    if ok:
        r = kernel.rendered("metal", types, ndim)
        assert "pk_rc_note" in r.source
        check_metal(r.source, sources=r.sources())
        check_metal(mlx_source(r), sources=r.sources())
    ok_cuda, why_cuda = cuda_check_available()
    if ok_cuda:
        r = kernel.rendered("cuda", types, ndim)
        assert "pk_rc_note" in r.source
        compile_cuda_ptx(r.source)
        compile_cuda_ptx(mlx_source(r, default_header=_mlx.CUDA_HEADER_STANDIN))
    if not (ok or ok_cuda):
        pytest.skip(f"no Metal check ({why}) and no CUDA compiler ({why_cuda})")
