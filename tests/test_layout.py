"""The package's layout: the pipeline's layers import downward only, one version."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import portakern

PACKAGE = Path(portakern.__file__).resolve().parent

#: The pipeline's layers, lowest first (shared/STYLE.md, "The house to move into"): a
#: module may import its own layer and the layers below it, never one above. Each entry
#: is a top-level module or subpackage of portakern; the top package is the face.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ground", ("errors", "types", "targets", "target_facts", "variant", "version",
                "subprocesses", "log", "patterns")),
    ("source", ("source",)),
    ("syntax", ("syntax",)),
    ("analysis", ("analysis",)),
    ("lower", ("lower",)),
    ("render", ("render",)),
    ("cache", ("cache",)),
    ("compile", ("checks",)),
    ("backends", ("backends", "registry")),
    ("launch", ("launch",)),
    ("kernels", ("kernels",)),
    ("blocks", ("blocks",)),
    ("face", ("", "__main__", "dask", "cli", "bench", "testing", "examples", "emulate")),
)
_LAYER_OF = {part: i for i, (_, parts) in enumerate(LAYERS) for part in parts}

#: A string that names a module (``"portakern.backends.cuda"``) or a function in one
#: (``"portakern.checks.cuda:cuda_check_available"``): an import made later through
#: importlib, and counted as one.
_DOTTED_RE = re.compile(r"portakern(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?")


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    assert top in _LAYER_OF, f"{module} is in no layer of LAYERS: add it where it belongs"
    return _LAYER_OF[top]


def test_every_module_is_in_a_layer():
    for name in _modules():
        _layer(name)


def test_no_layer_imports_a_layer_above_it():
    edges = _import_edges(_modules())
    offenders = [
        f"{importer} ({LAYERS[_layer(importer)][0]}) imports {imported} "
        f"({LAYERS[_layer(imported)][0]}), line {line}"
        for importer, out in sorted(edges.items())
        for imported, line in sorted(out.items())
        if _layer(imported) > _layer(importer)]
    assert not offenders, ("a stage imports a later one; pass the value down instead:\n"
                           + "\n".join(offenders))


def test_the_layer_check_counts_imports_through_importlib(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('import importlib\nimportlib.import_module("portakern.cli.main")\n'
                       'TABLE = {"x": "portakern.backends.cuda:CUDA"}\n')
    found = _import_edges({"portakern.errors": planted,
                           "portakern.cli.main": planted, "portakern.backends.cuda": planted})
    assert found["portakern.errors"] == {"portakern.cli.main": 2, "portakern.backends.cuda": 3}


def test_version_agrees_with_pyproject():
    pyproject = (PACKAGE.parent / "pyproject.toml")
    if not pyproject.is_file():
        import pytest

        pytest.skip("installed from a wheel: no pyproject.toml beside the package")
    declared = re.search(r'^version = "([^"]+)"', pyproject.read_text(), re.M)
    assert declared is not None and declared.group(1) == portakern.__version__


def test_kernel_is_the_function_and_no_module_shadows_it():
    import importlib

    assert callable(portakern.kernel) and not isinstance(portakern.kernel, type(portakern))
    module = importlib.import_module("portakern.kernels")
    assert module.Kernel is portakern.Kernel
    import pytest

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("portakern.kernel")


# -- module size, import circles, private names ------------------------------------------
#
# Issue 11's structural criteria, kept: a module stays under ~600 lines, no module imports
# (at module level or inside a function) one that imports it back, and no module reaches
# for another module's ``_private`` names. Each allow-list entry says why it is there; an
# entry that is no longer needed fails the test, so the lists only shrink.

MAX_LINES = 600

#: Modules over MAX_LINES, each with the reason it may be for now.
LONG_MODULES: dict[str, str] = {
}

#: Imports that close a circle, as (importer, imported), each with its reason.
CIRCLE_EDGES: dict[tuple[str, str], str] = {
}

#: (importer, module, name) of private names still used across modules, with the reason.
PRIVATE_USES: dict[tuple[str, str, str], str] = {
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _from_base(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _import_edges(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """importer -> {imported module: line}, for every import at any depth of the module."""
    edges: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        out = edges.setdefault(name, {})
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = []
            if isinstance(node, ast.ImportFrom):
                base = _from_base(node, name, path.name == "__init__.py")
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    found.append(full if full in modules else base)
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and _DOTTED_RE.fullmatch(node.value)):
                found = [node.value.partition(":")[0]]  # importlib.import_module, later
            for target in found:
                if target in modules and target != name:
                    out.setdefault(target, node.lineno)
    return edges


def _a_circle(edges: dict[str, dict[str, int]]) -> list[str] | None:
    """One import circle of ``edges`` (as a path that ends where it starts), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_no_module_is_longer_than_600_lines():
    too_long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES and rel not in LONG_MODULES:
            too_long[rel] = n
    assert not too_long, (f"split these along their concerns (at most {MAX_LINES} lines): "
                          f"{too_long}")
    # Entries are modules being split right now, so one may dip under the limit mid-way;
    # a module that is gone (split, renamed) must leave the list.
    stale = [rel for rel in LONG_MODULES if not (PACKAGE / rel).is_file()]
    assert not stale, f"no such module: remove {stale} from LONG_MODULES"


