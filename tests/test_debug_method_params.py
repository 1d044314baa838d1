"""Debug mode checks a struct method's pointer parameters (issue 28, docs/debugging.md "In a
struct's method").

A method that takes the fault record (:mod:`portakern.lower.debug_methods`) also takes,
for each pointer parameter, where it points, each with a default (an unknown extent): a
call debug mode rewrites (``a.m(...)``, ``p->m(...)``, ``tile[i].m(...)``, ``this->m(...)``,
a bare ``m(...)`` in another method) passes the extent of what it passes (an array
parameter, a ``@localmem`` or private array, a pointer into one, the caller's own pointer
parameter), so ``v[k]`` in the method is checked as a helper's pointer parameter is; a
call that is not rewritten, or a pointer whose array is unknown, leaves it unchecked.
Member arrays are checked in constructors and operators too, where the record is a
per-thread one on the native path. Each test runs on the CPU's native path, on PoCL
(which refuses methods: OpenCL C has none) and on the CUDA and Metal stand-ins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_debug_methods import kernel, line_of, no_methods_on_pocl

import portakern as pk

POINTERS = """
struct Acc {
    float bins[4];
    void clear() {
        for (int j = 0; j < 4; j++) {
            bins[j] = 0.0f;
        }
    }
    void add(const float* v, long n) {
        for (long k = 0; k < n; ++k) {
            bins[k % 4] += v[k];
        }
    }
    float first(const float* v, long k) {
        return v[k];
    }
    float again(const float* v, long k) {
        return first(v, k) + this->first(v, 0);
    }
};
@kernel void meth(float* y, const float* x, const long n, const long k, const long p,
                  const long q) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float t[8];
    t[l] = x[i];
    @synchronize();
    float own[4];
    for (int j = 0; j < 4; j++) {
        own[j] = 10.0f * j;
    }
    Acc a;
    a.clear();
    a.add(x, n);
    Acc* ptr = &a;
    Acc tile[2];
    tile[1].clear();
    y[i] = a.bins[0] + ptr->first(&x[i], k) + a.again(t, p) + tile[1].first(own, q);
}
"""

#: In bounds: n, k, p, q.
GOOD = (8, 0, 7, 3)


def run(path: Any, n: int, k: int, p: int, q: int) -> np.ndarray:
    x = np.arange(8, dtype=np.float32)
    args = (np.zeros(8, np.float32), x, *(np.int64(v) for v in (n, k, p, q)))
    return path.run(kernel(POINTERS), *args, ndrange=8, workgroupsize=8)[0]


def expected(n: int, k: int, p: int, q: int) -> np.ndarray:
    x = np.arange(8, dtype=np.float32)
    bins0 = sum(x[j] for j in range(n) if j % 4 == 0)
    return bins0 + x[np.arange(8) + k] + x[p] + x[0] + 10.0 * q


def test_in_bounds_pointer_parameters_of_methods_compute_as_without_debug_mode(
        path: Any) -> None:
    no_methods_on_pocl(path, kernel(POINTERS), np.zeros(8, np.float32),
                       np.arange(8, dtype=np.float32), *(np.int64(v) for v in GOOD),
                       ndrange=8, workgroupsize=8)
    assert list(run(path, *GOOD)) == list(expected(*GOOD))


@pytest.mark.parametrize(("args", "name", "index", "extent", "where"), [
    ((9, 0, 7, 3), "x", 8, 8, "bins[k % 4] += v[k]"),  # a.add(x, n): the array
    ((8, 1, 7, 3), "x", 8, 8, "return v[k]"),  # ptr->first(&x[i], k): an offset
    ((8, 0, 8, 3), "t", 8, 8, "return v[k]"),  # a.again(t, p) -> first(v, k)
    ((8, 0, -1, 3), "t", -1, 8, "return v[k]"),
    ((8, 0, 7, 4), "own", 4, 4, "return v[k]"),  # tile[1].first(own, q)
])
def test_a_methods_pointer_parameter_is_checked(path: Any, args: tuple, name: str,
                                                index: int, extent: int, where: str) -> None:
    no_methods_on_pocl(path, kernel(POINTERS), np.zeros(8, np.float32),
                       np.arange(8, dtype=np.float32), *(np.int64(v) for v in args),
                       ndrange=8, workgroupsize=8)
    with pytest.raises(pk.KernelFaultError) as info:
        run(path, *args)
    err = info.value
    assert (err.parameter, err.index, err.extent) == (name, index, extent)
    assert err.lineno == line_of(POINTERS, where)
    assert err.work_item is not None and len(err.work_item) == 1


TO_HELPER = """
float total(const float* v, long n) {
    float s = 0.0f;
    for (long j = 0; j < n; ++j) {
        s += v[j];
    }
    return s;
}
struct Acc {
    float bins[4];
    float sum(const float* v, long n) {
        return total(v, n);
    }
};
@kernel void summed(float* y, const float* x, const long n) {
    const long i = @index(Global, Linear);
    Acc a;
    y[i] = a.sum(x + 1, n);
}
"""


def test_a_method_passes_its_pointer_parameters_extent_to_a_helper(path: Any) -> None:
    x = np.arange(8, dtype=np.float32)
    k = kernel(TO_HELPER)
    no_methods_on_pocl(path, k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8)
    if path.where == "metal":
        pytest.skip("Metal: a helper called only from a method is not placed (it is "
                    "missing from the rendering, with or without debug mode)")
    assert list(path.run(k, np.zeros(8, np.float32), x, np.int64(7), ndrange=8)[0]) \
        == [x[1:].sum()] * 8
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(8), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("x", 8, 8)
    assert err.lineno == line_of(TO_HELPER, "s += v[j]")
    assert err.work_item is not None and "in a helper" in str(err)


FROM_HELPER = """
struct Acc {
    float bins[4];
    float pick(const float* v, long k) {
        return v[k];
    }
};
float via(const float* v, long k) {
    Acc a;
    return a.pick(v + 1, k);
}
@kernel void helped(float* y, const float* x, const long k) {
    const long i = @index(Global, Linear);
    y[i] = via(x, k);
}
"""


def test_a_method_called_from_a_helper_checks_the_helpers_pointer(path: Any) -> None:
    x = np.arange(8, dtype=np.float32)
    k = kernel(FROM_HELPER)
    no_methods_on_pocl(path, k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8)
    if path.where == "metal":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pk.PortabilityWarning)
            plain = pk.kernel(FROM_HELPER)
        with pytest.raises(pk.CompilationError, match="cannot initialize a parameter"):
            path.run(plain, np.zeros(8, np.float32), x, np.int64(0), ndrange=8)
        pytest.skip("Metal: a method's pointer parameter has no address space, so a "
                    "helper's (placed) pointer cannot be passed to it, as asserted")
    assert list(path.run(k, np.zeros(8, np.float32), x, np.int64(6), ndrange=8)[0]) \
        == [7.0] * 8
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(7), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("x", 8, 8)
    assert err.lineno == line_of(FROM_HELPER, "return v[k]")
    assert err.work_item is not None


UNKNOWN = """
struct Acc {
    float bins[4];
    float pick(const float* v, long k) {
        return v[k];
    }
    float operator()(const float* v, long k) { return pick(v, k - 1); }
};
@kernel void unknown(float* y, const float* x, const long k) {
    const long i = @index(Global, Linear);
    Acc a;
    float two[2];
    two[0] = 1.0f;
    two[1] = 2.0f;
    float* q = k > 0 ? two : two + 1;
    y[i] = a(x, k) + a.pick(q, 0) + a.pick(x, k);
}
"""


def test_a_pointer_of_unknown_extent_stays_unchecked(path: Any) -> None:
    """From an operator's body (a call not rewritten) and through a pointer the kernel
    assigns from two places, the method's subscripts run unchecked: no false fault."""
    x = np.arange(8, dtype=np.float32)
    k = kernel(UNKNOWN)
    no_methods_on_pocl(path, k, np.zeros(8, np.float32), x, np.int64(1), ndrange=8)
    y = path.run(k, np.zeros(8, np.float32), x, np.int64(1), ndrange=8)[0]
    assert list(y) == [0.0 + 1.0 + 1.0] * 8
    text = k.render("c")
    assert "{ return pick(v, k - 1); }" in text  # not rewritten: the defaults, unknown
    with pytest.raises(pk.KernelFaultError) as info:  # the rewritten call still checks
        path.run(k, np.zeros(8, np.float32), x, np.int64(8), ndrange=8)
    assert (info.value.parameter, info.value.index) == ("x", 8)


