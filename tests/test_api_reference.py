"""The API reference builds from the docstrings, with the command docs/api.md gives, and
documents every public name."""

from __future__ import annotations

import inspect
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import portakern as pk

ROOT = Path(__file__).resolve().parent.parent
API_DOC = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")

pytest.importorskip("pdoc", reason="the API reference needs pdoc (the test extra)")


def _build_command() -> list[str]:
    (line,) = [ln for ln in API_DOC.splitlines() if ln.startswith("python -m pdoc ")]
    words = shlex.split(line)
    assert words[-2:] == ["-o", "site/"], "docs/api.md builds into site/"
    return words[:-2]


def _public_members(obj: type) -> list[str]:
    """Public methods and properties of a class, inherited ones included."""
    names = []
    for name in dir(obj):
        if name.startswith("_"):
            continue
        static = inspect.getattr_static(obj, name)
        if isinstance(static, (property, classmethod, staticmethod)) or inspect.isroutine(
                getattr(obj, name)):
            names.append(name)
    return names


def _doc(obj: type, name: str) -> str | None:
    static = inspect.getattr_static(obj, name)
    return inspect.getdoc(static if isinstance(static, property) else getattr(obj, name))


def test_every_public_name_has_a_docstring():
    missing = []
    for name in pk.__all__:
        if name.startswith("__"):
            continue
        obj = getattr(pk, name)
        if not (inspect.getdoc(obj) or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            missing += [f"{name}.{m}" for m in _public_members(obj)
                        if not (_doc(obj, m) or "").strip()]
    assert not missing, f"public names without a docstring: {missing}"


@pytest.mark.slow
def test_api_reference_builds_and_documents_every_public_name(tmp_path: Path):
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, *_build_command()[1:], "-o", str(site)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    # pdoc warns (and leaves a name out) when something in __all__ does not resolve.
    assert "Warn" not in proc.stderr, proc.stderr
    assert (site / "index.html").is_file()
    page = (site / "portakern.html").read_text(encoding="utf-8")
    sections = dict(re.findall(r'<section id="([^"]+)">(.*?)</section>', page, re.DOTALL))
    for name in pk.__all__:
        assert name in sections, f"{name} is not in the API reference"
        if not name.startswith("__"):
            assert 'class="docstring"' in sections[name], f"{name} has no docstring there"
    # Methods are documented too (a sample of the ones users call most).
    for anchor in ("Kernel.specialize", "Kernel.render", "Kernel.from_file",
                   "Backend.synchronize", "Backend.zeros"):
        assert f'id="{anchor}"' in page, anchor
    testing = (site / "portakern" / "testing" / "conformance.html").read_text(encoding="utf-8")
    assert 'id="ConformanceSuite"' in testing
