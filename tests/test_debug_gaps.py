"""Debug mode inside helper functions and ``#define`` macros (issue 28, docs/debugging.md).

Each test runs on the CPU's native path, on PoCL, and on the CUDA and Metal stand-ins
(marked ``gpu`` / ``metal``): an access in range gives the right result, one out of
range raises :class:`pk.KernelFaultError` naming the kernel's array, the index, the
extent, the line and the work-item, and touches nothing outside the arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk

GUARD = 7.0


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def guarded(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.full(4, GUARD, np.float32), np.zeros(n, np.float32), np.full(4, GUARD, np.float32)


HELPER = """
void put(float* a, long i, float v) {
    a[i] = v;
}
@kernel void helper_write(float* lo, float* y, float* hi, const long off) {
    const long i = @index(Global, Linear);
    put(y, i + off, 1.0f + i);
}
"""


def test_a_helpers_subscript_is_checked_against_the_callers_array(path: Any) -> None:
    k = pk.kernel(HELPER, debug=True)
    lo, y, hi = guarded(8)
    path.run(k, lo, y, hi, np.int64(0), ndrange=8)
    assert list(path.after[1]) == [1 + i for i in range(8)]
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, lo, y, hi, np.int64(1), ndrange=8)
    err = info.value
    assert (err.parameter, err.argument, err.index, err.extent) == ("y", 1, 8, 8)
    assert err.work_item == (7,) and err.lineno == line_of(HELPER, "a[i] = v")
    assert "y[8] in a helper function" in str(err) and "went to element 0 of 'y'" in str(err)
    lo_after, y_after, hi_after, _ = path.after
    assert (lo_after == GUARD).all() and (hi_after == GUARD).all()
    assert list(y_after[1:]) == [1 + i for i in range(7)]  # the items in range wrote


NESTED = """
float get(const float* a, long i) { return a[i]; }
float twice(const float* b, long i) { return 2.0f * get(b, i); }
@kernel void nested(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    y[i] = twice(x, i + off);
}
"""


def test_a_helper_calling_a_helper_passes_the_extent_on(path: Any) -> None:
    k = pk.kernel(NESTED, debug=True)
    x = np.arange(6, dtype=np.float32)
    path.run(k, np.zeros(6, np.float32), x, np.int64(0), ndrange=6)
    assert list(path.after[0]) == list(2 * x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(6, np.float32), x, np.int64(-2), ndrange=6)
    err = info.value
    # Work-items 0 and 1 fault; which records first is up to the device.
    assert (err.parameter, err.argument, err.extent) == ("x", 1, 6)
    assert err.work_item in {(0,), (1,)} and err.index == err.work_item[0] - 2
    assert err.lineno == line_of(NESTED, "return a[i]")


VIEW = """
float row_sum(const float* r, int n) {
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += r[j];
    return s;
}
@kernel void row_sums(float* y, const float* x, const int n) {
    const long i = @index(Global, Linear);
    const float* row = x + i * 4;
    y[i] = row_sum(row, n) + row_sum(&x[i * 4], n) + row_sum(x + i * 4 + 2, n - 2);
}
"""


def test_a_helper_given_a_pointer_view_checks_the_rest_of_the_array(path: Any) -> None:
    k = pk.kernel(VIEW, debug=True)
    x = np.arange(12, dtype=np.float32)
    path.run(k, np.zeros(3, np.float32), x, np.int32(4), ndrange=3)
    rows = x.reshape(3, 4)
    assert list(path.after[0]) == list(2 * rows.sum(1) + rows[:, 2:].sum(1))
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(3, np.float32), x, np.int32(5), ndrange=3)
    err = info.value
    # Row 2 reads x[8 + 4], one past the end of x (the index is into x, not into the view).
    assert (err.parameter, err.index, err.extent, err.work_item) == ("x", 12, 12, (2,))
    assert err.lineno == line_of(VIEW, "s += r[j]")


MACRO = """
#define AT(i) y[i]
#define SWAP_IN(a, b) (x[a] + x[b])
@kernel void macro_write(float* lo, float* y, float* hi, const float* x, const long off) {
    const long i = @index(Global, Linear);
    AT(i) = SWAP_IN(i, i + off);
}
"""


def test_subscripts_in_a_define_are_checked_at_the_line_of_the_use(path: Any) -> None:
    k = pk.kernel(MACRO, debug=True)
    lo, y, hi = guarded(8)
    x = np.arange(8, dtype=np.float32)
    path.run(k, lo, y, hi, x, np.int64(0), ndrange=8)
    assert list(path.after[1]) == list(2 * x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, lo, y, hi, x, np.int64(3), ndrange=8)
    err = info.value  # the second subscript of the macro's body, x[i + off]
    assert (err.parameter, err.argument, err.extent) == ("x", 3, 8)
    assert err.work_item in {(5,), (6,), (7,)} and err.index == err.work_item[0] + 3
    assert err.lineno == line_of(MACRO, "AT(i) = SWAP_IN")


MACRO_HELPER = """
#define PUT(p, k) p[k] = 1.0f
#define N 4
void fill(float* a, long i) { for (int j = 0; j < N; j++) PUT(a, i * N + j); }
@kernel void macro_helper(float* y, const long extra) {
    const long i = @index(Global, Linear);
    fill(y, i + extra);
}
"""


def test_a_macro_inside_a_helper_is_checked_too(path: Any) -> None:
    k = pk.kernel(MACRO_HELPER, debug=True)
    path.run(k, np.zeros(8, np.float32), np.int64(0), ndrange=2)
    assert (path.after[0] == 1).all()
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), np.int64(1), ndrange=2)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.work_item) == ("y", 8, 8, (1,))
    assert err.lineno == line_of(MACRO_HELPER, "void fill")


def test_without_debug_mode_helpers_and_macros_render_as_written() -> None:
    for source in (HELPER, NESTED, VIEW, MACRO, MACRO_HELPER):
        plain = pk.kernel(source, debug=False)
        for target in ("c", "opencl", "cuda", "metal"):
            text = plain.render(target)
            assert "pk_dbg" not in text
        if "#define AT" in source:
            assert "AT(i) = SWAP_IN(i, i + off)" in plain.render("c")


MIXED = """
float first(const float* a);
float one(void) { return 1.0f; }
float first(const float* a) { return *a; }
float deref(const float* b, long k) { return *(b + k); }
float walk(const float* p, int n) {
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += *p++;
    return s;
}
float from_local(const float* t, long k) { return t[k]; }
#define READ(k) deref(x, k)
@kernel void mixed(float* y, const float* x, const long off) {
    @localmem float t[8];
    const long l = @index(Local, Linear);
    const long i = @index(Global, Linear);
    t[l] = one();
    @synchronize();
    y[i] = first(x + i) + walk(x, 2) + from_local(t, l) + READ(i + off);
}
"""


def test_prototypes_array_parameters_pointer_arithmetic_and_calls_in_macros(path: Any) -> None:
    """A prototype and its definition, ``(void)``, ``*(b + k)`` (checked), a
    pointer the helper moves (``*p++``, checked), a @localmem pointer (not checked), and a
    helper called from a macro, together."""
    k = pk.kernel(MIXED, debug=True)
    x = np.arange(8, dtype=np.float32)
    path.run(k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8, workgroupsize=8)
    assert list(path.after[0]) == list(x + (x[0] + x[1]) + 1 + x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(8), ndrange=8, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.argument, err.extent) == ("x", 1, 8)
    assert err.index == err.work_item[0] + 8
    assert err.lineno == line_of(MIXED, "return *(b + k)")


def test_only_helpers_that_reach_a_pointer_take_the_hidden_parameters() -> None:
    source = """
