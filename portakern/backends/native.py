"""``CPU()``'s native path: kernels compiled to C++ with OpenMP by the system compiler.

PoCL runs a kernel's work-items in vectorised loops, but calls the C library's
scalar math per work-item, so a kernel calling ``sin`` or ``exp`` ran 6-17x
slower than NumPy's SIMD loops (docs/performance.md). This path renders the
kernel for the ``c`` target (``templates/c/``): the kernel body becomes an inline
function of one work-item, called from ``pk_launch``, which runs the workgroups
in parallel (``#pragma omp parallel for``) and each group's work-items in a SIMD
loop (``#pragma omp simd``). The math functions are declared with their vector
variants (glibc's libmvec) where a probe found them, so those loops vectorise too.

The work-item loops are clipped to the ndrange, so the kernel is rendered without
its bounds mask (a kernel with ``unsafe_indices`` runs every item of its groups,
as on a GPU). Kernels with ``@synchronize`` or ``@localmem`` are lowered with
``lockstep`` (:func:`portakern.lower.lower_kernel`): their body runs once per group
with a loop over the items between barriers; a ``NativeCPU(lockstep=True)``
launches them over whole groups, masked. :meth:`portakern.backends.opencl.CPU.executor`
decides which kernels come here.

The compiler is ``$CXX`` or the first of ``g++``, ``clang++``, ``c++`` found on
``PATH`` that builds a probe with ``-fopenmp``. Shared objects are kept in the disk
cache (keyed by the source, the compiler, its flags and the host CPU, since they
are built with ``-march=native``).
"""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..errors import BackendUnavailableError, CompilationError
from .base import Availability, Backend, cpu_groups
from .host import NumPyArrays, arg_key, keys_match

__all__ = ["NativeCPU", "native_toolchain"]

_FLAGS = ("-O3", "-march=native", "-std=c++17", "-fPIC", "-shared", "-fopenmp",
          "-fno-math-errno", "-fno-strict-aliasing", "-fvisibility=hidden")
_LOCK = threading.Lock()
_BUILD_LOCKS: dict[str, threading.Lock] = {}

#: The most work-items a workgroup may hold (PoCL's limit, so a launch that works
#: on one CPU path works on the other).
MAX_WORKGROUP = 4096
#: Default workgroup extent along the fastest axis: a unit of parallel work.
_CHUNK = 1024
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
        return out

    def libs(self) -> list[str]:
        return ["-lmvec", "-lm"] if self.simd_math else ["-lm"]

    def __repr__(self) -> str:
        return (f"<Toolchain {self.compiler} simd_math={self.simd_math} "
                f"float16={self.float16}>")


_TOOLCHAIN: list[Toolchain | str] = []

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
    with tempfile.TemporaryDirectory(prefix="portakern-probe-",
                                     ignore_cleanup_errors=True) as tmp:
        src = Path(tmp) / "probe.cpp"
        out = Path(tmp) / "probe.so"
        src.write_text(_PROBE, encoding="utf-8")
        cmd = [compiler, *_FLAGS, *defines, str(src), "-o", str(out), *libs]
        try:
            done = subprocess.run(cmd, capture_output=True, timeout=120, check=False)
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


def native_toolchain() -> Toolchain | str:
    """The toolchain, or a string saying why there is none (probed once, cached on disk)."""
    if _TOOLCHAIN:
        return _TOOLCHAIN[0]
    with _LOCK:
        if not _TOOLCHAIN:
            _TOOLCHAIN.append(_find_toolchain())
    return _TOOLCHAIN[0]


def _find_toolchain() -> Toolchain | str:
    from .. import cache

    candidates = _candidates()
    if not candidates:
        return ("no C++ compiler found (set CXX, or install g++: "
                "'apt-get install g++' / 'xcode-select --install')")
    store = cache.default_cache()
    cpu = _cpu_identity()
    for compiler in candidates:
        ident = _compiler_identity(compiler)
        key = cache.make_key("native-probe", ident, _FLAGS, cpu, sys.platform)
        known = store.get("native-probe", key)
        if known is None:
            if not _probe(compiler, [], ["-lm"]):
                store.put("native-probe", key, b"none")
                continue
            simd = _probe(compiler, ["-DPK_SIMD_MATH"], ["-lmvec", "-lm"])
            half = _probe(compiler, ["-DPK_HALF"], ["-lm"])
            known = b"ok" + (b" simd" if simd else b"") + (b" half" if half else b"")
            store.put("native-probe", key, known)
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