def test_without_debug_mode_a_methods_pointer_parameters_render_as_written() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.PortabilityWarning)
        plain = pk.kernel(POINTERS)
    for target in ("c", "cuda", "metal"):
        text = plain.render(target)
        assert "pk_dbg" not in text
        assert "return v[k];" in text


DEFAULTED = """
struct Acc {
    float bins[4];
    float get(long k, long d = 0) {
        return bins[k] + d;
    }
};
@kernel void defaulted(float* y, const long k) {
    const long i = @index(Global, Linear);
    Acc a;
    for (int j = 0; j < 4; j++) {
        a.bins[j] = j;
    }
    y[i] = a.get(k) + a.get(k, 1);
}
"""


def test_a_method_with_a_default_argument_builds_and_stays_as_written(path: Any) -> None:
    """A call leaving the default argument out would pass the hidden values in its place
    (it did not build): such a method takes no hidden parameters, and runs unchecked."""
    k = kernel(DEFAULTED)
    no_methods_on_pocl(path, k, np.zeros(4, np.float32), np.int64(1), ndrange=4)
    assert list(path.run(k, np.zeros(4, np.float32), np.int64(2), ndrange=4)[0]) == [5.0] * 4
    assert "float get(long long k, long long d = 0) {" in k.render("c")


def test_methods_pointer_parameters_build_for_nvrtc_in_debug_mode() -> None:
    from portakern.backends.cuda import BASE_OPTIONS
    from portakern.checks.cuda import compile_cuda_ptx, cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(f"no CUDA compiler: {why}")
    for source in (POINTERS, TO_HELPER, FROM_HELPER, UNKNOWN, DEFAULTED):
        r = kernel(source).rendered("cuda", {}, 1)
        assert ".entry" in compile_cuda_ptx(r.source, options=BASE_OPTIONS)


def test_methods_pointer_parameters_build_for_metal_clang_in_debug_mode() -> None:
    """On Metal a method's pointer parameter is a ``thread`` pointer (portakern places no
    address space on it), so only a private array can be passed: that builds."""
    from portakern.checks.metal import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no Metal check: {why}")
    source = UNKNOWN.replace("a(x, k) + ", "").replace(" + a.pick(x, k)", "")
    r = kernel(source).rendered("metal", {}, 1)
    assert "pk_dbg_0_n = -1" in r.source
    check_metal(r.source, sources=r.sources())
