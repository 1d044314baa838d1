"""The native path's compiler: the toolchain probe, and building and loading kernels.

Split from :mod:`portakern.backends.native`, below it and below
:mod:`.native_args` and :mod:`.native_runtime`, which all use the compiled-kernel
record (:class:`Compiled`) and :func:`build`. The compiler is ``$CXX`` or the first
of ``g++``, ``clang++``, ``c++`` found on ``PATH`` that builds a probe with
``-fopenmp``; shared objects are kept in the disk cache, keyed by the source, the
compiler, its flags and the host CPU (they are built with ``-march=native``).
"""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import sys
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from .. import log
from ..errors import CompilationError
from ..subprocesses import fork_safe_lock, run, scratch_dir

__all__ = ["BUILD_LOCK", "KERNEL_ENTRY_POINTS", "Compiled", "Toolchain", "build",
           "find_toolchain", "loaded_libraries"]


_FLAGS = ("-O3", "-march=native", "-std=c++17", "-fPIC", "-shared", "-fopenmp",
          "-fno-math-errno", "-fno-strict-aliasing", "-fvisibility=hidden")
# fork: OpenMP's threads are released before (_pause_openmp_at_fork), so a child's first
# parallel loop starts a new pool; these locks are unlocked in the child (fork_safe_lock).
BUILD_LOCK = fork_safe_lock()
#: One lock per library being built (weak: gone with the last build of that key).
_BUILD_LOCKS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
#: What every kernel library defines (templates/c/module.j2); a library without them is
#: not one of portakern's kernels, and is refused.
KERNEL_ENTRY_POINTS = ("pk_launch", "pk_attach")
#: Seconds a compile may take before it is stopped (a hung compiler must not hang a launch).
_COMPILE_TIMEOUT = 600


class Toolchain:
    """The compiler the native path uses, and what a probe found it can do."""

    def __init__(self, compiler: str, simd_math: bool, float16: bool, identity: str) -> None:
        self.compiler = compiler
        self.simd_math = simd_math
        self.float16 = float16
        #: What a shared object depends on besides its source (cache key).
        self.identity = identity

    def flags(self) -> list[str]:
        out = list(_FLAGS)
        if self.simd_math:
            out.append("-DPK_SIMD_MATH")
        if self.is_gcc:
            # GCC turns a division by a zero it can see (x / 0) into a trap instruction
            # (SIGILL); kept a division, the runtime gives it the defined result.
            out.append("-fno-isolate-erroneous-paths-dereference")
        return out

    @property
    def is_gcc(self) -> bool:
        name = os.path.basename(os.path.realpath(self.compiler))
        return "clang" not in name and ("g++" in name or "gcc" in name)

    def libs(self) -> list[str]:
        return ["-lmvec", "-lm"] if self.simd_math else ["-lm"]

    def __repr__(self) -> str:
        return (f"<Toolchain {self.compiler} simd_math={self.simd_math} "
                f"float16={self.float16}>")



_PROBE = r"""
#include <math.h>
#if defined(PK_SIMD_MATH)
extern "C" {
#pragma omp declare simd notinbranch
float sinf(float);
#pragma omp declare simd notinbranch
double exp(double);
#pragma omp declare simd notinbranch
float powf(float, float);
}
#endif
#if defined(PK_HALF)
extern "C" _Float16 pk_half(_Float16 a) { return a + (_Float16)1; }
#endif
extern "C" __attribute__((visibility("default"))) int pk_probe(float* y, double* z, int n) {
    int t = 0;
#pragma omp parallel for reduction(+:t)
    for (int g = 0; g < 4; ++g) t += 1;
#pragma omp simd
    for (int i = 0; i < n; ++i) { y[i] = sinf(y[i]) + powf(y[i], 2.0f); z[i] = exp(z[i]); }
    return t;
}
"""


def _cpu_identity() -> str:
    """The host CPU as -march=native sees it: model and feature flags."""
    parts = [platform.machine()]
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(("model name", "flags", "Features", "CPU part")):
                    parts.append(line.strip())
                elif not line.strip():
                    break  # the first processor's block is enough
    except OSError:
        pass
    return "\n".join(parts)


