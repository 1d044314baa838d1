"""Structs in kernel source (DESIGN section 1a, "Structs"): a type for locals, helper
parameters and results, @localmem and array parameters; NumPy structured dtypes checked
against the layout portakern computes per target."""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.analysis.struct_layouts import struct_layout
from portakern.errors import KernelSyntaxError, KernelTypeError
from portakern.examples import EXAMPLES_DIR
from portakern.syntax.language import parse
from portakern.syntax.tokens import SourceMap

#: block_q4_0 of the q4_0 example: ggml's half scale and 16 packed bytes (18 bytes).
Q4 = np.dtype([("d", np.float16), ("qs", np.uint8, (16,))])

# A struct of mixed alignment: 1-byte, then 4-byte, then 8-byte fields, and a nested one.
MIXED = """
typedef struct { uint8_t tag; float x; } inner;
struct rec { uint8_t flag; inner in; double w; int n[3]; };
"""

COPY_FIELDS = MIXED + """
inner twice(inner v) { inner r; r.tag = v.tag; r.x = v.x * 2.0f; return r; }

@kernel void copy_fields(float* xs, double* ws, int* ns, const struct rec* recs) {
    const long i = @index(Global, Linear);
    const rec r = recs[i];
    const inner t = twice(r.in);
    xs[i] = t.x + (float)recs[i].flag;
    ws[i] = r.w;
    ns[i] = recs[i].n[0] + recs[i].n[1] * 10 + r.n[2] * 100;
}
"""

REC = np.dtype({"names": ["flag", "in", "w", "n"],
                "formats": [np.uint8, np.dtype({"names": ["tag", "x"],
                                                "formats": [np.uint8, np.float32],
                                                "offsets": [0, 4], "itemsize": 8}),
                            np.float64, (np.int32, (3,))],
                "offsets": [0, 4, 16, 24], "itemsize": 40})


def _q4_blocks(nb: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    b = np.zeros(nb, Q4)
    b["d"] = rng.random(nb, np.float32)
    b["qs"] = rng.integers(0, 256, (nb, 16))
    return b


def _q4_ref(b: np.ndarray) -> np.ndarray:
    q = np.concatenate([b["qs"] & 15, b["qs"] >> 4], axis=1).astype(np.float32) - 8
    return (b["d"].astype(np.float32)[:, None] * q).ravel()


def _run(backend, kernel, host_args, n):
    args = tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args)
    kernel(backend)(*args, ndrange=(n,))
    backend.synchronize()
    # An MLX array stands for structs by its bytes (to_device views them as uint8).
    return [_as(backend.to_host(a), h.dtype) if isinstance(h, np.ndarray) else a
            for a, h in zip(args, host_args, strict=True)]


