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
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..errors import BackendUnavailableError, CompilationError
from ..subprocesses import fork_safe_lock, run, scratch_dir
from .base import Availability, Backend, cpu_groups
from .host import NumPyArrays, arg_key, check_stack, stack_arrays

__all__ = ["NativeCPU", "native_toolchain"]

_FLAGS = ("-O3", "-march=native", "-std=c++17", "-fPIC", "-shared", "-fopenmp",
          "-fno-math-errno", "-fno-strict-aliasing", "-fvisibility=hidden")
# fork: OpenMP's threads are released before (_pause_openmp_at_fork), so a child's first
# parallel loop starts a new pool; these locks are unlocked in the child (fork_safe_lock).
_LOCK = fork_safe_lock()
_BUILD_LOCKS: dict[str, Any] = {}

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
    # A compiler that outlives this process is killed, and the folder is removed (or swept).
    with scratch_dir("probe") as tmp:
        src = Path(tmp) / "probe.cpp"
        out = Path(tmp) / "probe.so"
        src.write_text(_PROBE, encoding="utf-8")
        cmd = [compiler, *_FLAGS, *defines, str(src), "-o", str(out), *libs]
        try:
            done = run(cmd, timeout=120, text=False)
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


class _Compiled:
    """A loaded shared object's ``pk_launch``, with the last launch's argument block."""

    __slots__ = ("fn", "lib", "source", "nparams", "scalars", "last", "geoms", "geom", "warm",
                 "path", "name", "arrays", "__weakref__")

    def __init__(self, lib: Any, rendered: Any, path: str) -> None:
        from ..types import TYPE_DTYPES

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
        #: The last launch's argument block (:func:`_argument_block`); replaced, never
        #: written to, when an argument changes (:func:`_refreshed`).
        self.last: tuple | None = None
        self.geoms: dict[tuple, Any] = {}
        #: The last launch's geometry: (global size, local size, ndrange args, pk_geom).
        self.geom: tuple | None = None
        #: The last launch, for a relaunch with the same objects (see NativeCPU.launch).
        self.warm: tuple | None = None
        self.name = rendered.name
        #: The fixed-size arrays the kernel puts on a thread's stack (checked per geometry).
        self.arrays: list = []


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