def _candidates() -> list[str]:
    env = os.environ.get("CXX", "").strip()
    names = [env] if env else []
    names += ["g++", "clang++", "c++"]
    found = []
    for n in names:
        path = shutil.which(n)
        if path and path not in found:
            found.append(path)
    return found


def _compiler_identity(path: str) -> str:
    try:
        st = os.stat(path)
        real = os.path.realpath(path)
        st_real = os.stat(real)
    except OSError:
        return path
    return f"{path} {real} {st.st_size} {st_real.st_size} {int(st_real.st_mtime)}"


def _probe(compiler: str, defines: list[str], libs: list[str]) -> bool:
    import subprocess

    # A compiler that outlives this process is killed, and the folder is removed (or swept).
    with scratch_dir("probe") as tmp:
        src = Path(tmp) / "probe.cpp"
        out = Path(tmp) / "probe.so"
        src.write_text(_PROBE, encoding="utf-8")
        cmd = [compiler, *_FLAGS, *defines, str(src), "-o", str(out), *libs]
        try:
            done = run(cmd, timeout=120, text=False, tmpdir=tmp)
        except (OSError, subprocess.SubprocessError):
            return False
        if done.returncode != 0:
            return False
        try:
            lib = ctypes.CDLL(str(out))
            y = np.linspace(0, 1, 16, dtype=np.float32)
            z = np.zeros(16)
            got = lib.pk_probe(y.ctypes.data_as(ctypes.c_void_p),
                               z.ctypes.data_as(ctypes.c_void_p), ctypes.c_int(16))
        except OSError:
            return False
        return got == 4 and bool(np.allclose(z, 1.0))


def find_toolchain() -> Toolchain | str:
    from ..cache import store as cache

    candidates = _candidates()
    if not candidates:
        return ("no C++ compiler found (set CXX, or install g++: "
                "'apt-get install g++' / 'xcode-select --install')")
    store = cache.default_cache()
    cpu = _cpu_identity()
    for compiler in candidates:
        ident = _compiler_identity(compiler)
        key = cache.make_key("native-probe", ident, _FLAGS, cpu, sys.platform)
        known = store.get("native-probe", key, ident)
        if known is None:
            if not _probe(compiler, [], ["-lm"]):
                store.put("native-probe", key, b"none", ident)
                continue
            simd = _probe(compiler, ["-DPK_SIMD_MATH"], ["-lmvec", "-lm"])
            half = _probe(compiler, ["-DPK_HALF"], ["-lm"])
            known = b"ok" + (b" simd" if simd else b"") + (b" half" if half else b"")
            store.put("native-probe", key, known, ident)
        if known == b"none":
            continue
        words = known.split()
        return Toolchain(compiler, b"simd" in words, b"half" in words,
                         f"{ident}\n{cpu}\n{sys.platform}")
    return (f"no C++ compiler here builds with OpenMP (tried {', '.join(candidates)}); "
            "install g++ (with libgomp), or set CXX")


#: OpenMP worker threads' stack, unless the user set OMP_STACKSIZE: a barrier kernel
#: keeps each work-item's variables and the group's @localmem on its thread's stack.
_OMP_STACKSIZE = "64M"
#: How OpenMP's idle threads wait, unless the user set OMP_WAIT_POLICY: libgomp's default
#: spins for a while after each parallel loop, which on a machine whose cores are busy
#: costs every launch with more than one workgroup a scheduler time slice (1-16 ms)
#: instead of tens of microseconds; passive threads sleep at once (docs/performance.md).
_OMP_WAIT_POLICY = "passive"


def _omp_environment() -> None:
    """Set the OpenMP variables portakern relies on, before the OpenMP runtime loads.

    libgomp reads its environment once, when it is loaded: with the toolchain probe or
    the first kernel, both later than this module's import. A process that loaded
    OpenMP earlier (through another library) keeps that library's settings.
    """
    os.environ.setdefault("OMP_STACKSIZE", _OMP_STACKSIZE)
    os.environ.setdefault("OMP_WAIT_POLICY", _OMP_WAIT_POLICY)


_omp_environment()