def _as(host: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return host.view(dtype) if dtype.fields and host.dtype != dtype else host



def _q4_kernel() -> pk.Kernel:
    return pk.kernel.from_file(EXAMPLES_DIR / "q4_0.pk")


# -- layouts --------------------------------------------------------------------------

def _structs(source: str) -> dict:
    src = source + "\n@kernel void k(float* y) { }\n"
    return parse(SourceMap("<t>", src, list(range(1, src.count("\n") + 2)))).kernels[0].structs


@pytest.mark.parametrize("target", ["c", "cuda", "opencl", "metal"])
def test_layout_follows_c_alignment_on_every_target(target):
    layout = struct_layout("rec", _structs(MIXED), target)
    assert [(f.name, f.offset) for f in layout.fields] == [("flag", 0), ("in", 4), ("w", 16),
                                                          ("n", 24)]
    assert (layout.itemsize, layout.alignment) == (40, 8)
    assert layout.dtype == REC


def test_three_component_vectors_are_padded_on_opencl_and_metal_only():
    structs = _structs("typedef struct { float3 p; float m; } body;")
    offsets = {t: (struct_layout("body", structs, t).fields[1].offset,
                   struct_layout("body", structs, t).itemsize)
               for t in ("c", "cuda", "opencl", "metal")}
    assert offsets == {"c": (12, 16), "cuda": (12, 16), "opencl": (16, 32),
                       "metal": (16, 32)}


def test_define_sizes_an_array_field():
    structs = _structs("#define QK 32\ntypedef struct { float d; uint8_t qs[QK / 2]; } b;"
                       .replace("QK / 2", "QK"))
    assert struct_layout("b", structs, "c").itemsize == 36


# -- the q4_0 example on every backend --------------------------------------------------

def test_q4_0_dequantizes_on_each_backend(backend):
    blocks = _q4_blocks(37)
    y = np.zeros(37 * 32, np.float32)
    got, _ = _run(backend, _q4_kernel(), (y, blocks), y.size)
    np.testing.assert_array_equal(got, _q4_ref(blocks))


def test_q4_0_on_the_cpu_opencl_path(monkeypatch):
    monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    backend = pk.CPU()
    if not backend.available():
        pytest.skip(f"CPU() unavailable: {backend.available().reason}")
    blocks = _q4_blocks(5, 1)
    y = np.zeros(5 * 32, np.float32)
    _q4_kernel()(y, blocks, ndrange=y.shape)
    np.testing.assert_array_equal(y, _q4_ref(blocks))


@pytest.mark.metal
def test_q4_0_takes_an_mlx_array_of_the_blocks_bytes():
    backend = pk.Metal()
    if not backend.available():
        pytest.skip(f"Metal unavailable: {backend.available().reason}")
    import mlx.core as mx

    blocks = _q4_blocks(6, 2)
    as_device = backend.to_device(blocks)
    assert as_device.dtype == mx.uint8 and as_device.shape == (6 * Q4.itemsize,)
    as_bytes = blocks.view(np.uint8)  # 18-byte blocks: 4-byte words only of the whole
    for raw in (as_device, mx.array(as_bytes), mx.array(as_bytes.view(np.uint32))):
        y = backend.to_device(np.zeros(6 * 32, np.float32))
        _q4_kernel()(backend)(y, raw, ndrange=(6 * 32,))
        np.testing.assert_array_equal(backend.to_host(y), _q4_ref(blocks))


@pytest.mark.metal
@pytest.mark.parametrize("nbytes", [30, 17])
def test_mlx_refuses_bytes_that_are_no_whole_number_of_structs(nbytes):
    backend = pk.Metal()
    if not backend.available():
        pytest.skip(f"Metal unavailable: {backend.available().reason}")
    y = backend.to_device(np.zeros(32, np.float32))
    raw = backend.to_device(np.zeros(nbytes, np.uint8))
    with pytest.raises(KernelTypeError) as info:
        _q4_kernel()(backend)(y, raw, ndrange=(32,))
    text = str(info.value)
    for needle in ("'blocks'", "block_q4_0", "18 bytes on metal", f"{nbytes} bytes",
                   "view(numpy.uint8)", "to_device"):
        assert needle in text, (needle, text)
    assert np.all(backend.to_host(y) == 0)


SCALE = """
typedef struct { half d; uint8_t qs[16]; } block_q4_0;

@kernel void scale(block_q4_0* blocks, const float s) {
    const long i = @index(Global, Linear);
    blocks[i].d = (float)blocks[i].d * s;
    blocks[i].qs[i % 16] = (uint8_t)i;
}
"""


@pytest.mark.metal
def test_a_written_struct_array_reaches_the_callers_mlx_array():
    backend = pk.Metal()
    if not backend.available():
        pytest.skip(f"Metal unavailable: {backend.available().reason}")
    blocks = _q4_blocks(40, 4)
    dev = backend.to_device(blocks)
    pk.kernel(SCALE)(backend)(dev, np.float32(3), ndrange=(40,))
    got = backend.to_host(dev).view(Q4)
    want = blocks.copy()
    want["d"] = (want["d"].astype(np.float32) * np.float32(3)).astype(np.float16)
    want["qs"][np.arange(40), np.arange(40) % 16] = np.arange(40)
    np.testing.assert_array_equal(got["d"], want["d"])
    np.testing.assert_array_equal(got["qs"], want["qs"])


def test_nested_structs_locals_and_helper_results(backend):
    n = 9
    recs = np.zeros(n, REC)
    recs["flag"] = np.arange(n)
    recs["in"]["x"] = np.arange(n) * 0.5
    recs["w"] = np.arange(n) * 1.25
    recs["n"] = np.arange(3 * n).reshape(n, 3)
    out = (np.zeros(n, np.float32), np.zeros(n, np.float64), np.zeros(n, np.int32))
    kernel = pk.kernel(COPY_FIELDS)
    if backend.name == "Metal":
        # Metal has no double, and float64="cast" would change the struct's layout.
        for b in (backend, type(backend)(float64="cast")):
            with pytest.raises(KernelTypeError, match=r"'recs'.*struct rec, whose field 'w' is a "
                                                      r"double.*Use a float field"):
                _run(b, kernel, (*out, recs), n)
        return
    if backend.target not in ("c", "cuda"):  # (the layout is the same on every target)
        assert struct_layout("rec", kernel.parsed(backend.target)[1].structs,
                             backend.target).dtype == REC
    xs, ws, ns, _ = _run(backend, kernel, (*out, recs), n)
    np.testing.assert_array_equal(xs, recs["in"]["x"] * 2 + recs["flag"])
    np.testing.assert_array_equal(ws, recs["w"])
    np.testing.assert_array_equal(ns, recs["n"] @ np.array([1, 10, 100]))


LOCALMEM = """
typedef struct { float lo; float hi; } range;

range widen(range a, range b) {
    range r;
    r.lo = a.lo < b.lo ? a.lo : b.lo;
    r.hi = a.hi > b.hi ? a.hi : b.hi;
    return r;
}

@kernel(workgroupsize=64) void group_range(range* out, const float* x) {
    const long i = @index(Global, Linear);
    const int l = (int)@index(Local, Linear);
    @localmem range tile[64];
    tile[l].lo = x[i];
    tile[l].hi = x[i];
    @synchronize();
    for (int s = 32; s > 0; s /= 2) {
        if (l < s) {
            tile[l] = widen(tile[l], tile[l + s]);
        }
        @synchronize();
    }
    if (l == 0) {
        range* o = &out[@index(Group, Linear)];
        o->lo = tile[0].lo;
        o->hi = tile[0].hi;
    }
}
"""


def test_localmem_of_structs_and_arrow_access(backend):
    x = np.random.default_rng(3).random(256).astype(np.float32)
    out = np.zeros(4, np.dtype([("lo", np.float32), ("hi", np.float32)]))
    got, _ = _run(backend, pk.kernel(LOCALMEM), (out, x), x.size)
    np.testing.assert_array_equal(got["lo"], x.reshape(4, 64).min(axis=1))
    np.testing.assert_array_equal(got["hi"], x.reshape(4, 64).max(axis=1))


def test_struct_tag_definitions_render_a_typedef_for_opencl():
    src = "struct pair { float a; int b; };\n@kernel void k(float* y, const pair* p) {\n" \
          "    const long i = @index(Global, Linear);\n    y[i] = p[i].a + (float)p[i].b;\n}\n"
    assert "typedef struct pair pair;" in pk.kernel(src).render("opencl")
    p = np.zeros(3, np.dtype([("a", np.float32), ("b", np.int32)]))
    p["a"], p["b"] = [1, 2, 3], [10, 20, 30]
    y = np.zeros(3, np.float32)
    pk.kernel(src)(y, p, ndrange=(3,))
    np.testing.assert_array_equal(y, [11, 22, 33])


def test_half_field(backend):
    if not backend.supports("float16"):
        pytest.skip(f"{backend!r} has no half storage")
    src = "typedef struct { half d; uint8_t q[2]; } hb;\n" \
          "@kernel void k(float* y, const hb* b) {\n    const long i = @index(Global, Linear);\n" \
          "    y[i] = (float)b[i].d * (float)b[i].q[1];\n}\n"
    b = np.zeros(4, np.dtype([("d", np.float16), ("q", np.uint8, (2,))]))
    b["d"], b["q"] = [0.5, 1.5, 2.5, -3], [[0, 2]] * 4
    y = np.zeros(4, np.float32)
    # Also on an OpenCL device without cl_khr_fp16, where the field is its bits
    # (tests/test_half_structs.py checks writes and every path bit for bit).
    got, _ = _run(backend, pk.kernel(src), (y, b), 4)
    np.testing.assert_array_equal(got, [1, 3, 5, -6])


# -- mismatches -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, match", [
    (np.dtype([("d", np.float16), ("q", np.uint8, (16,))]),
     r"field 1 is 'qs' \(uint8_t\[16\]\), but the array's dtype has 'q'"),
    (np.dtype([("d", np.float64), ("qs", np.uint8, (16,))]),
     r"field 'd' of struct block_q4_0 must be half at offset 0 on (?:c|opencl), but the array's "
     r"dtype has float64 at offset 0"),
    (np.dtype({"names": ["d", "qs"], "formats": [np.float16, (np.uint8, (16,))],
               "offsets": [0, 8]}),
     r"field 'qs' of struct block_q4_0 must be uint8_t\[16\] at offset 2 on (?:c|opencl), but the "
     r"array's dtype has uint8 \(16,\) at offset 8"),
    (np.dtype([("d", np.float16), ("qs", np.uint8, (8,))]), r"field 'qs'.*uint8 \(8,\)"),
    (np.dtype({"names": ["d", "qs"], "formats": [np.float16, (np.uint8, (16,))],
               "itemsize": 24}), r"is 18 bytes on (?:c|opencl) .* itemsize 24"),
    (np.dtype([("d", np.float16), ("qs", np.uint8, (16,)), ("x", np.int8)]),
     r"has a field 'x' that struct block_q4_0 does not"),
    (np.dtype(np.uint8), r"pass a structured array of dtype numpy.dtype\(\[\('d', '<f2'\)"),
])
def test_layout_mismatch_names_the_field(dtype, match):
    y = np.zeros(32, np.float32)
    blocks = np.zeros(1 if dtype.fields else 20, dtype)
    with pytest.raises(KernelTypeError, match=match) as info:
        _q4_kernel()(pk.CPU())(y, blocks, ndrange=(32,))
    assert "blocks" in str(info.value)
    assert np.all(y == 0)