float sq(float v) { return v * v; }
float at(const float* p, long i) { return sq(p[i]); }
float outer(long i, const float* q) { return at(q, i); }
@kernel void g(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = sq(2.0f) + outer(i, x);
}
"""
    for target in ("c", "opencl", "cuda", "metal"):
        text = pk.kernel(source, debug=True).render(target)
        assert "float sq(float v)" in text and "sq(2.0f)" in text
        assert "pk_dbg_1_n" in text and "sq(2.0f) +" in text  # outer: q is parameter 1
        assert "pk_dbg_0_n" in text  # at's pointer is its first parameter


GROUPREDUCE = """
float at(const float* p, long i) { return p[i]; }
@kernel void total(float* out, const float* x, const long off) {
    const long i = @index(Global, Linear);
    const float t = @groupreduce(add, at(x, i + off));
    if (@index(Local, Linear) == 0) out[@index(Group, Linear)] = t;
}
"""


def test_a_helper_called_inside_a_group_collective(path: Any) -> None:
    k = pk.kernel(GROUPREDUCE, debug=True)
    x = np.arange(16, dtype=np.float32)
    path.run(k, np.zeros(2, np.float32), x, np.int64(0), ndrange=16, workgroupsize=8)
    assert list(path.after[0]) == [x[:8].sum(), x[8:].sum()]
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(2, np.float32), x, np.int64(1), ndrange=16, workgroupsize=8)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("x", 16, 16)
    # The native path reduces once per group, where no one work-item runs.
    assert err.work_item in {(15,), None}


def test_a_macro_defined_under_an_if_the_source_decides_is_expanded() -> None:
    """WIDE is defined nowhere, so it is 0 (as in C) and the #else branch holds; a
    condition only the target's compiler can decide stays as written (tests/
    test_debug_macros.py has the rest)."""
    source = """
