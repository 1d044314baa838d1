"""Fuzzing the front end: malformed sources and constants never crash portakern.

Random mutations of valid kernels (tokens deleted, duplicated, swapped; random
``@`` constructs, braces and Jinja tags inserted) and random constants go through
parsing, lowering and rendering for every target (no compiler runs). The only
acceptable outcomes are success or a :class:`PortakernError`; an ``IndexError``,
``AttributeError``, ``AssertionError``, ``RecursionError`` or a raw Jinja error
is a bug in portakern.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import portakern as pk
from portakern.errors import PortakernError

SEEDS = [
    """\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
""",
    """\
#define WG 64
float sq(float v) { return v * v; }
@kernel void red(float* out, const float* x) {
    @localmem float buf[WG];
    @uniform const long n = @ndrange(0);
    @private float acc[2];
    const long i = @index(Global, Linear);
    const long li = @index(Local, Linear);
    float v = x[i], w;
    buf[li] = sq(v);
    @synchronize();
    for (long s = WG / 2; s > 0; s >>= 1) {
        if (li < s && i + s < n) buf[li] += buf[li + s];
        @synchronize();
    }
    if (li == 0) @atomic_add(&out[0], buf[0]);
}
""",
    """\
#define TILE {{ TILE }}
@kernel void mm(T* c, const T* a, const T* b, long n) {
    auto [row, col] = @index(Global, NTuple);
    auto [lr, lc] = @index(Local, NTuple);
    @localmem T ta[TILE][TILE];
    T acc = 0, z;
    for (long t = 0; t < n; t += TILE) {
        ta[lr][lc] = a[row * n + t + lc];
        @synchronize();
        for (int k = 0; k < TILE; ++k) acc += ta[lr][k] * b[k];
        @synchronize;
    }
    { @synchronize(); }
    do { @synchronize(); } while (0);
    c[row * n + col] = acc;
    return;
}
""",
    """\
