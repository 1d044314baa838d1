"""Half fields of structs (DESIGN section 1a, "Structs" and "Half and bfloat16 storage
everywhere"): read and written on every path, bit-exact against NumPy's float16, also on an
OpenCL device without cl_khr_fp16 (PoCL), where the field is its bits
(portakern/lower/half_fields.py)."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import portakern as pk
from portakern.checks import check_metal, metal_check_available

NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists("/usr/local/bin/nvcc")
                                else None)

SOURCE = """\
typedef struct { float x; half d; half h[3]; } hrec;
struct outer { uint8_t tag; hrec in; };

float scaled(const hrec* r) { return (float)r->d * r->x; }

@kernel void halves(float* got, hrec* recs, struct outer* outs, const float* v) {
    const long i = @index(Global, Linear);
    got[3 * i] = scaled(&recs[i]);
    got[3 * i + 1] = recs[i].h[1];
    got[3 * i + 2] = (float)outs[i].in.d;
    hrec r = recs[i];
    r.d = v[i];
    r.h[0] = v[i] * 3.0f;
    r.h[2] = (float)r.h[2] + v[i];
    r.h[1] *= 2.0f;
    recs[i] = r;
    outs[i].in.h[1] = -v[i];
}
"""

HREC = np.dtype({"names": ["x", "d", "h"], "formats": [np.float32, np.float16, (np.float16, (3,))],
                 "offsets": [0, 4, 6], "itemsize": 12})
OUTER = np.dtype({"names": ["tag", "in"], "formats": [np.uint8, HREC], "offsets": [0, 4],
                  "itemsize": 16})

#: Values whose rounding to half is a test: ties to even, overflow, subnormals, NaN, -0.
EDGES = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504, 65520, 1e5, 2 ** -24, 2 ** -25,
                  3 * 2 ** -26, 1e-8, -0.0, np.inf, -np.inf, np.nan, 0.1, -2.5, 1 / 3],
                 np.float32)


def _inputs(n: int = 64):
    rng = np.random.default_rng(23)
    v = np.concatenate([EDGES, (rng.standard_normal(n - EDGES.size) * 300).astype(np.float32)])
    recs = np.zeros(n, HREC)
    recs["x"] = rng.random(n, np.float32) + 0.5
    recs["d"] = (rng.standard_normal(n) * 4).astype(np.float16)
    recs["h"] = (rng.standard_normal((n, 3)) * 4).astype(np.float16)
    outs = np.zeros(n, OUTER)
    outs["tag"] = np.arange(n)
    outs["in"]["d"] = (rng.standard_normal(n) * 4).astype(np.float16)
    return v, recs, outs


def _want(v, recs, outs):
    f32 = np.float32
    got = np.stack([recs["d"].astype(f32) * recs["x"], recs["h"][:, 1].astype(f32),
                    outs["in"]["d"].astype(f32)], axis=1).ravel()
    r, o = recs.copy(), outs.copy()
    with np.errstate(over="ignore"):  # 65520 and 1e5 round to inf, as they should
        r["d"] = v.astype(np.float16)
        r["h"][:, 0] = (v * f32(3)).astype(np.float16)
        r["h"][:, 2] = (recs["h"][:, 2].astype(f32) + v).astype(np.float16)
        o["in"]["h"][:, 1] = (-v).astype(np.float16)
    r["h"][:, 1] = (recs["h"][:, 1].astype(f32) * 2).astype(np.float16)  # exact, even in half
    return got, r, o


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Each field of two struct arrays equal bit for bit (-0.0 and inf included; a NaN
    is any NaN: its payload is the device's)."""
    for name in want.dtype.names:
        if want.dtype.fields[name][0].fields:
            _same_bits(got[name], want[name])
            continue
        a, b = np.ascontiguousarray(got[name]), np.ascontiguousarray(want[name])
        if b.dtype.kind == "f":
            nan = np.isnan(b)
            np.testing.assert_array_equal(np.isnan(a), nan, err_msg=name)
            a, b = np.where(nan, 0, a), np.where(nan, 0, b)
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg=name)