def test_no_import_circle():
    edges = _import_edges(_modules())
    stale = [e for e in CIRCLE_EDGES if e[1] not in edges.get(e[0], {})]
    assert not stale, f"these imports are gone: remove {stale} from CIRCLE_EDGES"
    for importer, imported in CIRCLE_EDGES:
        del edges[importer][imported]
    circle = _a_circle(edges)
    assert circle is None, (
        "import circle (deferred imports count): "
        + " -> ".join(f"{a} (line {edges[a][b]})" for a, b in zip(circle, circle[1:], strict=False))
        + f" -> {circle[-1]}; pass the value down, or move the shared piece to a lower module")


def test_the_circle_finder_finds_circles():
    # The test above proves nothing if the finder misses circles: plant some.
    assert _a_circle({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) is None
    assert _a_circle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]
    assert _a_circle({"a": {"a2": 1}, "a2": {}, "b": {"b": 1}}) == ["b", "b"]
    # A deferred relative import is found, and resolved against the importer's package.
    node = ast.parse("def f():\n    from ..y import thing\n").body[0].body[0]
    assert _from_base(node, "portakern.sub.x", False) == "portakern.y"
    assert _from_base(node, "portakern.sub", True) == "portakern.y"


def _private_uses(modules: dict[str, Path]) -> dict[tuple[str, str, str], int]:
    """(importer, module, name) -> line, for each ``_name`` of another portakern module
    that a module imports (``from .m import _name``) or reads (``m._name``).

    Private *modules* (``_mlx``, ``_recipes``) are the package's own: importing them is
    not a use of a private name; what is private is the names inside them.
    """
    out: dict[tuple[str, str, str], int] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}  # local name -> portakern module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _from_base(node, name, path.name == "__init__.py")
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in modules:
                        aliases[alias.asname or alias.name] = full
                    elif (base in modules and base != name and alias.name.startswith("_")
                          and not alias.name.startswith("__")):
                        out.setdefault((name, base, alias.name), node.lineno)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and f"{aliases[node.value.id]}.{node.attr}" not in modules):
                out.setdefault((name, aliases[node.value.id], node.attr), node.lineno)
    return out


def test_no_module_uses_another_modules_private_names():
    uses = _private_uses(_modules())
    found = {k: v for k, v in uses.items() if k not in PRIVATE_USES}
    assert not found, ("make these public (or pass the value down): "
                       + ", ".join(f"{m} line {n} uses {o}.{p}" for (m, o, p), n in found.items()))
    stale = [k for k in PRIVATE_USES if k not in uses]
    assert not stale, f"no longer used: remove {stale} from PRIVATE_USES"


def test_the_private_name_check_finds_both_spellings(tmp_path):
    pkg = tmp_path / "portakern"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("_hidden = _other = 1\n")
    (pkg / "_inner.py").write_text("shown = 1\n")
    (pkg / "up.py").write_text("from .low import _hidden\nfrom . import low, _inner\n"
                               "def f():\n    return low._other + _inner.shown\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, pkg
    try:
        uses = _private_uses(_modules())
    finally:
        PACKAGE = saved
    assert uses == {("portakern.up", "portakern.low", "_hidden"): 1,
                    ("portakern.up", "portakern.low", "_other"): 4}


#: Modules outside backends/ and templates/ that still compare target names, and why.
TARGET_BRANCHES: dict[str, str] = {
}


def _target_branches(path: Path, names: set[str]) -> list[int]:
    """Lines of ``path`` comparing a target or dialect with a target's name."""
    source = path.read_text(encoding="utf-8")
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Compare) and any(
                isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops)):
            continue
        sides = [node.left, *node.comparators]
        named = any(isinstance(c, ast.Constant) and c.value in names
                    for side in sides for c in ast.walk(side))
        text = " ".join(ast.get_source_segment(source, side) or "" for side in sides)
        if named and ("target" in text or "dialect" in text):
            lines.append(node.lineno)
    return lines


def test_no_target_name_is_branched_on_outside_the_backends_and_the_table():
    from portakern.targets import builtin_targets

    names = set(builtin_targets())
    found, allowed = {}, set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("backends/") or rel == "targets.py":
            continue
        lines = _target_branches(path, names)
        if lines and rel in TARGET_BRANCHES:
            allowed.add(rel)
        elif lines:
            found[rel] = lines
    assert not found, ("ask portakern.targets.target_info(...) for a fact, or put the "
                       f"decision in the backend, instead of comparing target names: {found}")
    assert allowed == set(TARGET_BRANCHES), \
        f"no longer needed: remove {set(TARGET_BRANCHES) - allowed} from TARGET_BRANCHES"


def test_the_target_branch_check_sees_a_comparison(tmp_path):
    planted = tmp_path / "m.py"
    planted.write_text("def f(backend, kind):\n"
                       "    if backend.target == 'cuda':\n        return 1\n"
                       "    if kind == 'c':\n        return 2\n"  # a dtype kind, not a target
                       "    return dialect in ('metal', 'opencl')\n")
    assert _target_branches(planted, {"cuda", "metal", "opencl", "c"}) == [2, 6]