#ifdef WIDE
#define AT(i) y[2 * (i)]
#else
#define AT(i) y[i]
#endif
#ifdef __OPENCL_VERSION__
#define AT2(i) y[i]
#endif
#define ONE 1.0f
@kernel void cond(float* y) {
    const long i = @index(Global, Linear);
    AT(i) = ONE;
    AT2(i) = ONE;
}
"""
    text = pk.kernel(source, debug=True).render("c")
    use = line_of(source, "AT(i) = ONE")
    assert "AT(i) = " not in text and f"pk_dbg_at_y(y, i, pk_dbg, {use}," in text
    assert "AT2(i) = 1.0f;" in text  # ONE expanded; AT2, under __OPENCL_VERSION__, as written


HELPER_VIEWS = """
float row_total(const float* a, long i, long n, long extra) {
    const float* row = a + i * n;
    const float* next = row + 1;
    float s = 0.0f;
    for (long j = 0; j < n + extra; j++) s += row[j];
    return s + next[-1] - *row;
}
void put_after(float* a, long i, float v) {
    float* p = a + 1;
    p[i] = v;
}
@kernel void helper_views(float* lo, float* y, float* hi, const float* x, const long extra,
                          const long woff) {
    const long i = @index(Global, Linear);
    put_after(y, i - 1 + woff, row_total(x, i, 4, extra));
}
"""


def test_a_pointer_a_helper_declares_is_checked_against_the_callers_array(path: Any) -> None:
    k = pk.kernel(HELPER_VIEWS, debug=True)
    x = np.arange(12, dtype=np.float32)
    lo, y, hi = guarded(3)
    path.run(k, lo, y, hi, x, np.int64(0), np.int64(0), ndrange=3)
    assert list(path.after[1]) == list(x.reshape(3, 4).sum(1))
    with pytest.raises(pk.KernelFaultError) as info:  # row 2 reads x[12]
        path.run(k, lo, y, hi, x, np.int64(1), np.int64(0), ndrange=3)
    err = info.value
    assert (err.parameter, err.argument, err.index, err.extent) == ("x", 3, 12, 12)
    assert err.work_item == (2,) and err.lineno == line_of(HELPER_VIEWS, "s += row[j]")
    lo, y, hi = guarded(3)
    with pytest.raises(pk.KernelFaultError) as info:  # item 2 writes y[3] through p
        path.run(k, lo, y, hi, x, np.int64(0), np.int64(1), ndrange=3)
    err = info.value
    assert (err.parameter, err.argument, err.index, err.extent) == ("y", 1, 3, 3)
    assert err.work_item == (2,) and err.lineno == line_of(HELPER_VIEWS, "p[i] = v")
    assert (path.after[0] == GUARD).all() and (path.after[2] == GUARD).all()


MOVED = """
void put_moved(float* a, long i, float v) {
    a += 2;
    a = a - 1;
    a[i - 1] = v;
}
void put_walk(float* a, long n, float v) {
    for (long j = 0; j < n; j++) *a++ = v;
}
float get_inc(const float* a, long i) {
    a++;
    ++a;
    a--;
    return a[i - 1] + *(a - 1) - a[-1];
}
@kernel void moved(float* lo, float* y, float* hi, float* z, const float* x, const long off,
                   const long zextra, const long xoff) {
    const long i = @index(Global, Linear);
    put_moved(y, i + off, get_inc(x, i + xoff));
    put_walk(z + 2 * i, 2 + zextra, 1.0f);
}
"""


def test_a_pointer_parameter_the_helper_moves_is_checked_where_it_points(path: Any) -> None:
    k = pk.kernel(MOVED, debug=True)
    x = np.arange(4, dtype=np.float32)
    lo, y, hi = guarded(4)
    z = np.zeros(8, np.float32)
    path.run(k, lo, y, hi, z, x, np.int64(0), np.int64(0), np.int64(0), ndrange=4)
    assert list(path.after[1]) == list(x) and (path.after[3] == 1).all()
    cases = [  # (off, zextra, xoff) -> the faulting array, its index, the line
        ((1, 0, 0), ("y", 1, 4, 4, (3,)), "a[i - 1] = v"),
        ((0, 1, 0), ("z", 3, 8, 8, (3,)), "*a++ = v"),
        ((0, 0, 1), ("x", 4, 4, 4, (3,)), "return a[i - 1]"),
    ]
    for sizes, (name, argument, index, extent, item), text in cases:
        lo, y, hi = guarded(4)
        with pytest.raises(pk.KernelFaultError) as info:
            path.run(k, lo, y, hi, np.zeros(8, np.float32), x,
                     *(np.int64(s) for s in sizes), ndrange=4)
        err = info.value
        assert (err.parameter, err.argument, err.index, err.extent) == (name, argument, index,
                                                                        extent)
        assert err.work_item == item and err.lineno == line_of(MOVED, text)
        assert (path.after[0] == GUARD).all() and (path.after[2] == GUARD).all()


def test_a_pointer_parameter_pointed_at_another_array_is_refused_in_debug_mode() -> None:
    source = """