def _check(backend) -> None:
    v, recs, outs = _inputs()
    got = np.zeros(3 * v.size, np.float32)
    host = (got, recs, outs, v)
    dev = tuple(backend.to_device(a) for a in host)
    pk.kernel(SOURCE)(backend)(*dev, ndrange=(v.size,))
    backend.synchronize()
    back = [backend.to_host(a) for a in dev]
    back = [b.view(h.dtype) if h.dtype.fields and b.dtype != h.dtype else b
            for b, h in zip(back, host, strict=True)]
    want_got, want_recs, want_outs = _want(v, recs, outs)
    np.testing.assert_array_equal(back[0], want_got)
    _same_bits(back[1], want_recs)
    _same_bits(back[2], want_outs)


def test_half_fields_on_each_backend(backend):
    if not backend.supports("float16"):
        pytest.skip(f"{backend!r} has no half storage")
    _check(backend)


@pytest.mark.parametrize("path", ["native", "opencl"])
def test_half_fields_on_each_cpu_path(monkeypatch, path):
    monkeypatch.setenv("PORTAKERN_CPU", path)
    backend = pk.CPU()
    if not backend.available():
        pytest.skip(f"CPU() on the {path} path unavailable: {backend.available().reason}")
    _check(backend)


LOCAL = """\
typedef struct { half d; uint8_t tag; } hp;
hp make(float a) { hp r; r.d = a; r.tag = 1; return r; }
float twice(hp r) { return 2.0f * (float)r.d; }
@kernel void local_halves(float* out, hp* ps, const float* v) {
    @localmem hp tile[64];
    const long i = @index(Global, Linear);
    const int l = (int)@index(Local, Linear);
    tile[l] = ps[i];
    @synchronize;
    const hp* q = &ps[i];
    out[4 * i] = (q)->d+(ps[i]).d;
    out[4 * i + 1] = v[i] > 0.0f ? tile[l].d : make(v[i]).d;
    out[4 * i + 2] = twice(tile[(l + 1) % 64]);
    out[4 * i + 3] = tile[l].d == ps[i].d ? 1.0f : 0.0f;
    @synchronize;
    tile[l].d = (float)tile[l].d - v[i];
    ps[i].d = tile[l].d;
}
"""


def test_local_memory_copies_helper_results_and_parentheses(backend):
    if not backend.supports("float16"):
        pytest.skip(f"{backend!r} has no half storage")
    _check_local(backend)


def _check_local(backend) -> None:
    kernel = pk.kernel(LOCAL)
    rng = np.random.default_rng(5)
    ps = np.zeros(64, pk.struct_dtype(kernel, "hp"))
    ps["d"] = (rng.standard_normal(64) * 3).astype(np.float16)
    ps["tag"] = 7
    v = (rng.standard_normal(64) * 2).astype(np.float32)
    d = ps["d"].astype(np.float32)
    want = np.stack([d + d, np.where(v > 0, d, v.astype(np.float16).astype(np.float32)),
                     2 * np.roll(d, -1), np.ones(64)], axis=1).ravel()
    want_d = (d - v).astype(np.float16)
    out = backend.to_device(np.zeros(4 * 64, np.float32))
    dev = backend.to_device(ps)
    kernel(backend)(out, dev, backend.to_device(v), ndrange=(64,), workgroupsize=(64,))
    backend.synchronize()
    got = backend.to_host(dev)
    got = got.view(ps.dtype) if got.dtype != ps.dtype else got
    np.testing.assert_array_equal(backend.to_host(out), want)
    np.testing.assert_array_equal(got["d"].view(np.uint16), want_d.view(np.uint16))
    np.testing.assert_array_equal(got["tag"], 7)


@pytest.mark.parametrize("path", ["native", "opencl"])
def test_local_memory_on_each_cpu_path(monkeypatch, path):
    monkeypatch.setenv("PORTAKERN_CPU", path)
    backend = pk.CPU()
    if not backend.available():
        pytest.skip(f"CPU() on the {path} path unavailable: {backend.available().reason}")
    _check_local(backend)


def test_a_brace_initializer_of_a_struct_holding_one_is_refused(monkeypatch):
    monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    backend = _pocl_without_fp16()
    src = ("typedef struct { half d; } a;\nstruct b { int n; a in; };\n"
           "@kernel void k(float* y, const a* p) { struct b q = {1, p[0]}; y[0] = q.in.d; }\n")
    with pytest.raises(pk.KernelTypeError, match="struct b has a half field.*brace"):
        pk.kernel(src)(backend)(np.zeros(1, np.float32), np.zeros(1, [("d", np.float16)]),
                                ndrange=(1,))


