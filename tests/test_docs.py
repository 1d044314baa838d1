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

Every other block runs as written (the convention CONTRIBUTING.md states):
:func:`test_every_block_of_the_page_runs` executes each page's ```python blocks in order,
each in a namespace of its own unless an ``<!-- continues -->`` comment on the line before
its fence makes it continue the block before it; renders every ``@kernel`` of each ```c
block for every target; and parses each ```toml block. A block whose first line names a
file (``// mylib/kernels/scale.pk``, ``# mylib/__init__.py``) is written into the page's
scratch folder first, for the other blocks to load. ``<!-- needs: cuda -->`` (``metal``,
``torch``, ``dask``) skips a block where that is missing, saying so; ``<!-- checked by:
tests/test_x.py -->`` marks an excerpt (refused examples, a loop body) that the named test
builds into kernels and checks.
"""

from __future__ import annotations

import contextlib
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
    # The checkout under test, not whichever portakern is installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
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
    from portakern.bench import command as bench_command
    from portakern.cli import main as cli

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



# -- every block of every page runs ----------------------------------------------------------

_MARKS = re.compile(r"<!--\s*(.*?)\s*-->\s*$")
_FILE_LINE = re.compile(r"(?://|#) ([\w./-]+\.(?:pk|py|toml|cfg))$")
_KERNEL_NAME = re.compile(r"@kernel(?:\([^)]*\))?\s+void\s+(\w+)")
TARGETS = ("opencl", "cuda", "metal", "c")


def _marked_blocks(page: Path) -> list[tuple[str, str, int, dict[str, str]]]:
    """``(language, text, line, marks)`` of every block; marks from the comment above it."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    out = []
    for lang, block, line in _blocks(page):
        marks: dict[str, str] = {}
        above = lines[line - 2] if line >= 2 else ""
        m = _MARKS.match(above.strip())
        if m:
            for item in m.group(1).split(";"):
                key, _, value = item.partition(":")
                marks[key.strip()] = value.strip()
        out.append((lang, block, line, marks))
    return out


def _missing(need: str) -> str | None:
    """Why ``need`` (a ``<!-- needs: ... -->`` word) cannot run here, or None.

    ``cuda`` and ``metal`` run on the CPU stand-ins (docs/emulation.md) where there is no
    GPU or Mac; ``gpu`` needs a real CUDA device (PyTorch's CUDA tensors).
    """
    import portakern as pk

    if need == "gpu":  # PyTorch's CUDA tensors: no stand-in plays their part
        if importlib.util.find_spec("torch") is None:
            return "needs PyTorch with a CUDA GPU"
        import torch

        return None if torch.cuda.is_available() else "needs a CUDA GPU (PyTorch sees none)"
    if need in ("cuda", "metal"):
        real = pk.CUDA.available() if need == "cuda" else pk.Metal.available()
        ok, why = _standin(need).available()
        if real or ok:
            return None
        return f"needs {need.upper() if need == 'cuda' else 'Metal'} or its stand-in: {why}"
    if need in ("torch", "dask", "cupy", "mlx"):
        return None if importlib.util.find_spec(need) else f"needs {need}, not installed"
    raise AssertionError(f"unknown <!-- needs: {need} -->")


def _standin(need: str):
    if need == "cuda":
        from portakern.emulate import cupy as standin
    else:
        from portakern.emulate import mlx as standin
    return standin


def _around(needs: list[str]):
    """The stand-in a chain of blocks runs inside, where the real device is missing."""
    import contextlib

    import portakern as pk

    for need in needs:
        if need == "cuda" and not pk.CUDA.available():
            return _standin("cuda").installed()
        if need == "metal" and not pk.Metal.available():
            return _standin("metal").installed()
    return contextlib.nullcontext()


def _file_name(block: str) -> str | None:
    first = block.splitlines()[0] if block.strip() else ""
    m = _FILE_LINE.match(first.strip())
    return m.group(1) if m else None


def _render_every_kernel(source: str, where: str) -> int:
    import portakern as pk

    names = _KERNEL_NAME.findall(source)
    assert names, f"{where}: a ```c block defines a @kernel (or is marked; see CONTRIBUTING.md)"
    for name in names:
        kernel = pk.kernel(source, name=name)
        bindings = {t: "float" for t in kernel.type_vars}
        for target in TARGETS:
            kernel.render(target, **bindings)
    return len(names)


def _pages() -> list:
    slow = {"dask.md": "starts a dask cluster; tests/test_dask.py runs the page as well",
            "emulation.md": "builds the CUDA stand-in; tests/test_emulate_cuda.py runs it"}
    return [pytest.param(page, id=page.name,
                         marks=[pytest.mark.slow(reason=slow[page.name])]
                         if page.name in slow else [])
            for page in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *DOCS]]


