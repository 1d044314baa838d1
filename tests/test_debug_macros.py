"""Debug mode checks the subscripts of every kind of ``#define`` (issue 28, docs/debugging.md).

Debug mode expands the source's macros before it checks (:func:`portakern.syntax.macros.
expand_macros`): object-like and function-like ones, those that stringify (``#``) or paste
(``##``), variadic ones (``...``, ``__VA_ARGS__``), and those defined under ``#if``,
``#ifdef``, ``#ifndef``, ``#elif`` and ``#else`` whose condition the source decides
(macros it defines, ``defined(X)``, integer constants, Jinja constants; a name nobody
defines is 0, as in C). A condition on a name only the target's compiler knows
(``__OPENCL_VERSION__``, ``__CUDA_ARCH__``) is not guessed: the macros it defines stay as
written. Each run test goes over the CPU's native path, PoCL, and the CUDA and Metal
stand-ins (marked ``gpu`` / ``metal``): a correct kernel computes the right result, and
an overrun raises :class:`pk.KernelFaultError` naming the array, the index, the extent
and the line of the macro's use.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern.source.source_map import SourceMap
from portakern.syntax.macros import expand_macros
from portakern.syntax.tokens import tokenize


def line_of(source: str, text: str) -> int:
    return next(k for k, line in enumerate(source.split("\n"), 1) if text in line)


def expanded(source: str) -> str:
    """The text of ``source`` with its macros expanded, as debug mode reads it."""
    smap = SourceMap("<test>", source, list(range(1, source.count("\n") + 2)))
    toks = [t for t in expand_macros(tokenize(source, smap)) if t.kind != "pp"]
    return " ".join(" ".join(t.text for t in toks if t.kind not in ("ws", "comment")).split())


STRINGIFY = """
#define NAMED(a, i) (a[i] + (float)sizeof(#a))
@kernel void stringify(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    y[i] = NAMED(x, i + off);
}
"""

PASTE = """
#define HALF(a, part, i) a##_##part[i]
@kernel void paste(float* y, const float* x_lo, const float* x_hi, const long off) {
    const long i = @index(Global, Linear);
    y[i] = HALF(x, lo, i) + HALF(x, hi, i + off);
}
"""

VARIADIC = """
#define AT(a, ...) a[__VA_ARGS__]
#define ADD(a, ...) (a + __VA_ARGS__)
@kernel void variadic(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    y[i] = ADD(AT(x, i), AT(x, i + off));
}
"""

CONDITIONAL = """
#define WIDTH {{ W }}
#if WIDTH > 1 && defined(WIDTH)
#define AT(a, i) a[(i) * WIDTH]
#elif defined(NARROW)
#define AT(a, i) a[i]
#else
#define AT(a, i) no_such_name
#endif
#ifndef NOBODY_DEFINES_THIS
#define STEP 1
#else
#define STEP no_such_step
#endif
#if UNKNOWN_IS_ZERO
#define BAD nothing_here
#endif
@kernel void conditional(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    y[i] = AT(x, i + off) * STEP;
}
"""

CASES = {
    # name: (source, Jinja constants, an offset that overruns, (the array, its argument),
    #        the index work-item w faults at)
    "stringify": (STRINGIFY, {}, 1, ("x", 1), lambda w: w + 1),
    "paste": (PASTE, {}, 2, ("x_hi", 2), lambda w: w + 2),
    "variadic": (VARIADIC, {}, 3, ("x", 1), lambda w: w + 3),
    "conditional": (CONDITIONAL, {"W": 2}, 1, ("x", 1), lambda w: 2 * (w + 1)),
}


def _run(path: Any, name: str, off: int) -> tuple[list, np.ndarray]:
    source, constants = CASES[name][:2]
    k = pk.kernel(source, debug=True, **constants)
    x = np.arange(8, dtype=np.float32)
    arrays = [np.zeros(8 if name != "conditional" else 4, np.float32), x]
    if name == "paste":
        arrays.append(10 * x)
    ndrange = len(arrays[0])
    return path.run(k, *arrays, np.int64(off), ndrange=ndrange), x


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_correct_kernel_using_each_kind_of_macro_runs_in_debug_mode(path: Any,
                                                                       name: str) -> None:
    after, x = _run(path, name, 0)
    want = {
        "stringify": x + 2,  # sizeof("x") is 2
        "paste": x + 10 * x,
        "variadic": 2 * x,
        "conditional": x[::2][:4],  # WIDTH is 2, STEP is 1
    }[name]
    assert list(after[0]) == list(want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_overrun_inside_each_kind_of_macro_is_reported_at_the_use(path: Any,
                                                                     name: str) -> None:
    source = CASES[name][0]
    off, (array, argument), index = CASES[name][2:]
    with pytest.raises(pk.KernelFaultError) as info:
        _run(path, name, off)
    err = info.value
    assert (err.parameter, err.argument) == (array, argument)
    assert err.extent == 8
    assert err.work_item is not None and err.index == index(err.work_item[0])
    assert err.index >= 8
    assert err.lineno == line_of(source, "y[i] = ")


IN_HELPER = """
#ifndef STRIDE
#define STRIDE 1
#endif
#define GET(a, ...) a[(__VA_ARGS__) * STRIDE]
float get(const float* p, long k) { return GET(p, k); }
@kernel void in_helper(float* y, const float* x, const long off) {
    const long i = @index(Global, Linear);
    y[i] = get(x, i + off) + get(x, i);
}
"""


def test_a_conditional_variadic_macro_in_a_helper_is_checked_at_the_helpers_line(
        path: Any) -> None:
    k = pk.kernel(IN_HELPER, debug=True)
    x = np.arange(8, dtype=np.float32)
    assert list(path.run(k, np.zeros(8, np.float32), x, np.int64(0), ndrange=8)[0]) == \
        list(2 * x)
    with pytest.raises(pk.KernelFaultError) as info:
        path.run(k, np.zeros(8, np.float32), x, np.int64(2), ndrange=8)
    err = info.value
    assert (err.parameter, err.argument, err.extent) == ("x", 1, 8)
    assert err.work_item in {(6,), (7,)} and err.index == err.work_item[0] + 2
    assert err.lineno == line_of(IN_HELPER, "return GET(p, k)")


TARGET_ONLY = """
#ifdef __OPENCL_VERSION__
#define AT(a, i) a[i]
#else
#define AT(a, i) a[i]
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
#define TWICE(v) (2.0f * (v))
#else
#define TWICE(v) (v + v)
#endif
@kernel void target_only(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = TWICE(AT(x, i));
}
"""


def test_a_condition_only_the_target_knows_leaves_its_macros_to_the_compiler(
        path: Any) -> None:
    text = pk.kernel(TARGET_ONLY, debug=True).render("c")
    assert "= TWICE(AT(x, i));" in text  # not guessed: as written
    x = np.arange(8, dtype=np.float32)
    after = path.run(pk.kernel(TARGET_ONLY, debug=True), np.zeros(8, np.float32), x,
                     ndrange=8)
    assert list(after[0]) == list(2 * x)


@pytest.mark.parametrize(("source", "want"), [
    ("#define S(a) #a\nS( p  +  q )", '"p + q"'),
    ('#define S(a) #a\nS("a\\n" \'"\')', r'"\"a\\n\" '"'\\\"'\""),
    ("#define CAT(a, b) a ## b\nCAT(x, 1)[CAT(,k)]", "x1 [ k ]"),
    ("#define CAT(a, b) a ## b\nCAT(+, +)", "+ +".replace(" ", "")),
    ("#define CAT(a, b) a ## b\n#define xy 5\nCAT(x, y)", "5"),
    ("#define CAT(a, b) a ## b\nCAT(x, y z)", "xy z"),
    ("#define CAT(a, b) a ## b\nCAT(1, +)", "CAT ( 1 , + )"),  # no one token: left
    ("#define V(f, ...) f(__VA_ARGS__)\nV(g)", "g ( )"),
    ("#define F G\n#define G(a) a[0]\nF(y) + F", "y [ 0 ] + G"),  # rescanned with the rest
    ("#define F(a) a\n#define G(a) F(a)+1\nG(F)(2)", "F + 1 ( 2 )"),  # F: not again
    ("#define V(f, ...) f(__VA_ARGS__)\nV(g, a, (b, c))", "g ( a , ( b , c ) )"),
    ("#define V(f, ...) f(0, ## __VA_ARGS__)\nV(g) V(h, 1)", "g ( 0 ) h ( 0 , 1 )"),
    ("#define V(f, args...) f(args)\nV(g, 1, 2)", "g ( 1 , 2 )"),
    ("#define V(...) __VA_OPT__(x)\nV(1)", "V ( 1 )"),  # __VA_OPT__: left as written
    ("#define N 3\n#if N * 2 == 6 && !defined(M)\n#define R 1\n#else\n#define R 2\n#endif\nR",
     "1"),
    ("#if 0\n#define R 1\n#elif 1 ? 0 : 1\n#define R 2\n#elif (7 >> 1) == 3\n#define R 3\n"
     "#else\n#define R 4\n#endif\nR", "3"),
    ("#ifdef A\n#define R 1\n#endif\n#ifndef A\n#define Q 2\n#endif\nR Q", "R 2"),
    ("#define A\n#ifdef A\n#define R 1\n#endif\n#undef A\n#ifdef A\n#define R 2\n#endif\nR",
     "1"),
    ("#if 0\n#if __CUDA_ARCH__\n#define R 1\n#endif\n#else\n#define R 2\n#endif\nR", "2"),
    ("#if 0x10 == 16 && 010 == 8 && 1u == 1UL && '\\0' == 0 && -1 < 0\n#define R 1\n"
     "#endif\nR", "1"),
    ("#if __OPENCL_VERSION__ >= 200\n#define R 1\n#else\n#define R 2\n#endif\nR", "R"),
    ("#if 0 && __CUDA_ARCH__\n#define R 1\n#else\n#define R 2\n#endif\nR", "2"),
    ("#if cl_khr_fp64 || _OPENMP || PK_SIMD_MATH\n#define R 1\n#endif\nR", "R"),
    ("#ifdef __CUDA_ARCH__\n#define R 1\n#endif\n#define R2 R\nR2", "R"),
    ("#if 1 / 0\n#define R 1\n#endif\nR", "R"),  # the compiler's error, not a guess
    ("#if defined(global) || FLT_MAX > 0 || float4\n#define R 1\n#endif\nR", "R"),
    # A macro debug mode does not expand is not 0 in a condition: the compiler's.
    ("#define B __VA_OPT__(x)\n#if B\n#define R 1\n#else\n#define R 2\n#endif\nR", "R"),
    ("#define P / ## /\n#if P\n#define R 1\n#else\n#define R 2\n#endif\nR", "R"),
    ("#if -1 < 0u\n#define R 1\n#else\n#define R 2\n#endif\nR", "2"),  # unsigned, as in C
    ("#if 1\n#define R 1\n#else\n#define R 2\n#endif\n#if R == 1\n#define Q 7\n#endif\nQ",
     "7"),
])
def test_how_debug_mode_reads_a_macro(source: str, want: str) -> None:
    assert expanded(source) == want


def test_every_macro_a_targets_prelude_defines_is_left_to_the_compiler() -> None:
    """A name a prelude in templates/ defines on some target is one an #if in the source
    cannot decide for every target: TARGET_NAMES must cover it."""
    import re
    from pathlib import Path

    from portakern.syntax.macro_conditions import TARGET_NAMES

    root = Path(__file__).resolve().parent.parent / "templates"
    names = {m for f in root.rglob("*.j2")
             for m in re.findall(r"^\s*#\s*define\s+([A-Za-z_]\w*)",
                                 f.read_text(encoding="utf-8"), re.MULTILINE)}
    assert len(names) > 20
    assert sorted(n for n in names if not TARGET_NAMES.match(n)) == []


def test_code_in_a_branch_the_source_turns_off_is_left_as_written() -> None:
    assert expanded("#define A 1\n#if 0\nA\n#else\nA A\n#endif\nA") == "A 1 1 1"


def test_without_debug_mode_every_kind_of_macro_renders_as_written() -> None:
    for name, (source, constants, *_) in CASES.items():
        text = pk.kernel(source, debug=False, **constants).render("c")
        assert "pk_dbg" not in text, name
        use = next(line for line in source.split("\n") if "y[i] = " in line).strip()
        assert use in text, name
