// portakern's GPU stand-in runtime: runs one kernel launch on the CPU the way a GPU
// would schedule it, for the CUDA and Metal renderings in CI (see docs/emulation.md).
//
// * One OS thread per thread of a block (threadgroup); blocks run one at a time, in
//   order, x fastest. The pool of threads is made per launch and reused per block.
// * A barrier is real: every thread of the block must reach the same barrier call
//   site. A thread that leaves the kernel, or waits at another barrier, while others
//   wait is an error naming the kernel, the sites and the threads.
// * Shared (threadgroup) memory is the section `pk_shared` of the kernel's shared
//   object; it is filled with 0xFF bytes (float NaN, integer -1) before every block,
//   so a read of an element nobody wrote in this block shows up.
// * Threads outside a non-uniform grid (Metal's dispatchThreads) do not exist: they
//   run nothing and take no part in barriers.
//
// The dialect's code provides `pk_emu_body(void** args, const unsigned* ids)`; this file
// provides `pk_emu_launch` and the barrier and fault entry points the dialect headers
// call. Compiled once (g++ -std=c++17) and linked into every kernel's shared object.

#include <pthread.h>
#include <setjmp.h>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

extern "C" void pk_emu_body(void** args, const unsigned* ids);
extern "C" char __start_pk_shared[] __attribute__((weak));
extern "C" char __stop_pk_shared[] __attribute__((weak));
// Dynamic shared memory (CUDA's `extern __shared__ T a[];`, sized by the launch's
// shared_mem): the host sets the launch's buffer before it (portakern.emulate.cupy);
// poisoned before each block like the section.
extern "C" {
unsigned char* pk_emu_dynamic_shared = nullptr;
unsigned long pk_emu_dynamic_bytes = 0;
}

