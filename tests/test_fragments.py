"""Jinja constants that carry a C expression: ``{{ op | expr }}``, parsed before it is written."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import portakern as pk
from portakern.source.template import ExpressionConstant
from portakern.source.template import KernelTemplate as BareTemplate

APPLY = """\
@kernel void apply(float* y, const float* x, float a) {
    const long i = @index(Global, Linear);
    const float v = x[i];
    y[i] = {{ op | expr }} * 2.0f;
}
"""


def _run(kernel, a=3.0, n=16):
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    kernel(y, x, np.float32(a), ndrange=n)
    return x, y


def test_an_expression_constant_is_written_in_parentheses_and_runs():
    k = pk.kernel(APPLY, op="v + a")
    assert "(v + a) * 2.0f" in k.render("opencl")
    x, y = _run(k)
    np.testing.assert_allclose(y, (x + 3.0) * 2.0)  # the parentheses keep C's precedence


def test_each_constant_is_its_own_kernel():
    x, y1 = _run(pk.kernel(APPLY, op="v * a"))
    _, y2 = _run(pk.kernel(APPLY, op="v - a"))
    np.testing.assert_allclose(y1, x * 3.0 * 2.0)
    np.testing.assert_allclose(y2, (x - 3.0) * 2.0)


def test_a_multi_line_constant_stays_on_the_template_line():
    k = pk.kernel(APPLY, op="v  // the value\n  + a /* and a */")
    text = k.render("c")
    assert "(v + a) * 2.0f" in text
    assert "the value" not in text
    x, y = _run(k)
    np.testing.assert_allclose(y, (x + 3.0) * 2.0)


@pytest.mark.parametrize("text, col, says", [
    ("v; y[0] = 1", 2, "';' cannot appear"),
    ("{ v }", 1, "'{' cannot appear"),
    ("v + (a", 5, "'(' is never closed"),
    ("v + a)", 6, "')' closes nothing"),
    ("x[i)", 4, "')' closes nothing"),
    ("#define Q 1", 1, "preprocessor"),
    ("v + {{ a }}", 5, "Jinja"),
    ("v {% if 1 %}", 3, "Jinja"),
    ("float q = v", 1, "a declaration"),
    ("v +", 1, "not one C expression"),
    ("v $ a", 3, "unexpected character"),
    ("   ", 1, "empty"),
])
def test_what_is_not_one_expression_is_refused_at_the_constants_text(text, col, says):
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.kernel(APPLY, op=text).render("opencl")
    err = info.value
    assert err.filename == "<constant 'op'>"
    assert "constant 'op'" in err.msg and says in err.msg
    assert err.text == text.split("\n")[0] and err.offset == col
    assert str(err).splitlines()[-1] == "    " + " " * (col - 1) + "^"


def test_a_string_constant_without_the_filter_is_refused_naming_it():
    src = APPLY.replace("{{ op | expr }}", "{{ op }}")
    with pytest.raises(pk.KernelSyntaxError, match=r"\{\{ op \| expr \}\}") as info:
        pk.kernel(src, op="v + a").render("c")
    assert info.value.lineno == 4 and info.value.text.strip().startswith("y[i] = {{ op }}")
    assert info.value.offset == info.value.text.index("op") + 1
    # Any other use counts too: a test, a concatenation, a filter on top of it.
    for use in ("{% if op %}v{% endif %}", '{{ op ~ "" }}', "{{ op | upper }}",
                "{% set w = op %}{{ w | expr }}"):
        with pytest.raises(pk.KernelSyntaxError, match="expr filter"):
            pk.kernel(APPLY.replace("{{ op | expr }}", use), op="v").render("c")


def test_type_names_and_numbers_keep_their_meaning():
    src = APPLY.replace("float a)", "{{ T }} a)").replace("{{ op | expr }}", "{{ K | expr }}")
    k = pk.kernel(src, T="float", K=-2)
    assert "(-2) * 2.0f" in k.render("c")
    _, y = _run(k)
    np.testing.assert_allclose(y, -4.0)
    with pytest.raises(pk.KernelTypeError, match="type variable T .*'v \\+ a'"):
        pk.kernel("@kernel void f(T* y) { y[0] = 0; }", T="v + a").render("c")


def test_the_source_stage_alone_refuses_the_filter():
    with pytest.raises(pk.KernelSyntaxError, match="syntax stage"):
        BareTemplate("{{ op | expr }}", "<t>").render("c", {"op": ExpressionConstant("op", "a")})


def test_expression_constants_pickle_and_key_the_caches(tmp_path):
    k = pk.kernel(APPLY, op="v * a")
    assert pickle.loads(pickle.dumps(k)) is k
    assert dict(k.recipe[3])["op"] == ExpressionConstant("op", "v * a")
    # Two processes over one disk cache: each expression renders its own kernel.
    code = ("import numpy as np, portakern as pk, sys\n"
            f"k = pk.kernel({APPLY!r}, op=sys.argv[1])\n"
            "x = np.arange(4, dtype=np.float32); y = np.zeros(4, np.float32)\n"
            "k(y, x, np.float32(3), ndrange=4); print(y.tolist())\n")
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(tmp_path / "cache"))
    outs = [subprocess.run([sys.executable, "-c", code, op], capture_output=True, text=True,
                           check=True, timeout=300, env=env).stdout.strip()
            for op in ("v * a", "v - a", "v * a")]
    x = np.arange(4, dtype=np.float32)
    assert outs[0] == outs[2] == str(((x * 3) * 2).tolist())
    assert outs[1] == str(((x - 3) * 2).tolist())
    assert any((tmp_path / "cache").rglob("*"))


def test_an_unbound_expression_constant_waits_like_any_constant():
    k = pk.kernel(APPLY)
    with pytest.raises(pk.KernelSyntaxError, match="undefined name 'op'"):
        k.render("c")
    x, y = _run(k.specialize(op="a"))
    np.testing.assert_allclose(y, 6.0)
