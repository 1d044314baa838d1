"""The Metal stand-in (portakern/emulate/mlx.py): MLX's ``metal_kernel`` run on the CPU.

Three parts: the stand-in itself against MLX's semantics (the signature it writes,
launch geometry and thread attributes, memory, errors, Metal's language rules);
``pk.Metal()`` through it (errors reach the user as portakern errors); and the
conformance suite on ``pk.Metal()`` with the stand-in installed. The examples run
through it in tests/test_metal.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern.backends import _mlx
from portakern.emulate import mlx as standin

mx = pytest.importorskip("mlx.core")
_OK, _WHY = standin.available()
pytestmark = pytest.mark.skipif(not _OK, reason=f"no Metal stand-in here: {_WHY}")


@pytest.fixture
def installed() -> Any:
    with standin.installed() as module:
        yield module


def run(source: str, inputs: list, outputs: list[tuple[tuple, Any]], grid: tuple,
        threadgroup: tuple, input_names: list[str] | None = None, header: str = "",
        **call: Any) -> list[np.ndarray]:
    """Make and call a stand-in kernel; return the outputs as NumPy arrays."""
    names = input_names or [f"in{k}" for k in range(len(inputs))]
    kernel = standin.metal_kernel("t", names, [f"out{k}" for k in range(len(outputs))],
                                  source, header=header)
    got = kernel(inputs=inputs, output_shapes=[s for s, _ in outputs],
                 output_dtypes=[d for _, d in outputs], grid=grid, threadgroup=threadgroup,
                 **call)
    return [np.array(g) for g in got]


# -- the source MLX writes ---------------------------------------------------------------------

def test_signature_and_name_as_mlx_writes_them() -> None:
    source = ("uint i = thread_position_in_grid.x;\n"
              "out0[i] = in0[i] * a + (float)in1_shape[0] + (float)in1_ndim;\n")
    specs = [standin.Input("float", 1, 100), standin.Input("int32_t", 2, 6),
             standin.Input("float", 0, 1)]
    func = standin.kernel_name("k", specs, ["float"])
    assert func == "custom_kernel_k_float_int32_tc_floats_float"
    text = standin.write_signature(func, "// header\n", source, ["in0", "in1", "a"], specs,
                                   ["out0"], ["float"])
    assert text == (
        "// header\n"
        "[[kernel]] void custom_kernel_k_float_int32_tc_floats_float(\n"
        "  const device float* in0 [[buffer(0)]],\n"
        "  const constant int32_t* in1 [[buffer(1)]],\n"
        "  const constant int* in1_shape [[buffer(2)]],\n"
        "  const constant int& in1_ndim [[buffer(3)]],\n"
        "  const constant float& a [[buffer(4)]],\n"
        "  device float* out0 [[buffer(5)]],\n"
        "  uint3 thread_position_in_grid [[thread_position_in_grid]]) {\n"
        + source + "\n}\n")


def test_template_arguments_as_mlx_writes_them() -> None:
    specs = [standin.Input("float", 1, 100)]
    template = [("T", mx.float32), ("N", 4), ("B", True)]
    func = standin.kernel_name("k", specs, ["float"], template)
    assert func == "custom_kernel_k__float_4_1_float_float"  # sic: MLX's hash starts with "_"
    text = standin.write_signature(func, "", "out[0] = x[0];", ["x"], specs, ["out"],
                                   ["float"], template)
    assert text.startswith("template <typename T, int N, bool B>\n[[kernel]] void ")
    assert text.endswith(f'template [[host_name("{func}")]] [[kernel]] '
                         f"decltype({func}<float, 4, 1>) {func}<float, 4, 1>;\n")
    kernel = standin.metal_kernel("k", ["x"], ["out"],
                                  "out[thread_position_in_grid.x] = (T)(x[0] * N) + B;")
    (got,) = kernel(inputs=[mx.full((100,), 2.0)], output_shapes=[(2,)],
                    output_dtypes=[mx.float32], grid=(2, 1, 1), threadgroup=(2, 1, 1),
                    template=template)
    assert np.array(got).tolist() == [9.0, 9.0]


@pytest.mark.parametrize("shapes", [None, {"pk_in_y": (3,), "x": (100,)}],
                         ids=["large", "small"])
@pytest.mark.parametrize("source", ["saxpy", "histogram", "matmul_tiled", "particle_push"])
def test_portakern_writes_the_same_source_as_the_standin(source: str, shapes: Any) -> None:
    # portakern's own copy of MLX's signature (the syntax check's) against the stand-in's.
    from portakern import examples

    ex = examples.get(source)
    kernel = ex.load()
    bindings = {tv: "float" for tv in kernel.type_vars}
    program = _mlx.build_program(kernel.rendered("metal", bindings, ex.ndims[0]), "metal")
    dtypes = _mlx.param_dtypes(program, bindings)
    inputs, outputs = _mlx._input_types(program, shapes, dtypes)
    theirs = _mlx.metal_translation_unit(program.name, program.header, program.source,
                                         inputs, outputs, utils=standin.UTILS)
    specs = [standin.Input(t, ndim, size) for _, t, ndim, size in inputs]
    func = standin.kernel_name(program.name, specs, [t for _, t in outputs])
    ours = standin.UTILS + standin.write_signature(
        func, program.header, program.source, [n for n, *_ in inputs], specs,
        [n for n, _ in outputs], [t for _, t in outputs])
    assert theirs == ours


# -- launch geometry and thread attributes ------------------------------------------------------

_ATTRS = """
    const uint3 p = thread_position_in_grid;
    const uint k = (p.z * threads_per_grid.y + p.y) * threads_per_grid.x + p.x;
    const uint3 vals[8] = {thread_position_in_threadgroup, threadgroup_position_in_grid,
                           threads_per_threadgroup, dispatch_threads_per_threadgroup,
                           threadgroups_per_grid, threads_per_grid, grid_size, grid_origin};
    for (int v = 0; v < 8; ++v) {
        out0[k * 24 + v * 3 + 0] = vals[v].x;
        out0[k * 24 + v * 3 + 1] = vals[v].y;
        out0[k * 24 + v * 3 + 2] = vals[v].z;
    }
    const uint s[7] = {thread_index_in_threadgroup, simdgroup_index_in_threadgroup,
                       thread_index_in_simdgroup, threads_per_simdgroup,
                       simdgroups_per_threadgroup, thread_execution_width,
                       dispatch_simdgroups_per_threadgroup};
    for (int v = 0; v < 7; ++v) { out1[k * 7 + v] = s[v]; }