namespace {

constexpr int kSiteStart = -1;  // pool phase: a block begins
constexpr int kSiteExit = -2;   // a thread left the kernel

struct Arrival {
    int line;
    const char* file;
};

// A barrier over `count` threads that records where each arrived and sees divergence.
class Barrier {
public:
    // Returns false if the launch was aborted (by divergence here or a fault elsewhere).
    bool arrive(unsigned count, unsigned tid, Arrival at, const char* kernel,
                const unsigned* block, const unsigned* block_dim, bool complete = false);
    bool aborted() {
        std::lock_guard<std::mutex> g(m_);
        return abort_;
    }
    void fail(const std::string& why) {
        std::lock_guard<std::mutex> g(m_);
        fail_locked(why);
    }
    std::string error() {
        std::lock_guard<std::mutex> g(m_);
        return error_;
    }
    // Run by the last thread to arrive, before the others are released.
    void (*on_complete)(void*) = nullptr;
    void* on_complete_arg = nullptr;

private:
    void fail_locked(const std::string& why) {
        if (!abort_) {
            abort_ = true;
            abort_flag_.store(true, std::memory_order_release);
            error_ = why;
        }
        arrived_ = 0;
        release();
    }
    void release() {
        generation_.fetch_add(1, std::memory_order_acq_rel);
        syscall(SYS_futex, reinterpret_cast<int*>(&generation_), FUTEX_WAKE_PRIVATE, INT_MAX,
                nullptr, nullptr, 0);
    }
    std::mutex m_;
    unsigned arrived_ = 0;
    std::atomic<unsigned> generation_{0};
    std::atomic<bool> abort_flag_{false};
    bool abort_ = false;
    std::string error_;
    Arrival first_{0, nullptr};
    unsigned first_tid_ = 0;
    bool diverged_ = false;
    Arrival other_{0, nullptr};
    unsigned other_tid_ = 0;
};

std::string thread_name(unsigned tid, const unsigned* block_dim) {
    char buf[64];
    unsigned x = tid % block_dim[0], y = tid / block_dim[0] % block_dim[1],
             z = tid / block_dim[0] / block_dim[1];
    std::snprintf(buf, sizeof buf, "thread (%u, %u, %u)", x, y, z);
    return buf;
}

std::string where(Arrival a) {
    if (a.line == kSiteExit) return "has left the kernel";
    char buf[512];
    std::snprintf(buf, sizeof buf, "waits at the barrier at %s:%d", a.file ? a.file : "?",
                  a.line);
    return buf;
}

bool Barrier::arrive(unsigned count, unsigned tid, Arrival at, const char* kernel,
                     const unsigned* block, const unsigned* block_dim, bool complete) {
    std::unique_lock<std::mutex> lock(m_);
    if (abort_) return false;
    if (arrived_ == 0) {
        first_ = at;
        first_tid_ = tid;
        diverged_ = false;
    } else if (!diverged_ && (at.line != first_.line ||
                              (at.file != first_.file &&
                               (!at.file || !first_.file || std::strcmp(at.file, first_.file))))) {
        diverged_ = true;
        other_ = at;
        other_tid_ = tid;
    }
    if (++arrived_ == count) {
        if (diverged_) {
            char head[256];
            std::snprintf(head, sizeof head,
                          "divergent barrier in kernel '%s', block (%u, %u, %u): ", kernel,
                          block[0], block[1], block[2]);
            fail_locked(std::string(head) + thread_name(first_tid_, block_dim) + " " +
                        where(first_) + " while " + thread_name(other_tid_, block_dim) + " " +
                        where(other_) +
                        "; every thread of a block must reach the same barrier");
            return false;
        }
        if (complete && on_complete) on_complete(on_complete_arg);
        arrived_ = 0;
        release();
        return true;
    }
    unsigned gen = generation_.load(std::memory_order_relaxed);
    lock.unlock();
    // Waiters sleep on the generation word itself (a futex), not on the mutex: waking a
    // block's threads then costs one wake-up each, not a convoy through the mutex.
    while (generation_.load(std::memory_order_acquire) == gen)
        syscall(SYS_futex, reinterpret_cast<int*>(&generation_), FUTEX_WAIT_PRIVATE, gen,
                nullptr, nullptr, 0);
    return !abort_flag_.load(std::memory_order_acquire);
}

struct Launch {
    unsigned grid[3];       // blocks per axis
    unsigned block_dim[3];  // threads per block (nominal)
    unsigned limit[3];      // threads per axis that exist (non-uniform grids), or 0
    void** args;
    const char* kernel;
    unsigned nthreads;
    Barrier pool;   // all pool threads: block start
    Barrier group;  // the block's existing threads: user barriers and kernel exit
    unsigned long block_index = 0;  // set by the last arrival at block start
    unsigned block[3] = {0, 0, 0};
    unsigned active = 0;            // threads of this block that exist
    // Warps (SIMD-groups): 32 threads in the order of their linear index over the
    // block's existing extent; each has a barrier and one 16-byte slot per thread.
    std::unique_ptr<Barrier[]> warps;
    std::vector<unsigned char> slots;
};

thread_local Launch* t_launch = nullptr;
thread_local unsigned t_tid = 0;
thread_local sigjmp_buf* t_escape = nullptr;

// The calling thread's linear index over the block's existing extent (the actual
// threadgroup size of a non-uniform grid's edge group), and how many threads exist.
unsigned linear_in_block(const Launch* L, unsigned* count) {
    unsigned t[3] = {t_tid % L->block_dim[0], t_tid / L->block_dim[0] % L->block_dim[1],
                     t_tid / L->block_dim[0] / L->block_dim[1]};
    unsigned ext[3];
    for (int d = 0; d < 3; ++d) {
        ext[d] = L->block_dim[d];
        if (L->limit[d]) {
            unsigned long first = (unsigned long)L->block[d] * L->block_dim[d];
            unsigned long left = L->limit[d] > first ? L->limit[d] - first : 0;
            if (left < ext[d]) ext[d] = (unsigned)left;
        }
    }
    *count = ext[0] * ext[1] * ext[2];
    return (t[2] * ext[1] + t[1]) * ext[0] + t[0];
}

void start_block(void* arg) {
    Launch* L = static_cast<Launch*>(arg);
    unsigned long b = L->block_index++;
    L->block[0] = b % L->grid[0];
    L->block[1] = b / L->grid[0] % L->grid[1];
    L->block[2] = b / L->grid[0] / L->grid[1];
    unsigned active = 1;
    for (int d = 0; d < 3; ++d) {
        unsigned n = L->block_dim[d];
        if (L->limit[d]) {
            unsigned long first = (unsigned long)L->block[d] * L->block_dim[d];
            unsigned long left = L->limit[d] > first ? L->limit[d] - first : 0;
            if (left < n) n = (unsigned)left;
        }
        active *= n;
    }
    L->active = active;
    if (+__start_pk_shared && +__stop_pk_shared > +__start_pk_shared)
        std::memset(__start_pk_shared, 0xFF, __stop_pk_shared - __start_pk_shared);
    if (pk_emu_dynamic_shared) std::memset(pk_emu_dynamic_shared, 0xFF, pk_emu_dynamic_bytes);
}

void* worker(void* arg) {
    Launch* L = static_cast<Launch*>(arg);
    unsigned tid = t_tid;
    t_launch = L;
    unsigned long blocks = (unsigned long)L->grid[0] * L->grid[1] * L->grid[2];
    unsigned t[3] = {tid % L->block_dim[0], tid / L->block_dim[0] % L->block_dim[1],
                     tid / L->block_dim[0] / L->block_dim[1]};
    // With every thread of every block existing, a block's exit barrier also starts the
    // next block; otherwise all pool threads meet at a separate start barrier.
    bool uniform = !L->limit[0];
    for (unsigned long b = 0; b < blocks; ++b) {
        if (!uniform && !L->pool.arrive(L->nthreads, tid, {kSiteStart, nullptr}, L->kernel,
                                        L->block, L->block_dim, true))
            break;
        bool exists = true;
        unsigned ids[13];
        for (int d = 0; d < 3; ++d) {
            ids[d] = t[d];
            ids[3 + d] = L->block[d];
            ids[6 + d] = L->block_dim[d];
            ids[9 + d] = L->grid[d];
            if (L->limit[d] && (unsigned long)L->block[d] * L->block_dim[d] + t[d] >= L->limit[d])
                exists = false;
        }
        ids[12] = L->active;
        if (exists) {
            sigjmp_buf escape;
            t_escape = &escape;
            if (sigsetjmp(escape, 0) == 0) {
                pk_emu_body(L->args, ids);
                L->group.arrive(L->active, tid, {kSiteExit, nullptr}, L->kernel, L->block,
                                L->block_dim, uniform);
            }
            t_escape = nullptr;
        }
        if (L->group.aborted()) {
            L->pool.fail(L->group.error());
            break;
        }
    }
    return nullptr;
}

}  // namespace