class _Compiled:
    """A loaded shared object's ``pk_launch``, with the last launch's argument block."""

    __slots__ = ("fn", "lib", "source", "nparams", "scalars", "last", "geoms", "path",
                 "__weakref__")

    def __init__(self, lib: Any, rendered: Any, path: str) -> None:
        from ..types import TYPE_DTYPES

        _pause_openmp_at_fork(lib)
        self.lib = lib
        self.fn = lib.pk_launch
        self.fn.restype = None
        self.fn.argtypes = None
        self.source = rendered.source
        self.path = path
        bindings = dict(rendered.bindings)
        self.nparams = len(rendered.params)
        self.scalars = [None if p.pointer else TYPE_DTYPES[bindings.get(p.type, p.type)]
                        for p in rendered.params]
        self.last: tuple | None = None
        self.geoms: dict[tuple, Any] = {}


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
    with _LOCK:
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


def _build(toolchain: Toolchain, rendered: Any) -> _Compiled:
    from .. import cache

    # Read by the OpenMP runtime when it is first loaded, with the first kernel.
    os.environ.setdefault("OMP_STACKSIZE", _OMP_STACKSIZE)

    flags = toolchain.flags()
    key = cache.make_key("native", rendered.source, tuple(flags), tuple(toolchain.libs()),
                         toolchain.identity)
    store = cache.default_cache()
    name = f"{key}.so"
    hit = _load(store.file_path("native", name), rendered)
    if hit is not None:
        return hit
    with _LOCK:
        lock = _BUILD_LOCKS.setdefault(key, threading.Lock())
    with lock:
        hit = _load(store.file_path("native", name), rendered)  # another thread built it
        if hit is not None:
            return hit
        # ignore_cleanup_errors: where a loaded library cannot be deleted (Windows).
        with tempfile.TemporaryDirectory(prefix="portakern-", ignore_cleanup_errors=True) as tmp:
            src = Path(tmp) / f"{rendered.name}.cpp"
            src.write_text(rendered.source, encoding="utf-8")
            built = Path(tmp) / name
            cmd = [toolchain.compiler, *flags, str(src), "-o", str(built), *toolchain.libs()]
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, check=False,
                                      timeout=_COMPILE_TIMEOUT)
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
            # An unwritable cache warns once; builds then stay in temporary folders.
            placed = store.put_file("native", name, built)
            # Loaded before the folder goes: the mapping outlives the file.
            return _Compiled(ctypes.CDLL(str(placed or built)), rendered, str(placed or built))


def _load(path: Path | None, rendered: Any) -> _Compiled | None:
    """The cached shared object at ``path``, or None (missing, torn, or not loadable)."""
    if path is None or not path.is_file():
        return None
    try:
        return _Compiled(ctypes.CDLL(str(path)), rendered, str(path))
    except OSError:
        return None  # rebuilt by the caller, which replaces the file