@pytest.mark.parametrize("signature, match", [
    ("float* y, const pair p", r"'p': a struct parameter \(pair\) cannot be passed by value"),
    ("float* y, const pair p[:]", r"'p': a struct parameter \(pair\) cannot be an N-d array"),
    ("float* y, const real* p", r"'real' is a type the source declares .* not a type "
                                r"variable"),
    ("float* y, const struct nope* p", r"only structs the source defines"),
])
def test_bad_struct_parameters_are_syntax_errors(signature, match):
    src = "typedef struct { float a; } pair;\ntypedef float real;\n" \
          f"@kernel void k({signature}) {{ }}\n"
    with pytest.raises(KernelSyntaxError, match=match):
        pk.kernel(src)


def test_struct_names_are_never_type_variables():
    assert pk.kernel(COPY_FIELDS).type_vars == ()
    assert pk.kernel(COPY_FIELDS).parsed("c")[1].params[3].type == "rec"


def test_a_pointer_field_is_refused_only_for_array_parameters():
    local = "typedef struct { float* p; } view;\n@kernel void k(float* y) {\n" \
            "    view v; v.p = y; v.p[@index(Global, Linear)] = 1.0f;\n}\n"
    y = np.zeros(4, np.float32)
    pk.kernel(local)(y, ndrange=(4,))
    assert np.all(y == 1)
    with pytest.raises(KernelSyntaxError, match=r"'v'.*view.*unsupported field"):
        pk.kernel("typedef struct { float* p; } view;\n@kernel void k(const view* v) { }\n")


