"""bfloat16 storage on every backend, computed in float (portakern.lower.bf16_storage;
docs/language.md, "Half and bfloat16 storage"): arrays of ``ml_dtypes.bfloat16`` are loaded
and stored, a store rounds to nearest even exactly as ml_dtypes converts, and what is not
covered is refused with an error naming the parameter and the fix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import portakern as pk
from portakern.backends import _mlx
from portakern.checks import check_metal, metal_check_available
from portakern.errors import KernelTypeError

ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 arrays are ml_dtypes arrays")
BF16 = np.dtype(ml_dtypes.bfloat16)

ROUNDTRIP = """
@kernel void bf16_roundtrip(T* b, float* back, uint16_t* bits, const float* x, float scale) {
    const long i = @index(Global, Linear);
    b[i] = x[i] * scale;
    back[i] = b[i];
    bits[i] = @bitcast(uint16_t, b[i]);
}
"""

ACCUMULATE = """
float twice(bfloat16 v) { return v * 2.0f; }

@kernel void accumulate(bfloat16* acc, const bfloat16* x, bfloat16* from_bits,
                        const uint16_t* bits) {
    const long i = @index(Global, Linear);
    bfloat16 t = x[i];
    acc[i] += twice(t);
    acc[i]++;
    from_bits[i] = @bitcast(bfloat16, bits[i]);
}
"""


def _values() -> np.ndarray:
    """float32 values across bfloat16's range: ties (both ways), normals, subnormals,
    overflow to inf, infinities, signed zeros and NaN."""
    rng = np.random.default_rng(7)
    ties = (np.arange(1, 65, dtype=np.uint32) << 16 | 0x8000).view(np.float32)
    near = (np.arange(1, 65, dtype=np.uint32) << 16 | 0x7fff).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-39, -3e-40,
                        1.0, 1.00390625, 1.01171875, 65504.0], np.float32)
    wide = (rng.standard_normal(256) * 10.0 ** rng.integers(-30, 30, 256)).astype(np.float32)
    return np.concatenate([ties, near, special, wide]).astype(np.float32)


def _run(backend, kernel, arrays, scalars=(), n=None):
    dev = [backend.to_device(a) for a in arrays]
    kernel(backend)(*dev, *scalars, ndrange=n)
    backend.synchronize()
    return [np.asarray(backend.to_host(d)) for d in dev]


def test_roundtrip_matches_ml_dtypes(backend):
    x = _values()
    n = x.size
    scale = np.float32(1.0)
    b, back, bits = np.zeros(n, BF16), np.zeros(n, np.float32), np.zeros(n, np.uint16)
    b, back, bits, _ = _run(backend, pk.kernel(ROUNDTRIP), [b, back, bits, x], [scale], n)
    ref = x.astype(BF16)  # ml_dtypes: round to nearest even
    assert b.dtype == BF16
    np.testing.assert_array_equal(b.view(np.uint16), ref.view(np.uint16))
    np.testing.assert_array_equal(bits, ref.view(np.uint16))
    np.testing.assert_array_equal(back, ref.astype(np.float32))  # widening is exact


def test_nan_stores_a_quiet_nan_of_its_sign(backend):
    x = np.array([np.nan, -np.nan, np.float32(np.nan) * 0], np.float32)
    x[1] = np.copysign(np.nan, -1.0)
    b, back, bits = np.zeros(3, BF16), np.zeros(3, np.float32), np.zeros(3, np.uint16)
    b, back, bits, _ = _run(backend, pk.kernel(ROUNDTRIP), [b, back, bits, x],
                            [np.float32(1.0)], 3)
    assert np.isnan(back).all()
    np.testing.assert_array_equal(bits, x.astype(BF16).view(np.uint16))


def test_compound_stores_helpers_and_bitcast(backend):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(128).astype(np.float32).astype(BF16)
    acc = rng.standard_normal(128).astype(np.float32).astype(BF16)
    bits = rng.integers(0, 2**16, 128, dtype=np.uint16)
    bits[(bits & 0x7f80) == 0x7f80] = 0x3f80  # no NaN/inf patterns: compared as numbers
    acc0 = acc.copy()
    acc, _, from_bits, _ = _run(backend, pk.kernel(ACCUMULATE),
                                [acc, x, np.zeros(128, BF16), bits], n=128)
    step = (acc0.astype(np.float32) + x.astype(np.float32) * 2).astype(BF16)
    want = (step.astype(np.float32) + 1).astype(BF16)
    np.testing.assert_array_equal(acc.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(from_bits.view(np.uint16), bits)


def test_type_variable_binds_bfloat16():
    k = pk.kernel(ROUNDTRIP)
    src = k.render("c", T="bfloat16")
    assert "typedef float T;" in src and "pk_bf16_store" in src
    # (T* b is the 16 bits; the other renderings of the kernel do not change)
    assert "pk_bf16" not in k.render("c", T="float")


def test_output_of_bfloat16_is_allocated_as_ml_dtypes():
    k = pk.kernel("@kernel void f(bfloat16* y, const float* x) "
                  "{ const long i = @index(Global, Linear); y[i] = x[i] / 3.0f; }")
    x = np.arange(16, dtype=np.float32)
    y = k(pk.CPU())(pk.Output(16), x, ndrange=16).output
    assert y.dtype == BF16
    np.testing.assert_array_equal(y.view(np.uint16), (x / np.float32(3)).astype(BF16)
                                  .view(np.uint16))


def test_scalar_bfloat16_is_refused():
    k = pk.kernel("@kernel void f(float* out, bfloat16 s) "
                  "{ out[@index(Global, Linear)] = s; }")
    with pytest.raises(KernelTypeError, match=r"'s'.*bfloat16 scalar.*declare.*float"):
        k.render("opencl")


def test_debug_mode_is_refused_with_the_fix():
    k = pk.kernel("@kernel void f(bfloat16* y) { y[@index(Global, Linear)] = 1.0f; }",
                  debug=True)
    with pytest.raises(KernelTypeError, match=r"'f'.*bfloat16.*debug mode.*without debug"):
        k(pk.CPU())(np.zeros(4, BF16), ndrange=4)


MIXED = """
@kernel void mixed(half* h, bfloat16* b, const float* x) {
    const long i = @index(Global, Linear);
    @localmem bfloat16 tile[@groupsize()];  // a float each
    tile[@index(Local, Linear)] = x[i];
    @synchronize();
    h[i] = (half)tile[@index(Local, Linear)];
    b[i] = (float)h[i] * 2.0f;
}
"""


def test_half_and_bfloat16_in_one_kernel(backend):
    x = _values()[:128]
    x = x[np.isfinite(x) & (np.abs(x) < 1e4)]
    n = x.size
    h, b, _ = _run(backend, pk.kernel(MIXED), [np.zeros(n, np.float16), np.zeros(n, BF16), x],
                   n=n)
    want_h = x.astype(BF16).astype(np.float32).astype(np.float16)
    np.testing.assert_array_equal(h.view(np.uint16), want_h.view(np.uint16))
    want_b = (want_h.astype(np.float32) * 2).astype(BF16)
    np.testing.assert_array_equal(b.view(np.uint16), want_b.view(np.uint16))


def test_bits_of_an_ambiguous_16_bit_value_are_refused():
    k = pk.kernel("@kernel void f(uint16_t* u, const half* h, const bfloat16* b) {"
                  " const long i = @index(Global, Linear); u[i] = @bitcast(uint16_t, h[i]); }")
    with pytest.raises(KernelTypeError, match=r"'f' uses both half and bfloat16.*only one"):
        k.render("cuda")


def test_dtype_mismatch_names_the_argument():
    k = pk.kernel("@kernel void f(bfloat16* out) { out[@index(Global, Linear)] = 1.0f; }")
    fix = r"astype\(ml_dtypes\.bfloat16\)"
    with pytest.raises(KernelTypeError, match=rf"'out'.*bfloat16.*{fix}"):
        k(pk.CPU())(np.zeros(4, np.float16), ndrange=4)


def test_without_ml_dtypes_only_the_binding_needs_it():
    # Rendering never imports ml_dtypes; asking for the host dtype names the fix.
    code = textwrap.dedent("""
        import sys
        sys.modules["ml_dtypes"] = None  # as if not installed
        import portakern as pk
        from portakern.errors import KernelTypeError
        from portakern.types import dtype_of, type_name_of
        import numpy as np
        src = pk.kernel("@kernel void f(bfloat16* y) { y[@index(Global, Linear)] = 2.0f; }")
        assert "pk_bf16_store" in src.render("opencl")
        assert type_name_of(np.float32) == "float"
        try:
            dtype_of("bfloat16")
        except KernelTypeError as exc:
            print(exc)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert run.returncode == 0, run.stderr
    assert "pip install ml_dtypes" in run.stdout


