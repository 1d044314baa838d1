"""Debug mode checks inside struct methods (issue 28, docs/debugging.md "In a struct's method").

A method of a struct the source declares gets the fault record as hidden parameters with
defaults; a call debug mode rewrites (``a.add(v)``, ``p->add(v)``, ``add(v)`` in another
method of the struct) passes it, and the method's subscripts of the struct's member arrays
and of its private arrays are checked, and so are the private arrays of the helpers it
calls. A call it does not rewrite (in an operator's body, say) takes the defaults: it
builds and runs unchecked. Each test runs on the CPU's native path, on PoCL (which refuses
methods: OpenCL C has none), and on the CUDA and Metal stand-ins.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest
from test_helper_builds import compile_for_gpus

import portakern as pk


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def kernel(source: str) -> pk.Kernel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.PortabilityWarning)  # not portable to OpenCL
        return pk.kernel(source, debug=True)


def no_methods_on_pocl(path: Any, k: pk.Kernel, *args: Any, **kw: Any) -> None:
    if path.where == "pocl":
        with pytest.raises(pk.KernelSyntaxError, match="struct"):
            path.run(k, *args, **kw)
        pytest.skip("OpenCL C has no struct methods: refused, as asserted")


MEMBER = """
float spread(float v, long k) {
    float acc[4];
    for (int j = 0; j < 4; j++) {
        acc[j] = v * j;
    }
    return acc[k];
}
struct Acc {
    float s;
    float bins[4];
    void clear() {
        s = 0.0f;
        for (int j = 0; j < 4; j++) {
            bins[j] = 0.0f;
        }
    }
    float add(float v, long k) {
        bins[k] += v;
        s += bins[k];
        return s;
    }
    float twice(float v, long k, long h) {
        float tmp[2];
        tmp[h] = add(v, k);
        return tmp[h] + spread(v, k);
    }
};
@kernel void member(float* y, const float* x, const long k, const long h) {
    const long i = @index(Global, Linear);
    Acc a;
    a.clear();
    Acc* p = &a;
    y[i] = p->twice(x[i], k, h);
}
"""


def run_member(path: Any, k: int, h: int) -> np.ndarray:
    x = np.arange(8, dtype=np.float32)
    return path.run(kernel(MEMBER), np.zeros(8, np.float32), x, np.int64(k), np.int64(h),
                    ndrange=8)[0]


def test_in_bounds_a_method_computes_as_without_debug_mode(path: Any) -> None:
    x = np.arange(8, dtype=np.float32)
    no_methods_on_pocl(path, kernel(MEMBER), np.zeros(8, np.float32), x, np.int64(1),
                       np.int64(0), ndrange=8)
    assert list(run_member(path, 1, 0)) == list(x + x * 1)


def test_a_member_array_subscript_in_a_method_is_checked(path: Any) -> None:
    x = np.arange(8, dtype=np.float32)
    no_methods_on_pocl(path, kernel(MEMBER), np.zeros(8, np.float32), x, np.int64(4),
                       np.int64(0), ndrange=8)
    with pytest.raises(pk.KernelFaultError) as info:
        run_member(path, 4, 0)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == ("bins", 4, 4, 0)
    assert err.lineno == line_of(MEMBER, "bins[k] += v")
    assert err.work_item is not None
    assert "member array 'bins' (in method 'Acc::add')" in str(err)


def test_a_methods_private_array_is_checked(path: Any) -> None:
    x = np.arange(8, dtype=np.float32)
    no_methods_on_pocl(path, kernel(MEMBER), np.zeros(8, np.float32), x, np.int64(0),
                       np.int64(2), ndrange=8)
    with pytest.raises(pk.KernelFaultError) as info:
        run_member(path, 0, 2)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("tmp", 2, 2)
    assert err.lineno == line_of(MEMBER, "tmp[h] = add(v, k)")
    assert "private array 'tmp' (in method 'Acc::twice')" in str(err)


HELPER_FROM_METHOD = MEMBER.replace("bins[k] += v;\n        s += bins[k];",
                                    "s += spread(v, k);").replace(
    "tmp[h] = add(v, k);", "tmp[h] = add(v, k - 1);")


def test_a_helper_called_from_a_method_checks_its_private_array(path: Any) -> None:
    x = np.arange(8, dtype=np.float32)
    k = kernel(HELPER_FROM_METHOD)
    no_methods_on_pocl(path, k, np.zeros(8, np.float32), x, np.int64(4), np.int64(0),
                       ndrange=8)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(5), np.int64(0), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("acc", 4, 4)
    assert err.lineno == line_of(HELPER_FROM_METHOD, "return acc[k]")
    assert "(in helper 'spread')" in str(err)


UNSEEN = """
struct Acc {
    float bins[4];
    float add(float v, long k) {
        bins[k] = v;
        return bins[k];
    }
    float operator()(float v, long k) { return add(v, k); }
    Acc() { for (int j = 0; j < 4; j++) { bins[j] = 1.0f; } }
};
@kernel void unseen(float* y, const float* x, const long k) {
    const long i = @index(Global, Linear);
    Acc a;
    y[i] = a(x[i], k) + a.add(x[i], k);
}
"""


def test_a_call_debug_mode_does_not_rewrite_takes_the_defaults(path: Any) -> None:
    """Called from an operator's body (not rewritten) the method gets a null record: it
    builds and runs unchecked there (no false fault), as do the constructor and the
    operator."""
    x = np.arange(4, dtype=np.float32)
    k = kernel(UNSEEN)
    no_methods_on_pocl(path, k, np.zeros(4, np.float32), x, np.int64(1), ndrange=4)
    y = path.run(k, np.zeros(4, np.float32), x, np.int64(1), ndrange=4)[0]
    assert list(y) == list(2 * x)
    text = k.render("c")
    assert re.search(r"float add\(float v, long long k, long long\* pk_dbg = 0", text)
    assert "{ return add(v, k); }" in text  # not rewritten: the defaults
    assert re.search(r"a\.add\(.*, k, pk_dbg, ", text)  # rewritten


def test_an_overloaded_method_or_one_whose_address_is_taken_stays_as_written() -> None:
    overloaded = """