#: The runtime every kernel library is attached to (:func:`_runtime`): one C signal
#: handler for SIGINT (Ctrl-C stops a launch between workgroups) and one for SIGFPE
#: (integer division by zero, and ``INT_MIN / -1``, get one defined result instead of
#: killing the process). Built once, like a kernel, and kept in the disk cache.
_RUNTIME_SOURCE = r"""
/* portakern native runtime: Ctrl-C and integer division faults (see native.py) */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#if defined(__linux__) && defined(__x86_64__)
#include <ucontext.h>
#define PK_FIX_DIV 1
#endif
#define PK_EXPORT extern "C" __attribute__((visibility("default")))
/* [0] advanced by each SIGINT; [1] launches running (native, or PoCL through pk_rt_enter). */
PK_EXPORT int pk_rt_ctl[4] = {0, 0, 0, 0};
static struct sigaction pk_old_int, pk_old_fpe;

static void pk_chain(int sig, const struct sigaction* old, siginfo_t* info, void* uc) {
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction) old->sa_sigaction(sig, info, uc);
    } else if (old->sa_handler == SIG_DFL) {
        sigaction(sig, old, 0);  /* the default action: the signal comes again, and acts */
        if (sig == SIGINT) raise(sig);
    } else if (old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    }
}

static void pk_on_int(int sig, siginfo_t* info, void* uc) {
    __atomic_add_fetch(&pk_rt_ctl[0], 1, __ATOMIC_RELAXED);
    pk_chain(sig, &pk_old_int, info, uc);  /* Python's handler: KeyboardInterrupt on return */
}

#if defined(PK_FIX_DIV)
static const int pk_regs[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI,
                                REG_RDI, REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13,
                                REG_R14, REG_R15};

/* The faulting instruction is a DIV or IDIV (opcode F7 /6, /7): give it the defined result
   (x / 0 == 0, x % 0 == x, INT_MIN / -1 == INT_MIN, INT_MIN % -1 == 0: what ARM's
   SDIV/UDIV give) and step over it. Returns 0 for anything else. */
static int pk_fix_div(ucontext_t* uc) {
    greg_t* g = uc->uc_mcontext.gregs;
    const unsigned char* p = (const unsigned char*)g[REG_RIP];
    int n = 0, op16 = 0, rex = 0;
    for (;; ++n) {
        const unsigned char c = p[n];
        if (c == 0x66) op16 = 1;
        else if (c != 0x2e && c != 0x3e && c != 0x26 && c != 0x36 && c != 0xf2 && c != 0xf3) break;
        if (n > 4) return 0;
    }
    if ((p[n] & 0xf0) == 0x40) rex = p[n++];
    if (p[n++] != 0xf7) return 0;
    const int modrm = p[n++], mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
    if (reg != 6 && reg != 7) return 0;
    const int bits = (rex & 8) ? 64 : (op16 ? 16 : 32);
    uint64_t raw = 0;
    if (mod == 3) {
        raw = (uint64_t)g[pk_regs[rm | ((rex & 1) << 3)]];
    } else {
        uint64_t addr = 0;
        int32_t d32;
        if (rm == 4) {
            const int sib = p[n++], scale = sib >> 6;
            const int index = ((sib >> 3) & 7) | ((rex & 2) << 2);
            const int base = (sib & 7) | ((rex & 1) << 3);
            if (index != 4) addr += (uint64_t)g[pk_regs[index]] << scale;
            if ((sib & 7) == 5 && mod == 0) {
                memcpy(&d32, p + n, 4); n += 4; addr += (int64_t)d32;
            } else {
                addr += (uint64_t)g[pk_regs[base]];
            }
        } else if (rm == 5 && mod == 0) {
            memcpy(&d32, p + n, 4); n += 4;
            addr = (uint64_t)(p + n) + (int64_t)d32;  /* RIP-relative: from the next instruction */
        } else {
            addr = (uint64_t)g[pk_regs[rm | ((rex & 1) << 3)]];
        }
        if (mod == 1) { addr += (int64_t)(int8_t)p[n]; n += 1; }
        else if (mod == 2) { memcpy(&d32, p + n, 4); n += 4; addr += (int64_t)d32; }
        memcpy(&raw, (const void*)addr, (size_t)(bits / 8));
    }
    const uint64_t mask = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    raw &= mask;
    const uint64_t lo = (uint64_t)g[REG_RAX] & mask;
    uint64_t q, r;
    if (raw == 0) { q = 0; r = lo; }
    else if (reg == 7 && raw == mask) { q = lo; r = 0; }  /* INT_MIN / -1 */
    else return 0;
    if (bits == 16) {
        g[REG_RAX] = (greg_t)(((uint64_t)g[REG_RAX] & ~mask) | q);
        g[REG_RDX] = (greg_t)(((uint64_t)g[REG_RDX] & ~mask) | r);
    } else {  /* a 32-bit result zero-extends into the register */
        g[REG_RAX] = (greg_t)q;
        g[REG_RDX] = (greg_t)r;
    }
    g[REG_RIP] += n;
    return 1;
}
#endif

static void pk_on_fpe(int sig, siginfo_t* info, void* uc) {
#if defined(PK_FIX_DIV)
    if (__atomic_load_n(&pk_rt_ctl[1], __ATOMIC_RELAXED) > 0 && pk_fix_div((ucontext_t*)uc)) return;
#endif
    pk_chain(sig, &pk_old_fpe, info, uc);  /* not a kernel's division: as before */
}

static void pk_take(int sig, void (*fn)(int, siginfo_t*, void*), struct sigaction* old) {
    struct sigaction now, mine;
    if (sigaction(sig, 0, &now) != 0) return;
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == fn) return;  /* already ours */
    if (sig == SIGINT && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN) return;
    memset(&mine, 0, sizeof mine);
    mine.sa_sigaction = fn;
    /* The flags of the handler it fronts: Python's has no SA_RESTART, so a blocking
       read still returns EINTR and Python handles Ctrl-C at once. */
    mine.sa_flags = SA_SIGINFO | (now.sa_flags & (SA_ONSTACK | SA_RESTART));
    sigemptyset(&mine.sa_mask);
    *old = now;
    sigaction(sig, &mine, 0);
}

/* Puts the handlers in front of the present ones (Python's, faulthandler's, PoCL's). */
PK_EXPORT void pk_rt_install(void) {
    pk_take(SIGINT, pk_on_int, &pk_old_int);
    pk_take(SIGFPE, pk_on_fpe, &pk_old_fpe);
}
PK_EXPORT void pk_rt_enter(void) { __atomic_add_fetch(&pk_rt_ctl[1], 1, __ATOMIC_RELAXED); }
PK_EXPORT void pk_rt_leave(void) { __atomic_sub_fetch(&pk_rt_ctl[1], 1, __ATOMIC_RELAXED); }
PK_EXPORT int pk_launch(void* const*, const long long*) { return 0; }
"""