float pick(const float* a, const float* b, long i) {
    if (i > 2) a = b;
    return a[i];
}
@kernel void repoint(float* y, const float* x, const float* w) {
    const long i = @index(Global, Linear);
    y[i] = pick(x, w, i);
}
"""
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.kernel(source, debug=True).render("c")
    text = str(info.value)
    assert "'a'" in text and "debug mode" in text and "pointer variable" in text
    assert info.value.lineno == line_of(source, "a = b;")
    assert "a = b" in pk.kernel(source, debug=False).render("c")  # fine outside debug mode
    stepped = source.replace("if (i > 2) a = b;\n    return a[i];", "return a++[i];")
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.kernel(stepped, debug=True).render("c")
    assert "'a++[...]'" in str(info.value) and "write 'a[k]'" in str(info.value)
    assert info.value.lineno == line_of(stepped, "return a++[i]")


METHOD = """
float at(const float* p, long i) { return p[i]; }
struct Acc {
    float s;
    float add(float v) {
        float pair[2] = {v, 2.0f * v};
        s += at(pair, 1);
        return s;
    }
};
@kernel void method_call(float* y, const float* x) {
    const long i = @index(Global, Linear);
    Acc acc;
    acc.s = 1.0f;
    y[i] = acc.add(x[i]) + at(x, i);
}
"""


def test_a_helper_called_from_a_struct_method_builds_in_debug_mode(path: Any) -> None:
    if path.where == "pocl":
        pytest.skip("OpenCL C has no struct methods")
    if path.where == "metal":
        pytest.skip("on Metal a pointer helper called from a struct method does not build "
                    "outside debug mode either (its address space is not inferred there)")
    k = pk.kernel(METHOD, debug=True)
    x = np.arange(4, dtype=np.float32)
    path.run(k, np.zeros(4, np.float32), x, ndrange=4)
    assert list(path.after[0]) == list(1 + 3 * x)


def test_a_fault_in_a_helper_on_an_empty_array_touches_no_memory(path: Any) -> None:
    k = pk.kernel(HELPER, debug=True)
    big = np.full(8, GUARD, np.float32)
    empty = big[4:4]
    lo, _, hi = guarded(0)
    with pytest.raises(pk.KernelFaultError) as info:
        if path.where == "native":  # host memory: the empty view of `big` itself goes in
            path.after = [lo, empty, hi, None]
            k(path.backend)(lo, empty, hi, np.int64(0), ndrange=1)
        else:
            path.run(k, lo, empty, hi, np.int64(0), ndrange=1)
    err = info.value
    assert (err.parameter, err.index, err.extent) == ("y", 0, 0) and "it is empty" in str(err)
    assert (big == GUARD).all()
    assert (path.after[0] == GUARD).all() and (path.after[2] == GUARD).all()


def test_a_pointer_helper_used_as_a_function_pointer_is_refused_in_debug_mode() -> None:
    source = """