@pytest.mark.parametrize("page", _pages())
def test_every_block_of_the_page_runs(page: Path, tmp_path: Path, monkeypatch, clean_registry,
                                      capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    blocks = _marked_blocks(page)
    for lang, text, _line, _ in blocks:
        name = _file_name(text)
        if name and lang in ("c", "python", "toml"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    before = set(sys.modules)
    skipped: list[str] = []
    ran = 0
    namespace: dict | None = None
    c_source = ""
    chain_skipped = False
    with contextlib.ExitStack() as chain:
        try:
            for lang, text, line, marks in blocks:
                where = f"{page.name}:{line}"
                continues = "continues" in marks
                if "checked by" in marks:
                    test_file = ROOT / marks["checked by"]
                    assert test_file.is_file(), f"{where}: no {marks['checked by']}"
                    assert page.name in test_file.read_text(encoding="utf-8"), \
                        f"{where}: {marks['checked by']} does not read {page.name}"
                    ran += 1
                    continue
                needs = [n.strip() for n in marks.get("needs", "").split(",") if n.strip()]
                why = next(filter(None, map(_missing, needs)), None)
                if continues and chain_skipped:
                    why = why or "continues a block that was skipped"
                if lang == "python" and _file_name(text) is None:
                    if why:
                        # A chain whose first block is skipped is skipped whole; a
                        # skipped block inside a chain leaves the namespace as it was.
                        chain_skipped = chain_skipped if continues else True
                        skipped.append(f"{where} ({why})")
                        continue
                    chain_skipped = chain_skipped and continues
                    if not continues or namespace is None:
                        chain.close()  # the stand-in of the chain before, if any
                        chain.enter_context(_around(needs))
                        namespace = {"__name__": "docs_example"}
                    exec(compile(text, where, "exec"), namespace)  # noqa: S102
                    ran += 1
                elif lang == "c":
                    c_source = c_source + "\n" + text if continues else text
                    if why:
                        skipped.append(f"{where} ({why})")
                        continue
                    ran += _render_every_kernel(c_source, where)
                elif lang == "toml":
                    tomllib.loads(text)
                    ran += 1
                elif lang == "":
                    assert page.name == "README.md", \
                        f"{where}: an untagged block: tag it ```python, ```c, ```text, ..."
        finally:
            for module in set(sys.modules) - before:
                if module.split(".")[0] in {"mylib", "boxlib"}:
                    del sys.modules[module]
    capsys.readouterr()
    if skipped:
        pytest.skip(f"{page.name}: ran {ran} blocks; skipped " + "; ".join(skipped))


# -- docs/portable-kernels.md: the library it describes builds, ships and type-checks --------

def _mylib(tmp_path: Path) -> tuple[Path, list[str]]:
    """The page's files written into ``tmp_path``, and its ```toml blocks."""
    page = ROOT / "docs" / "portable-kernels.md"
    tomls = []
    for lang, text, _, _ in _marked_blocks(page):
        name = _file_name(text)
        if name and name.startswith("mylib/"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text + "\n", encoding="utf-8")
        if lang == "toml" and "[build-system]" in text:
            tomls.append(text)
    assert (tmp_path / "mylib" / "__init__.py").is_file()
    assert {"setuptools.build_meta", "hatchling.build"} <= {
        tomllib.loads(t)["build-system"]["build-backend"] for t in tomls}
    return tmp_path, tomls


def _build_wheel(src: Path, pyproject: str, out: Path) -> Path:
    (src / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    backend = tomllib.loads(pyproject)["build-system"]["build-backend"].split(".")[0]
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed")
    # No build isolation: the backends installed here, no index needed.
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--wheel-dir", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("mylib-*.whl")
    return wheel


@pytest.mark.slow(reason="builds two wheels with pip; tests/test_testing.py runs the page's "
                  "code from the folder")
def test_the_library_of_portable_kernels_ships_its_kernels_in_a_wheel(tmp_path: Path) -> None:
    import shutil as sh
    import zipfile

    src, tomls = _mylib(tmp_path / "src")
    for n, pyproject in enumerate(tomls):
        for junk in ("build", "mylib.egg-info"):
            sh.rmtree(src / junk, ignore_errors=True)
        wheel = _build_wheel(src, pyproject, tmp_path / f"dist{n}")
        assert "mylib/kernels/scale.pk" in zipfile.ZipFile(wheel).namelist(), pyproject
        # Imported from the zipped wheel itself: from_resource reads the file inside it.
        code = ("import numpy as np, mylib\n"
                "y = np.zeros(5, np.float32)\n"
                "mylib.scale(y, np.arange(5, dtype=np.float32), 2.0, 1.0)\n"
                f"assert mylib.__file__.startswith({str(wheel)!r}), mylib.__file__\n"
                "print(y.tolist())\n")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(wheel), str(ROOT)]))
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=600, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stdout.strip() == "[1.0, 3.0, 5.0, 7.0, 9.0]"
    # What the page says of setuptools without package-data: the wheel has no .pk file.
    setuptools_toml = next(t for t in tomls if "setuptools" in t)
    bare = setuptools_toml.split("[tool.setuptools.package-data]")[0]
    sh.rmtree(src / "build", ignore_errors=True)
    sh.rmtree(src / "mylib.egg-info", ignore_errors=True)
    wheel = _build_wheel(src, bare, tmp_path / "dist-bare")
    assert "mylib/kernels/scale.pk" not in zipfile.ZipFile(wheel).namelist()


@pytest.mark.slow(reason="mypy on portakern takes tens of seconds; tests/test_typing.py runs "
                  "mypy --strict on a user module in the everyday run's slow set as well")
def test_the_library_of_portable_kernels_passes_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="the typing check needs mypy (the test extra)")
    src, _ = _mylib(tmp_path)
    # As a library's own project: portakern is found installed (its py.typed), as in
    # tests/test_typing.py, not as source.
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--cache-dir", str(tmp_path / ".mypy_cache"), "-p", "mylib"],
                          cwd=src, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
