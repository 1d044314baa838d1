"""Build a GPU rendering into a shared object that runs on the CPU, and launch it.

Both stand-ins (:mod:`portakern.emulate.cupy` and :mod:`portakern.emulate.mlx`)
hand this module the translation units of one kernel: the dialect source with its
device-API header, and a small thunk that unpacks the argument block. The result is
linked with the runtime (``include/pk_emu_runtime.cpp``: threads, barriers, shared
memory) into one shared object, cached on disk by the digest of everything that
went into it, and loaded with :mod:`ctypes`.
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..subprocesses import fork_safe_lock

__all__ = ["INCLUDE", "Unit", "BuildError", "EmulatedLibrary", "build", "compiler_for"]

#: The stand-ins' headers and the runtime source.
INCLUDE = Path(__file__).parent / "include"
_TIMEOUT_S = 300
_LOCK = fork_safe_lock()
_LOADED: dict[str, EmulatedLibrary] = {}


class BuildError(RuntimeError):
    """A translation unit did not compile; ``log`` has the compiler's messages."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


@dataclass(frozen=True)
class Unit:
    """One translation unit: its source, file name, compiler and flags.

    ``rename_bss`` moves the unit's zero-initialised data into the shared-memory
    section (clang's OpenCL mode places ``threadgroup`` variables there).
    """

    source: str
    filename: str
    compiler: str
    flags: tuple[str, ...]
    rename_bss: bool = False


def compiler_for(name: str) -> str | None:
    """The path of ``name`` (``g++``, ``clang``), or None."""
    return shutil.which(name)


def _run(cmd: list[str], what: str) -> None:
    from ..subprocesses import run

    done = run(cmd, timeout=_TIMEOUT_S)
    if done.returncode != 0:
        log = (done.stderr or done.stdout).strip()
        raise BuildError(f"{what} failed:\n{log}", log)


def _identity(compiler: str) -> str:
    from ..subprocesses import run

    done = run([compiler, "--version"], timeout=_TIMEOUT_S)
    return done.stdout.splitlines()[0] if done.stdout else compiler


_IDENTITIES: dict[str, str] = {}


def _key(units: tuple[Unit, ...]) -> str:
    h = hashlib.sha256()
    runtime = (INCLUDE / "pk_emu_runtime.cpp").read_bytes()
    h.update(runtime)
    for header in sorted(INCLUDE.iterdir()):
        h.update(header.name.encode() + b"\0" + header.read_bytes())
    for u in units:
        ident = _IDENTITIES.get(u.compiler)
        if ident is None:
            ident = _IDENTITIES[u.compiler] = _identity(u.compiler)
        for part in (u.source, u.filename, ident, " ".join(u.flags), str(u.rename_bss)):
            data = part.encode()
            h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def build(units: tuple[Unit, ...]) -> EmulatedLibrary:
    """Compile ``units`` with the runtime into a loaded shared object (cached)."""
    from ..cache import store as cache

    key = _key(units)
    hit = _LOADED.get(key)
    if hit is not None:
        return hit
    with _LOCK:
        hit = _LOADED.get(key)
        if hit is not None:
            return hit
        store = cache.default_cache()
        name = f"{key}.so"
        # Digest-checked, loaded from a private copy; damaged or foreign: rebuilt below.
        hit = store.load_library("emulate", name, EmulatedLibrary)
        if hit is None:
            from ..subprocesses import scratch_dir

            with scratch_dir("emu") as tmp:
                built = _link(units, Path(tmp), name)
                store.put_library("emulate", name, built)
                hit = EmulatedLibrary(ctypes.CDLL(str(built)))
        _LOADED[key] = hit
        return hit


def _link(units: tuple[Unit, ...], tmp: Path, name: str) -> Path:
    gxx = compiler_for("g++") or compiler_for("c++")
    if gxx is None:
        raise BuildError("the GPU stand-ins need a C++ compiler (apt-get install g++)", "")
    objects = []
    for n, u in enumerate(units):
        src = tmp / u.filename
        src.write_text(u.source, encoding="utf-8")
        obj = tmp / f"unit{n}.o"
        _run([u.compiler, *u.flags, "-fPIC", "-c", str(src), "-o", str(obj)],
             f"compiling {u.filename}")
        if u.rename_bss:
            _run(["objcopy", "--rename-section", ".bss=pk_shared",
                  str(obj)], "objcopy")
        objects.append(str(obj))
    runtime = _runtime_object(gxx, tmp)
    out = tmp / name
    _run([gxx, "-shared", "-o", str(out), *objects, str(runtime), "-lpthread", "-lm"],
         "linking the stand-in")
    return out


_RUNTIME: dict[str, bytes] = {}


def _runtime_object(gxx: str, tmp: Path) -> Path:
    """The runtime compiled once (per process, and in the cache), copied into ``tmp``."""
    from ..cache import store as cache

    source = (INCLUDE / "pk_emu_runtime.cpp").read_bytes()
    key = hashlib.sha256(source + _identity(gxx).encode()).hexdigest()
    out = tmp / "pk_emu_runtime.o"
    data = _RUNTIME.get(key)
    if data is None:
        # A digest-checked entry; its bytes are written to the private build folder,
        # so the linker reads what was checked.
        data = cache.default_cache().get("emulate", f"runtime-{key}.o")
    if data is None:
        _run([gxx, "-std=c++17", "-O2", "-fPIC", "-c", str(INCLUDE / "pk_emu_runtime.cpp"),
              "-o", str(out)], "compiling the stand-in runtime")
        cache.default_cache().put_library("emulate", f"runtime-{key}.o", out)
        _RUNTIME[key] = out.read_bytes()
        return out
    _RUNTIME[key] = data
    out.write_bytes(data)
    return out


class EmulatedLibrary:
    """A loaded stand-in kernel: launch it over a grid of blocks."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        fn = lib.pk_emu_launch
        fn.argtypes = [ctypes.POINTER(ctypes.c_uint)] * 3 + [
            ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
        fn.restype = ctypes.c_int
        self._launch = fn

    def params(self) -> list[tuple[int, bool]] | None:
        """(byte size, is pointer) of each kernel parameter, if the unit describes them."""
        fn = getattr(self.lib, "pk_emu_params", None)
        if fn is None:
            return None
        sizes, ptrs = (ctypes.c_int * 256)(), (ctypes.c_int * 256)()
        n = fn(sizes, ptrs, 256)
        return [(sizes[i], bool(ptrs[i])) for i in range(n)]

    def launch(self, grid: tuple[int, int, int], block: tuple[int, int, int],
               args: list, kernel: str, limit: tuple[int, int, int] | None = None) -> None:
        """Run one launch; ``args`` are ctypes objects whose addresses form the argv.

        Raises
        ------
        RuntimeError
            The launch faulted (a divergent barrier, a fault reported by the kernel).
        """
        u3 = ctypes.c_uint * 3
        argv = (ctypes.c_void_p * max(len(args), 1))(
            *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        err = ctypes.create_string_buffer(2048)
        rc = self._launch(u3(*grid), u3(*block), u3(*limit) if limit else None, argv,
                          kernel.encode(), err, len(err))
        if rc != 0:
            raise RuntimeError(err.value.decode(errors="replace"))