float at(const float* p, long i) { return p[i]; }
float through(const float* x, long i) {
    auto f = at;
    return f(x, i);
}
@kernel void fptr(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = through(x, i);
}
"""
    for debug in (True, False):  # refused at pk.kernel() (tests/test_silent_gaps.py)
        with pytest.raises(pk.KernelSyntaxError) as info:
            pk.kernel(source, debug=debug).render("c")
        assert "'at' is used as a function pointer" in str(info.value)
        assert info.value.lineno == line_of(source, "= at;")



SHADOWS = """
typedef struct { float at; float w; } Pair;
float at(const float* p, long i) { return p[i]; }
float fields(Pair s) { return s.at + s.at * s.w; }
float own(const float* p, long i) { float a = 0.5f, at = p[i]; return a + at; }
float param(const float* p, long at) { return p[at]; }
float loop(const float* p, long i) {
    float s = 0;
    for (long at = 0; at < 2; at++) s += p[i + at];
    return s;
}
@kernel void shadows(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    Pair s; s.at = 1.0f; s.w = 2.0f;
    y[i] = at(x, i) + fields(s) + own(x, i) + param(x, i) + loop(x, i + off);
}
"""


def test_a_variable_field_or_parameter_named_like_a_pointer_helper_is_no_function_pointer(
        path: Any) -> None:
    k = pk.kernel(SHADOWS, debug=True)
    x = np.arange(9, dtype=np.float32)
    path.run(k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8)
    i = np.arange(8)
    assert list(path.after[0]) == list(3 * x[:8] + 3.5 + x[i] + x[i + 1])
    with pytest.raises(pk.KernelFaultError) as info:  # loop() reads x[9]
        path.run(k, np.zeros(8, np.float32), x, np.int64(1), ndrange=8)
    assert (info.value.parameter, info.value.index, info.value.extent) == ("x", 9, 9)
    assert info.value.lineno == line_of(SHADOWS, "s += p[i + at]")


@pytest.mark.parametrize("helper, line", [
    ("{ { float at = 1.0f; } auto f = at; return f(x, i) + at; }",
     "float through"),
    ("{ return (i ? at : at)(x, i); }", "float through"),
], ids=["after-the-block-of-a-variable", "in-a-conditional"])
def test_the_helper_itself_is_still_refused_as_a_function_pointer(helper: str, line: str,
                                                                   ) -> None:
    source = ("float at(const float* p, long i) { return p[i]; }\n"
              f"float through(const float* x, long i) {helper}\n"
              "@kernel void fptr(float* y, const float* x) {\n"
              "    const long i = @index(Global, Linear);\n"
              "    y[i] = through(x, i);\n}\n")
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.kernel(source, debug=True).render("c")
    assert "'at' is used as a function pointer" in str(info.value)
    assert info.value.lineno == line_of(source, line)


HEADER_DEREF = """
float last(const float* a, long n) {
    float v = 0.0f;
    for (long j = 0; j < n; j++) v = *(a + j);
    return v;
}
@kernel void header_deref(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    if (i >= 0) *(y + i + off) = last(x, i + 1);
}
"""


def test_a_dereference_right_after_a_loop_or_if_header_is_checked(path: Any) -> None:
    k = pk.kernel(HEADER_DEREF, debug=True)
    x = np.arange(4, dtype=np.float32)
    path.run(k, np.zeros(4, np.float32), x, np.int64(0), ndrange=4)
    assert list(path.after[0]) == list(x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(4, np.float32), x, np.int64(1), ndrange=4)
    err = info.value  # item 3 writes y[4]
    assert (err.parameter, err.index, err.extent, err.work_item) == ("y", 4, 4, (3,))
    assert err.lineno == line_of(HEADER_DEREF, "if (i >= 0)")


PASSED_ON = """
float get(const float* a, long i) { return a[i]; }
float via_view(const float* b, long i) {
    const float* r = b + 2;
    b++;
    return get(r, i) + get(b, -1) - b[-1];
}
@kernel void passed_on(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    y[i] = via_view(x, i + off - 2);
}
"""


def test_a_helpers_own_pointers_passed_to_another_helper_keep_their_offset(path: Any) -> None:
    k = pk.kernel(PASSED_ON, debug=True)
    x = np.arange(8, dtype=np.float32)
    path.run(k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8)
    assert list(path.after[0]) == list(x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(1), ndrange=8)
    err = info.value
    assert (err.parameter, err.index, err.extent, err.work_item) == ("x", 8, 8, (7,))
    assert err.lineno == line_of(PASSED_ON, "return a[i]")