struct Acc {
    float bins[4];
    float add(float v) { return bins[0] + v; }
    float add(float v, long k) { return bins[k] + v; }
    float get(long k) { return bins[k]; }
};
@kernel void over(float* y, const float* x, const long k) {
    const long i = @index(Global, Linear);
    Acc a;
    float (Acc::*f)(long) = &Acc::get;
    y[i] = a.add(x[i]) + a.add(x[i], k) + (a.*f)(k);
}
"""
    for target in ("c", "cuda", "metal"):
        text = kernel(overloaded).render(target)
        assert "float add(float v) { return bins[0] + v; }" in text
        assert "{ return bins[k]; }" in text
        assert "pk_dbg = 0" not in text


def test_methods_build_for_metal_clang_in_debug_mode() -> None:
    from portakern.checks.metal import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no Metal check: {why}")
    for source in (MEMBER, HELPER_FROM_METHOD, UNSEEN):
        r = kernel(source).rendered("metal", {}, 1)
        assert "pk_dbg = 0" in r.source
        check_metal(r.source, sources=r.sources())


def test_methods_build_for_nvrtc_in_debug_mode_as_without_it() -> None:
    """NVRTC builds a struct's methods as device code (``--device-as-default-execution-space``
    in portakern's options), in debug mode and out of it."""
    from portakern.backends.cuda import BASE_OPTIONS
    from portakern.checks.cuda import compile_cuda_ptx, cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(f"no CUDA compiler: {why}")
    for source in (MEMBER, HELPER_FROM_METHOD, UNSEEN):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pk.PortabilityWarning)
            plain = pk.kernel(source).rendered("cuda", {}, 1).source
            assert ".entry" in compile_cuda_ptx(plain, options=BASE_OPTIONS)
        compile_for_gpus(kernel(source), mlx=False)
