"""The native path's runtime: one small library every kernel library is attached to.

Split from :mod:`portakern.backends.native` (which re-exports these names): the C
source of the SIGINT and SIGFPE handlers, built once per process like a kernel (with
:func:`portakern.backends.native_build.build`, so it lands in the same disk cache), and
the hooks PoCL's launches use to keep those handlers in front. The crash report for
SIGSEGV, SIGBUS and SIGILL inside a kernel is part of it (:mod:`.native_crash`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import CompilationError
from ..subprocesses import fork_safe_lock
from .native_build import build
from .native_crash import CRASH_SOURCE

if TYPE_CHECKING:
    from .native_build import Toolchain

__all__ = ["RT_LOCK", "RUNTIME", "load_runtime", "runtime_file_name", "runtime_guard",
           "runtime_install"]


#: The runtime every kernel library is attached to (:func:`load_runtime`): one C signal
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

static void pk_take(int sig, void (*fn)(int, siginfo_t*, void*), struct sigaction* old);
""" + CRASH_SOURCE + r"""
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
    pk_fatal(sig, &pk_old_fpe, info, uc, pk_report(sig, info));  /* not a kernel's division */
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
    pk_crash_install();  /* SIGSEGV, SIGBUS, SIGILL: the crash report (native_crash.py) */
}
PK_EXPORT void pk_rt_enter(void) { __atomic_add_fetch(&pk_rt_ctl[1], 1, __ATOMIC_RELAXED); }
PK_EXPORT void pk_rt_leave(void) { __atomic_sub_fetch(&pk_rt_ctl[1], 1, __ATOMIC_RELAXED); }
PK_EXPORT int pk_launch(void* const*, const long long*) { return 0; }
"""

#: What the runtime's library defines (a kernel's library copied over its cache entry
#: does not, and is refused: :func:`.native_build.build`).
RUNTIME_ENTRY_POINTS = ("pk_rt_install", "pk_rt_enter", "pk_rt_leave", "pk_rt_ctl", "pk_launch",
                        "pk_rt_watch")

#: [the runtime's library, the address of its ``pk_rt_ctl``], or [None, None] where it
#: could not be built (then Ctrl-C waits for the launch, and a division by zero traps).
RUNTIME: list[Any] = []
RT_LOCK = fork_safe_lock()


def load_runtime(toolchain: Toolchain) -> tuple[Any, Any]:
    """The native runtime (built or loaded once per process), with its handlers installed."""
    if RUNTIME:
        return RUNTIME[0]
    from types import SimpleNamespace

    with RT_LOCK:
        if RUNTIME:
            return RUNTIME[0]
        stub = SimpleNamespace(name="pk_runtime", source=_RUNTIME_SOURCE, params=(),
                               bindings=(), user_source="", filename="pk_runtime.cpp")
        try:
            lib = build(toolchain, stub, RUNTIME_ENTRY_POINTS).lib
        except CompilationError:
            RUNTIME.append((None, None))
            return RUNTIME[0]
        lib.pk_rt_install.restype = None
        lib.pk_rt_enter.restype = None
        lib.pk_rt_leave.restype = None
        lib.pk_rt_watch.restype = None
        ctl = ctypes.addressof(ctypes.c_int.in_dll(lib, "pk_rt_ctl"))
        lib.pk_rt_install()
        RUNTIME.append((lib, ctypes.c_void_p(ctl)))
    return RUNTIME[0]


def runtime_file_name(toolchain: Toolchain) -> str:
    """The runtime's file name in the disk cache's ``native`` folder (as
    :func:`.native_build.build` keys it)."""
    from ..cache import store as cache

    key = cache.make_key("native", _RUNTIME_SOURCE, tuple(toolchain.flags()),
                         tuple(toolchain.libs()), toolchain.identity)
    return f"{key}.so"


def runtime_install() -> None:
    """Put the runtime's signal handlers back in front (after PoCL has started, say)."""
    if RUNTIME and RUNTIME[0][0] is not None:
        RUNTIME[0][0].pk_rt_install()


def runtime_guard(native_toolchain: Callable[[], Toolchain | str]) -> Any:
    """The runtime (or None) whose ``pk_rt_enter``/``pk_rt_leave`` bracket a PoCL launch.

    ``native_toolchain`` is asked for the compiler only when the runtime is not built yet.
    """
    if not RUNTIME:
        toolchain = native_toolchain()
        if isinstance(toolchain, str):
            return None
        load_runtime(toolchain)
    return RUNTIME[0][0]