"""


@pytest.mark.parametrize("grid, group", [((10, 3, 1), (4, 2, 1)), ((5, 3, 2), (2, 2, 2)),
                                         ((3, 1, 1), (256, 1, 1)), ((64, 1, 1), (40, 1, 1))])
def test_thread_attributes_on_partial_threadgroups(grid: tuple, group: tuple) -> None:
    n = int(np.prod(grid))
    attrs, simd = run(_ATTRS, [mx.zeros(1)], [((n * 24,), mx.uint32), ((n * 7,), mx.uint32)],
                      grid, group)
    attrs = attrs.reshape(n, 8, 3)
    used = np.minimum(group, grid)  # MLX: the threadgroup is clipped to the grid
    z, y, x = np.indices(grid[::-1]).reshape(3, -1)
    pos = np.stack([x, y, z], axis=1)
    tg, local = pos // used, pos % used
    actual = np.minimum(used, np.array(grid) - tg * used)  # Apple: this group's own size
    groups = -(-np.array(grid) // used)
    want = [local, tg, actual, np.broadcast_to(used, (n, 3)), np.broadcast_to(groups, (n, 3)),
            np.broadcast_to(grid, (n, 3)), np.broadcast_to(grid, (n, 3)), np.zeros((n, 3))]
    names = ["thread_position_in_threadgroup", "threadgroup_position_in_grid",
             "threads_per_threadgroup", "dispatch_threads_per_threadgroup",
             "threadgroups_per_grid", "threads_per_grid", "grid_size", "grid_origin"]
    for v, name in enumerate(names):
        np.testing.assert_array_equal(attrs[:, v], want[v], err_msg=name)
    index = local[:, 0] + actual[:, 0] * (local[:, 1] + actual[:, 1] * local[:, 2])
    count = actual.prod(axis=1)
    simd = simd.reshape(n, 7)
    np.testing.assert_array_equal(simd[:, 0], index)
    np.testing.assert_array_equal(simd[:, 1], index // 32)
    np.testing.assert_array_equal(simd[:, 2], index % 32)
    np.testing.assert_array_equal(simd[:, 3], 32)
    np.testing.assert_array_equal(simd[:, 4], -(-count // 32))
    np.testing.assert_array_equal(simd[:, 5], 32)
    np.testing.assert_array_equal(simd[:, 6], -(-int(np.prod(used)) // 32))


def test_threads_past_the_grid_do_not_exist() -> None:
    # 10 threads in groups of 4: the last group has 2 threads, and a barrier with only
    # those two works.
    source = """
        threadgroup uint seen[4];
        seen[thread_position_in_threadgroup.x] = thread_position_in_grid.x;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint total = 0;
        for (uint t = 0; t < threads_per_threadgroup.x; ++t) { total += seen[t]; }
        out0[thread_position_in_grid.x] = total;
    """
    (got,) = run(source, [mx.zeros(1)], [((12,), mx.uint32)], (10, 1, 1), (4, 1, 1),
                 init_value=7)
    np.testing.assert_array_equal(got, [6] * 4 + [22] * 4 + [17] * 2 + [7, 7])


def test_threadgroup_too_large_is_refused_as_mlx_does() -> None:
    with pytest.raises(ValueError, match=r"Thread group size \(2048\) is greater than"):
        run("out0[0] = 1;", [mx.zeros(1)], [((1,), mx.float32)], (4096, 1, 1), (1024, 2, 1))


def test_only_the_gpu_stream() -> None:
    with pytest.raises(ValueError, match="Only supports the GPU"):
        run("out0[0] = 1;", [mx.zeros(1)], [((1,), mx.float32)], (1, 1, 1), (1, 1, 1),
            stream=mx.cpu)


# -- memory ---------------------------------------------------------------------------------

def test_outputs_start_uninitialised_unless_init_value() -> None:
    source = "if (thread_position_in_grid.x == 0) { out0[0] = 1; }"
    (got,) = run(source, [mx.zeros(1)], [((3,), mx.int32)], (1, 1, 1), (1, 1, 1))
    assert got[0] == 1
    assert got[1:].view(np.uint8).tolist() == [standin.OUTPUT_POISON] * 8
    (got,) = run(source, [mx.zeros(1)], [((3,), mx.int32)], (1, 1, 1), (1, 1, 1),
                 init_value=-2.7)
    assert got.tolist() == [1, -2, -2]


def test_threadgroup_memory_is_poisoned_in_every_threadgroup() -> None:
    # Thread 0 of each group writes one slot, group 0 a second one too: every other slot
    # reads 0xFF bytes, in every group (nothing carries over from the group before).
    source = """
        threadgroup float tile[4];
        const uint t = thread_position_in_threadgroup.x;
        if (t == 0) {
            tile[0] = 1.0f;
            if (threadgroup_position_in_grid.x == 0) { tile[3] = 5.0f; }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        out0[thread_position_in_grid.x] = as_type<uint>(tile[t]);
    """
    (got,) = run(source, [mx.zeros(1)], [((8,), mx.uint32)], (8, 1, 1), (4, 1, 1))
    one, five = np.float32(1).view(np.uint32), np.float32(5).view(np.uint32)
    poison = 0xFFFFFFFF
    assert got.tolist() == [one, poison, poison, five, one, poison, poison, poison]


def test_inputs_are_the_arrays_own_memory() -> None:
    # Writing through a cast const pointer changes the input array, as on the GPU (the
    # staged write-back relies on it); a strided input is copied first.
    source = """
        device float* w = (device float*)in0;
        w[thread_position_in_grid.x] += 1.0f;
        out0[thread_position_in_grid.x] = in1[thread_position_in_grid.x];
    """
    a = mx.arange(10, dtype=mx.float32)
    b = mx.arange(20, dtype=mx.float32)[::2]
    (got,) = run(source, [a, b], [((10,), mx.float32)], (10, 1, 1), (10, 1, 1))
    assert np.array(a).tolist() == list(range(1, 11))
    assert got.tolist() == list(range(0, 20, 2))


def test_shape_strides_and_ndim_buffers() -> None:
    source = """
        out0[0] = in0_ndim;
        for (int d = 0; d < in0_ndim; ++d) {
            out0[1 + d] = in0_shape[d];
            out0[4 + d] = (int)in0_strides[d];
        }
    """
    (got,) = run(source, [mx.zeros((2, 3, 5))], [((7,), mx.int32)], (1, 1, 1), (1, 1, 1))
    assert got.tolist() == [3, 2, 3, 5, 15, 5, 1]


def test_scalars_and_small_arrays_are_constant() -> None:
    source = """
        out0[0] = (float)flag + (float)h + small[1] + big[7];
    """
    kernel = standin.metal_kernel("t", ["flag", "h", "small", "big"], ["out0"], source)
    got = kernel(inputs=[mx.array(True), mx.array(1.5, dtype=mx.float16), mx.ones(7),
                         mx.full((8,), 2.0)],
                 output_shapes=[(1,)], output_dtypes=[mx.float32], grid=(1, 1, 1),
                 threadgroup=(1, 1, 1), verbose=False)
    assert np.array(got[0]).tolist() == [5.5]
    # A constant-space input cannot be written, not even through a cast.
    bad = "device float* w = (device float*)small; w[0] = 1; out0[0] = 0;"
    with pytest.raises(RuntimeError, match="Unable to build metal library"):
        run(bad, [mx.ones(7)], [((1,), mx.float32)], (1, 1, 1), (1, 1, 1),
            input_names=["small"])


def test_half_conversions_are_exact() -> None:
    # Every half value to float and back, and floats rounded to half as NumPy does
    # (the x86 lowering of half calls conversion helpers the thunk provides).
    bits = np.arange(65536, dtype=np.uint16)
    rng = np.random.default_rng(0)
    floats = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-9, 6, 3000),
                             [65519.0, 65520.0, 1e6, -1e6, 2.0**-25, 3 * 2.0**-26, 2.0**-24,
                              5.96e-8, np.inf, -np.inf, 0.0, -0.0]]).astype(np.float32)
    source = """
        const uint i = thread_position_in_grid.x;
        if (i < 65536) { out0[i] = (float)as_type<half>(in0[i]); }
        if (i < in1_shape[0]) { out1[i] = as_type<uint16_t>((half)in1[i]); }
    """
    widen, narrow = run(source, [mx.array(bits), mx.array(floats)],
                        [((65536,), mx.float32), ((floats.size,), mx.uint16)],
                        (65536, 1, 1), (1024, 1, 1))
    want = bits.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(widen.view(np.uint32)[~np.isnan(want)],
                                  want.view(np.uint32)[~np.isnan(want)])
    assert np.isnan(widen[np.isnan(want)]).all()
    with np.errstate(over="ignore"):
        rounded = floats.astype(np.float16)
    np.testing.assert_array_equal(narrow, rounded.view(np.uint16))


# -- Metal's language rules ---------------------------------------------------------------------

@pytest.mark.parametrize("body, needle", [
    ("threadgroup float t[1]; atomic_fetch_add_explicit((threadgroup atomic_float*)t, "
     "1.0f, memory_order_relaxed); out0[0] = t[0];", "atomic_fetch_add_explicit"),
    ("double d = in0[0]; out0[0] = d;", "double"),
    ("long a = 1; int b = 2; out0[0] = min(a, b);", "min"),
    ("out0[0] = get_global_id(0);", "get_global_id"),
    ("in0[0] = 1; out0[0] = 0;", "read-only"),
], ids=["threadgroup-float-atomic", "double", "mixed-min", "opencl-builtin", "const-input"])
def test_what_metal_rejects_does_not_compile(body: str, needle: str) -> None:
    with pytest.raises(RuntimeError, match="Unable to build metal library") as info:
        run(body, [mx.zeros(16)], [((1,), mx.float32)], (1, 1, 1), (1, 1, 1))
    assert needle in str(info.value)
    assert "program_source:" in str(info.value)


def test_atomics_on_device_and_threadgroup_memory() -> None:
    source = """
        threadgroup atomic_uint hits[1];
        if (thread_index_in_threadgroup == 0) {
            atomic_store_explicit(&hits[0], 0u, memory_order_relaxed);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        atomic_fetch_add_explicit(&hits[0], 1u, memory_order_relaxed);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (thread_index_in_threadgroup == 0) {
            atomic_fetch_add_explicit((device atomic_uint*)&out0[0],
                atomic_load_explicit(&hits[0], memory_order_relaxed), memory_order_relaxed);
            atomic_fetch_add_explicit((device atomic_float*)&out1[0], 0.5f,
                                      memory_order_relaxed);
            atomic_fetch_max_explicit((device atomic_int*)&out2[0],
                (int)threadgroup_position_in_grid.x, memory_order_relaxed);
        }
    """
    counts, halves, top = run(source, [mx.zeros(1)], [((1,), mx.uint32), ((1,), mx.float32),
                                                      ((1,), mx.int32)],
                              (300, 1, 1), (64, 1, 1), init_value=0)
    assert counts.tolist() == [300] and halves.tolist() == [2.5] and top.tolist() == [4]


# -- faults -------------------------------------------------------------------------------------

def test_divergent_barrier_is_an_error() -> None:
    source = """
        if (thread_position_in_threadgroup.x < 2) {
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        out0[thread_position_in_grid.x] = 1;
    """
    with pytest.raises(RuntimeError, match=r"divergent barrier in kernel 'custom_kernel_t_"
                                           r".*thread \(\d, 0, 0\) (waits at the barrier at "
                                           r".*:\d+|has left the kernel)"):
        run(source, [mx.zeros(1)], [((8,), mx.float32)], (8, 1, 1), (4, 1, 1))


DIVERGENT = """\
@kernel void k(float* y) {
    const long i = @index(Global, Linear);
{% if target == "metal" %}
    if (thread_position_in_threadgroup.x == 0) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
{% endif %}
    y[i] = 1;
}
"""


def test_divergent_barrier_through_pk_metal(installed: Any) -> None:
    kernel = pk.kernel(DIVERGENT, filename="divergent.pk")
    y = mx.zeros(64)
    with pytest.raises(pk.LaunchError, match=r"divergent barrier.*divergent\.pk:5"):
        kernel(y, ndrange=64, workgroupsize=32)
    assert np.array(y).tolist() == [0.0] * 64  # nothing rebound


def test_compile_error_through_pk_metal_quotes_the_users_line(installed: Any) -> None:
    kernel = pk.kernel("@kernel void k(float* y, const float* x) {\n"
                       "    const long i = @index(Global, Linear);\n"
                       "    y[i] = x[i] + oops;\n}\n", filename="bad.pk")
    with pytest.raises(pk.CompilationError) as info:
        kernel(mx.zeros(16), mx.ones(16), ndrange=16)
    assert "bad.pk:3:" in str(info.value) and "oops" in str(info.value)
    assert "custom_kernel_pk_k_" in info.value.source


LOCAL_FLOAT_ATOMICS = """\
@kernel void k(float* out, const float* x) {
    @localmem float acc[4];
    const long lid = @index(Local, Linear);
    const long g = @index(Group, Linear);
    if (lid == 0) {
        acc[0] = 0.0f; acc[1] = 100.0f; acc[2] = -1.0f; acc[3] = 0.0f;
    }
    @synchronize();
    const float v = x[@index(Global, Linear)];
    @atomic_add(&acc[0], v);
    @atomic_sub(&acc[1], v);
    @atomic_max(&acc[2], v);
    @atomic_xchg(&acc[3], 7.0f);
    @synchronize();
    if (lid < 4) {
        out[g * 4 + lid] = acc[lid];
    }
}
"""


def test_float_atomics_on_threadgroup_memory_through_pk_metal(installed: Any) -> None:
    # Metal has no float atomics on threadgroup memory: the prelude's compare-and-swap
    # versions run here.
    x = np.random.default_rng(4).integers(1, 9, 128).astype(np.float32)
    out = mx.zeros(8)
    pk.kernel(LOCAL_FLOAT_ATOMICS)(out, mx.array(x), ndrange=128, workgroupsize=64)
    groups = x.reshape(2, 64)
    want = np.stack([groups.sum(1), 100 - groups.sum(1), groups.max(1), [7, 7]], axis=1)
    np.testing.assert_array_equal(np.array(out).reshape(2, 4), want)


# The conformance suite runs on pk.Metal() through the stand-in as
# tests/test_conformance.py::TestMetal (tests marked metal use it where there is no Mac).
