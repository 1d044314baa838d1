"""Shared fixtures: one ``backend`` fixture parametrized over every built-in backend.

Backends that cannot run here (CUDA without an NVIDIA GPU, Metal off a Mac)
are skipped with the reason ``available()`` gives, never silently passed.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern import registry

#: Built-in backends, with the marker that selects or deselects each (-m "not gpu").
BACKENDS = [
    pytest.param("CPU", id="CPU"),
    pytest.param("OpenCL", id="OpenCL"),
    pytest.param("CUDA", id="CUDA", marks=pytest.mark.gpu),
    pytest.param("Metal", id="Metal", marks=pytest.mark.metal),
]


def _real_cuda() -> bool:
    from portakern.backends.cuda import CUDA

    return bool(CUDA.available())


#: A real NVIDIA GPU with CuPy; without one, CUDA tests run on the CPU stand-in.
REAL_CUDA = _real_cuda()


def _real_metal() -> bool:
    from portakern.backends.metal import Metal

    return bool(Metal.available())


#: A Mac with Metal and MLX; elsewhere Metal tests run on the CPU stand-in.
REAL_METAL = _real_metal()


def _standin(request: pytest.FixtureRequest, marker: str, real: bool, name: str,
             device: str) -> Any:
    """Install the stand-in ``portakern.emulate.<name>`` for a test marked ``marker``."""
    if real or request.node.get_closest_marker(marker) is None:
        yield None
        return
    if name == "mlx":
        pytest.importorskip("mlx.core", reason="the Metal stand-in runs under MLX (mlx[cpu])")
    standin = importlib.import_module(f"portakern.emulate.{name}")
    ok, why = standin.available()
    if not ok:
        pytest.skip(f"no {device}, and {why}")
    with standin.installed() as module:
        yield module


@pytest.fixture(autouse=True)
def _metal_standin(request: pytest.FixtureRequest) -> Any:
    """Tests marked ``metal`` run on the Metal stand-in where there is no Mac.

    The stand-in (portakern.emulate.mlx) replaces ``mx.fast.metal_kernel``: it builds the
    kernel MLX would build and runs the MSL on CPU threads; see docs/emulation.md.
    """
    yield from _standin(request, "metal", REAL_METAL, "mlx", "Metal device")


@pytest.fixture(autouse=True)
def _cuda_standin(request: pytest.FixtureRequest) -> Any:
    """Tests marked ``gpu`` run on the CUDA stand-in where there is no real GPU.

    The stand-in (portakern.emulate.cupy) compiles the CUDA rendering for CPU threads
    and plays CuPy's part under ``pk.CUDA``; see docs/emulation.md.
    """
    yield from _standin(request, "gpu", REAL_CUDA, "cupy", "CUDA device")


#: Compile checks run on every example in every dtype and rank. The everyday run
#: (-m "not slow") keeps each example's first variant; the other variants are marked slow.
EVERY_VARIANT = ("tests/test_metal.py::test_example_metal_sources_pass_the_check",
                 "tests/test_metal.py::test_example_mlx_cuda_sources_compile",
                 "tests/test_cuda.py::test_example_compiles_to_ptx")
#: nvcc on the golden CUDA renderings: an example's rendering is compiled in the
#: everyday run by NVRTC (test_cuda.py::test_example_compiles_to_ptx).
GOLDEN_NVCC = "tests/test_golden.py::test_cuda_renderings_compile_nvcc"


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark slow the variants that repeat a check the everyday run already makes."""
    seen: set[tuple[str, Any]] = set()
    for item in items:
        test, _, param = item.nodeid.partition("[")
        callspec = getattr(item, "callspec", None)
        if test in EVERY_VARIANT and callspec is not None:
            key = (test, callspec.params.get("name"))
            if key in seen:
                item.add_marker(pytest.mark.slow(
                    reason="another dtype or rank of an example whose first variant "
                           "is checked in the everyday run"))
            seen.add(key)
        elif test == GOLDEN_NVCC and param.startswith("example_"):
            item.add_marker(pytest.mark.slow(
                reason="nvcc on an example's rendering; NVRTC compiles the same "
                       "rendering in test_cuda.py::test_example_compiles_to_ptx"))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Any:
    """A default instance of each built-in backend that can run here."""
    name = request.param
    status = registry.backend_status(name)
    if not status:
        pytest.skip(f"{name} backend unavailable: {status.reason}")
    return registry.backend_by_name(name)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder for this test, used by the default cache, on the default path."""
    d = tmp_path / "pkcache"
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(d))
    monkeypatch.delenv("PORTAKERN_CACHE", raising=False)
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    return d


@pytest.fixture
def clean_registry() -> Any:
    """Restore the backend registry, the template path and resolution cache afterwards."""
    from portakern.launch import resolve
    from portakern.render import emit as render

    saved = {name: getattr(registry, name).copy() for name in
             ("_RECORDS", "_TYPES", "_TYPE_OBJECTS", "_EP_RECORDS", "_EP_TYPES", "_EP_CLASHES")}
    ep_loaded = registry._EP_LOADED
    dirs = list(render._EXTRA_DIRS)
    yield registry
    for name, value in saved.items():
        table = getattr(registry, name)
        table.clear()
        table.update(value)
    registry._EP_LOADED = ep_loaded
    render._EXTRA_DIRS[:] = dirs
    render._ENV = None
    resolve.clear_resolution_cache()


# -- documentation examples ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def _doc_blocks(name: str) -> list[tuple[str, str]]:
    """``(language, text)`` of each fenced block of ``docs/<name>``."""
    blocks, lang, current = [], None, []
    for line in (ROOT / "docs" / name).read_text().splitlines():
        stripped = line.strip()
        if lang is None and stripped.startswith("```") and len(stripped) > 3:
            lang, current = stripped[3:], []
        elif lang is not None and stripped == "```":
            blocks.append((lang, "\n".join(current)))
            lang = None
        elif lang is not None:
            current.append(line)
    return blocks


def _run_doc(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Write the blocks that start with a file name, then run the other Python blocks."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    ran = 0
    try:
        for lang, text in _doc_blocks(name):
            first = text.splitlines()[0] if text else ""
            path = first.lstrip("/# ").strip()
            if first.startswith(("# ", "// ")) and "/" in path and " " not in path:
                (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / path).write_text(text + "\n")
                init = tmp_path / path.split("/")[0] / "__init__.py"
                if not init.exists():
                    init.write_text("")
            elif lang == "python":
                exec(compile(text, f"docs/{name}", "exec"), namespace)  # noqa: S102
                ran += 1
    finally:
        for module in set(sys.modules) - before:
            if module.split(".")[0] in {"mylib", "boxlib"}:
                del sys.modules[module]
    assert ran, f"docs/{name} has no Python example"


@pytest.fixture
def run_doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run the examples of a page of docs/, as the reader would, in a temporary folder."""
    return lambda name: _run_doc(name, tmp_path, monkeypatch)


