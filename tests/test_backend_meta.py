"""Backends read facts beside the rendered source, never the generated text (DESIGN section 7)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import portakern as pk
from portakern.backends.cuda import contract_options, nvrtc_options
from portakern.cache.store import _decode_rendered, _encode_rendered

BACKENDS = Path(pk.__file__).resolve().parent / "backends"

#: String methods and ``re`` functions that read text: applied to a rendering's source
#: in a backend they re-find what the stages before it knew.
_READERS = {"find", "rfind", "index", "rindex", "count", "split", "rsplit", "splitlines",
            "startswith", "endswith", "partition", "rpartition", "replace", "strip",
            "search", "match", "fullmatch", "findall", "finditer", "sub", "subn"}
#: Helpers that rewrite generated text (they belong to render/).
_REWRITERS = {"rename_identifiers", "mlx_renames"}
#: (file, function) allowed to read a source's text; add one only with a reason.
ALLOWED: set[tuple[str, str]] = set()


def _source_reads(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents: dict[ast.AST, ast.AST] = {}
    functions: dict[ast.AST, str] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[child] = node.name
            elif node in functions:
                functions[child] = functions[node]
    found = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom):
            found += [f"{where} imports {a.name}" for a in node.names if a.name in _REWRITERS]
        if not (isinstance(node, ast.Attribute) and node.attr == "source"):
            continue
        if (path.name, functions.get(node, "")) in ALLOWED:
            continue
        up = parents.get(node)
        if isinstance(up, ast.Compare) and any(
                isinstance(op, (ast.In, ast.NotIn)) for op in up.ops):
            found.append(f"{where} tests `... in {ast.unparse(node)}`")
        elif isinstance(up, ast.Attribute) and up.attr in _READERS:
            found.append(f"{where} calls {ast.unparse(up)}()")
        elif (isinstance(up, ast.Call) and node in up.args
              and isinstance(up.func, (ast.Attribute, ast.Name))
              and (up.func.attr if isinstance(up.func, ast.Attribute) else up.func.id)
              in _READERS | _REWRITERS):
            found.append(f"{where} passes {ast.unparse(node)} to {ast.unparse(up.func)}")
    return found


def test_no_backend_reads_the_generated_source():
    files = sorted(BACKENDS.glob("*.py"))
    assert len(files) > 5 and any(f.name == "cuda.py" for f in files)
    found = [hit for f in files for hit in _source_reads(f)]
    assert not found, ("a backend reads the rendered text; carry the fact in "
                       "RenderedKernel.meta instead (render/emit.py):\n" + "\n".join(found))


def test_the_check_sees_a_regex_over_a_source(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import re\n"
                   "from ..target_facts import rename_identifiers\n"
                   "def compile(rendered):\n"
                   "    half = 'cuda_fp16.h' in rendered.source\n"
                   "    m = re.search('x', rendered.source)\n"
                   "    return rendered.source.count('#define'), m, half\n"
                   "def build(rendered, cache):\n"
                   "    return cache.get(rendered.source) or compile(rendered.source)\n")
    found = _source_reads(bad)
    assert len(found) == 4, found
    assert all(":8" not in hit for hit in found)  # a key or the compiler's input is fine


MULADD = """@kernel{{ "(contract=false)" if not CONTRACT else "" }} void muladd(
        T* y, const T* a, const T* b) {
    const long i = @index(Global, Linear);
    y[i] = a[i] * b[i] + y[i];
}"""


@pytest.mark.parametrize("contract", [False, True])
def test_contract_is_a_fact_beside_the_source(contract):
    k = pk.kernel(MULADD, CONTRACT=contract)
    for target in ("cuda", "c", "opencl", "metal"):
        assert k.rendered(target, {"T": "float"}, 1).fact("contract") is contract
    cuda = k.rendered("cuda", {"T": "float"}, 1)
    assert contract_options(cuda) == (() if contract else ("--fmad=false",))
    assert ("--fmad=false" in nvrtc_options(cuda)) is not contract


def test_half_is_a_fact_and_reaches_the_nvrtc_options(monkeypatch):
    from portakern.backends import cuda as cuda_backend

    k = pk.kernel(MULADD, CONTRACT=True)
    half = k.rendered("cuda", {"T": "half"}, 1)
    single = k.rendered("cuda", {"T": "float"}, 1)
    assert half.fact("uses_half") is True and single.fact("uses_half") is False
    monkeypatch.setattr(cuda_backend, "_fp16_include_dirs", lambda: ("/opt/cuda/include",))
    assert "-I/opt/cuda/include" in nvrtc_options(half)
    assert not any(o.startswith("-I") for o in nvrtc_options(single))


def test_a_helper_that_includes_cuda_fp16_itself_gets_the_headers():
    k = pk.kernel("#include <cuda_fp16.h>\n"
                  "@kernel void f(float* y) { y[@index(Global, Linear)] = 1.0f; }")
    assert k.rendered("cuda", {}, 1).fact("uses_half") is True


SHAPES = """@kernel void shapes(float* y, const float* x, const int* x_shape) {
    const long i = @index(Global, Linear);
    const int pkshape_of_x = 1;
    y[i] = x[i] + (float)x_shape[0] + (float)pkshape_of_x;
}"""


def test_mlx_renames_are_a_fact_found_while_rendering():
    r = pk.kernel(SHAPES).rendered("metal", {}, 1)
    # the new name avoids the kernel's own pkshape_of_x
    assert r.fact("mlx_renames") == (("x_shape", "pkshape_of_x_"),)
    assert "x_shape" in r.source  # the plain rendering keeps the user's names
    back = _decode_rendered(_encode_rendered(r))
    assert back is not None and back.fact("mlx_renames") == r.fact("mlx_renames")
    renamed = r.variant(renames=r.fact("mlx_renames"))
    assert "x_shape" not in renamed.source.replace('"', " ").split()
    assert "pkshape_of_x_[0]" in renamed.source
    assert dict(renamed.extra)["renames"] == (("x_shape", "pkshape_of_x_"),)
    plain = pk.kernel(SHAPES.replace("x_shape", "xs")).rendered("metal", {}, 1)
    assert plain.fact("mlx_renames") == ()
