"""What ``import portakern`` and a warm launch load (DESIGN section 4, startup).

Each check runs in a new interpreter and reads its ``sys.modules``, as
array-api-compat's tests do: Jinja, the lowering and PyOpenCL load only when a
kernel is rendered, lowered, or run on PoCL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from portakern.source.template import KernelTemplate, _user_environment

HEAVY = ("jinja2", "pyopencl", "portakern.lower.lowering", "cupy", "mlx", "torch", "numba", "dask")


def _loaded(code: str, env: dict[str, str] | None = None) -> list[str]:
    """The modules of HEAVY that ``code`` left in a new interpreter's ``sys.modules``."""
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=300, env={**os.environ, **(env or {})})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_no_jinja_lowering_or_array_library():
    assert _loaded("import portakern") == []


def test_cpu_synchronize_starts_nothing():
    assert _loaded("import portakern as pk\npk.CPU().synchronize()") == []


def test_kernel_without_jinja_syntax_needs_no_jinja():
    code = ("import portakern as pk\n"
            "k = pk.kernel('@kernel void f(float* y) { y[@index(Global, Linear)] = 1; }')\n"
            "assert k.name == 'f'")
    assert "jinja2" not in _loaded(code)


def test_launch_from_the_disk_cache_needs_no_jinja_nor_pyopencl(tmp_path):
    from portakern.backends.native import NativeCPU

    if not NativeCPU.available():
        pytest.skip(f"no native CPU path here: {NativeCPU.available().reason}")
    code = ("import numpy as np\nimport portakern as pk\n"
            "k = pk.kernel('@kernel void f(float* y, const float* x) {\\n"
            "    const long i = @index(Global, Linear);\\n    y[i] = 2 * x[i];\\n}')\n"
            "y, x = np.zeros(100, np.float32), np.arange(100, dtype=np.float32)\n"
            "k(y, x, ndrange=y.shape)\n"
            "assert (y == 2 * x).all()\n"
            "pk.CPU().synchronize()")
    env = {"PORTAKERN_CACHE_DIR": str(tmp_path / "cache"), "PORTAKERN_CPU": "auto",
           "PORTAKERN_CACHE": "1"}
    first = _loaded(code, env)
    assert "jinja2" in first and "pyopencl" not in first  # rendered once, natively
    second = _loaded(code, env)
    assert "jinja2" not in second and "pyopencl" not in second


@pytest.mark.parametrize("source", [
    "@kernel void f(float* y) {\n    y[0] = 1;\n}\n",
    "@kernel void f(float* y) {\r\n    y[0] = 1;\r\n}\r\n",
    "// a lone\rcarriage return\n@kernel void f(float* y) { y[0] = 1; }",
    "@kernel void f(float* y) { y[0] = 1; }\n\n\n",
    "/* { % not a tag, nor { # this */ @kernel void f(float* y) { y[0] = 1; }",
])
def test_plain_source_renders_as_jinja_would(source):
    """A source with no Jinja syntax skips Jinja, with the same text and line map."""
    plain = KernelTemplate(source, "k.pk")
    assert plain._template is None
    via_jinja = KernelTemplate(source + "{# #}", "k.pk")  # a comment: Jinja renders it
    assert via_jinja._template is not None
    got, want = plain.render("opencl", {}), via_jinja.render("opencl", {})
    assert got.rendered == want.rendered
    assert got.line_of == want.line_of
    assert _user_environment() is _user_environment()
