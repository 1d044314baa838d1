"""``mypy --strict`` on a module that uses portakern as a library's author does.

tests/typing/user_module.py uses ``pk.kernel``, ``pk.kernel.from_file`` and
``from_resource``, ``specialize``, both launch forms, the launch handle, ``pk.timed()``
and ``pk.CUDA``; it must type-check under ``--strict`` with portakern's own annotations
(``py.typed``), and it must run.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

USER_MODULE = Path(__file__).resolve().parent / "typing" / "user_module.py"

pytest.importorskip("mypy", reason="the typing check needs mypy (the test extra)")


def _mypy(path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    # From a scratch folder, as a user's project: portakern is found as an installed
    # package (its py.typed), not as source in the current folder.
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(cwd / ".mypy_cache"), str(path)],
        cwd=cwd, capture_output=True, text=True, timeout=600)


def test_portakern_ships_its_annotations():
    spec = importlib.util.find_spec("portakern")
    assert spec is not None and spec.origin is not None
    assert (Path(spec.origin).parent / "py.typed").is_file()


@pytest.mark.slow
def test_user_module_passes_mypy_strict(tmp_path: Path):
    proc = _mypy(USER_MODULE, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


@pytest.mark.slow
def test_mypy_sees_portakern_types(tmp_path: Path):
    """The check has teeth: misuses of portakern's API are errors, not ``Any``."""
    bad = tmp_path / "bad_user.py"
    bad.write_text(
        "import portakern as pk\n"
        "k = pk.kernel.from_fil('x.pk')\n"                      # misspelt
        "launcher: pk.Launcher = pk.kernel('src')(1, 2, ndrange=4)\n"  # a Launch, not a Launcher
        "n: int = pk.CUDA.available()\n"                        # an Availability
        "s: str = pk.kernel('src').specialize(T='float')\n", encoding="utf-8")
    proc = _mypy(bad, tmp_path)
    assert proc.returncode == 1, proc.stdout
    for line in (2, 3, 4, 5):
        assert f"bad_user.py:{line}: error" in proc.stdout, proc.stdout


def test_user_module_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    spec = importlib.util.spec_from_file_location("user_module", USER_MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    assert "saxpy" in capsys.readouterr().out
