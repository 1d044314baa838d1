"""The statement tree of a kernel body (portakern.syntax.tree) and the facts read off it."""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.backends.native import NativeCPU
from portakern.errors import KernelSyntaxError
from portakern.syntax.tree import (
    Barrier,
    Block,
    If,
    Jump,
    Label,
    Loop,
    Simple,
    Switch,
    Visitor,
    walk,
)

BODY = """@kernel void f(float* y, long count) {
    const long i = @index(Global, Linear);
    @uniform long s = @groupsize() / 2;
    if (i < 3) { y[i] = 1; } else y[i] = 2;
    #pragma unroll
    for (int j = 0; j < 2; ++j) { @synchronize(); if (j) continue; }
    while (s > 0) { if (i < s) y[i] += 1; @synchronize(); s >>= 1; }
    do { s++; } while (s < 3);
    switch (i) { case 1: y[0] = 2; break; default: break; }
    float a[2] = {1, 2};
    for (int k = 0; k < 4; ++k) { if (k == count) break; }
}"""


def _tree(source: str = BODY):
    from portakern.syntax.tree import parse_body

    kernel = pk.kernel(source)
    module, kdef = kernel.parsed("opencl")
    return kernel, kdef, parse_body(kdef.body, module.source_map)


def _text(node) -> str:
    return "".join(t.text for t in node.tokens).strip()


def test_the_tree_is_lossless_and_shaped_like_the_source():
    _, kdef, root = _tree()
    assert "".join(t.text for t in root.tokens) == "".join(t.text for t in kdef.body)
    kinds = [type(n).__name__ for n in root.body]
    assert kinds == ["Simple", "Simple", "If", "Loop", "Loop", "Loop", "Switch", "Simple",
                     "Loop"]
    decl, uniform, branch, unrolled, loop, do, switch, array, search = root.body
    assert not decl.uniform and uniform.uniform and "@groupsize" in uniform.constructs
    assert _text(branch.then) == "{ y[i] = 1; }" and _text(branch.orelse) == "y[i] = 2;"
    assert [p.text for p in unrolled.pragmas] == ["#pragma unroll"]
    assert unrolled.word == "for" and isinstance(unrolled.body.body[0], Barrier)
    assert loop.word == "while" and "".join(t.text for t in loop.header) == "s > 0"
    assert do.word == "do" and "".join(t.text for t in do.header) == "s < 3"
    assert [type(n) for n in switch.body.body] == [Label, Simple, Jump, Label, Jump]
    assert _text(array) == "float a[2] = {1, 2};"
    # Every statement's tokens are a contiguous slice of its parent's.
    for node, ancestors in walk(root):
        if ancestors:
            parent = "".join(t.text for t in ancestors[-1].tokens)
            assert "".join(t.text for t in node.tokens) in parent


def test_facts_name_the_barrier_loops_and_the_jumps_that_leave_work_item_loops():
    kernel, _, _ = _tree()
    facts = kernel.facts("opencl")
    assert facts.barriers == 2 and facts.lockstep
    assert [loop.word for loop in facts.loops_with_barriers] == ["for", "while"]
    # `continue` of the barrier loop leaves a work-item loop; the `break`s of the
    # switch and of the barrier-free search loop do not.
    assert [(j.word, j.first.line) for j in facts.jumps_leaving_items] == [("continue", 6)]
    assert facts.lockstep_blocker == "'continue' at line 6"


def test_return_leaves_the_work_item_loop_even_without_a_barrier():
    kernel = pk.kernel("""@kernel void f(float* y) {
        @localmem float t[4];
        const long i = @index(Global, Linear);
        if (i > 100) return;
        y[i] = 1;
    }""")
    facts = kernel.facts("c")
    assert facts.barriers == 0 and facts.lockstep
    assert facts.lockstep_blocker == "'return' at line 4"
    assert pk.kernel("@kernel void g(float* y) { if (y[0] > 1) return; y[0] = 2; }"
                     ).facts("c").lockstep_blocker is None


def test_a_visitor_sees_every_node_and_may_prune():
    _, _, root = _tree()

    class Count(Visitor):
        def __init__(self) -> None:
            self.seen: list[str] = []

        def visit_If(self, node: If) -> None:
            self.seen.append("if")

        def visit_Switch(self, node: Switch) -> bool:
            self.seen.append("switch")
            return False  # its breaks are not visited

        def visit_Jump(self, node: Jump) -> None:
            self.seen.append(node.word)

    v = Count()
    v.visit(root)
    assert v.seen == ["if", "if", "continue", "if", "switch", "if", "break"]


@pytest.mark.parametrize("body, message", [
    ("if x > 1 { }", "expected '(' after 'if'"),
    ("do { } until (1);", "expected 'while (...);' after the body of 'do'"),
    ("y[0] = 1", "expected ';' to end the statement"),
])
def test_malformed_statements_are_errors_at_the_line(body, message):
    from portakern.syntax.tree import parse_body

    kernel = pk.kernel("@kernel void f(float* y) {\n    " + body + "\n}")
    module, kdef = kernel.parsed("opencl")
    with pytest.raises(KernelSyntaxError, match=message.replace("(", r"\(").replace(
            ")", r"\)").replace(".", r"\.")) as info:
        parse_body(kdef.body, module.source_map)
    assert info.value.lineno == 2


