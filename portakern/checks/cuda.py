"""Compile CUDA C++ to PTX without a GPU, to check rendered CUDA sources.

CuPy's own compile path queries the device, so it fails on a machine without a
driver. NVRTC itself does not need one: this module loads ``libnvrtc`` with
:mod:`ctypes` (from the ``nvidia-cuda-nvrtc`` wheel or a CUDA toolkit) and
compiles in-process. Where no NVRTC library is found it falls back to
``nvcc --ptx``, which needs the toolkit and a host compiler and is several times
slower (a subprocess, and nvcc preprocesses with gcc).

Errors come back as :class:`~portakern.errors.CompilationError` whose message
quotes the user's line (the renderer's ``#line`` directives make NVRTC report
the user's file and line).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from portakern.checks.diagnostics import format_diagnostics, parse_diagnostics
from portakern.errors import BackendUnavailableError, CompilationError
from portakern.subprocesses import run, scratch_dir

__all__ = ["compile_cuda_ptx", "cuda_check_available"]

_INSTALL_HINT = ("pip install nvidia-cuda-nvrtc (NVRTC for CUDA 13; "
                 "nvidia-cuda-nvrtc-cu12 for CUDA 12), or install the CUDA toolkit "
                 "for nvcc")
_ARCH_RE = re.compile(r"(?:compute|sm)_(?P<number>\d+)(?P<suffix>[af]?)")
_NVRTC_SUCCESS = 0
_NVCC_TIMEOUT_S = 300
#: Options of portakern's NVRTC compiles that nvcc does not know (it fails on them): the
#: fallback leaves them out.
_NVRTC_ONLY = frozenset({"--device-as-default-execution-space", "-default-device"})


@dataclass(frozen=True)
class _Nvrtc:
    lib: ctypes.CDLL
    path: str
    version: tuple[int, int]

    def supported_archs(self) -> list[int] | None:
        # nvrtcGetSupportedArchs exists from CUDA 11.2 on.
        try:
            get_num = self.lib.nvrtcGetNumSupportedArchs
            get_archs = self.lib.nvrtcGetSupportedArchs
        except AttributeError:
            return None
        count = ctypes.c_int()
        if get_num(ctypes.byref(count)) != _NVRTC_SUCCESS:
            return None
        archs = (ctypes.c_int * count.value)()
        if get_archs(archs) != _NVRTC_SUCCESS:
            return None
        return list(archs)


def cuda_check_available() -> tuple[bool, str]:
    """Whether :func:`compile_cuda_ptx` can run here.

    Returns
    -------
    tuple of (bool, str)
        ``(True, which compiler will be used)`` or ``(False, why not and what
        to install)``.
    """
    nvrtc = _load_nvrtc()
    if nvrtc is not None:
        major, minor = nvrtc.version
        return True, f"NVRTC {major}.{minor} ({nvrtc.path})"
    nvcc = _find_nvcc()
    if nvcc is not None:
        return True, f"nvcc ({nvcc}); no NVRTC library found"
    return False, f"no CUDA compiler found (neither NVRTC nor nvcc); {_INSTALL_HINT}"


def compile_cuda_ptx(source: str, *, arch: str = "compute_90", name: str = "kernel.cu",
                     options: Sequence[str] = (), include_dirs: Sequence[str] = (),
                     sources: Mapping[str, str] | None = None,
                     compiler: str = "auto") -> str:
    """Compile CUDA C++ to PTX, with NVRTC (preferred) or nvcc.

    Parameters
    ----------
    source : str
        CUDA C++ translation unit; kernels are ``extern "C" __global__``.
    arch : str, optional
        Virtual architecture, ``"compute_90"``; ``"sm_90"`` is taken to mean the
        same since PTX targets virtual architectures.
    name : str, optional
        File name under which ``source`` is compiled and reported.
    options : sequence of str, optional
        Extra compiler options, passed through unchanged (``"-std=c++17"``,
        ``"-DTILE=16"``). Both compilers understand the common ones; NVRTC-only
        options fail under nvcc and vice versa.
    include_dirs : sequence of str, optional
        Searched before the CUDA toolkit's include directory, which is added
        when one is found (NVRTC has no default include path).
    sources : mapping of str to str, optional
        Original text of the files named by ``#line`` directives, so that errors
        quote the user's line. ``source`` itself is always known under ``name``.
    compiler : {"auto", "nvrtc", "nvcc"}, optional
        ``"auto"`` uses NVRTC when its library loads, else nvcc.

    Returns
    -------
    str
        The PTX text.

    Raises
    ------
    CompilationError
        The compiler rejected the source, or cannot target ``arch``.
    BackendUnavailableError
        No usable compiler (of the requested kind) here.
    ValueError
        ``arch`` or ``compiler`` is malformed.
    """
    match = _ARCH_RE.fullmatch(arch)
    if match is None:
        raise ValueError(f"arch must look like 'compute_90' or 'sm_90', got {arch!r}")
    virtual = f"compute_{match.group('number')}{match.group('suffix')}"
    if compiler not in ("auto", "nvrtc", "nvcc"):
        raise ValueError(f"compiler must be 'auto', 'nvrtc' or 'nvcc', got {compiler!r}")
    known = {name: source, **(sources or {})}

    nvrtc = _load_nvrtc() if compiler in ("auto", "nvrtc") else None
    if nvrtc is not None:
        dirs = [*include_dirs, *_cuda_include_dirs()]
        return _compile_nvrtc(nvrtc, source, virtual, name, list(options), dirs, known)
    nvcc = _find_nvcc() if compiler in ("auto", "nvcc") else None
    if nvcc is not None:
        return _compile_nvcc(nvcc, source, virtual, name, list(options),
                             list(include_dirs), known)
    wanted = "NVRTC" if compiler == "nvrtc" else "nvcc" if compiler == "nvcc" else (
        "NVRTC or nvcc")
    raise BackendUnavailableError(f"cannot compile CUDA: no {wanted} found; {_INSTALL_HINT}")


def _compile_nvrtc(nvrtc: _Nvrtc, source: str, arch: str, name: str,
                   options: list[str], include_dirs: list[str],
                   known: Mapping[str, str]) -> str:
    lib = nvrtc.lib
    supported = nvrtc.supported_archs()
    number = int(_ARCH_RE.fullmatch(arch).group("number"))  # type: ignore[union-attr]
    if supported is not None and number not in supported:
        listed = ", ".join(f"compute_{a}" for a in supported)
        major, minor = nvrtc.version
        raise CompilationError(
            f"NVRTC {major}.{minor} cannot target {arch}; it supports {listed}",
            source=source, target="cuda")
    args = [f"--gpu-architecture={arch}", *(f"-I{d}" for d in include_dirs), *options]
    encoded = [a.encode() for a in args]
    program = ctypes.c_void_p()
    _nvrtc_call(lib, "nvrtcCreateProgram", ctypes.byref(program), source.encode(),
                name.encode(), 0, None, None)
    try:
        result = lib.nvrtcCompileProgram(program, len(encoded),
                                         (ctypes.c_char_p * len(encoded))(*encoded))
        log = _nvrtc_string(lib, program, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog")
        if result != _NVRTC_SUCCESS:
            message = (format_diagnostics(parse_diagnostics(log), known)
                       or log.strip() or _nvrtc_error_string(lib, result))
            raise CompilationError(message, log=log, source=source, target="cuda")
        return _nvrtc_string(lib, program, "nvrtcGetPTXSize", "nvrtcGetPTX")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


def _nvrtc_call(lib: ctypes.CDLL, function: str, *args: object) -> None:
    result = getattr(lib, function)(*args)
    if result != _NVRTC_SUCCESS:
        raise CompilationError(f"{function} failed: {_nvrtc_error_string(lib, result)}",
                               target="cuda")


def _nvrtc_string(lib: ctypes.CDLL, program: ctypes.c_void_p, size_function: str,
                  get_function: str) -> str:
    size = ctypes.c_size_t()
    _nvrtc_call(lib, size_function, program, ctypes.byref(size))
    buffer = ctypes.create_string_buffer(size.value)
    _nvrtc_call(lib, get_function, program, buffer)
    # The reported size includes the terminating NUL.
    return buffer.raw[: size.value].rstrip(b"\0").decode("utf-8", errors="replace")


def _nvrtc_error_string(lib: ctypes.CDLL, result: int) -> str:
    text = lib.nvrtcGetErrorString(result)
    return text.decode() if text else f"NVRTC error {result}"


def _compile_nvcc(nvcc: str, source: str, arch: str, name: str, options: list[str],
                  include_dirs: list[str], known: Mapping[str, str]) -> str:
    relative = Path(name)
    if relative.is_absolute() or ".." in relative.parts:
        raise ValueError(f"name must be a relative file name, got {name!r}")
    with scratch_dir("cuda") as tmp:
        path = Path(tmp, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        out = Path(tmp, "portakern-output.ptx")
        command = [nvcc, "--ptx", f"-arch={arch}", *(f"-I{d}" for d in include_dirs),
                   *(o for o in options if o not in _NVRTC_ONLY), "-o", str(out),
                   str(relative)]
        proc = run(command, cwd=tmp, timeout=_NVCC_TIMEOUT_S)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0 or not out.is_file():
            message = format_diagnostics(parse_diagnostics(log), known) or log.strip()
            raise CompilationError(message, log=log, source=source, target="cuda")
        return out.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _load_nvrtc() -> _Nvrtc | None:
    for path in _nvrtc_candidates():
        try:
            lib = ctypes.CDLL(str(path))
        except OSError:
            continue
        if not hasattr(lib, "nvrtcCompileProgram"):
            continue
        _declare_prototypes(lib)
        major, minor = ctypes.c_int(), ctypes.c_int()
        if lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) != _NVRTC_SUCCESS:
            continue
        return _Nvrtc(lib, str(path), (major.value, minor.value))
    return None


def _declare_prototypes(lib: ctypes.CDLL) -> None:
    # Explicit prototypes: without them ctypes passes Python ints as C int,
    # which truncates the 64-bit program handle.
    p, pp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    size_p, int_p = ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)
    strings = ctypes.POINTER(ctypes.c_char_p)
    table = {
        "nvrtcVersion": [int_p, int_p],
        "nvrtcCreateProgram": [pp, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                               strings, strings],
        "nvrtcCompileProgram": [p, ctypes.c_int, strings],
        "nvrtcGetProgramLogSize": [p, size_p],
        "nvrtcGetProgramLog": [p, ctypes.c_char_p],
        "nvrtcGetPTXSize": [p, size_p],
        "nvrtcGetPTX": [p, ctypes.c_char_p],
        "nvrtcDestroyProgram": [pp],
        "nvrtcGetNumSupportedArchs": [int_p],
        "nvrtcGetSupportedArchs": [int_p],
    }
    for function, argtypes in table.items():
        if hasattr(lib, function):
            getattr(lib, function).argtypes = argtypes
            getattr(lib, function).restype = ctypes.c_int
    lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p


def _nvrtc_candidates() -> list[Path]:
    found: list[Path] = []
    # An explicitly chosen toolkit wins, then pip wheels, then the usual
    # toolkit location, then whatever the dynamic loader knows.
    for root in _toolkit_roots(explicit_only=True):
        found += _nvrtc_in(root / "lib64") + _nvrtc_in(root / "lib") + _nvrtc_in(root / "bin")
    for entry in sys.path:
        nvidia = Path(entry or ".", "nvidia")
        if nvidia.is_dir():
            # cu13 wheels install to nvidia/cu13/lib, cu12 ones to
            # nvidia/cuda_nvrtc/lib; newest first.
            for lib_dir in sorted(nvidia.glob("*/lib"), reverse=True):
                found += _nvrtc_in(lib_dir)
            for bin_dir in sorted(nvidia.glob("*/bin"), reverse=True):
                found += _nvrtc_in(bin_dir)
    for root in _toolkit_roots(explicit_only=False):
        found += _nvrtc_in(root / "lib64") + _nvrtc_in(root / "lib") + _nvrtc_in(root / "bin")
    system = ctypes.util.find_library("nvrtc")
    if system:
        found.append(Path(system))
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def _nvrtc_in(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    # libnvrtc.so.13 (Linux) or nvrtc64_130_0.dll (Windows); never the
    # libnvrtc-builtins helper, which is not the API library.
    hits = [*directory.glob("libnvrtc.so*"), *directory.glob("nvrtc64_*.dll")]
    return sorted(hits, key=_version_key, reverse=True)


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path.name))


def _toolkit_roots(*, explicit_only: bool) -> list[Path]:
    if explicit_only:
        names = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME")]
        return [Path(n) for n in names if n]
    return [Path("/usr/local/cuda")]


@functools.lru_cache(maxsize=1)
def _find_nvcc() -> str | None:
    on_path = shutil.which("nvcc")
    if on_path:
        return on_path
    for root in _toolkit_roots(explicit_only=True) + _toolkit_roots(explicit_only=False):
        candidate = root / "bin" / "nvcc"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


@functools.lru_cache(maxsize=1)
def _cuda_include_dirs() -> tuple[str, ...]:
    roots = _toolkit_roots(explicit_only=True)
    nvcc = _find_nvcc()
    if nvcc is not None:
        # /usr/local/bin/nvcc is often a wrapper script; resolve() finds the
        # toolkit only when it is a symlink, so also try the default root.
        roots.append(Path(nvcc).resolve().parent.parent)
    roots += _toolkit_roots(explicit_only=False)
    dirs = [root / "include" for root in roots]
    for entry in sys.path:
        # pip's nvidia-cuda-runtime wheels carry cuda_fp16.h and friends.
        dirs += sorted(Path(entry or ".", "nvidia").glob("*/include"), reverse=True)
    # One toolkit's headers only: mixing two versions breaks includes.
    for directory in dirs:
        if (directory / "cuda_fp16.h").is_file():
            return (str(directory),)
    return ()