@pytest.mark.metal
def test_an_optional_struct_array_on_mlx_takes_bytes_and_refuses_none():
    backend = pk.Metal()
    if not backend.available():
        pytest.skip(f"Metal unavailable: {backend.available().reason}")
    src = "typedef struct { float a; int b; } pair;\n" \
          "@kernel void k(float* y, const pair* p = null) {\n" \
          "    const long i = @index(Global, Linear);\n" \
          "    y[i] = p ? p[i].a + (float)p[i].b : -1.0f;\n}\n"
    p = np.zeros(3, np.dtype([("a", np.float32), ("b", np.int32)]))
    p["a"], p["b"] = [1, 2, 3], [10, 20, 30]
    y = backend.to_device(np.zeros(3, np.float32))
    pk.kernel(src)(backend)(y, backend.to_device(p), ndrange=(3,))
    np.testing.assert_array_equal(backend.to_host(y), [11, 22, 33])
    with pytest.raises(pk.KernelArgumentError, match=r"'p'.*None.*array of structs"):
        pk.kernel(src)(backend)(y, None, ndrange=(3,))


def test_an_optional_struct_array_may_be_none_on_the_cpu():
    src = "typedef struct { float a; int b; } pair;\n" \
          "@kernel void k(float* y, const pair* p = null) {\n" \
          "    const long i = @index(Global, Linear);\n" \
          "    y[i] = p ? p[i].a + (float)p[i].b : -1.0f;\n}\n"
    y = np.zeros(3, np.float32)
    pk.kernel(src)(y, None, ndrange=(3,))
    np.testing.assert_array_equal(y, [-1, -1, -1])
