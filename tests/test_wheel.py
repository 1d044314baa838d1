"""The built wheel ships ``templates/`` (and the examples) inside the package.

The wheel is built from this checkout with ``python -m build --wheel`` (without
build isolation when hatchling is installed, so the test works offline), then
inspected; a subprocess imports portakern from the unpacked wheel and renders a
kernel for every target, so a missing template would fail here and not on a
user's machine.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("opencl", "cuda", "metal")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if importlib.util.find_spec("build") is None:
        pytest.skip("the 'build' package is not installed (pip install build)")
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.insert(4, "--no-isolation")  # offline, and seconds faster
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=out)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = list(out.glob("portakern-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_contains_templates(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for target in TARGETS:
        for part in ("module.j2", "macros.j2", "prelude.j2"):
            assert f"portakern/templates/{target}/{part}" in names, (target, part)
    assert "portakern/py.typed" in names
    # Every template of the checkout is shipped.
    for path in (ROOT / "templates").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(ROOT / "templates").as_posix()
            assert f"portakern/templates/{rel}" in names, rel


def test_wheel_contains_examples(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    examples = ROOT / "portakern" / "examples"
    if not examples.is_dir():
        pytest.skip("no portakern/examples in this checkout")
    for pk_file in examples.glob("*.pk"):
        assert f"portakern/examples/{pk_file.name}" in names, pk_file.name


def test_unpacked_wheel_renders_every_target(wheel, tmp_path):
    zipfile.ZipFile(wheel).extractall(tmp_path)
    script = """
import sys
import portakern as pk
from portakern.render import emit as render
here = sys.argv[1]
assert pk.__file__.startswith(here), pk.__file__
assert str(render.template_dirs()[-1]).startswith(here), render.template_dirs()
k = pk.kernel("@kernel void f(T* y, const T* x) { y[@index(Global, Linear)] = x[0]; }")
for target in ("opencl", "cuda", "metal"):
    assert "void f(" in k.render(target, T="float")
print("ok")
"""
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("ok")


def test_wheel_contains_the_gpu_stand_ins(wheel):
    # The stand-ins compile these headers at run time: without them they cannot build.
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (ROOT / "portakern" / "emulate" / "include").iterdir():
        assert f"portakern/emulate/include/{path.name}" in names, path.name


def test_wheel_metadata_names_the_extras(wheel):
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    assert "Name: portakern" in text
    for extra in ("cuda", "metal", "dask", "plot", "test"):
        assert f"Provides-Extra: {extra}" in text, extra
    assert "native C++/OpenMP" in text  # the description says what CPU() does


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_runs_the_demo(wheel, tmp_path):
    """The README's main job from the built wheel: a new venv, the wheel, portakern demo.

    The venv sees this interpreter's packages for the dependencies (the test stays
    offline); portakern itself comes from the wheel, not from the checkout.
    """
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=300)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    pip = subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q", "--no-deps",
                          str(wheel)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PORTAKERN_CACHE_DIR"] = str(tmp_path / "cache")
    where = subprocess.run([str(bindir / "python"), "-c",
                            "import portakern; print(portakern.__file__)"],
                           capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert str(venv) in where.stdout, where.stdout + where.stderr
    demo = subprocess.run([str(bindir / "portakern"), "demo", "--small", "--only",
                           "saxpy,histogram", "--repeats", "1"],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "2/2 examples agree with NumPy" in demo.stdout


def test_sdist_builds_and_carries_the_sources(tmp_path):
    if importlib.util.find_spec("build") is None:
        pytest.skip("the 'build' package is not installed (pip install build)")
    cmd = [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.insert(4, "--no-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,) = tmp_path.glob("portakern-*.tar.gz")
    import tarfile

    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for wanted in ("pyproject.toml", "README.md", "templates/cuda/macros.j2",
                   "portakern/emulate/include/pk_emu_runtime.cpp", "docs/emulation.md"):
        assert wanted in names, wanted
