"""``@atomic_*`` checked on the typed tree (portakern.analysis.atomic_checks): a value where
the address belongs is refused at ``pk.kernel()``, an element type the target has no
atomics for (a bound type variable) when the variant renders, never in a compiler."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import portakern as pk
from portakern.errors import KernelSyntaxError, KernelTypeError

COUNT = """@kernel void count(T* total, const T* x) {
    long i = @index(Global, Linear);
    @atomic_add(&total[0], x[i]);
}
"""


def test_a_value_where_the_address_belongs_is_refused_with_the_fix():
    source = COUNT.replace("&total[0]", "total[0]")
    with pytest.raises(KernelSyntaxError) as info:
        pk.kernel(source)
    exc = info.value
    assert exc.lineno == 3 and exc.offset == 17
    assert "write @atomic_add(&total[0], ...)" in str(exc)


@pytest.mark.parametrize("target", ["&total[0]", "total", "total + 0"])
def test_every_address_form_is_accepted_and_runs(target):
    k = pk.kernel(COUNT.replace("&total[0]", target))
    x = np.arange(100, dtype=np.int32)
    total = np.zeros(1, np.int32)
    k(total, x, ndrange=x.shape)
    assert total[0] == x.sum()


def test_localmem_and_helper_pointers_are_addresses():
    pk.kernel("""
static inline void bump(int* p) { @atomic_add(p, 1); }
@kernel(workgroupsize=64) void hist(int* bins, const int* x) {
    @localmem int s[64];
    long l = @index(Local, Linear);
    s[l] = 0;
    @synchronize();
    @atomic_add(&s[x[@index(Global, Linear)] & 63], 1);
    @synchronize();
    @atomic_add(bins + l, s[l]);
}
""")


def test_a_bound_64_bit_type_is_refused_on_metal_only():
    k = pk.kernel(COUNT)
    with pytest.raises(KernelTypeError, match=r"metal has no atomics on long "
                                              r"\(@atomic_add on &total\[0\], with T=long\)"):
        k.render("metal", T="long")
    for target in ("c", "cuda", "opencl"):
        assert "pk_atomic_add" in k.render(target, T="long")
    assert "pk_atomic_add" in k.render("metal", T="int")


def test_portakern_check_says_why_metal_fails(tmp_path):
    path = tmp_path / "count.pk"
    path.write_text(COUNT)
    proc = subprocess.run([sys.executable, "-m", "portakern", "check", str(path), "-D",
                           "T=long", "-t", "metal"], capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert "metal has no atomics on long" in out, out
    assert "no matching function" not in out
