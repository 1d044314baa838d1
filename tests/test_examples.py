"""The example kernels and their catalog (portakern/examples), run on PoCL against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern import examples
from portakern.examples import EXAMPLES, copy_args

pytestmark = pytest.mark.skipif(not pk.CPU.available(),
                                reason=f"no CPU OpenCL device: {pk.CPU.available().reason}")


def _sizes(ex: examples.Example) -> list:
    """Problem sizes per example: tiny, partial last workgroups, exact multiples, 1/2/3D."""
    if ex.name.startswith("matmul"):
        return [(1, 1, 1), (16, 16, 16), (45, 37, 29), (33, 70, 17)]
    if ex.name == "particle_push":
        return [1, 1000, 4096]
    if ex.ndims == (2,):
        return [(1, 1), (16, 16), (61, 97), (17, 300)]
    if ex.ndims == (1, 2, 3):
        return [1, 1000, 4096, (17, 33), (5, 7, 9)]
    # Reductions and the histogram run over the flattened input; 70 000 elements
    # need three passes of 256-wide groups.
    return [1, 255, 1000, (61, 97), 70_000]


CASES = [pytest.param(ex.name, np.dtype(dt).name, size,
                      id=f"{ex.name}-{np.dtype(dt).name}-{size}")
         for ex in EXAMPLES.values() for dt in ex.dtypes for size in _sizes(ex)]


def _assert_outputs(ex: examples.Example, got: dict, expected: dict) -> None:
    assert set(got) >= set(expected)
    for name, want in expected.items():
        want = np.asarray(want)
        rtol, atol = ex.tolerance(want.dtype)
        np.testing.assert_allclose(np.asarray(got[name]), want, rtol=rtol, atol=atol,
                                   err_msg=f"{ex.name}: output {name!r}")


@pytest.mark.parametrize(("name", "dtype", "size"), CASES)
def test_example_matches_numpy(name: str, dtype: str, size: object) -> None:
    ex = examples.get(name)
    args = ex.make_args(size, np.random.default_rng(7), dtype)
    expected = ex.reference(args)
    ex.launch(None, args)
    _assert_outputs(ex, ex.outputs(args), expected)


@pytest.mark.parametrize("name", [ex.name for ex in EXAMPLES.values() if ex.has_pipeline])
@pytest.mark.parametrize("size", [1, 300, 70_000, (129, 257)])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_pipeline_matches_numpy(name: str, size: object, dtype: str) -> None:
    ex = examples.get(name)
    args = ex.make_args(size, np.random.default_rng(3), dtype)
    expected = ex.run_reference(args)
    got = ex.run(pk.CPU(), args)
    _assert_outputs(ex, got, expected)


def test_brightest_pixel_finds_the_first_of_equal_maxima() -> None:
    ex = examples.get("brightest_pixel")
    best, where, img = ex.make_args((300, 500), np.random.default_rng(0))
    img[:] = 0.5
    img[7, 9] = img[250, 3] = img[299, 499] = 2.0
    assert ex.run(None, (best, where, img))["index"].tolist() == [7, 9]


@pytest.mark.parametrize("group", [32, 64, 128])
@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max", "brightest_pixel"])
def test_reductions_with_other_group_sizes(name: str, group: int) -> None:
    ex = examples.get(name)
    args = ex.make_args(1000, np.random.default_rng(1), GROUP=group)
    expected = ex.reference(args, GROUP=group)
    ex.launch(pk.CPU(), args, GROUP=group)
    _assert_outputs(ex, ex.outputs(args), expected)
    args = ex.make_args(5000, np.random.default_rng(1), GROUP=group)
    _assert_outputs(ex, ex.run(None, args, GROUP=group), ex.run_reference(args))


@pytest.mark.parametrize("tile", [4, 8, 32])
def test_tiled_matmul_other_tiles(tile: int) -> None:
    ex = examples.get("matmul_tiled")
    args = ex.make_args((37, 29, 41), np.random.default_rng(2))
    expected = ex.reference(args)
    ex.launch(None, args, TILE=tile)
    _assert_outputs(ex, ex.outputs(args), expected)


@pytest.mark.parametrize("workgroupsize", [1, 7, 64])
@pytest.mark.parametrize("name", ["vector_add", "saxpy", "negative", "histogram"])
def test_elementwise_any_workgroup_size(name: str, workgroupsize: int) -> None:
    ex = examples.get(name)
    args = ex.make_args(999, np.random.default_rng(4))
    expected = ex.reference(args)
    ex.load()(pk.CPU(), workgroupsize)(*args, ndrange=ex.ndrange(args))
    _assert_outputs(ex, ex.outputs(args), expected)


@pytest.mark.parametrize("workgroupsize", [(1, 1), (4, 8), (3, 5)])
@pytest.mark.parametrize("name", ["translate", "matmul", "rgb_to_gray", "darken"])
def test_2d_any_workgroup_size(name: str, workgroupsize: tuple[int, int]) -> None:
    ex = examples.get(name)
    size = (21, 19, 23) if name == "matmul" else (21, 23)
    args = ex.make_args(size, np.random.default_rng(5))
    expected = ex.reference(args)
    ex.load()(pk.CPU(), workgroupsize)(*args, ndrange=ex.ndrange(args))
    _assert_outputs(ex, ex.outputs(args), expected)


@pytest.mark.parametrize(("dy", "dx"), [(0, 0), (3, 4), (-3, -4), (100, 0), (0, -100)])
def test_translate_drops_writes_off_the_edge(dy: int, dx: int) -> None:
    ex = examples.get("translate")
    out, img, _, _ = ex.make_args((17, 23), np.random.default_rng(6))
    out[:] = -1.0  # pixels nothing lands on keep their value
    args = (out, img, np.int64(dy), np.int64(dx))
    expected = ex.reference(args)
    ex.launch(None, args)
    np.testing.assert_array_equal(out, expected["out"])


def test_histogram_accumulates_over_launches() -> None:
    ex = examples.get("histogram")
    counts, data = ex.make_args(10_000, np.random.default_rng(8))
    ex.launch(None, (counts, data))
    ex.launch(None, (counts, data))
    assert counts.sum() == 2 * data.size
    np.testing.assert_array_equal(counts, 2 * np.bincount(data, minlength=256))


def test_particle_push_nsteps_is_a_compile_time_constant() -> None:
    ex = examples.get("particle_push")
    args = ex.make_args(500, np.random.default_rng(9))
    source = ex.load(NSTEPS=7).render("opencl", T="float")
    assert "step < 7" in source
    expected = ex.reference(args, NSTEPS=7)
    ex.launch(None, args, NSTEPS=7)
    _assert_outputs(ex, ex.outputs(args), expected)


def test_examples_run_on_pyopencl_arrays() -> None:
    backend = pk.OpenCL()
    for name, size in (("saxpy", 1000), ("matmul_tiled", 50), ("histogram", 10_000)):
        ex = examples.get(name)
        host = ex.make_args(size, np.random.default_rng(10))
        expected = ex.reference(host)
        args = ex.to_device(host, backend)
        ex.launch(backend, args)
        _assert_outputs(ex, ex.outputs(args, backend), expected)
    ex = examples.get("reduce_sum")
    host = ex.make_args(70_000, np.random.default_rng(11))
    _assert_outputs(ex, ex.run(backend, ex.to_device(host, backend)), ex.run_reference(host))


# -- the catalog ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(EXAMPLES))
def test_catalog_entry_is_consistent(name: str) -> None:
    ex = EXAMPLES[name]
    assert ex.name == name and ex.description and ex.size_doc
    assert ex.path.is_file() and ex.path.suffix == ".pk"
    kernel = ex.load()
    assert kernel.name == ex.kernel
    assert ex.load() is kernel  # cached per set of constants
    args = ex.make_args(None)
    assert len(args) == len(kernel.params)
    for p, a in zip(kernel.params, args, strict=True):
        assert isinstance(a, np.ndarray) == p.pointer, p.name
    # The reference covers exactly the arrays the kernel writes, and reads only.
    before = copy_args(args)
    assert set(ex.reference(args)) == set(ex.written(args))
    for a, b in zip(args, before, strict=True):
        np.testing.assert_array_equal(a, b)
    assert len(ex.ndrange(args)) in ex.ndims
    assert ex.dtypes[0] in [a.dtype for a in args if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("name", list(EXAMPLES))
@pytest.mark.parametrize("target", ["opencl", "cuda", "metal"])
def test_every_example_renders_for_every_target(name: str, target: str) -> None:
    ex = EXAMPLES[name]
    kernel = ex.load()
    source = kernel.render(target, **{tv: "float" for tv in kernel.type_vars})
    assert ex.kernel in source
    assert "#line" in source and ex.file in source


def test_catalog_lookups() -> None:
    assert examples.names() == list(EXAMPLES)
    assert examples.get("saxpy") is EXAMPLES["saxpy"]
    with pytest.raises(KeyError, match="known: vector_add"):
        examples.get("sapxy")
    with pytest.raises(ValueError, match="supports dtypes"):
        examples.get("negative").make_args(10, dtype=np.float32)
    with pytest.raises(ValueError, match="shape of 1-3 axes"):
        examples.get("saxpy").make_args((2, 2, 2, 2))
    with pytest.raises(TypeError, match="single launch"):
        examples.get("saxpy").run(None, ())


def test_make_args_is_reproducible() -> None:
    ex = examples.get("polynomial")
    a = ex.make_args(100, np.random.default_rng(42))
    b = ex.make_args(100, np.random.default_rng(42))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_docs_examples_page_runs(run_doc: object) -> None:
    run_doc("examples.md")  # type: ignore[operator]


def test_max_error_reads_complex_outputs_and_matching_infinities_without_warnings() -> None:
    import warnings

    ex = examples.get("saxpy")
    inf, nan = np.float32(np.inf), np.float32(np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the demo printed RuntimeWarning / ComplexWarning
        assert ex.max_error({"y": np.array([inf, -inf, nan, 1.0], np.float32)},
                            {"y": np.array([inf, -inf, nan, 1.5], np.float32)}) == 0.5
        assert ex.max_error({"y": np.array([inf], np.float32)},
                            {"y": np.array([1.0], np.float32)}) == np.inf
        assert ex.max_error({"y": np.array([nan], np.float32)},
                            {"y": np.array([1.0], np.float32)}) == np.inf
        assert ex.max_error({"y": np.array([1 + 2j], np.complex64)},
                            {"y": np.array([1 - 1j], np.complex64)}) == 3.0