class Compiled:
    """A loaded shared object's ``pk_launch``, with the last launch's argument block.

    The library is closed (``dlclose``) when the last reference to it goes (this
    record, and any function of it a launcher keeps): a long-running process that
    builds many specialisations does not keep every one mapped (docs/cpu.md).
    """

    __slots__ = ("fn", "lib", "source", "nparams", "scalars", "last", "geoms", "geom", "warm",
                 "path", "name", "arrays", "bound", "sized", "__weakref__")

    def __init__(self, lib: Any, rendered: Any, path: str,
                 entry_points: tuple[str, ...] = KERNEL_ENTRY_POINTS) -> None:
        from ..types import TYPE_DTYPES

        missing = [n for n in entry_points if not hasattr(lib, n)]
        if missing:
            raise AttributeError(
                f"{path} is not a portakern library for {rendered.name!r}: it defines no "
                f"{', '.join(missing)}")
        _close_when_unreachable(lib)
        _pause_openmp_at_fork(lib)
        self.lib = lib
        self.fn = lib.pk_launch
        self.fn.restype = ctypes.c_int  # 1: stopped between workgroups by Ctrl-C
        self.fn.argtypes = None
        self.source = rendered.source
        self.path = path
        bindings = dict(rendered.bindings)
        self.nparams = len(rendered.params)
        self.scalars = [None if p.pointer else TYPE_DTYPES[bindings.get(p.type, p.type)]
                        for p in rendered.params]
        #: The last launch's argument block (:func:`.native_args.argument_block`); replaced, never
        #: written to, when an argument changes (:func:`.native_args.refreshed`).
        self.last: tuple | None = None
        self.geoms: dict[tuple, Any] = {}
        #: The last launch's geometry: (global size, local size, ndrange args, pk_geom).
        self.geom: tuple | None = None
        #: The last launch, for a relaunch with the same objects (see NativeCPU.launch).
        self.warm: tuple | None = None
        self.name = rendered.name
        from .local_sizes import sized_arrays

        #: The @localmem arrays sized at launch (checked per launch: NativeCPU.launch).
        self.sized = sized_arrays(rendered)
        #: The fixed-size arrays the kernel puts on a thread's stack (checked per geometry).
        self.arrays: list = []
        #: The most elements of an array the kernel declares, None if unknown or it
        #: keeps per-item state (the rendering's ``group_bound`` fact): how large a
        #: default group a barrier kernel may get.
        self.bound: int | None = None


#: Kernel libraries loaded and not yet closed (:func:`loaded_libraries`).
_OPEN = [0]


def loaded_libraries() -> int:
    """How many kernel libraries this process has loaded and not closed yet."""
    return _OPEN[0]


def _close_when_unreachable(lib: Any) -> None:
    """``dlclose`` ``lib`` once nothing refers to it (a function taken from it keeps it).

    Not at interpreter exit: the process is going, and a library closed then could
    still be in a thread's stack.
    """
    close = getattr(ctypes, "_dlclose", None)
    if close is None:
        import _ctypes

        close = getattr(_ctypes, "dlclose", None) or getattr(_ctypes, "FreeLibrary", None)
    if close is None:
        return
    with BUILD_LOCK:
        _OPEN[0] += 1
    weakref.finalize(lib, _close, close, lib._handle).atexit = False


def _close(close: Any, handle: int) -> None:
    with BUILD_LOCK:
        _OPEN[0] -= 1
    close(handle)


_FORK_HOOK: list[Any] = []
_OMP_PAUSE_HARD = 2


def _pause_openmp_at_fork(lib: Any) -> None:
    """Release OpenMP's threads before a fork, once per process.

    GCC's libgomp does not survive a fork: a child of a process that has run a
    parallel loop hangs in its first one (``multiprocessing``'s default on Linux).
    ``omp_pause_resource_all(omp_pause_hard)`` (OpenMP 5.0) stops the thread pool
    before the fork; the parent restarts it on its next launch (~0.1 ms).
    """
    if _FORK_HOOK or not hasattr(os, "register_at_fork"):
        return
    with BUILD_LOCK:
        if _FORK_HOOK:
            return
        try:
            pause = lib.omp_pause_resource_all  # found through the object's dependencies
        except AttributeError:
            _FORK_HOOK.append(None)  # an OpenMP runtime without it (LLVM's handles fork)
            return
        pause.restype = ctypes.c_int
        pause.argtypes = [ctypes.c_int]
        _FORK_HOOK.append(pause)
        os.register_at_fork(before=lambda: pause(_OMP_PAUSE_HARD))


