"""Control flow around a barrier is group-uniform (DESIGN §1, "Convergence, precisely").

Every work-item of a group, in the ndrange or not, must reach each ``@synchronize()``.
So a loop around a barrier, its condition, its counter and the statements that update
them are run by every work-item (and once per group on the native CPU path, where a
group's work-items run as loops between barriers); only per-item statements are masked.
Control flow that depends on a per-item value is a ``KernelSyntaxError`` at the line.

The five bugs of issue 11, each on the native CPU path, on PoCL, and as renderings;
CUDA and Metal run on their CPU stand-ins through the ``backend`` fixture. A launch that
could hang (the bug this file is about) runs in a subprocess with a timeout, or under
:func:`hang_guard`, so a regression fails instead of stopping CI.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import portakern as pk
from portakern.backends.native import NativeCPU

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("c", "opencl", "cuda", "metal")

pytestmark = pytest.mark.skipif(not pk.CPU.available(),
                                reason=f"no CPU backend: {pk.CPU.available().reason}")


@contextlib.contextmanager
def hang_guard(seconds: float = 600):
    """End the test process (with every thread's stack) if the block hangs.

    A kernel whose barrier loop never ends spins in native code, where no Python
    timeout reaches it; faulthandler's watchdog thread does.
    """
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def run_isolated(script: str, *, env: dict[str, str] | None = None, timeout: float = 180):
    """Run ``script`` in a fresh interpreter; return the JSON it prints last.

    A hang (the bug under test) is a failure with the timeout, not a stuck test run.
    """
    full_env = dict(os.environ)
    full_env.pop("PORTAKERN_CPU", None)
    full_env.update(env or {})
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [full_env.get("PYTHONPATH")])])
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                              capture_output=True, text=True, timeout=timeout,
                              env=full_env, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the kernel did not finish in {timeout} s (a loop around a barrier that "
                    f"never ends?)")
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def enclosing(text: str, needle: str) -> list[str]:
    """For each ``{`` open around the first ``needle``: the text of its line before it."""
    at = text.index(needle)
    stack: list[str] = []
    for m in re.finditer(r"[{}]", text[:at]):
        if m.group() == "{":
            start = text.rfind("\n", 0, m.start()) + 1
            stack.append(text[start:m.start()])
        elif stack:
            stack.pop()
    return stack


def assert_unmasked(text: str, needle: str, *, lockstep: bool) -> None:
    """``needle`` is outside every ``if (pk_active)`` (and, lockstep, every item loop)."""
    opened = enclosing(text, needle)
    masks = [o for o in opened if o.rstrip().endswith("if (pk_active)")]
    assert not masks, f"{needle!r} is masked:\n{text}"
    if lockstep:
        loops = [o for o in opened if "pk_l0 = 0; pk_l0 < " in o]
        assert not loops, f"{needle!r} runs once per work-item, not once per group:\n{text}"


# -- 1. loop-carried uniform state around a barrier ------------------------------------------

REDUCE_WHILE = """\
@kernel void group_sum(float* out, const float* x) {
    @localmem float buf[64];
    @uniform const long n = @ndrange();
    @uniform const long group = @index(Group, Linear);
    @uniform const long count = min((long)@groupsize(), n - group * (long)@groupsize());
    const long lid = @index(Local, Linear);
    buf[lid] = x[@index(Global, Linear)];
    @synchronize();
    {{ "@uniform " if UNIFORM }}long s = @groupsize() / 2;
    while (s > 0) {
        if (lid < s && lid + s < count) buf[lid] += buf[lid + s];
        @synchronize(); s >>= 1;
    }
    if (lid == 0) out[group] = buf[0];
}
"""
MARKS = {"uniform": True, "plain": False}


def _expected_sums(n: int, wg: int = 64) -> list[float]:
    return [float(min(wg, n - g)) for g in range(0, n, wg)]


@pytest.mark.parametrize("mark", MARKS)
@pytest.mark.parametrize("path", ["native", "opencl"])
def test_while_reduction_with_loop_carried_state_on_both_cpu_paths(mark, path):
    # ndrange=256: every group full (native gave 2 per group: `s >>= 1` ran once per
    # work-item on the shared `s`). ndrange=250: a partial last group (PoCL hung:
    # the masked `s >>= 1` never ended the loop for the work-items past the end).
    got = run_isolated(f"""
        import json, numpy as np, portakern as pk
        src = {REDUCE_WHILE!r}
        kernel = pk.kernel(src, UNIFORM={MARKS[mark]!r})
        out = {{}}
        for n in (256, 250):
            x = np.ones(n, np.float32)
            sums = np.zeros(-(-n // 64), np.float32)
            launcher = kernel(pk.CPU(), 64)
            launcher(sums, x, ndrange=n)
            out[n] = [sums.tolist(), type(launcher.runner).__name__]
        print(json.dumps(out))
        """, env={"PORTAKERN_CPU": "opencl" if path == "opencl" else "auto"})
    runner = "NativeCPU" if path == "native" else "CPU"
    assert got["256"] == [_expected_sums(256), runner]
    assert got["250"] == [_expected_sums(250), runner]


def test_while_reduction_on_the_opencl_backend():
    got = run_isolated(f"""
        import json, numpy as np, portakern as pk
        backend = pk.OpenCL()
        kernel = pk.kernel({REDUCE_WHILE!r}, UNIFORM=False)
        x = backend.to_device(np.ones(250, np.float32))
        sums = backend.zeros(4, np.float32)
        kernel(backend, 64)(sums, x, ndrange=250)
        backend.synchronize()
        print(json.dumps(backend.to_host(sums).tolist()))
        """)
    assert got == _expected_sums(250)


@pytest.mark.parametrize("mark", MARKS)
@pytest.mark.parametrize("target", TARGETS)
def test_while_reduction_update_is_outside_the_mask_in_every_rendering(mark, target):
    text = pk.kernel(REDUCE_WHILE, UNIFORM=MARKS[mark]).render(target)
    assert_unmasked(text, "s >>= 1;", lockstep=target == "c")
    # The declaration of `s` too: every work-item (the C path: the group) has it.
    assert_unmasked(text, " s = ", lockstep=target == "c")
    # ... while the per-item statement stays masked (the C path: its item loop stops at
    # the ndrange).
    mask = "pk_l0 < (pk_n0 - pk_g0 * pk_ls0" if target == "c" else "if (pk_active)"
    assert any(mask in o for o in enclosing(text, "buf[lid] += buf[lid + s]"))


@pytest.mark.parametrize("mark", MARKS)
def test_while_reduction_on_every_backend(backend, mark):
    # CUDA and Metal run on their CPU stand-ins, which fail a launch whose barriers
    # diverge (the old rendering) instead of hanging; PoCL hung (hence the guard).
    kernel = pk.kernel(REDUCE_WHILE, UNIFORM=MARKS[mark])
    for n in (256, 250):
        x = backend.to_device(np.ones(n, np.float32))
        sums = backend.zeros(-(-n // 64), np.float32)
        with hang_guard():
            kernel(backend, 64)(sums, x, ndrange=n)
            backend.synchronize()
        assert backend.to_host(sums).tolist() == _expected_sums(n)


def test_uniform_statements_run_once_per_group_on_the_native_path():
    # `k += 1` and `t = k * 2` update the loop state; a work-item loop would run them
    # once per item (64 times a round).
    src = """
    @kernel void rounds(int* out, const int* x, int steps) {
        @localmem int tile[64];
        const long li = @index(Local, Linear);
        tile[li] = x[@index(Global, Linear)];
        int k = 0;
        int t = 0;
        while (t < 2 * steps) {
            @synchronize();
            const int v = tile[(li + 1) % 64];
            @synchronize();
            tile[li] = v;
            k += 1;
            t = k * 2;
        }
        @synchronize();
        out[@index(Global, Linear)] = tile[li];
    }"""
    x = np.arange(128, dtype=np.int32)
    y = np.zeros(128, np.int32)
    launcher = pk.kernel(src)(pk.CPU(), 64)
    with hang_guard():
        launcher(y, x, np.int32(5), ndrange=128)
    assert isinstance(launcher.runner, NativeCPU) and launcher.runner.lockstep
    expected = np.concatenate([np.roll(x[g:g + 64], -5) for g in (0, 64)])
    np.testing.assert_array_equal(y, expected)
    text = pk.kernel(src).render("c")
    for stmt in ("k += 1;", "t = k * 2;", "int k = 0;", "int t = 0;"):
        assert_unmasked(text, stmt, lockstep=True)


def test_uniform_value_declared_in_the_loop_body_and_read_by_the_update():
    # `step` is declared in the loop, used by the masked statement and by the update of
    # `width`: it is group-uniform too (any group size, partial groups included).
    src = """
    @kernel void any_size_sum(long* out, const long* x) {
        @localmem long buf[256];
        @uniform const long group = @index(Group, Linear);
        const long li = @index(Local, Linear);
        buf[li] = x[@index(Global, Linear)];
        long width = min((long)@groupsize(), (long)@ndrange() - group * (long)@groupsize());
        @synchronize();
        while (width > 1) {
            const long step = (width + 1) / 2;
            if (li + step < width) buf[li] += buf[li + step];
            @synchronize();
            width = step;
        }
        if (li == 0) out[group] = buf[0];
    }"""
    n, wg = 301, 37
    x = np.arange(n, dtype=np.int64)
    for path in ("auto", "opencl"):
        out = np.zeros(-(-n // wg), np.int64)
        with _cpu_path(path), hang_guard():
            pk.kernel(src)(pk.CPU(), wg)(out, x, ndrange=n)
        np.testing.assert_array_equal(out, np.add.reduceat(x, np.arange(0, n, wg)))
    text = pk.kernel(src).render("opencl")
    assert_unmasked(text, "width = step;", lockstep=False)
    assert_unmasked(text, "step = (width + 1) / 2;", lockstep=False)


@contextlib.contextmanager
def _cpu_path(path: str):
    old = os.environ.get("PORTAKERN_CPU")
    os.environ["PORTAKERN_CPU"] = path
    try:
        yield
    finally:
        if old is None:
            del os.environ["PORTAKERN_CPU"]
        else:
            os.environ["PORTAKERN_CPU"] = old


def test_group_uniform_break_and_continue_leave_the_loop_together():
    # `if (s == 3) break;` and `if (s == 1) continue;` are control flow around the
    # barriers: unmasked, so the work-items past the end of the ndrange leave with the
    # others (masked, they looped on alone, and the group hung).
    src = """
    @kernel void f(float* y) {
        @localmem float buf[64];
        const long lid = @index(Local, Linear);
        long s = 0;
        while (1) {
            buf[lid] = s;
            @synchronize();
            if (s == 3) break;
            s++;
            if (s == 1) continue;
            @synchronize();
        }
        y[@index(Global, Linear)] = buf[lid] + s;
    }"""
    for target in ("opencl", "cuda", "metal"):
        text = pk.kernel(src).render(target)
        assert_unmasked(text, "if (s == 3) break;", lockstep=False)
        assert_unmasked(text, "if (s == 1) continue;", lockstep=False)
    for path in ("auto", "opencl"):
        y = np.zeros(100, np.float32)
        with _cpu_path(path), hang_guard():
            pk.kernel(src)(y, ndrange=100, workgroupsize=64)
        np.testing.assert_array_equal(y, 6)


# -- 2. per-item loop bounds around a barrier ------------------------------------------------

SPMV_VECTOR = """\
@kernel void csr_vector(float* y, const int* row_ptr, const int* cols, const float* vals,
                        const float* x, long num_rows) {
    @localmem float sums[64];
    const long thread_id = @index(Global, Linear);
    const long lane = @index(Local, Linear) % 8;
    const long vector_id = thread_id / 8;
    const long nvec = (long)@groupsize() / 8 * 4;
    for (long row = vector_id; row < num_rows; row += nvec) {
        float s = 0;
        for (int k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += 8) s += vals[k] * x[cols[k]];
        sums[@index(Local, Linear)] = s;
        @synchronize();
        if (lane == 0) {
            float t = 0;
            for (int l = 0; l < 8; ++l) t += sums[@index(Local, Linear) + l];
            y[row] = t;
        }
        @synchronize();
    }
}
"""


def _csr(num_rows: int, seed: int = 3):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 12, num_rows)
    row_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    cols = rng.integers(0, 50, row_ptr[-1]).astype(np.int32)
    vals = rng.random(row_ptr[-1]).astype(np.float32)
    x = rng.random(50).astype(np.float32)
    dense = np.zeros((num_rows, 50), np.float32)
    for r in range(num_rows):
        for k in range(row_ptr[r], row_ptr[r + 1]):
            dense[r, cols[k]] += vals[k]
    return row_ptr, cols, vals, x, dense @ x


@pytest.mark.parametrize("target", TARGETS)
def test_per_item_loop_bound_around_a_barrier_is_an_error_on_every_target(target):
    src = SPMV_VECTOR
    line = 8
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.kernel(src, filename="spmv.pk").render(target)
    err = info.value
    assert (err.filename, err.lineno) == ("spmv.pk", line)
    assert err.offset == src.split("\n")[line - 1].index("vector_id") + 1
    message = str(err)
    assert "'vector_id', which has a value per work-item" in message
    assert "@index(Global, ...)" in message  # where the per-item value comes from
    assert "group-uniform" in message and "masked body" in message  # the rule, the rewrite
    assert "    for (long row = vector_id;" in message and "^" in message  # the caret


@pytest.mark.parametrize("path", ["auto", "opencl"])
def test_per_item_loop_bound_is_refused_at_launch_on_both_cpu_paths(path):
    # It used to run on PoCL and leave rows unwritten (11 of 203).
    row_ptr, cols, vals, x, _ = _csr(203)
    y = np.zeros(203, np.float32)
    with _cpu_path(path), pytest.raises(pk.KernelSyntaxError, match="per work-item"):
        pk.kernel(SPMV_VECTOR)(
            y, row_ptr, cols, vals, x, 203, ndrange=256, workgroupsize=64)
    assert not y.any()


SPMV_REWRITTEN = """\
@kernel void csr_vector(float* y, const int* row_ptr, const int* cols, const float* vals,
                        const float* x, long num_rows) {
    @localmem float sums[64];
    @uniform const long vectors = (long)@groupsize() / 8;
    @uniform const long first = @index(Group, Linear) * vectors;
    @uniform const long stride = vectors * 4;
    const long lane = @index(Local, Linear) % 8;
    const long vector_in_group = @index(Local, Linear) / 8;
    // A group-uniform trip count; the per-item row is masked inside the loop.
    for (long base = first; base < num_rows; base += stride) {
        const long row = base + vector_in_group;
        float s = 0;
        if (row < num_rows) {
            for (int k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += 8)
                s += vals[k] * x[cols[k]];
        }
        sums[@index(Local, Linear)] = s;
        @synchronize();
        if (lane == 0 && row < num_rows) {
            float t = 0;
            for (int l = 0; l < 8; ++l) t += sums[@index(Local, Linear) + l];
            y[row] = t;
        }
        @synchronize();
    }
}
"""


@pytest.mark.parametrize("path", ["auto", "opencl"])
def test_the_suggested_rewrite_runs_on_both_cpu_paths(path):
    row_ptr, cols, vals, x, expected = _csr(203)
    y = np.zeros(203, np.float32)
    with _cpu_path(path), hang_guard():
        launcher = pk.kernel(SPMV_REWRITTEN)(pk.CPU(), 64)
        launcher(y, row_ptr, cols, vals, x, 203, ndrange=256)
    assert isinstance(launcher.runner, NativeCPU) == (path == "auto")
    np.testing.assert_allclose(y, expected, rtol=1e-5)


def test_the_suggested_rewrite_on_every_backend(backend):
    row_ptr, cols, vals, x, expected = _csr(203)
    dev = [backend.to_device(a) for a in (row_ptr, cols, vals, x)]
    y = backend.zeros(203, np.float32)
    with hang_guard():
        pk.kernel(SPMV_REWRITTEN)(backend, 64)(y, *dev, 203, ndrange=256)
        backend.synchronize()
    np.testing.assert_allclose(backend.to_host(y), expected, rtol=1e-5)


@pytest.mark.parametrize("body, line, needle, match", [
    # The loop state is changed under a per-item condition.
    ("long s = 32;\n    while (s > 0) {\n        @synchronize();\n"
     "        if (lid == 0) s = 0;\n    }", 5, "s > 0", "'s' is changed on line 7 by a "
     "statement that reads 'lid'"),
    # The header reads a per-item construct directly.
    ("while (@index(Local, Linear) < 4) {\n        @synchronize();\n    }", 4, "@index",
     r"reads @index\(Local, ...\)"),
    # A do-while condition.
    ("long k = lid;\n    do {\n        @synchronize();\n        k += 8;\n    } while (k < 64);",
     8, "k < 64", "'k'"),
    # An atomic's result differs between work-items.
    ("const int t = @atomic_add(&c[0], 1);\n    for (int k = 0; k < t; ++k) {\n"
     "        @synchronize();\n    }", 5, "t;", "@atomic_add"),
    # The update reads a per-item value.
    ("for (long s = 32; s > 0; s -= lid + 1) {\n        @synchronize();\n    }", 4,
     "lid + 1", "'lid'"),
    # Leaving the loop under a per-item condition: the others wait at the barrier.
    ("long s = 0;\n    while (s < 8) {\n        @synchronize();\n"
     "        if (lid == 3) break;\n        s++;\n    }", 7, "lid == 3",
     "'break' on line 7 leaves the loop on line 5"),
    ("long s = 0;\n    while (s < 8) {\n        @synchronize();\n"
     "        if (c[lid] > 0) return;\n        s++;\n    }", 7, "lid]", "'return' on line 7"),
    # A value declared with a per-item one in the same statement.
    ("const long g = @index(Group, Linear), l2 = lid;\n    for (long k = g; k < 4; ++k) {\n"
     "        @synchronize();\n    }", 4, "lid;", "declare 'g' in a declaration of its own"),
])
def test_per_item_control_around_a_barrier_is_refused(body, line, needle, match):
    src = ("@kernel void f(int* c) {\n"
           "    const long lid = @index(Local, Linear);\n"
           "    c[lid] = 0;\n"
           f"    {body}\n"
           "}\n")
    with pytest.raises(pk.KernelSyntaxError, match=match) as info:
        pk.kernel(src).render("opencl")
    assert info.value.lineno == line, str(info.value)
    assert info.value.offset == src.split("\n")[line - 1].index(needle) + 1, str(info.value)


@pytest.mark.parametrize("body", [
    # Group-uniform values in every form the analysis follows.
    "for (long s = @groupsize() / 2; s > 0; s >>= 1) { @synchronize(); }",
    "long s = n;\n    while (s > 1) { @synchronize(); s = (s + 1) / 2; }",
    "auto [g] = @index(Group, NTuple);\n    for (long k = g; k < n; k += 4) "
    "{ @synchronize(); }",
    "int steps = c[0];\n    for (int k = 0; k < steps; ++k) { @synchronize(); }",
    "long s = 1;\n    do { @synchronize(); s *= 2; } while (s < @groupsize());",
    # A name reused for a per-item variable elsewhere is another variable.
    "for (long k = lid; k < 64; k += 8) c[k] = 1;\n"
    "    for (long k = 0; k < 4; ++k) { @synchronize(); }",
    "{ const long s = lid; c[s] = 2; }\n    long s = 4;\n    while (s > 0) "
    "{ @synchronize(); s--; }",
])
def test_group_uniform_control_is_accepted(body):
    src = ("@kernel void f(int* c) {\n"
           "    const long lid = @index(Local, Linear);\n"
           "    @uniform const long n = @ndrange();\n"
           f"    {body}\n"
           "}\n")
    for target in TARGETS:
        pk.kernel(src).render(target)


# -- 3. #pragma unroll before a loop with a barrier -----------------------------------------

PRAGMA = """\
@kernel void tree(float* out, const float* x) {
    @localmem float buf[64];
    const long lid = @index(Local, Linear);
    buf[lid] = x[@index(Global, Linear)];
    @synchronize();
    #pragma unroll
    for (long s = 32; s > 0; s >>= 1) {
        if (lid < s) buf[lid] += buf[lid + s];
        @synchronize();
    }
#pragma unroll 2
    do { @synchronize(); } while (0);
    if (lid == 0) out[@index(Group, Linear)] = buf[0];
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_pragma_unroll_before_a_barrier_loop_renders(target):
    text = pk.kernel(PRAGMA).render(target)
    assert re.search(r"#pragma unroll\n\s*for \(long( long)? s = 32;", text), text
    assert re.search(r"#pragma unroll 2\n\s*do \{", text), text


@pytest.mark.parametrize("path", ["auto", "opencl"])
def test_pragma_unroll_before_a_barrier_loop_runs(path):
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(4, np.float32)
    with _cpu_path(path), hang_guard():
        pk.kernel(PRAGMA)(out, x, ndrange=256, workgroupsize=64)
    np.testing.assert_array_equal(out, x.reshape(4, 64).sum(axis=1))


# -- 4. static / inline helpers --------------------------------------------------------------

HELPERS = """\
{{ SPEC }} float twice(float v) { return v + v; }
{{ SPEC }} T thrice(T v);
{{ SPEC }} T thrice(T v) { return v * 3; }

@kernel void f(T* y, const T* x) {
    const long i = @index(Global, Linear);
    y[i] = twice(x[i]) + thrice(x[i]);
}
"""
SPECIFIERS = ["static", "inline", "static inline", "inline static"]


@pytest.mark.parametrize("spec", SPECIFIERS)
def test_static_and_inline_helpers_run_natively_without_a_fallback(spec):
    src = HELPERS.replace("{{ SPEC }}", spec)
    y, x = np.zeros(10, np.float32), np.arange(10, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NativeFallbackWarning
        launcher = pk.kernel(src)(pk.CPU())
        launcher(y, x, ndrange=10)
    assert isinstance(launcher.runner, NativeCPU)
    np.testing.assert_array_equal(y, 5 * x)


@pytest.mark.parametrize("spec", SPECIFIERS)
def test_static_and_inline_helpers_on_every_backend(backend, spec):
    src = HELPERS.replace("{{ SPEC }}", spec)
    x = np.arange(10, dtype=np.float32)
    y = backend.zeros(10, np.float32)
    pk.kernel(src)(backend)(y, backend.to_device(x), ndrange=10)
    backend.synchronize()
    np.testing.assert_array_equal(backend.to_host(y), 5 * x)


@pytest.mark.parametrize("spec", SPECIFIERS)
def test_static_and_inline_helpers_render_one_prefix_per_target(spec):
    src = HELPERS.replace("{{ SPEC }}", spec)
    for target, prefix in [("c", "static inline "), ("cuda", "__device__ "),
                           ("opencl", ""), ("metal", "")]:
        text = pk.kernel(src).render(target, T="float")
        helpers = text.split("typedef float T;")[1].split("thrice(T v) {")[0]
        # The target's prefix once, the user's specifiers dropped (C++ has both).
        assert re.search(rf"(^|\n){prefix}T thrice\(T v\);", helpers), helpers
        # Three declarations: C++ says 'static inline' before each, the others never.
        expected = 3 if target == "c" else 0
        assert helpers.count("static") == helpers.count("inline") == expected, helpers


def test_static_and_inline_helpers_compile_for_cuda():
    from portakern.checks import cuda as cuda_checks

    ok, why = cuda_checks.cuda_check_available()
    if not ok:
        pytest.skip(why)
    for spec in SPECIFIERS:
        source = pk.kernel(HELPERS.replace("{{ SPEC }}", spec)).render("cuda", T="float")
        cuda_checks.compile_cuda_ptx(source)  # raises CompilationError with the log


def test_the_first_example_of_the_language_docs_runs_natively():
    doc = (ROOT / "docs" / "language.md").read_text()
    src = re.search(r"```c\n(.*?)```", doc, re.S).group(1)
    assert "static inline" in src
    y, x = np.ones(8, np.float32), np.arange(8, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        launcher = pk.kernel(src)(pk.CPU())
        launcher(y, x, np.float32(2), ndrange=8)
    assert isinstance(launcher.runner, NativeCPU)
    np.testing.assert_array_equal(y, 2 * x + 1)


# -- 5. @uniform on a store, a barrier in a loop header, reserved pk_ names ------------------

def _error(src: str, target: str = "opencl") -> pk.KernelSyntaxError:
    with pytest.raises(pk.KernelSyntaxError) as info:
        pk.kernel(src).render(target)
    return info.value


@pytest.mark.parametrize("stmt", ["@uniform y[i] = 1;", "@uniform *y = 1;",
                                  "@uniform i2 = 3;", "@uniform;"])
@pytest.mark.parametrize("target", TARGETS)
def test_uniform_on_anything_but_a_declaration_is_an_error(stmt, target):
    src = ("@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    long i2 = 0;\n"
           f"    {stmt}\n"
           "    @synchronize();\n"
           "}\n")
    err = _error(src, target)
    assert (err.lineno, err.offset) == (4, 5)
    assert "@uniform marks the declaration" in str(err)


def test_uniform_store_does_not_run_past_the_ndrange_any_more():
    # It was rendered outside the bounds mask: a write past the end of y.
    src = ("@kernel void f(float* y) {\n"
           "    const long i = @index(Global, Linear);\n"
           "    @uniform y[i] = 1;\n"
           "    @synchronize();\n"
           "}\n")
    y = np.zeros(70, np.float32)
    with pytest.raises(pk.KernelSyntaxError, match="@uniform"):
        pk.kernel(src)(y[:50], ndrange=50, workgroupsize=64)
    assert not y.any()


def test_uniform_value_with_a_per_item_value_is_an_error():
    src = ("@kernel void f(float* y) {\n"
           "    @uniform const long i = @index(Global, Linear);\n"
           "    @synchronize();\n"
           "    y[i] = 1;\n"
           "}\n")
    err = _error(src)
    assert (err.lineno, err.offset) == (2, src.split("\n")[1].index("@index") + 1)
    assert "@uniform 'i' must have the same value for every work-item" in str(err)


@pytest.mark.parametrize("header", ["for (@synchronize(); k < 4; ++k)",
                                    "for (; k < 4; @synchronize())",
                                    "while ((@synchronize(), k < 4))"])
@pytest.mark.parametrize("target", TARGETS)
def test_synchronize_in_a_loop_header_is_an_error(header, target):
    src = ("@kernel void f(float* y) {\n"
           "    int k = 0;\n"
           f"    {header} {{ ++k; }}\n"
           "}\n")
    err = _error(src, target)
    assert (err.lineno, err.offset) == (3, src.split("\n")[2].index("@synchronize") + 1)
    assert "header" in str(err) or "statement of its own" in str(err)


@pytest.mark.parametrize("src, name, line", [
    ("@kernel void f(float* y) {\n    const long pk_i = 0;\n    y[pk_i] = 1;\n}\n", "pk_i", 2),
    ("float pk_twice(float v) { return v + v; }\n@kernel void f(float* y) {\n"
     "    y[0] = pk_twice(1);\n}\n", "pk_twice", 1),
    ("#define pk_n0 3\n@kernel void f(float* y) {\n    y[0] = 1;\n}\n", "pk_n0", 1),
    ("@kernel void f(float* y) {\n    float pk_active = 1;\n    y[0] = pk_active;\n}\n",
     "pk_active", 2),
])
def test_pk_names_are_reserved_everywhere(src, name, line):
    err = _error(src)
    assert err.lineno == line
    assert f"'{name}'" in str(err) and "reserved" in str(err)


# -- the examples of docs/language.md ----------------------------------------------------

def _doc_examples() -> tuple[str, list[str]]:
    """The accepted block (whole) and each refused example of "Barriers and convergence"."""
    doc = (ROOT / "docs" / "language.md").read_text()
    section = doc.split("## Barriers and convergence", 1)[1].split("\n## ", 1)[0]
    accepted, refused = re.findall(r"```c\n(.*?)```", section, re.S)
    examples: list[str] = []
    current: list[str] = []
    for line in refused.splitlines():
        if line.strip().startswith("//"):  # a comment block ends the example above it
            if current:
                examples.append("\n".join(current))
                current = []
            continue
        current.append(line)
        if "//" in line:
            examples.append("\n".join(current))
            current = []
    if current:
        examples.append("\n".join(current))
    return accepted, examples


DOC_CONTEXT = """\
@kernel void doc(float* y, int* c, int steps) {
    @localmem float buf[64];
    const long lid = @index(Local, Linear);
    @uniform const long count = min((long)@groupsize(), (long)@ndrange());
    {{ DECLARATIONS }}
    BODY
}
"""


def test_the_accepted_examples_of_the_docs_are_accepted():
    accepted, _ = _doc_examples()
    src = DOC_CONTEXT.replace("{{ DECLARATIONS }}", "").replace("BODY", accepted)
    for target in TARGETS:
        pk.kernel(src).render(target)


def test_each_refused_example_of_the_docs_is_refused():
    _, refused = _doc_examples()
    assert len(refused) >= 9
    declarations = ("const long i = @index(Global, Linear); const long vector_id = i / 8; "
                    "const long nvec = 8; const long num_rows = 100; const long n = 4; "
                    "const bool flag = c[0] > 0; long s = 4;")
    for example in refused:
        src = DOC_CONTEXT.replace("{{ DECLARATIONS }}", declarations).replace("BODY", example)
        with pytest.raises(pk.KernelSyntaxError) as info:
            pk.kernel(src).render("opencl")
        # Refused for what the comment says, not for the context around it.
        assert re.search(r"per work-item|@uniform marks|header|cannot be convergent",
                         str(info.value)), (example, str(info.value))


# -- a barrier inside a group-uniform `if` ------------------------------------------------

UNIFORM_IF = """
@kernel void flip(float* y, const float* x, const int* mode) {
    @localmem float t[64];
    const long l = @index(Local, Linear);
    const long g = @index(Global, Linear);
    t[l] = x[g];
    if (mode[0] == 1) {
        @synchronize();
        y[g] = t[63 - l];
    } else if (mode[0] == 2) {
        @synchronize();
        y[g] = t[(l + 1) % 64];
    } else {
        y[g] = -t[l];
    }
}"""


def _flip_expected(x: np.ndarray, n: int, mode: int) -> np.ndarray:
    groups = [x[s:s + 64] for s in range(0, len(x), 64)]
    if mode == 1:
        out = np.concatenate([g[::-1] for g in groups])
    elif mode == 2:
        out = np.concatenate([np.roll(g, -1) for g in groups])
    else:
        out = -x
    return out[:n]


@pytest.mark.parametrize("mode", [1, 2, 3])
@pytest.mark.parametrize("path", ["auto", "opencl"])
def test_a_barrier_in_a_group_uniform_if_runs_on_both_cpu_paths(path, mode):
    # 250 work-items: the last group is partial, and its masked items still take the
    # branch with the barrier (they read the same mode[0]).
    x = np.arange(256, dtype=np.float32) + 1
    y = np.zeros(250, np.float32)
    with _cpu_path(path), hang_guard():
        launcher = pk.kernel(UNIFORM_IF)(pk.CPU(), 64)
        launcher(y, x, np.array([mode], np.int32), ndrange=250)
    assert isinstance(launcher.runner, NativeCPU) == (path == "auto")
    expected = _flip_expected(x, 250, mode)
    # The partial group's mirror reads t[] of items past the end (x[250:256] was loaded
    # by no one: only the first 250 wrote t); compare the items whose source was written.
    written = np.array([(s := (i // 64) * 64) + (63 - (i - s)) < 250 if mode == 1 else
                        (i // 64) * 64 + ((i % 64) + 1) % 64 < 250 if mode == 2 else True
                        for i in range(250)])
    np.testing.assert_array_equal(y[written], expected[written])


def test_a_barrier_in_a_group_uniform_if_on_every_backend(backend):
    x = np.arange(256, dtype=np.float32) + 1
    for mode in (1, 3):
        y = backend.zeros(256, np.float32)
        with hang_guard():
            pk.kernel(UNIFORM_IF)(backend, 64)(y, backend.to_device(x),
                                               backend.to_device(np.array([mode], np.int32)),
                                               ndrange=256)
            backend.synchronize()
        np.testing.assert_array_equal(backend.to_host(y), _flip_expected(x, 256, mode))


@pytest.mark.parametrize("target", TARGETS)
def test_the_condition_of_an_if_around_a_barrier_is_outside_the_mask(target):
    text = pk.kernel(UNIFORM_IF).render(target)
    if target == "c":  # once per group, between the work-item loops
        assert_unmasked(text, "if (mode[0] == 1)", lockstep=True)
        return
    # Every work-item computes the condition, and no barrier is under any condition:
    # each branch's statements are guarded instead (PoCL mis-masks after a barrier
    # inside an `if`).
    assert_unmasked(text, "pk_if0 = (mode[0] == 1)", lockstep=False)
    assert "pk_if1 = !pk_if0 && (mode[0] == 2)" in text
    barrier = {"opencl": "barrier(CLK_", "cuda": "__syncthreads()",
               "metal": "threadgroup_barrier("}[target]
    body = text[text.index("pk_if0"):]
    starts = [m.start() for m in re.finditer(re.escape(barrier), body)]
    assert len(starts) == 2
    for at in starts:
        conditions = [o for o in enclosing(body, body[at:at + 40]) if "if (" in o]
        assert not conditions, f"a barrier under {conditions}:\n{text}"
    assert "pk_active && pk_if0" in text and "pk_active && !pk_if0 && !pk_if1" in text


@pytest.mark.parametrize("cond, name", [("l > 3", "l"), ("x[g] > 0", "g")])
@pytest.mark.parametrize("target", TARGETS)
def test_a_barrier_in_a_per_item_if_is_refused_at_the_line(cond, name, target):
    src = UNIFORM_IF.replace("mode[0] == 2", cond)
    err = _error(src, target)
    assert err.lineno == 10
    assert f"depends on '{name}', which has a value per work-item" in str(err)
    assert "must take the same branch" in str(err)