def test_a_field_name_shared_with_another_type_is_refused(monkeypatch):
    monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    backend = _pocl_without_fp16()
    src = ("typedef struct { half d; } a;\ntypedef struct { float d; } b;\n"
           "@kernel void k(float* y, const a* p) { b q; q.d = p[0].d; y[0] = q.d; }\n")
    with pytest.raises(pk.KernelTypeError, match="half field 'd'.*struct b's field 'd'"):
        pk.kernel(src)(backend)(np.zeros(1, np.float32), np.zeros(1, [("d", np.float16)]),
                                ndrange=(1,))


def _pocl_without_fp16() -> pk.CPU:
    backend = pk.CPU()
    if not backend.available():
        pytest.skip(f"CPU() unavailable: {backend.available().reason}")
    if backend.supports("half_arithmetic"):
        pytest.skip("this OpenCL CPU device has cl_khr_fp16: half fields are half there")
    return backend


def test_the_fields_are_bits_in_the_rendering_for_a_device_without_fp16():
    rendered = pk.kernel(SOURCE).rendered("opencl", {}, 1).variant(half_storage=True)
    assert "typedef struct { float x; ushort d; ushort h[3]; } hrec;" in rendered.source
    assert "pk_half_from_bits(r->d)" in rendered.source
    assert "r.d = pk_half_bits((float)( v[i]))" in rendered.source
    # The rendering for a device with half arithmetic keeps the half fields.
    assert "half d;" in pk.kernel(SOURCE).rendered("opencl", {}, 1).source


def test_a_cast_before_a_parenthesised_struct_is_not_its_base():
    src = ("typedef struct { half d; } hb;\n@kernel void k(float* y, hb* b) {\n"
           "    y[0] = (uint8_t)(b[0]).d;\n}\n")
    rendered = pk.kernel(src).rendered("opencl", {}, 1).variant(half_storage=True)
    assert "y[0] = (uchar)pk_half_from_bits((b[0]).d);" in rendered.source


@pytest.mark.parametrize("body, match", [
    ("hrec r = {1.0f, 2.0f};", "brace initializer"),
    ("float f = (float)recs[0].d; recs[0].d++;", "increment"),
    ("__global half* p = &recs[0].d;", r"address \(&\)"),
    ("recs[i++].d += 1.0f;", "side effects"),
])
def test_uncovered_uses_are_refused_on_an_opencl_device_without_fp16(monkeypatch, body, match):
    monkeypatch.setenv("PORTAKERN_CPU", "opencl")
    backend = _pocl_without_fp16()
    src = ("typedef struct { float x; half d; half h[3]; } hrec;\n"
           f"@kernel void k(float* y, hrec* recs) {{ long i = 0; {body} }}\n")
    with pytest.raises(pk.KernelTypeError, match=f"half field.*{match}|{match}.*half field"):
        pk.kernel(src)(backend)(np.zeros(1, np.float32), np.zeros(1, HREC), ndrange=(1,))


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed (CUDA toolkit)")
def test_cuda_rendering_compiles_to_ptx(tmp_path):
    from portakern.backends.cuda import _fp16_include_dirs

    dirs = _fp16_include_dirs()
    if not dirs:
        pytest.skip("no CUDA include directory with cuda_fp16.h found")
    rendered = pk.kernel(SOURCE).rendered("cuda", {}, 1)
    assert "__half d;" in rendered.source
    path = tmp_path / "k.cu"
    path.write_text(rendered.source)
    run = subprocess.run([NVCC, "--ptx", "-arch=compute_90", *(f"-I{d}" for d in dirs),
                          "-o", str(tmp_path / "k.ptx"), str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert ".entry" in (tmp_path / "k.ptx").read_text()


def test_metal_rendering_passes_the_check():
    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no clang for the Metal syntax check: {why}")
    rendered = pk.kernel(SOURCE).rendered("metal", {}, 1)
    check_metal(rendered.source, sources=rendered.sources())