#: [the runtime's library, the address of its ``pk_rt_ctl``], or [None, None] where it
#: could not be built (then Ctrl-C waits for the launch, and a division by zero traps).
_RUNTIME: list[Any] = []
_RT_LOCK = fork_safe_lock()


def _runtime(toolchain: Toolchain) -> tuple[Any, Any]:
    """The native runtime (built or loaded once per process), with its handlers installed."""
    if _RUNTIME:
        return _RUNTIME[0]
    from types import SimpleNamespace

    with _RT_LOCK:
        if _RUNTIME:
            return _RUNTIME[0]
        stub = SimpleNamespace(name="pk_runtime", source=_RUNTIME_SOURCE, params=(),
                               bindings=(), user_source="", filename="pk_runtime.cpp")
        try:
            lib = _build(toolchain, stub).lib
        except CompilationError:
            _RUNTIME.append((None, None))
            return _RUNTIME[0]
        lib.pk_rt_install.restype = None
        lib.pk_rt_enter.restype = None
        lib.pk_rt_leave.restype = None
        ctl = ctypes.addressof(ctypes.c_int.in_dll(lib, "pk_rt_ctl"))
        lib.pk_rt_install()
        _RUNTIME.append((lib, ctypes.c_void_p(ctl)))
    return _RUNTIME[0]


def runtime_file_name(toolchain: Toolchain) -> str:
    """The runtime's file name in the disk cache's ``native`` folder (as :func:`_build` keys it)."""
    from .. import cache

    key = cache.make_key("native", _RUNTIME_SOURCE, tuple(toolchain.flags()),
                         tuple(toolchain.libs()), toolchain.identity)
    return f"{key}.so"


def runtime_install() -> None:
    """Put the runtime's signal handlers back in front (after PoCL has started, say)."""
    if _RUNTIME and _RUNTIME[0][0] is not None:
        _RUNTIME[0][0].pk_rt_install()


def runtime_guard() -> Any:
    """The runtime (or None) whose ``pk_rt_enter``/``pk_rt_leave`` bracket a PoCL launch."""
    if not _RUNTIME:
        toolchain = native_toolchain()
        if isinstance(toolchain, str):
            return None
        _runtime(toolchain)
    return _RUNTIME[0][0]


def _build(toolchain: Toolchain, rendered: Any) -> _Compiled:
    from .. import cache

    # Read by the OpenMP runtime when it is first loaded, with the first kernel.
    os.environ.setdefault("OMP_STACKSIZE", _OMP_STACKSIZE)

    flags = toolchain.flags()
    key = cache.make_key("native", rendered.source, tuple(flags), tuple(toolchain.libs()),
                         toolchain.identity)
    store = cache.default_cache()
    name = f"{key}.so"
    hit = _load(store, name, rendered)
    if hit is not None:
        return hit
    with _LOCK:
        lock = _BUILD_LOCKS.setdefault(key, fork_safe_lock())
    with lock:
        hit = _load(store, name, rendered)  # another thread built it
        if hit is not None:
            return hit
        from ..subprocesses import run, scratch_dir

        with scratch_dir("build") as tmp:
            src = Path(tmp) / f"{rendered.name}.cpp"
            src.write_text(rendered.source, encoding="utf-8")
            built = Path(tmp) / name
            cmd = [toolchain.compiler, *flags, str(src), "-o", str(built), *toolchain.libs()]
            try:
                done = run(cmd, timeout=_COMPILE_TIMEOUT)
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
            # An unwritable cache warns once and keeps the build in memory.
            store.put_library("native", name, built)
            # Loaded from the private build folder, before it goes: the mapping
            # outlives the file.
            return _Compiled(ctypes.CDLL(str(built)), rendered, str(built))