class NativeCPU(NumPyArrays, Backend):
    """NumPy arrays, run by C++ compiled for this CPU; used by ``CPU()``, not directly.

    It reports itself as ``CPU()``: it is the same backend to the user, and
    ``CPU().executor(kernel)`` decides per kernel which path runs it.
    """

    name: ClassVar[str] = "CPU"
    target: ClassVar[str] = "c"
    synchronous: ClassVar[bool] = True
    def __init__(self, lockstep: bool = False) -> None:
        toolchain = native_toolchain()
        if isinstance(toolchain, str):
            raise BackendUnavailableError(f"CPU native path unavailable: {toolchain}")
        self.toolchain = toolchain
        #: Runs kernels with barriers (lowered into work-item loops, every item of a
        #: group present), rather than elementwise ones.
        self.lockstep = lockstep
        #: Elementwise kernels: the work-item loops stop at the ndrange, so no bounds
        #: mask and any workgroup shape. Barrier kernels run whole groups, masked.
        self.clips_ndrange = not lockstep
        self._programs: dict[str, _Compiled] = {}
        self._failed: dict[str, CompilationError] = {}

    @classmethod
    def available(cls) -> Availability:
        toolchain = native_toolchain()
        if isinstance(toolchain, str):
            return Availability(False, toolchain)
        return Availability(True)

    def __eq__(self, other: object) -> bool:
        return type(other) is NativeCPU

    def __hash__(self) -> int:
        return hash(NativeCPU)

    def __repr__(self) -> str:
        return "CPU()"

    @property
    def cache_key(self) -> Any:
        return ("native", self.toolchain.identity, self.lockstep)

    def compile(self, rendered: Any) -> _Compiled:
        hit = self._programs.get(rendered.source)
        if hit is None:
            failed = self._failed.get(rendered.source)
            if failed is not None:
                raise failed  # the same source fails the same way: no second compile
            try:
                hit = _build(self.toolchain, rendered)
            except CompilationError as exc:
                self._failed[rendered.source] = exc
                raise
            self._programs[rendered.source] = hit
        return hit

    def max_workgroup_size(self, compiled: Any) -> int:
        return MAX_WORKGROUP

    def max_workitem_sizes(self) -> tuple[int, ...]:
        return (MAX_WORKGROUP,) * 3

    def supports(self, feature: str) -> bool:
        if feature == "float16":
            return self.toolchain.float16
        return True

    def default_workgroupsize(self, ndrange: tuple[int, ...], compiled: Any) -> tuple[int, ...]:
        """Rows of up to 1024 items along the fastest axis (barrier kernels: as on PoCL).

        The items of a group run one after another in a SIMD loop; the groups are
        the unit the OpenMP threads share, so a group is a chunk of work, not a
        hardware shape. The loops stop at the ndrange, so no shape needs to tile it.
        """
        if not ndrange:
            return ()
        if self.lockstep:
            # Work-items of a group share @localmem and meet at barriers: the OpenCL
            # path's CPU default (a shape that tiles the ndrange, up to 2048 items,
            # else powers of two up to 256), so a kernel behaves as it did on PoCL.
            return cpu_groups(ndrange, MAX_WORKGROUP, self.max_workitem_sizes(),
                              os.cpu_count() or 1, self.preferred_group_size)
        last = max(1, min(ndrange[-1], _CHUNK))
        return (1,) * (len(ndrange) - 1) + (last,)

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        n = compiled.nparams
        last = compiled.last
        if last is None or not keys_match(last[0], args, n):
            last = compiled.last = _argument_block(compiled, args)
        key = (global_size, local_size, *args[n:])
        geom = compiled.geoms.get(key)
        if geom is None:
            geom = _geometry(args[n:], global_size, local_size)
            if len(compiled.geoms) > 64:
                compiled.geoms.clear()
            compiled.geoms[key] = geom
        compiled.fn(last[1], geom)

    def synchronize(self) -> None:
        pass  # every launch has finished when it returns


def _geometry(sizes: list, global_size: tuple[int, ...], local_size: tuple[int, ...]) -> Any:
    """``pk_geom``: the ndrange, then per hardware axis group size, group count, extent."""
    groups = [-(-g // w) for g, w in zip(global_size, local_size, strict=True)]
    values = [int(s) for s in sizes] + list(local_size) + groups + list(global_size)
    return (ctypes.c_longlong * len(values))(*values)


def _argument_block(compiled: _Compiled, args: list) -> tuple:
    """``pk_argv`` for ``args``, and the record :func:`~.host.keys_match` compares with.

    Arrays are referenced weakly: when one dies, the record is dropped (so a new
    array at the same address never meets a stale entry). Scalars are copied into
    NumPy buffers the record keeps alive.
    """
    n = compiled.nparams
    argv = (ctypes.c_void_p * max(n, 1))()
    keys = [arg_key(args[i], compiled) for i in range(n)]
    keep: list = []
    for i in range(n):
        a = args[i]
        if isinstance(a, np.ndarray):
            argv[i] = a.ctypes.data
        else:
            buf = np.array(a, dtype=compiled.scalars[i])
            keep.append(buf)
            argv[i] = buf.ctypes.data
    return tuple(keys), argv, keep
