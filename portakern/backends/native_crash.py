"""A crash inside a kernel on the native path says which kernel and launch it was.

Without debug mode a subscript is not checked, so a kernel that writes far outside an
array kills the process with SIGSEGV (or SIGBUS, SIGILL, an unfixable SIGFPE) and
nothing more than the shell's "Segmentation fault". This module adds the kernel's
name, its launch and the advice to rerun in debug mode (docs/debugging.md), at no
cost a launch can measure (no foreign call: a few stores in ``pk_launch``).

How the pieces meet:

* Every kernel library (``templates/c/crash.j2``) defines one record,
  ``pk_crash_record`` (:data:`RECORD_STRUCT`): the kernel's name, a compile-time
  string, and the ndrange and workgroup of its latest launch, with a count of the
  launches running. ``pk_launch`` stores the sizes and counts itself in and out.
* The native runtime (:mod:`.native_runtime`, built once per process) keeps a table
  of the records of the libraries loaded (:func:`watch` registers one when a library
  is loaded; the library's destructor takes it out again when it is unloaded), and
  puts one ``sigaction`` handler in front of the present one (Python's faulthandler,
  say) for each fatal signal (:data:`CRASH_SOURCE`).
* On a fatal signal while a kernel's count is not zero, the handler writes one line
  per running kernel to stderr with ``write()`` (async-signal-safe; no ``printf``),
  gives the signal back to the handler it replaced (``SA_RESETHAND`` semantics:
  the next delivery goes there) and returns, so the fault comes again and the
  process dies of it as before. Outside a kernel it chains to that handler at once.
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["CRASH_SOURCE", "RECORD_STRUCT", "watch"]

#: The record's layout; ``templates/c/crash.j2`` spells the same struct (a test
#: compares the two). ``slot`` is the runtime's table entry that points here.
RECORD_STRUCT = ("struct pk_crash_rec { const char* name; void** slot; int running; "
                 "int ndim; int axes; int spare; long long n[3]; long long ls[3]; };")

#: C for the native runtime: the table, :func:`watch`'s entry point and the handlers.
#: Uses ``pk_take`` (the runtime's "put a handler in front") and expects
#: ``pk_crash_install`` to be called from ``pk_rt_install``.
CRASH_SOURCE = r"""
#include <time.h>
#include <unistd.h>
""" + RECORD_STRUCT + r"""
#define PK_WATCH 4096
static struct pk_crash_rec* pk_watched[PK_WATCH];
static struct sigaction pk_old_segv, pk_old_bus, pk_old_ill;

/* Called once per loaded kernel library (portakern.backends.native_crash.watch). */
PK_EXPORT void pk_rt_watch(struct pk_crash_rec* rec) {
    if (__atomic_load_n(&rec->slot, __ATOMIC_ACQUIRE)) return;  /* the same library, loaded again */
    for (int i = 0; i < PK_WATCH; ++i) {
        struct pk_crash_rec* none = 0;
        if (__atomic_compare_exchange_n(&pk_watched[i], &none, rec, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&rec->slot, (void**)&pk_watched[i], __ATOMIC_RELEASE);
            return;
        }
    }
}

/* The report is built in one buffer and written with one write(2) (async-signal-safe;
   one write keeps it whole when several threads fault at once). */
struct pk_text { char buf[3072]; int n; };

static void pk_say(struct pk_text* t, const char* s) {
    while (*s && t->n < (int)sizeof t->buf) t->buf[t->n++] = *s++;
}

static void pk_say_num(struct pk_text* t, unsigned long long v, int base) {
    char buf[24];
    int k = 23;
    buf[k] = 0;
    do { buf[--k] = "0123456789abcdef"[v % base]; v /= base; } while (v && k > 0);
    pk_say(t, buf + k);
}

static void pk_say_sizes(struct pk_text* t, const long long* v, int n, int reverse) {
    pk_say(t, "(");
    for (int d = 0; d < n; ++d) {
        const long long x = v[reverse ? n - 1 - d : d];
        if (x < 0) { pk_say(t, "-"); pk_say_num(t, (unsigned long long)(-x), 10); }
        else pk_say_num(t, (unsigned long long)x, 10);
        if (n == 1 || d + 1 < n) pk_say(t, d + 1 < n ? ", " : ",");
    }
    pk_say(t, ")");
}

/* 0: no report yet; 1: a thread is writing it; 2: written. */
static int pk_reporting = 0;

/* Writes the report if a kernel is running; returns 1 if this thread wrote it. Another
   thread that faults meanwhile waits until it is out, then hands its fault on. */
