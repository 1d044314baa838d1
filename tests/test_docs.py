"""The README's example runs as written, the docs it links to exist, and every shell
transcript in docs/ prints what it says.

A ```console block is a transcript: ``$ command`` lines, each followed by what it prints
(stdout and stderr together, as a terminal shows them). :func:`test_console_transcript`
runs each command in a scratch folder holding the page's ``// NAME.pk`` source blocks and
compares, with the normalisation docs/cli.md states: ``...`` stands for any text on a
line, a line of ``...`` alone for any number of lines, a duration for any duration, a run
of spaces for any column padding; ``$?`` is the previous command's exit status. Lines that
the OpenCL driver writes to the terminal itself (PoCL's ``1 error generated.``) are not
portakern's output and are left out. The transcripts were recorded on Linux x86_64 without
a GPU with what ``.ci/run`` installs; elsewhere they are skipped, with the reason.

A ```shell block lists commands to type (installs, GPU-only runs); those are not run, but
every ``portakern`` command in one must parse and every ``pip install "portakern[X]"``
must name an extra ``pyproject.toml`` declares.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))


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


# -- shell transcripts in docs/ --------------------------------------------------------------

_FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_DURATION = r"\d+(?:\.\d+)? (?:ns|us|µs|ms|s)\b"
#: What the OpenCL driver prints on fd 2 by itself when a build fails (not portakern's output).
_DRIVER_NOISE = re.compile(r"^\d+ errors? generated\.$")


def _blocks(page: Path) -> list[tuple[str, str, int]]:
    """``(language, text, line)`` of every fenced block of a page."""
    text = page.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
            for m in _FENCE.finditer(text)]


def _transcripts() -> list:
    return [pytest.param(page, text, id=f"{page.name}:{line}")
            for page in DOCS for lang, text, line in _blocks(page) if lang == "console"]


def _parse_transcript(text: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"a transcript starts with a '$ ' command line, not {line!r}"
            steps[-1][1].append(line)
    return steps


def _pattern(expected: list[str]) -> re.Pattern[str]:
    """The documented normalisation, as one regular expression over the whole output."""
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        pieces = []
        for chunk in line.rstrip().split("..."):
            words = [" +".join(re.escape(w) for w in re.split(r" +", word))
                     for word in re.split(_DURATION, chunk)]
            pieces.append(_DURATION.join(words))
        parts.append(r"[^\n]*?".join(pieces) + r"\n")
    return re.compile("".join(parts))


def _matches(expected: list[str], output: str) -> bool:
    return _pattern(expected).fullmatch(output) is not None


def _clean(output: str) -> str:
    lines = [line.rstrip() for line in output.splitlines()]
    return "".join(line + "\n" for line in lines if not _DRIVER_NOISE.match(line))


def _reference_machine() -> str | None:
    """Why this machine is not the one the transcripts describe, or None."""
    from portakern.checks.cuda import cuda_check_available
    from portakern.checks.metal import metal_check_available

    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        return "the transcripts were recorded on Linux x86_64"
    for tool in ("g++", "clang"):
        if shutil.which(tool) is None:
            return f"the transcripts show {tool}, which is not installed (.ci/run installs it)"
    if importlib.util.find_spec("cupy") is not None:
        return "the transcripts show a machine without CuPy"
    if not cuda_check_available()[0] or not metal_check_available()[0]:
        return "the transcripts show NVRTC and clang's Metal check available"
    return None


def test_normalisation_is_strict_where_the_docs_are():
    assert _matches(["4 checks failed"], "4 checks failed\n")
    assert not _matches(["3 checks failed"], "4 checks failed\n")
    assert _matches(["a  968 us  OK"], "a    1.73 ms  OK\n")
    assert not _matches(["a  968 us  OK"], "a  968 us  FAIL\n")
    assert _matches(["x ... z", "...", "end"], "x y z\n1\n2\nend\n")
    assert _matches(["x", "...", "end"], "x\nend\n")
    assert not _matches(["x", "end"], "x\nextra\nend\n")
    assert _clean("a  \n1 error generated.\nb\n") == "a\nb\n"


@pytest.mark.slow
@pytest.mark.parametrize(("page", "text"), _transcripts())
def test_console_transcript(page: Path, text: str, tmp_path: Path) -> None:
    why = _reference_machine()
    if why:
        pytest.skip(why)
    # The page's kernel files (a ```c block whose first line is `// NAME.pk`).
    for lang, block, _ in _blocks(page):
        first = block.splitlines()[0] if block else ""
        if lang == "c" and re.fullmatch(r"// [\w.-]+\.pk", first):
            (tmp_path / first[3:]).write_text(block, encoding="utf-8")
    env = dict(os.environ, PYTHONUNBUFFERED="1", COLUMNS="100")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    status = 0
    for command, expected in _parse_transcript(text):
        proc = subprocess.run(["bash", "-c", f"(exit {status}); {command}"], cwd=tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=600)
        status = proc.returncode
        got = _clean(proc.stdout)
        if not _matches(expected, got):
            diff = "\n".join(difflib.unified_diff(
                expected, got.splitlines(), "docs", "printed", lineterm=""))
            pytest.fail(f"{page.name}: `{command}` does not print what the docs show "
                        f"(exit status {status}):\n{diff}")


def _extras() -> set[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


def test_every_shell_example_is_tagged_and_checkable():
    """Command blocks say what they are; those not run still name real options and extras."""
    from portakern import cli
    from portakern.bench import command as bench_command

    parser = cli._parser()
    extras = _extras()
    checked = 0
    for page in DOCS:
        for lang, text, line in _blocks(page):
            where = f"{page.name}:{line}"
            commands = [ln.split("  #")[0].strip() for ln in text.splitlines()
                        if ln.strip() and not ln.lstrip().startswith("#")]
            if lang in ("", "text") and any(
                    c.startswith(("$ ", "portakern ", "pip install", "python -m ", "pytest "))
                    for c in commands):
                pytest.fail(f"{where}: a block of commands is tagged ```console (a transcript "
                            f"the tests run) or ```shell (commands to type)")
            if lang not in ("shell", "console"):
                continue
            if lang == "console":
                commands = [c[2:] for c in commands if c.startswith("$ ")]
            for command in commands:
                words = shlex.split(command)
                if words[:1] == ["portakern"] and "missing.pk" not in words:
                    checked += 1
                    try:
                        if words[1:2] == ["bench"]:
                            bench_command.make_parser().parse_args(words[2:])
                        else:
                            parser.parse_args(words[1:])
                    except SystemExit:
                        pytest.fail(f"{where}: `{command}` is not a valid portakern command")
                for extra in re.findall(r"portakern\[([\w,.-]+)\]", command):
                    checked += 1
                    unknown = set(extra.split(",")) - extras - {"."}
                    assert not unknown, f"{where}: no extra {unknown} in pyproject.toml"
                for extra in re.findall(r"\"\.\[([\w,]+)\]\"", command):
                    checked += 1
                    assert set(extra.split(",")) <= extras, f"{where}: {extra}"
    assert checked >= 10, checked