def hammer_threads(kernel: Any, n: int = 8, size: int = 4096, repeats: int = 5) -> None:
    """``n`` threads launch a cold saxpy ``kernel`` at once, ``repeats`` times each.

    Thread ``i`` adds ``i * x`` to its own array each time; asserts no thread
    failed and every array holds ``1 + repeats * i * x``.
    """
    import threading

    import numpy as np

    barrier = threading.Barrier(n)
    errors: list[BaseException] = []
    outs = [np.ones(size, np.float32) for _ in range(n)]
    x = np.arange(size, dtype=np.float32)

    def work(y: np.ndarray, a: float) -> None:
        try:
            barrier.wait()
            for _ in range(repeats):
                kernel(y, x, np.float32(a), ndrange=y.shape)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(y, i)) for i, y in enumerate(outs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, y in enumerate(outs):
        np.testing.assert_array_equal(y, 1 + repeats * i * x)


def unique_saxpy() -> str:
    """A saxpy source no earlier test or process has cached.

    A comment does not change the program, but it changes the source and so every
    cache key: the test starts cold.
    """
    import uuid

    return (f"// {uuid.uuid4().hex}\n@kernel void saxpy(T* y, const T* x, T a) {{\n"
            f"    const long i = @index(Global, Linear);\n    y[i] = a * x[i] + y[i];\n}}\n")


class LaunchPath:
    """A backend of one of the four launch paths, and the arrays a run left (``after``)."""

    def __init__(self, backend: Any, where: str) -> None:
        self.backend, self.where = backend, where

    def run(self, kernel: pk.Kernel, *args: Any, **sizes: Any) -> list:
        b = self.backend
        dev = [b.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
               for a in args]
        try:
            kernel(b)(*dev, **sizes)
        finally:
            b.synchronize()
            self.after = [np.asarray(b.to_host(d)) if isinstance(a, np.ndarray) else None
                          for a, d in zip(args, dev, strict=True)]
        return self.after


@pytest.fixture(params=[
    "native",
    "pocl",
    pytest.param("cuda", marks=pytest.mark.gpu),
    pytest.param("metal", marks=pytest.mark.metal),
])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> LaunchPath:
    """The CPU's native path, PoCL, and the CUDA and Metal stand-ins (marked ``gpu`` /
    ``metal``); test_debug.py has its own, which also takes a workgroup size."""
    where = request.param
    if where in ("native", "pocl"):
        monkeypatch.setenv("PORTAKERN_CPU", where if where == "native" else "opencl")
        if where == "native":
            from portakern.backends.native import NativeCPU

            if not NativeCPU.available():
                pytest.skip(f"no native CPU path here: {NativeCPU.available().reason}")
        backend: Any = pk.CPU()
    else:
        backend = pk.CUDA() if where == "cuda" else pk.Metal()
    status = type(backend).available()
    if not status:
        pytest.skip(f"{where}: {status.reason}")
    return LaunchPath(backend, where)