@pytest.mark.parametrize("target", ["c", "cuda", "metal", "opencl"])
def test_every_target_renders_storage(target):
    src = pk.kernel(ACCUMULATE).render(target)
    assert "pk_bf16_round" in src and "bfloat16" not in src.split("pk_bf16_store")[-1]


NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists("/usr/local/bin/nvcc")
                                else None)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed (CUDA toolkit)")
@pytest.mark.parametrize("source", [ROUNDTRIP, ACCUMULATE], ids=["roundtrip", "accumulate"])
def test_cuda_rendering_compiles_with_nvcc_without_headers(source, tmp_path):
    rendered = pk.kernel(source).rendered("cuda", {"T": "bfloat16"}, 1)
    # Self-contained: no cuda_bf16.h, so NVRTC needs no include directory.
    assert "#include" not in rendered.source and not rendered.fact("uses_half", False)
    path = tmp_path / "k.cu"
    path.write_text(rendered.source)
    run = subprocess.run([NVCC, "--ptx", "-arch=compute_90", "-o", str(tmp_path / "k.ptx"),
                          str(path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert ".entry" in (tmp_path / "k.ptx").read_text()


@pytest.mark.parametrize("source", [ROUNDTRIP, ACCUMULATE], ids=["roundtrip", "accumulate"])
def test_metal_renderings_pass_the_check(source):
    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no clang for the Metal syntax check: {why}")
    kernel = pk.kernel(source)
    rendered = kernel.rendered("metal", {"T": "bfloat16"}, 1)
    check_metal(rendered.source, sources=rendered.sources())
    # What MLX compiles: the bfloat16 arrays are passed as their bits (uint16_t).
    program = _mlx.build_program(rendered, "metal")
    unit = _mlx.translation_unit(program, {"T": "bfloat16"})
    assert "bfloat16_t" not in unit and "uint16_t" in unit
    check_metal(unit, sources=rendered.sources())