static int pk_report(int sig, siginfo_t* info) {
    int idle = 0;
    if (!__atomic_compare_exchange_n(&pk_reporting, &idle, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        const struct timespec nap = {0, 1000000};
        for (int k = 0; k < 5000 && __atomic_load_n(&pk_reporting, __ATOMIC_ACQUIRE) == 1; ++k)
            nanosleep(&nap, 0);
        return 0;
    }
    static struct pk_text t;  /* one thread at a time is here */
    t.n = 0;
    int found = 0;
    for (int i = 0; i < PK_WATCH; ++i) {
        const struct pk_crash_rec* rec = __atomic_load_n(&pk_watched[i], __ATOMIC_ACQUIRE);
        if (!rec || __atomic_load_n(&rec->running, __ATOMIC_RELAXED) <= 0) continue;
        if (!found) {
            pk_say(&t, "portakern: ");
            pk_say(&t, sig == SIGSEGV ? "SIGSEGV (invalid memory access)"
                   : sig == SIGBUS ? "SIGBUS (bus error)"
                   : sig == SIGILL ? "SIGILL (illegal instruction)"
                   : "SIGFPE (arithmetic fault)");
            if ((sig == SIGSEGV || sig == SIGBUS) && info && info->si_code > 0) {
                pk_say(&t, " at address 0x");
                pk_say_num(&t, (unsigned long long)(uintptr_t)info->si_addr, 16);
            }
            pk_say(&t, "\n");
        }
        found += 1;
        const int axes = rec->axes < 0 ? 0 : (rec->axes > 3 ? 3 : rec->axes);
        const int ndim = rec->ndim < 0 ? 0 : (rec->ndim > 3 ? 3 : rec->ndim);
        pk_say(&t, "portakern: while kernel '");
        pk_say(&t, rec->name);
        pk_say(&t, "' was running on CPU()'s native path, launched with ndrange=");
        pk_say_sizes(&t, rec->n, ndim, 0);
        pk_say(&t, ", workgroup=");
        pk_say_sizes(&t, rec->ls, ndim ? axes : 0, 1);  /* hardware axis 0: the last ndrange axis */
        pk_say(&t, "\n");
    }
    if (found)
        pk_say(&t, "portakern: a kernel that accesses memory outside its arrays crashes like "
               "this; rerun with PORTAKERN_DEBUG=1 to find the subscript (it raises "
               "KernelFaultError naming the array, the index, the line and the work-item; "
               "docs/debugging.md)\n");
    for (int done = 0; done < t.n;) {
        const ssize_t w = write(2, t.buf + done, (size_t)(t.n - done));
        if (w <= 0) break;
        done += (int)w;
    }
    __atomic_store_n(&pk_reporting, found ? 2 : 0, __ATOMIC_RELEASE);
    return found > 0;
}

/* Hand the signal to the handler that was there before (and, for a fault the kernel
   reported, leave it there: SA_RESETHAND). A default action comes back: on return the
   faulting instruction runs again, and a signal sent by kill() is raised again. */
static void pk_fatal(int sig, struct sigaction* old, siginfo_t* info, void* uc, int reported) {
    if (old->sa_flags & SA_SIGINFO) {
        if (reported) sigaction(sig, old, 0);
        if (old->sa_sigaction) old->sa_sigaction(sig, info, uc);
        return;
    }
    if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, 0);
        if (!info || info->si_code <= 0) raise(sig);  /* pending until this handler returns */
        return;
    }
    if (reported) sigaction(sig, old, 0);
    old->sa_handler(sig);
}

static void pk_on_fatal(int sig, siginfo_t* info, void* uc) {
    struct sigaction* old = sig == SIGSEGV ? &pk_old_segv : sig == SIGBUS ? &pk_old_bus
                                                                          : &pk_old_ill;
    pk_fatal(sig, old, info, uc, pk_report(sig, info));
}

static void pk_crash_install(void) {
    pk_take(SIGSEGV, pk_on_fatal, &pk_old_segv);
    pk_take(SIGBUS, pk_on_fatal, &pk_old_bus);
    pk_take(SIGILL, pk_on_fatal, &pk_old_ill);
}
"""


def watch(runtime: Any, lib: Any) -> None:
    """Register the crash record of the kernel library ``lib`` with ``runtime``.

    Once per library load (never per launch); a library without a record (built by
    an older portakern) is left out.
    """
    try:
        record = ctypes.c_char.in_dll(lib, "pk_crash_record")
    except ValueError:
        return
    runtime.pk_rt_watch(ctypes.byref(record))