def test_a_barrier_kernel_with_a_break_in_a_barrier_free_loop_runs_natively(monkeypatch):
    # It used to go to OpenCL: any jump in a barrier kernel did. The break leaves only
    # its own loop, which lies inside one work-item's part.
    monkeypatch.delenv("PORTAKERN_CPU", raising=False)
    if not NativeCPU.available():
        pytest.skip(f"no native CPU path: {NativeCPU.available().reason}")
    src = """
    @kernel void first_above(int* out, const float* x, float level) {
        @localmem int found[64];
        const long l = @index(Local, Linear);
        const long g = @index(Global, Linear);
        int at = -1;
        for (int k = 0; k < 16; ++k) {
            if (x[g * 16 + k] > level) { at = k; break; }
            if (k < 0) continue;
        }
        found[l] = at;
        @synchronize();
        out[g] = found[63 - l];
    }"""
    rng = np.random.default_rng(5)
    x = rng.random((128, 16), dtype=np.float32)
    out = np.zeros(128, np.int32)
    kernel = pk.kernel(src)
    assert kernel.facts("c").lockstep_blocker is None
    launcher = kernel(pk.CPU(), 64)
    launcher(out, x, np.float32(0.9), ndrange=128)
    assert isinstance(launcher.runner, NativeCPU) and launcher.runner.lockstep
    above = x > 0.9
    first = np.where(above.any(axis=1), above.argmax(axis=1), -1).astype(np.int32)
    expected = np.concatenate([first[63::-1], first[:63:-1]])
    np.testing.assert_array_equal(out, expected)


def test_root_is_a_block_of_the_whole_body():
    _, kdef, root = _tree("@kernel void f(float* y) { }")
    assert isinstance(root, Block) and root.body == []
    _, _, root = _tree("@kernel void f(float* y) { ; y[0] = 1; }")
    assert [type(n) for n in root.body] == [Simple, Simple]
    assert isinstance(Loop([]), Loop)  # nodes are plain values


# -- the tree of lowered parts: what the lowering and the convergence analysis walk ---------

def _parts_tree(source: str):
    from portakern.lower.lowerer import Lowerer
    from portakern.syntax.tree import parse_body

    kernel = pk.kernel(source)
    module, kdef = kernel.parsed("opencl")
    items = Lowerer(kdef, module, 1).lower_tokens(kdef.body)
    return items, parse_body(items, module.source_map)


def _around_and_children(block: Block) -> list:
    head, tail, close = block.around()
    return head + [it for child in block.body for it in child.tokens] + tail + close


def test_the_tree_of_lowered_parts_is_lossless_and_names_barriers_and_collectives():
    from portakern.syntax.parts import Call, Gen, UniformMark, code
    from portakern.syntax.tree import Collective

    items, root = _parts_tree(
        "@kernel void f(float* y, const float* x) {\n"
        "    @localmem float t[64];\n"
        "    @uniform const long n = @ndrange();\n"
        "    const long i = @index(Global, Linear);\n"
        "    const float s = @groupreduce(add, x[i]);\n"
        "    for (long k = 0; k < n; k += 64) {  // a loop around a barrier\n"
        "        t[@index(Local, Linear)] = s;\n"
        "        @synchronize();\n"
        "        y[i] += t[0]\n"  # no ';' before '}': the compiler says so, not the tree
        "    }\n"
        "}")
    # Generated text and primitive calls are in the parts, opaque to the parser.
    assert any(isinstance(it, Call) for it in items) and any(isinstance(it, Gen) for it in items)
    assert root.tokens == items and _around_and_children(root) == items
    kinds = [type(n).__name__ for n in root.body]
    assert kinds == ["Simple", "Simple", "Collective", "Loop"]
    uniform, _, reduce, loop = root.body
    assert uniform.uniform and isinstance(code(uniform.tokens)[0], UniformMark)
    assert isinstance(reduce, Collective) and reduce.call.macro == "groupreduce"
    inner = loop.body
    assert [type(n).__name__ for n in inner.body] == ["Simple", "Barrier", "Simple"]
    assert _around_and_children(inner) == inner.tokens
    # The header's parentheses are where paren says.
    assert loop.tokens[loop.paren[0]].text == "(" and loop.tokens[loop.paren[1]].text == ")"
    assert loop.tokens[loop.paren[0] + 1:loop.paren[1]] == loop.header


@pytest.mark.parametrize("stmt", ["for\n    @synchronize();", "while @synchronize();"])
def test_a_loop_around_a_barrier_that_does_not_parse_says_which_shapes_work(stmt):
    from portakern.syntax.tree import parse_body

    kernel = pk.kernel("@kernel void f(float* y) {\n    " + stmt + "\n}")
    module, kdef = kernel.parsed("opencl")
    with pytest.raises(KernelSyntaxError, match="malformed statement around @synchronize"):
        parse_body(kdef.body, module.source_map)
    # Without a barrier the parser's own message stands.
    kernel = pk.kernel("@kernel void f(float* y) {\n    while y[0] = 1;\n}")
    module, kdef = kernel.parsed("opencl")
    with pytest.raises(KernelSyntaxError, match=r"expected '\(' after 'while'"):
        parse_body(kdef.body, module.source_map)