extern "C" {

// Called by the dialect's barrier (__syncthreads, threadgroup_barrier).
void pk_emu_barrier(int line, const char* file) {
    Launch* L = t_launch;
    if (!L->group.arrive(L->active, t_tid, {line, file}, L->kernel, L->block, L->block_dim))
        siglongjmp(*t_escape, 1);
}

// A warp (SIMD-group) exchange: every thread of the caller's warp passes `size` bytes
// (at most 16) and gets the values of all its warp's threads, in lane order, in `all`
// (32 * size bytes). Returns the number of threads in the warp; `*lane` is the caller's.
// All threads of the warp must call it at the same site (a barrier over the warp).
unsigned pk_emu_warp_gather(const void* mine, void* all, unsigned size, unsigned* lane,
                            int line, const char* file) {
    Launch* L = t_launch;
    unsigned n;
    unsigned me = linear_in_block(L, &n);
    unsigned warp = me / 32, base = warp * 32;
    unsigned count = n - base < 32 ? n - base : 32;
    *lane = me % 32;
    std::memcpy(&L->slots[(size_t)me * 16], mine, size);
    Barrier& b = L->warps[warp];
    if (!b.arrive(count, t_tid, {line, file}, L->kernel, L->block, L->block_dim))
        siglongjmp(*t_escape, 1);
    for (unsigned k = 0; k < count; ++k)
        std::memcpy(static_cast<unsigned char*>(all) + (size_t)k * size,
                    &L->slots[(size_t)(base + k) * 16], size);
    // Nobody writes its slot again before every thread of the warp has read.
    if (!b.arrive(count, t_tid, {line, file}, L->kernel, L->block, L->block_dim))
        siglongjmp(*t_escape, 1);
    return count;
}

// A fault found by the dialect's code (e.g. a bad argument to a device function): stop
// the launch with this message.
void pk_emu_fault(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    Launch* L = t_launch;
    L->group.fail(buf);
    siglongjmp(*t_escape, 1);
}

// Run one launch. `grid` is in blocks and `block` in threads per axis (x, y, z);
// `limit`, if not null, is the number of threads per axis that exist (Metal's
// dispatchThreads). Returns 0, or -1 with a message in `err`.
int pk_emu_launch(const unsigned* grid, const unsigned* block, const unsigned* limit,
                  void** args, const char* kernel, char* err, int errlen) {
    Launch L;
    unsigned long n = 1;
    for (int d = 0; d < 3; ++d) {
        L.grid[d] = grid[d];
        L.block_dim[d] = block[d];
        L.limit[d] = limit ? limit[d] : 0;
        n *= block[d];
    }
    if (n == 0 || (unsigned long)grid[0] * grid[1] * grid[2] == 0) return 0;
    L.nthreads = (unsigned)n;
    L.warps.reset(new Barrier[(n + 31) / 32]);
    L.slots.assign((size_t)n * 16, 0);
    L.args = args;
    L.kernel = kernel;
    L.pool.on_complete = L.group.on_complete = start_block;
    L.pool.on_complete_arg = L.group.on_complete_arg = &L;
    if (!limit) start_block(&L);  // uniform: later blocks start at each block's exit
    std::vector<pthread_t> threads(n);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    struct Start {
        Launch* L;
        unsigned tid;
    };
    std::vector<Start> starts(n);
    unsigned made = 0;
    for (unsigned tid = 0; tid < n; ++tid) {
        starts[tid] = {&L, tid};
        auto entry = [](void* p) -> void* {
            Start* s = static_cast<Start*>(p);
            t_tid = s->tid;
            return worker(s->L);
        };
        if (pthread_create(&threads[tid], &attr, entry, &starts[tid]) != 0) {
            L.pool.fail("could not start " + std::to_string(n) + " threads for one block");
            break;
        }
        ++made;
    }
    pthread_attr_destroy(&attr);
    if (made < n) {
        // The threads made wait at the first pool barrier; release them.
        L.pool.fail("could not start " + std::to_string(n) + " threads for one block");
    }
    for (unsigned tid = 0; tid < made; ++tid) pthread_join(threads[tid], nullptr);
    std::string e = L.group.error();
    if (e.empty()) e = L.pool.error();
    if (e.empty()) return 0;
    std::snprintf(err, errlen, "%s", e.c_str());
    return -1;
}

}  // extern "C"