def _load(store: Any, name: str, rendered: Any) -> _Compiled | None:
    """The cached shared object ``name``, or None (missing, damaged, or not a kernel).

    :meth:`~portakern.cache.DiskCache.load_library` checks the entry's digest and
    loads a private copy; a library without ``pk_launch`` is dropped and rebuilt.
    """
    return store.load_library("native", name,
                              lambda lib: _Compiled(lib, rendered, f"<cache>/{name}"))


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
            hit.arrays = stack_arrays(rendered.source)
            ctl = _runtime(self.toolchain)[1]
            if ctl is not None:
                hit.lib.pk_attach.restype = None
                hit.lib.pk_attach(ctl)
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
        # A warm launch (DESIGN section 4: under 3 us) is the foreign call and the
        # comparison that shows the argument block and the geometry still hold: the
        # very objects of the last launch (by id: each is alive, the arrays in
        # ``compiled.last`` drop it when they die, the rest is held by ``warm``). An
        # array's memory cannot move meanwhile: NumPy refuses to resize an array
        # that has weak references, and the record holds one.
        warm = compiled.warm
        if warm is not None and warm[0] is compiled.last and warm[1] is global_size \
                and warm[2] is local_size and warm[3] == [*map(id, args)]:
            if compiled.fn(warm[4], warm[5]):
                _stopped(compiled)
            return
        compiled.warm = None
        n = compiled.nparams
        last = compiled.last
        if last is None:
            last = compiled.last = _argument_block(compiled, args)
        else:
            fresh = _refreshed(compiled, last, args, n)
            if fresh is not last:
                last = compiled.last = fresh
        sizes = args[n:]
        geom = compiled.geom
        if geom is None or geom[0] is not global_size or geom[1] is not local_size \
                or geom[2] != sizes:
            geom = compiled.geom = (global_size, local_size, sizes,
                                    _geometry_for(compiled, sizes, global_size, local_size))
        compiled.warm = (last, global_size, local_size, [*map(id, args)], last[1], geom[3],
                         [a for a in args if not isinstance(a, np.ndarray)])
        if compiled.fn(last[1], geom[3]):
            _stopped(compiled)

    def prepare_launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
                       local_size: tuple[int, ...]) -> Any:
        """The argument block and geometry of ``args``, built once; ``run`` is one call.

        Pointers are taken here, so ``run`` is the foreign call alone (the launcher
        has checked that the arrays are these, alive and unchanged; their memory
        cannot move while its records hold weak references to them); a scalar that
        is not the object seen here goes through :meth:`launch`.
        """
        n = compiled.nparams
        argv = (ctypes.c_void_p * max(n, 1))()
        keep: list = []
        scalars: list = []
        for i in range(n):
            a = args[i]
            if isinstance(a, np.ndarray):
                argv[i] = a.ctypes.data
            else:
                buf = np.array(a, dtype=compiled.scalars[i])
                keep.append(buf)
                argv[i] = buf.ctypes.data
                scalars.append((i, a))
        geom = _geometry_for(compiled, args[n:], global_size, local_size)
        fn, launch = compiled.fn, self.launch

        def run(args: list, _keep: list = keep) -> None:
            for i, value in scalars:
                if args[i] is not value:
                    launch(compiled, args, global_size, local_size)
                    return
            if fn(argv, geom):
                _stopped(compiled)

        return run

    def synchronize(self) -> None:
        pass  # every launch has finished when it returns


class HostedNativeCPU(NativeCPU):
    """The native path for a ``CPU`` subclass (a plugin's arrays over host memory).

    The plugin's ``array_info`` describes its arrays and hands out NumPy views of
    their memory (what ``CPU.launch`` takes too); this runs them natively and
    reports itself as the plugin's backend.
    """

    def __init__(self, owner: Any, lockstep: bool = False) -> None:
        super().__init__(lockstep)
        self.owner = owner
        self.name = owner.name  # type: ignore[misc]

    def array_info(self, array: Any) -> Any:
        info = self.owner.array_info(array)
        if info is not None and not isinstance(info.handle, np.ndarray):
            return None  # not host memory after all: refused as a foreign array
        return info

    def allocate(self, shape: Any, dtype: Any) -> Any:
        return self.owner.allocate(shape, dtype)

    def zeros(self, shape: Any, dtype: Any) -> Any:
        return self.owner.zeros(shape, dtype)

    def to_device(self, array: np.ndarray) -> Any:
        return self.owner.to_device(array)

    def to_host(self, array: Any) -> np.ndarray:
        return self.owner.to_host(array)

    def __eq__(self, other: object) -> bool:
        return (type(other) is HostedNativeCPU and type(other.owner) is type(self.owner)
                and other.lockstep == self.lockstep)

    def __hash__(self) -> int:
        return hash((HostedNativeCPU, type(self.owner), self.lockstep))

    def __repr__(self) -> str:
        return repr(self.owner)