int helper(int* p) { return @atomic_add(p, 1); }
@kernel(unsafe_indices) void h(int* counts, const uint8_t* img, bool flag, half s) {
    auto [i, j, k] = @index(Group, NTuple);
    if (flag) { @atomic_max(&counts[img[i]], 1); } else @atomic_cas(&counts[0], 0, 1);
    switch (i) { case 0: helper(counts); break; default: ; }
    long m = @groupsize() + @groupsize(2) + @ndrange();
{% for q in range(N) %}    counts[{{ q }}] = {{ q }}; /* {{ target }} */
{% endfor %}
{% if target == "cuda" %}    counts[0] = 1;{% endif %}
}
""",
]

TOKEN_RE = re.compile(r"\s+|\w+|@\w+|\{\{|\}\}|\{%|%\}|\{#|#\}|/\*|\*/|//|.", re.S)
TOKENS = [t for seed in SEEDS for t in TOKEN_RE.findall(seed)]
INSERTS = [
    "@index", "@index(", "@index(Global, NTuple)", "@index(Local, Linear)", "@index(Group,)",
    "@synchronize();", "@synchronize", "@localmem", "@localmem float q[n];", "@private",
    "@uniform", "@kernel", "@kernel(unsafe_indices)", "@kernel(bogus)", "@ndrange(", "@ndrange(9)",
    "@groupsize(7)", "@groupsize(-1)", "@atomic_add(", "@atomic_nope", "@foo", "@", "@@",
    "{", "}", "(", ")", "[", "]", ";", ",", "=", "==", "*", "**", "&", "#", "#define X @index",
    "#if 0", "auto", "auto [", "auto [a, b] =", "auto [] =", "return", "return;", "if", "else",
    "for (;;)", "do", "while (1)", "switch", "case 1:", "const", "void", "T", "T*", "long",
    "{{", "}}", "{%", "%}", "{% if", "{% endif %}", "{% for x in y %}", "{{ UNDEFINED }}",
    "{{ target }}", "{#", "#}", "/*", "*/", "//", "'", '"', "\\", "\n", "0x", "1e", "1.5f",
    "$", "`", "\t", "\x00", "\u00e9", "pk_active", "pk_n0",
]

SETTINGS = settings(max_examples=250, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CONSTANT_VALUES = st.one_of(
    st.integers(-5, 40), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.sampled_from(["float", "double", "int", "uint8_t", "half", "bool"]),
    st.text(max_size=12), st.sampled_from([np.float32, np.dtype("int64"), np.int8(3),
                                           np.float64(2.5), np.bool_(True), None, [1], (2,),
                                           {"a": 1}, object(), b"x", complex(1, 2)]),
)


def exercise(source: str, constants: dict) -> None:
    """Parse, lower and render for every target and rank; only PortakernError may escape."""
    try:
        k = pk.kernel(source, **constants)
        _ = repr(k)
        bindings = {tv: "float" for tv in k.type_vars}
        for target in ("opencl", "cuda", "metal"):
            for ndim in (None, 0, 1, 2, 3):
                try:
                    k.render(target, ndim=ndim, **bindings)
                except PortakernError:
                    pass
    except PortakernError as exc:
        assert str(exc)  # every error says something
        if isinstance(exc, pk.KernelSyntaxError):
            assert exc.lineno is not None and exc.lineno >= 1
            assert isinstance(exc, SyntaxError)


@st.composite
def mutated(draw):
    seed = draw(st.sampled_from(SEEDS))
    toks = TOKEN_RE.findall(seed)
    for _ in range(draw(st.integers(1, 5))):
        op = draw(st.sampled_from(["delete", "duplicate", "insert", "insert", "swap", "copy"]))
        pos = draw(st.integers(0, max(len(toks) - 1, 0)))
        if op == "delete" and toks:
            span = draw(st.integers(1, 4))
            del toks[pos:pos + span]
        elif op == "duplicate" and toks:
            toks.insert(pos, toks[pos])
        elif op == "insert":
            toks.insert(pos, draw(st.sampled_from(INSERTS)))
        elif op == "swap" and len(toks) > 1:
            other = draw(st.integers(0, len(toks) - 1))
            toks[pos], toks[other] = toks[other], toks[pos]
        elif op == "copy":
            toks.insert(pos, draw(st.sampled_from(TOKENS)))
    return "".join(toks)


@SETTINGS
@given(mutated(), st.sampled_from([{"N": 2, "TILE": 8}, {"N": 0, "TILE": 1, "T": "double"},
                                   {}]))
def test_mutated_sources_raise_only_portakern_errors(source, constants):
    exercise(source, constants)


@SETTINGS
@given(st.sampled_from(SEEDS),
       st.dictionaries(st.sampled_from(["N", "TILE", "T", "target", "X", "1bad", "WG"]),
                       CONSTANT_VALUES, max_size=4))
def test_random_constants_raise_only_portakern_errors(source, constants):
    if isinstance(constants.get("N"), int) and not isinstance(constants.get("N"), bool):
        constants["N"] = max(-3, min(constants["N"], 8))  # range(N) is the user's loop
    exercise(source, constants)


WORDS = list("@{}()[];,=*&#/\"'\\\n abTxy0123456789%") + [
    "@kernel", "@index", "@synchronize", "void", "auto", "{{", "{%", "Global", "Linear"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=60).map("".join))
def test_random_text_raises_only_portakern_errors(text):
    exercise(text, {})
    exercise("@kernel void f(float* y) {\n" + text + "\n}\n", {})


@pytest.mark.slow(reason="nesting thousands deep through every stage: recursion depth is "
                  "left to the full run; the tests above feed the same stages random and "
                  "mutated sources every run")
def test_deep_nesting_does_not_recurse():
    body = "{" * 500 + "}" * 500  # Jinja reads '{{'
    exercise(f"@kernel void f(float* y) {{ {body} }}", {})
    body = "{ " * 600 + "@synchronize();" + " }" * 600
    exercise(f"@kernel void f(float* y) {{ {body} }}", {})
    body = "(" * 3000 + "1" + ")" * 3000
    exercise(f"@kernel void f(float* y) {{ y[0] = {body}; @synchronize(); }}", {})
    exercise("{% if 1 %}" * 50 + "@kernel void f() {}" + "{% endif %}" * 50, {})
