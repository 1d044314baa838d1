"""Facts that travel beside a rendering (RenderedKernel.meta), and lowering once.

The arrays a kernel declares and the group bound are found from the lowering before
rendering (portakern.lower.stack_facts), never read back from the generated text; an
unmasked variant (a launch whose groups cover the ndrange) is lowered once.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import portakern as pk
import portakern.lower.lowering as lowering
from portakern import examples
from portakern.cache.store import _decode_rendered, _encode_rendered
from portakern.render.emit import render_lowered
from portakern.variant import Variant

BARRIER = """@kernel void tiles(float* y, const float* x) {
    @localmem float t[64];
    const long i = @index(Local, Linear);
    t[i] = x[@index(Global, Linear)];
    @synchronize();
    y[@index(Global, Linear)] = t[63 - i];
}"""
SAXPY = """@kernel void saxpy(float* y, const float* x, float a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}"""


@pytest.fixture
def lowerings(monkeypatch):
    """Every lower_kernel call, as (kernel name, unsafe_indices, unmasked)."""
    calls: list[tuple] = []
    real = lowering.lower_kernel

    def counting(kdef, *args, **kwargs):
        calls.append((kdef.name, kdef.unsafe_indices, kwargs.get("unmasked", False)))
        return real(kdef, *args, **kwargs)

    monkeypatch.setattr(lowering, "lower_kernel", counting)
    return calls


@pytest.mark.parametrize(("source", "target"), [(SAXPY, "c"), (SAXPY, "opencl"),
                                                  (BARRIER, "opencl"), (BARRIER, "cuda")])
def test_an_unmasked_variant_lowers_once(lowerings, source, target):
    k = pk.kernel(source)
    unmasked = k.render_variant(Variant.of(target, (), 1, unmasked=True))
    assert len(lowerings) == 1, lowerings
    # The same text the masked-then-unmasked road gave (the kernel as unsafe_indices).
    module, kdef = k.parsed(target)
    lockstep = unmasked.lowered.lockstep
    old = lowering.lower_kernel(replace(kdef, unsafe_indices=True), module, 1,
                                lockstep=lockstep)
    again = render_lowered(old, module.helpers, target, {}, unmasked.filename,
                           user_source=unmasked.user_source)
    assert again.source == unmasked.source


def test_a_first_launch_lowers_each_variant_once(lowerings, monkeypatch, tmp_path):
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(tmp_path))
    k = pk.kernel(SAXPY)
    y, x = np.zeros(4096, np.float32), np.arange(4096, dtype=np.float32)
    k(y, x, np.float32(2), ndrange=y.shape)
    np.testing.assert_array_equal(y, 2 * x)
    assert len(lowerings) <= 1, lowerings  # 0 where the disk cache had the rendering
    assert len(set(lowerings)) == len(lowerings)


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_the_unmasked_lowering_keeps_the_masked_errors(target):
    bad = pk.kernel("""@kernel void f(float* y) {
        const long i = @index(Global, Linear);
        if (i > 3) return;
        @synchronize();
        y[i] = 1;
    }""")
    with pytest.raises(pk.KernelSyntaxError, match="return"):
        bad.render_variant(Variant.of(target, (), 1, unmasked=True))


def test_meta_survives_the_disk_cache():
    r = examples.get("histogram").load().variant("c", (), 1)
    assert r.fact("group_bound") == 256
    assert ("local_counts", 256 * 4, False, True) in r.fact("arrays")  # @localmem
    back = _decode_rendered(_encode_rendered(r))
    assert back is not None and back.meta == r.meta
    assert back.fact("arrays") == r.fact("arrays")  # tuples again, not JSON lists
    assert back.fact("missing", "default") == "default"


def test_no_fact_is_written_into_the_source():
    for name in ("histogram", "reduce_sum", "matmul_tiled"):
        k = examples.get(name).load()
        bindings = (("T", "float"),) if k.parsed("c")[1].type_vars else ()
        r = k.variant("c", bindings, 2 if name == "matmul_tiled" else 1)
        assert "portakern group bound" not in r.source
        assert dict(r.meta).keys() == {"arrays", "group_bound", "contract", "uses_half",
                                       "mlx_renames", "sized_local", "private_atomics"}
        assert dict(r.meta)["sized_local"] == ()  # constant sizes only
