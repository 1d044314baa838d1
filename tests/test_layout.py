"""The package's layout: the pipeline's layers import downward only, one version."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import portakern

PACKAGE = Path(portakern.__file__).resolve().parent

#: The front end: source -> parse -> analyse -> lower -> render. None of it may import
#: the layers above (kernel objects, launching, backends, caches, plugins).
FRONT_END = ("errors", "types", "targets", "language", "parts", "convergence", "lower",
             "render", "version")
ABOVE = ("kernels", "launch", "arguments", "resolve", "registry", "cache", "backends",
         "dask", "cli", "bench", "timing")


def _imports(path: Path, package: str) -> set[str]:
    """Every portakern module ``path`` imports, at any depth (deferred imports too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = [f"{module}.{a.name}" for a in node.names]
            out.update(n for n in names if _exists(n)) if any(map(_exists, names)) \
                else out.add(module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m == "portakern" or m.startswith("portakern.")}


def _exists(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel).is_dir()


def test_the_front_end_never_imports_the_layers_above_it():
    offenders = []
    for name in FRONT_END:
        for imported in _imports(PACKAGE / f"{name}.py", "portakern"):
            top = imported.split(".")[1] if imported.count(".") else ""
            if top in ABOVE or imported == "portakern":
                offenders.append(f"portakern.{name} imports {imported}")
    assert not offenders, offenders


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