def build(toolchain: Toolchain, rendered: Any,
          entry_points: tuple[str, ...] = KERNEL_ENTRY_POINTS) -> Compiled:
    """The shared object of ``rendered``, from the disk cache or compiled.

    A cached entry is used only if it was written for this key and this toolchain
    (:meth:`~portakern.cache.store.DiskCache.get`) and defines ``entry_points``; anything
    else (another kernel's library copied over it, a stale one) is rebuilt.
    """
    from ..cache import store as cache

    # Read by the OpenMP runtime when it is first loaded, with the first kernel.
    os.environ.setdefault("OMP_STACKSIZE", _OMP_STACKSIZE)

    start = log.clock()
    flags = toolchain.flags()
    key = cache.make_key("native", rendered.source, tuple(flags), tuple(toolchain.libs()),
                         toolchain.identity)
    store = cache.default_cache()
    name = f"{key}.so"
    hit = _load(store, name, rendered, toolchain, entry_points)
    log.found("native shared object", hit, start)
    if hit is not None:
        return hit
    with BUILD_LOCK:
        lock = _BUILD_LOCKS.get(key)
        if lock is None:
            lock = _BUILD_LOCKS[key] = fork_safe_lock()
    with lock:
        hit = _load(store, name, rendered, toolchain, entry_points)  # another thread built it
        if hit is not None:
            return hit
        import subprocess

        from ..subprocesses import run, scratch_dir  # looked up here: tests count the runs

        # The compiler and its children run in a process group that dies with this
        # process; their temporaries (TMPDIR) are in the build folder, removed on exit.
        with scratch_dir("build") as tmp:
            src = Path(tmp) / f"{rendered.name}.cpp"
            src.write_text(rendered.source, encoding="utf-8")
            built = Path(tmp) / name
            cmd = [toolchain.compiler, *flags, str(src), "-o", str(built), *toolchain.libs()]
            try:
                done = log.compiling(rendered.name, "c", run, cmd, timeout=_COMPILE_TIMEOUT,
                                     tmpdir=tmp)
            except subprocess.TimeoutExpired as exc:
                raise CompilationError(
                    f"C++ compilation of kernel {rendered.name!r} (CPU, native path) took "
                    f"over {_COMPILE_TIMEOUT} s and was stopped: {' '.join(cmd)}",
                    log="", source=rendered.source, target="c") from exc
            if done.returncode != 0:
                from ..checks.diagnostics import compilation_error

                raise compilation_error(
                    f"C++ compilation of kernel {rendered.name!r} (CPU, native path) failed",
                    done.stderr or done.stdout, rendered, "c")
            # Loaded from the private build folder, before it goes: the mapping
            # outlives the file.
            try:
                compiled = Compiled(ctypes.CDLL(str(built)), rendered, str(built), entry_points)
            except AttributeError as exc:
                raise CompilationError(
                    f"the C++ compilation of kernel {rendered.name!r} (CPU, native path) "
                    f"made a library without portakern's entry points: {exc}",
                    log="", source=rendered.source, target="c") from exc
            # An unwritable cache warns once and keeps the build in memory.
            store.put_library("native", name, built, toolchain.identity)
            return compiled


def _load(store: Any, name: str, rendered: Any, toolchain: Toolchain,
          entry_points: tuple[str, ...]) -> Compiled | None:
    """The cached shared object ``name``, or None (missing, damaged, or not a kernel).

    :meth:`~portakern.cache.store.DiskCache.load_library` checks the entry's digest and
    record (written for this key, by this toolchain) and loads a private copy; a
    library without ``entry_points`` is refused with a :class:`~portakern.cache.store.CacheWarning`,
    dropped, and rebuilt.
    """
    return store.load_library(
        "native", name, lambda lib: Compiled(lib, rendered, f"<cache>/{name}", entry_points),
        identity=toolchain.identity)
