"""The README's example runs as written, and the docs it links to exist."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_example_runs_and_computes_saxpy(capsys):
    (block,) = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)
    y, x = scope["y"], scope["x"]
    np.testing.assert_allclose(y, 2.0 * x + 1.0)
    printed = capsys.readouterr().out
    assert 'extern "C" __global__ void saxpy' in printed


def test_readme_links_point_at_existing_docs():
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert links, "the README links into docs/"
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, missing


def test_readme_test_command_is_the_one_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # One-line fenced blocks without a language: the README's commands.
    commands = re.findall(r"^```\n([^`\n]+)\n```$", README, flags=re.MULTILINE)
    assert commands == ["pip install . && portakern demo", "bash .ci/run"]
    assert "`python -m pytest -q`" in README
    assert [line for line in ci.splitlines() if line.startswith("python -m pytest")] == [
        "python -m pytest -q"]
