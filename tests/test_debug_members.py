"""Debug mode checks struct variables' member arrays (issue 28, docs/debugging.md "Member
arrays of struct variables").

``Acc s; s.bins[k]``, ``Acc* p = &s; p->bins[k]``, ``Acc& r = s; r.bins[k]`` in the kernel
body, ``const Acc& o; o.bins[k]`` in a helper or a method, and ``this->bins[k]`` in a
method are checked against the member's extent in the struct definition: an out-of-bounds
subscript raises :class:`pk.KernelFaultError` naming the path, the index, the extent, the
line and the work-item. Each test runs on the CPU's native path, on PoCL, and on the CUDA
and Metal stand-ins (PoCL refuses the method cases: OpenCL C has no methods).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from test_debug_methods import kernel, line_of, no_methods_on_pocl
from test_helper_builds import compile_for_gpus

import portakern as pk

BODY = """
struct Acc {
    float bins[4];
    float grid[2][3];
};
@kernel void body(float* y, const float* x, const long k, const long c) {
    const long i = @index(Global, Linear);
    Acc s;
    for (int j = 0; j < 4; j++) {
        s.bins[j] = x[i] + j;
    }
    for (int a = 0; a < 2; a++) {
        for (int b = 0; b < 3; b++) {
            s.grid[a][b] = 10 * a + b;
        }
    }
    Acc* p = &s;
    Acc& r = s;
    y[i] = s.bins[k] + p->bins[3 - k] + r.grid[1][c];
}
"""


def run_body(path: Any, k: int, c: int) -> np.ndarray:
    x = np.arange(8, dtype=np.float32)
    return path.run(pk.kernel(BODY, debug=True), np.zeros(8, np.float32), x, np.int64(k),
                    np.int64(c), ndrange=8)[0]


def test_in_bounds_member_arrays_compute_as_without_debug_mode(path: Any) -> None:
    x = np.arange(8, dtype=np.float32)
    assert list(run_body(path, 1, 2)) == list((x + 1) + (x + 2) + 12)


@pytest.mark.parametrize(("k", "c", "where", "name", "index", "extent", "dimension"), [
    (4, 0, "s.bins[k]", "s.bins", 4, 4, 0),
    (-1, 0, "s.bins[k]", "s.bins", -1, 4, 0),
    (0, 3, "r.grid[1][c]", "r.grid", 3, 3, 1),
])
def test_a_member_array_subscript_in_the_kernel_body_is_checked(
        path: Any, k: int, c: int, where: str, name: str, index: int, extent: int,
        dimension: int) -> None:
    with pytest.raises(pk.KernelFaultError) as info:
        run_body(path, k, c)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.dimension) == (
        name, index, extent, dimension)
    assert err.lineno == line_of(BODY, where)
    assert err.work_item is not None
    assert f"member array '{name}'" in str(err)


def test_a_pointer_to_the_struct_is_checked_through_the_arrow(path: Any) -> None:
    with pytest.raises(pk.KernelFaultError) as info:
        run_body(path, -1, 0)  # s.bins[-1] faults first, in source order
    assert info.value.parameter == "s.bins"
    only_arrow = BODY.replace("s.bins[k] + ", "")
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(pk.kernel(only_arrow, debug=True), np.zeros(8, np.float32), x, np.int64(-1),
                 np.int64(0), ndrange=8)
    assert (info.value.parameter, info.value.index) == ("p->bins", 4)


HELPER = """
struct Acc {
    float bins[4];
};
float pick(const Acc& o, long k) {
    Acc t = o;
    return o.bins[k] + t.bins[0];
}
@kernel void helper(float* y, const float* x, const long k) {
    const long i = @index(Global, Linear);
    Acc s;
    for (int j = 0; j < 4; j++) {
        s.bins[j] = x[i] * j;
    }
    y[i] = pick(s, k);
}
"""


def test_a_helpers_struct_parameter_member_is_checked(path: Any) -> None:
    if path.where == "pocl":
        pytest.skip("OpenCL C has no references: `const Acc&` is C++")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.PortabilityWarning)
        k = pk.kernel(HELPER, debug=True)
    x = np.arange(8, dtype=np.float32)
    y = path.run(k, np.zeros(8, np.float32), x, np.int64(2), ndrange=8)[0]
    assert list(y) == list(2 * x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(4), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("o.bins", 4, 4)
    assert err.lineno == line_of(HELPER, "return o.bins[k]")
    assert "member array 'o.bins' (in helper 'pick')" in str(err)


HELPER_POINTER = HELPER.replace("const Acc& o", "const Acc* o").replace(
    "Acc t = o;", "Acc t = *o;").replace("o.bins[k]", "o->bins[k]").replace(
    "pick(s, k)", "pick(&s, k)")


def test_a_helpers_struct_pointer_parameter_member_is_checked(path: Any) -> None:
    """OpenCL C too: a pointer parameter, in each address-space copy of the helper."""
    k = pk.kernel(HELPER_POINTER, debug=True)
    x = np.arange(8, dtype=np.float32)
    y = path.run(k, np.zeros(8, np.float32), x, np.int64(3), ndrange=8)[0]
    assert list(y) == list(3 * x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(-2), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("o->bins", -2, 4)
    assert err.lineno == line_of(HELPER_POINTER, "return o->bins[k]")
    assert "member array 'o->bins' (in helper 'pick')" in str(err)


METHOD = """
struct Acc {
    float bins[4];
    void fill(float v) {
        for (int j = 0; j < 4; j++) {
            this->bins[j] = v + j;
        }
    }
    float at(long k) {
        return this->bins[k];
    }
    float merged(const Acc& o, long k) {
        return bins[0] + o.bins[k];
    }
};
@kernel void method(float* y, const float* x, const long k, const long h) {
    const long i = @index(Global, Linear);
    Acc a;
    a.fill(x[i]);
    Acc b;
    b.fill(1.0f);
    y[i] = a.at(k) + b.merged(a, h);
}
"""


def run_method(path: Any, k: int, h: int) -> np.ndarray:
    x = np.arange(8, dtype=np.float32)
    return path.run(kernel(METHOD), np.zeros(8, np.float32), x, np.int64(k), np.int64(h),
                    ndrange=8)[0]


@pytest.mark.parametrize(("k", "h", "where", "name", "method"), [
    (0, 0, None, None, None),
    (4, 0, "return this->bins[k]", "bins", "Acc::at"),
    (0, 5, "o.bins[k]", "o.bins", "Acc::merged"),
])
def test_this_and_a_parameters_member_in_a_method_are_checked(
        path: Any, k: int, h: int, where: str | None, name: str | None,
        method: str | None) -> None:
    x = np.arange(8, dtype=np.float32)
    no_methods_on_pocl(path, kernel(METHOD), np.zeros(8, np.float32), x, np.int64(k),
                       np.int64(h), ndrange=8)
    if where is None:
        assert list(run_method(path, k, h)) == list((x + k) + 1 + (x + h))
        return
    with pytest.raises(pk.KernelFaultError) as info:
        run_method(path, k, h)
    err = info.value
    assert (err.parameter, err.index, err.extent) == (name, max(k, h), 4)
    assert err.lineno == line_of(METHOD, where)
    assert f"member array '{name}' (in method '{method}')" in str(err)


LOCKSTEP = """
struct Acc {
    float bins[4];
};
@kernel void lockstep(float* y, const float* x, const long k) {
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    @localmem float t[8];
    Acc s;
    s.bins[0] = x[i];
    t[l] = x[i];
    @synchronize();
    y[i] = s.bins[k] + t[7 - l];
}
"""


def test_a_member_array_across_a_barrier_is_checked(path: Any) -> None:
    k = pk.kernel(LOCKSTEP, debug=True)
    x = np.arange(8, dtype=np.float32)
    y = path.run(k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8, workgroupsize=8)[0]
    assert list(y) == list(x + x[::-1])
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(4), ndrange=8, workgroupsize=8)
    assert (info.value.parameter, info.value.index) == ("s.bins", 4)
    assert info.value.lineno == line_of(LOCKSTEP, "s.bins[k]")


def test_a_variable_declared_twice_is_left_as_written() -> None:
    twice = BODY.replace("    Acc* p = &s;", "    { float s = 1.0f; y[i] = s; }\n    Acc* p = &s;")
    text = pk.kernel(twice, debug=True).render("c")
    assert "s.bins[k]" in text  # unchecked: which s is meant is not followed


def test_member_checks_build_for_nvrtc_and_the_metal_check() -> None:
    for source in (BODY, HELPER, HELPER_POINTER, METHOD, LOCKSTEP):
        compile_for_gpus(kernel(source), mlx=False)