def _stopped(compiled: _Compiled) -> None:
    """A launch that a SIGINT stopped between workgroups: its results are partial.

    In the main thread Python's own handler raises ``KeyboardInterrupt`` as this
    function is entered; elsewhere (or with a handler that does not raise) the
    launch fails rather than return half-written arrays.
    """
    from ..errors import LaunchError

    raise LaunchError(f"the launch (CPU, native path, {os.path.basename(compiled.path)}) was "
                      "stopped by Ctrl-C (SIGINT) before every workgroup ran; its output "
                      "arrays are partly written")


def _geometry(sizes: list, global_size: tuple[int, ...], local_size: tuple[int, ...]) -> Any:
    """``pk_geom``: the ndrange, then per hardware axis group size, group count, extent."""
    groups = [-(-g // w) for g, w in zip(global_size, local_size, strict=True)]
    values = [int(s) for s in sizes] + list(local_size) + groups + list(global_size)
    return (ctypes.c_longlong * len(values))(*values)


def _geometry_for(compiled: _Compiled, sizes: list, global_size: tuple[int, ...],
                  local_size: tuple[int, ...]) -> Any:
    """``pk_geom`` for a launch shape, once per shape (the stack check with it)."""
    key = (global_size, local_size, *sizes)
    geom = compiled.geoms.get(key)
    if geom is None:
        if compiled.arrays:
            items = 1
            for w in local_size:
                items *= w
            check_stack(compiled.name, compiled.arrays, items, "CPU, native path")
        geom = _geometry(sizes, global_size, local_size)
        if len(compiled.geoms) > 64:
            compiled.geoms.clear()
        compiled.geoms[key] = geom
    return geom


def _argument_block(compiled: _Compiled, args: list) -> tuple:
    """``pk_argv`` for ``args``, and the record :func:`_refreshed` compares with.

    Returns ``(keys, argv, buffers)``: per argument, an array's key is
    :func:`~.host.arg_key`'s (a weak reference that drops the record when the array
    dies, so a new array at the same address never meets a stale entry), a scalar's
    its value and bytes; ``buffers[i]`` is the NumPy buffer scalar ``i`` is copied into.
    """
    n = compiled.nparams
    argv = (ctypes.c_void_p * max(n, 1))()
    keys: list = [None] * n
    keep: list = [None] * n
    for i in range(n):
        a = args[i]
        keys[i] = arg_key(a, compiled)
        if isinstance(a, np.ndarray):
            argv[i] = a.ctypes.data
        else:
            buf = keep[i] = np.array(a, dtype=compiled.scalars[i])
            argv[i] = buf.ctypes.data
    return keys, argv, keep


def _refreshed(compiled: _Compiled, record: tuple, args: list, n: int) -> tuple:
    """``record``, or a new record for ``args`` where any argument changed.

    The same array or a scalar of the same type and bytes (not ==: 0.0 == -0.0, and
    NaN != NaN) costs a comparison. A
    published record is never written to (another thread's launch may be reading
    it while the GIL is released): a change copies the block and rewrites only the
    arguments that changed.
    """
    keys = record[0]
    new = None
    for i in range(n):
        k = keys[i]
        a = args[i]
        ref = k[0]
        if ref is None:
            if a is k[1] or (type(a) is type(k[1]) and (
                    a.tobytes() if isinstance(a, np.generic) else a) == k[2]):
                continue
        elif ref() is a:
            continue
        if new is None:
            new = (list(keys), type(record[1]).from_buffer_copy(record[1]), list(record[2]))
        new[0][i] = arg_key(a, compiled)
        if isinstance(a, np.ndarray):
            new[1][i] = a.ctypes.data
            new[2][i] = None
        else:
            buf = new[2][i] = np.array(a, dtype=compiled.scalars[i])
            new[1][i] = buf.ctypes.data
    return record if new is None else new
