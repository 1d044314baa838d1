"""The typed tree: expressions parsed from statements, and a type on every node.

portakern.syntax.expressions (the parser, one Cursor) and
portakern.analysis.expression_types (the symbol table and C's typing rules); the sweep at
the end reads every kernel of the examples and of the golden catalog (docs/rendering.md,
"The typed tree").
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import portakern as pk
from portakern.analysis.expression_types import (
    TypedBody,
    arithmetic,
    index_narrowing,
    scalar,
    typed_body,
    unknown_nodes,
)
from portakern.source.source_map import SourceMap
from portakern.syntax.expressions import (
    Assign,
    Binary,
    Call,
    Cast,
    Comma,
    Construct,
    Cursor,
    Decl,
    ForHeader,
    Literal,
    Member,
    Name,
    Paren,
    Subscript,
    Ternary,
    TypeName,
    Unary,
    parse_expression,
    parse_for_header,
    parse_run,
    parse_statement,
    statement_code,
    tokens_in,
)
from portakern.syntax.language import parse
from portakern.syntax.tokens import tokenize
from portakern.syntax.tree import body_facts, parse_body, walk

ROOT = Path(__file__).resolve().parent.parent


def toks(text: str) -> list:
    return tokenize(text, SourceMap("t.pk", text, list(range(1, text.count("\n") + 2))))


def tree(text: str, type_names=("T",)):
    return parse_statement(toks(text), type_names)


def sexpr(node) -> str:
    """A compact spelling of a tree: (op left right)."""
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Literal):
        return node.text
    if isinstance(node, Paren):
        return f"({sexpr(node.inner)})"
    if isinstance(node, Binary):
        return f"({node.op} {sexpr(node.left)} {sexpr(node.right)})"
    if isinstance(node, Assign):
        return f"({node.op} {sexpr(node.target)} {sexpr(node.value)})"
    if isinstance(node, Unary):
        return f"({node.op}{'post' if node.postfix else ''} {sexpr(node.operand)})"
    if isinstance(node, Ternary):
        return f"(? {sexpr(node.condition)} {sexpr(node.then)} {sexpr(node.orelse)})"
    if isinstance(node, Comma):
        return "(, " + " ".join(map(sexpr, node.items)) + ")"
    if isinstance(node, Subscript):
        return f"([] {sexpr(node.base)} " + " ".join(map(sexpr, node.indices)) + ")"
    if isinstance(node, Call):
        return f"(call {sexpr(node.func)} " + " ".join(map(sexpr, node.args)) + ")"
    if isinstance(node, Member):
        return f"({node.op} {sexpr(node.base)} {node.name})"
    if isinstance(node, Cast):
        return f"(cast {node.type.spelling} {sexpr(node.operand)})"
    if isinstance(node, TypeName):
        return node.spelling
    if isinstance(node, Construct):
        return f"({node.name} " + " ".join(map(sexpr, node.args)) + ")"
    return type(node).__name__


# -- the parser -----------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("a + b * c", "(+ a (* b c))"),
    ("a * b + c", "(+ (* a b) c)"),
    ("a - b - c", "(- (- a b) c)"),  # left-associative
    ("a / b * c", "(* (/ a b) c)"),
    ("a = b = c", "(= a (= b c))"),  # right-associative
    ("a += b << 2", "(+= a (<< b 2))"),
    ("a || b && c | d ^ e & f", "(|| a (&& b (| c (^ d (& e f)))))"),
    ("a == b < c", "(== a (< b c))"),
    ("a < b ? c : d ? e : f", "(? (< a b) c (? d e f))"),
    ("-a[i]++", "(- (++post ([] a i)))"),
    ("*p++ = !x", "(= (* (++post p)) (! x))"),
    ("a, b = c", "(, a (= b c))"),
    ("f(a, b)(c)", "(call (call f a b) c)"),
    ("p->q.xy", "(. (-> p q) xy)"),
    ("a[i, j]", "([] a i j)"),
    ("a[i][j]", "([] ([] a i) j)"),
    ("(float)i / n", "(/ (cast float i) n)"),
    ("(T)(x) + 1", "(+ (cast T (x)) 1)"),
    ("(x) + 1", "(+ (x) 1)"),  # x is no type: a parenthesised expression
    ("(x)(y)", "(call (x) y)"),
    ("(const float*)(p + 1)", "(cast float* ((+ p 1)))"),
    ("float4(a, b, c, d).x", "(. (call float4 a b c d) x)"),
    ("@index(Global, Linear) * 2", "(* (@index Global Linear) 2)"),
    ("@groupreduce(+, v)", "(@groupreduce + v)"),
    ("a &= b", "(&= a b)"),
    ("a & =b", None),  # '&' and '=' apart are not '&='
])
def test_precedence_and_associativity(text, want):
    code = toks(text)
    got = parse_expression(code, {"T"})
    assert (None if got is None else sexpr(got)) == want
    if got is not None:  # every token is in the tree, once
        assert sorted(map(id, tokens_in(got))) == sorted(id(t) for t in code if t.kind != "ws")


def test_a_comma_subscript_is_one_subscript_with_two_indices():
    t = tree("a[i, j] = 1;")
    assert isinstance(t, Assign) and isinstance(t.target, Subscript)
    assert [sexpr(i) for i in t.target.indices] == ["i", "j"]
    assert t.first.text == "a" and t.last.text == "1"


def test_declarations():
    d = tree("const float x = (float)i + 1.0f, z[3] = {1, 2,}, *p;")
    assert isinstance(d, Decl) and d.type.words == ("float",) and d.type.const
    assert [(x.name, x.stars, len(x.dims)) for x in d.declarators] == [("x", 0, 0), ("z", 0, 1),
                                                                        ("p", 1, 0)]
    s = tree("auto [i, j] = @index(Global, NTuple);")
    assert isinstance(s, Decl) and [b.name for b in s.bindings] == ["i", "j"]
    assert isinstance(s.init, Construct) and s.init.name == "@index"
    m = tree("@localmem float tile[16][17];")
    assert m.constructs == ("@localmem",) and len(m.declarators[0].dims) == 2
    u = tree("unsigned int k = sizeof(float);")
    assert u.type.words == ("unsigned", "int")
    q = tree("const block_q4_0* b = x + i;", ())  # a type the parser was not told of
    assert isinstance(q, Decl) and q.type.words == ("block_q4_0",) and q.type.stars == 1


def test_for_header_and_unparseable_input():
    h = parse_for_header(toks("int k = 0; k < n; k += 2"))
    assert isinstance(h, ForHeader) and isinstance(h.init, Decl)
    assert sexpr(h.condition) == "(< k n)" and sexpr(h.step) == "(+= k 2)"
    assert parse_for_header(toks(";;")).init is None
    for bad in ["a + ;", "(a", "a b c d;", "f(,)", "a ? b;", "int;", "]"]:
        assert tree(bad) is None, bad


def test_the_cursor():
    c = Cursor(toks("a += /* c */ b"))
    assert c.look() == "a" and c.look(1) == "+=" and c.look(2) == "b"
    assert c.next_if("b") is None and c.next_if("a")[0].text == "a"
    assert [t.text for t in c.expect("+=")] == ["+", "="]
    with pytest.raises(Exception, match="expected"):
        c.expect(";")


def test_every_node_keeps_its_first_and_last_token():
    t = tree("y[i] = a * x[i] + y[i];")
    assert (t.first.text, t.last.text) == ("y", "]")
    assert (t.value.first.text, t.value.last.text, t.value.first.col) == ("a", "]", 8)


# -- types ----------------------------------------------------------------------------

KERNEL = """\
typedef struct {{ float re; int n[2]; }} pair;
#define SCALE 2.5f
static inline double twice(double v) {{ return 2 * v; }}
@kernel void k(float* x, const int* ci, uint u, long l, T t, const float4* vs,
               const uint8_t* b, half h, double d) {{
    const long i = @index(Global, Linear);
    float4 v = vs[0];
    pair one;
    const pair* pp = &one;
    int si = 0; char c = 'a'; short s = 1; unsigned long ul = 1;
    @localmem float tile[16][8];
    @private int acc[4];
    auto [gi, gj] = @index(Global, NTuple);
    for (int k = 0; k < 4; ++k) {{ acc[k] = k; }}
    {stmt}
}}
"""


def typed(stmt: str, binding=None) -> tuple[TypedBody, object]:
    src = KERNEL.format(stmt=stmt)
    smap = SourceMap("t.pk", src, list(range(1, src.count("\n") + 2)))
    module = parse(smap)
    kdef = module.kernels[0]
    facts = body_facts(parse_body(kdef.body, smap))
    body = typed_body(facts, module, kdef, binding)
    last = [n for n, _ in walk(body.root) if n in body.trees][-1]
    ((_, t),) = body.trees[last]
    return body, t


def type_of(expr: str, binding=None) -> str:
    body, t = typed(f"{expr};", binding)
    assert t is not None, expr
    return str(body.type_of(t))


@pytest.mark.parametrize("expr, want", [
    ("si + u", "uint"),  # int + unsigned -> unsigned
    ("si + l", "long"),  # int + long -> long
    ("u + l", "long"),   # a wider signed type holds every uint
    ("ul + l", "ulong"),
    ("x[0] * d", "double"),  # float * double -> double
    ("h + x[0]", "float"),   # half + float -> float
    ("h * 2", "half"),
    ("c", "char"), ("c + c", "int"), ("s * s", "int"), ("-c", "int"), ("b[0] + b[1]", "int"),
    ("1.0f", "float"), ("1.0", "double"), ("1e3", "double"), ("1.5h", "half"),
    ("1", "int"), ("1u", "uint"), ("1ul", "ulong"), ("1l", "long"), ("0xFFFFFFFF", "uint"),
    ("3000000000", "long"), ("'a'", "char"), ("true", "bool"),
    ("si < u", "bool"), ("!si", "bool"), ("si && l", "bool"),
    ("u << 2", "uint"), ("c << l", "int"), ("si % 3", "int"),
    ("i", "long"), ("@index(Local, Linear)", "long"), ("@ndrange(0) * si", "long"),
    ("gi + gj", "long"), ("k", "unknown"),  # the loop variable is out of scope here
    ("SCALE * si", "float"), ("twice(1.0f)", "double"),
    ("sqrt(x[0])", "float"), ("sqrt(si)", "double"), ("sqrtf(d)", "float"),
    ("fmin(h, d)", "double"), ("min(si, u)", "uint"), ("dot(v, v)", "float"),
    ("(float)si", "float"), ("(long)u * si", "long"), ("sizeof(float)", "ulong"),
    ("si ? x[0] : d", "double"), ("si = x[0]", "int"), ("si += d", "int"),
    ("si, x[0]", "float"), ("acc[si]", "int"), ("tile[1][2]", "float"), ("tile[1]", "float[8]"),
    ("pp->re", "float"), ("pp[0].n[1]", "int"), ("pp->missing", "unknown"),
    ("@groupreduce(add, x[i])", "float"), ("@shuffle_down(si, 1)", "int"),
    ("@atomic_add(&ci[0], 1)", "int"), ("@vload(4, x, i)", "float4"),
    ("FLT_MAX * si", "float"), ("M_PI", "double"), ("M_PI_F", "float"), ("INT_MAX", "int"),
    ("ilogb(d)", "int"), ("mystery(si)", "unknown"), ("undeclared + 1", "unknown"),
])
def test_c_typing_rules(expr, want):
    assert type_of(expr) == want


@pytest.mark.parametrize("expr, want", [
    ("x", "float*"), ("ci", "const int*"), ("x + si", "float*"), ("1 + x", "float*"),
    ("x - x", "long"), ("x[si]", "float"), ("*x", "float"), ("&x[1]", "float*"),
    ("*(x + 1)", "float"), ("tile[0] + 1", "float*"), ("b[i]", "uint8_t"),
])
def test_pointer_subscript_and_arithmetic(expr, want):
    assert type_of(expr) == want


@pytest.mark.parametrize("expr, want", [
    ("v", "float4"), ("v.x", "float"), ("v.xy", "float2"), ("v.zyx", "float3"),
    ("v.xxxx", "float4"), ("v.lo", "float2"), ("v.s3", "float"), ("v * 2.0f", "float4"),
    ("2 * v", "float4"), ("v + v", "float4"), ("v < v", "int4"), ("v.xy.y", "float"),
    ("v[2]", "float"), ("float2(1.0f, 2.0f)", "float2"), ("length(v.xyz)", "float"),
    ("v.q", "unknown"),
])
def test_vectors_and_swizzles(expr, want, monkeypatch):
    # The parser refuses swizzles as not portable (docs/language.md); the typed tree still
    # types them, for the day a lowering spells them on every target.
    monkeypatch.setattr("portakern.syntax.language.check_components", lambda *a: None)
    assert type_of(expr) == want


def test_type_variables_bound_and_unbound():
    assert type_of("t") == "T"
    assert type_of("t + t") == "T" and type_of("t * 2") == "T"
    assert type_of("t + 1.0") == "unknown"  # depends on what T is
    assert type_of("t", {"T": "double"}) == "double"
    assert type_of("t * 2", {"T": np.float32}) == "float"
    assert type_of("t + si", {"T": np.int8}) == "int"  # bound: C's promotions apply
    assert type_of("t + 1.0", {"T": "float"}) == "double"
    assert type_of("t", {"T": "banana"}) == "unknown"  # names no type: no error either
    assert type_of("t", {"U": "float"}) == "T"  # not a type variable of the kernel


def test_the_rules_as_a_function():
    assert str(arithmetic(scalar("int"), scalar("unsigned int"))) == "uint"
    assert str(arithmetic(scalar("int8_t"), scalar("uint16_t"))) == "int"
    assert str(arithmetic(scalar("long"), scalar("ulong"))) == "ulong"
    assert str(arithmetic(scalar("size_t"), scalar("int"))) == "ulong"
    assert str(arithmetic(scalar("bool"), scalar("bool"))) == "int"
    assert scalar("no such type").unknown


def test_symbols_in_scope_order():
    body, _ = typed("float after = 1;")
    kinds = {(s.name, s.kind) for s in body.symbols}
    assert {("x", "param"), ("tile", "localmem"), ("acc", "private"), ("gi", "binding"),
            ("k", "loop"), ("after", "local"), ("SCALE", "global")} <= kinds
    names = [s.name for s in body.symbols]
    assert names.index("i") < names.index("si") < names.index("k") < names.index("after")
    assert str(next(s for s in body.symbols if s.name == "tile").type) == "float[16][8]"


# -- the facts, and their one consumer ------------------------------------------------

def narrowing(body: str, params: str = "float* y") -> list[tuple]:
    src = f"@kernel void k({params}) {{\n{body}\n}}\n"
    k = pk.Kernel(src)
    module, kdef = k.parsed("c")
    found = index_narrowing(k.facts("c"), module, kdef)
    assert found is typed_body(k.facts("c"), module, kdef).index_narrowing
    return [(n.name, n.type, n.line, n.how) for n in found]


def test_index_narrowing():
    assert narrowing("    const long i = @index(Global, Linear);\n    y[i] = 1;") == []
    assert narrowing("    int i = @index(Global, Linear);\n    y[i] = 1;") == [
        ("i", "int", 2, "declared")]
    assert narrowing("    const long g = @index(Global, Linear);\n"
                     "    uint j = 2 * g + 1;\n    unsigned k;\n    k = (g);\n"
                     "    long fine = g * 2;\n    y[j + k + fine] = 1;") == [
        ("j", "uint", 3, "declared"), ("k", "uint", 5, "assigned")]
    assert narrowing("    for (int j = @index(Global, Linear); j < 8; j += 4) y[j] = 1;\n"
                     "    auto a = (int)@index(Global, Linear);\n    short s = 0;\n"
                     "    s += @index(Global, Linear) % 7;\n    y[a + s] = 1;") == [
        ("j", "int", 2, "declared"), ("a", "int", 3, "declared"), ("s", "int16_t", 5, "assigned")]
    # A value read at the index, a comparison, the local index: not the index itself.
    assert narrowing("    int a = (int)y[@index(Global, Linear)];\n"
                     "    int b = @index(Global, Linear) < 4;\n"
                     "    int c = @index(Local, Linear);\n    y[a + b + c] = 1;") == []


def test_the_typed_tree_is_built_once_per_parsed_body():
    k = pk.Kernel("@kernel void k(float* y) { y[@index(Global, Linear)] = 1; }")
    module, kdef = k.parsed("c")
    first = typed_body(k.facts("c"), module, kdef)
    assert typed_body(k.facts("c"), module, kdef) is first
    assert typed_body(k.facts("c"), module, kdef, {"T": "float"}) is not first
    assert k.facts("c").root is first.root


def test_creating_a_kernel_builds_no_typed_tree():
    k = pk.Kernel("@kernel void k(float* y) { y[@index(Global, Linear)] = 1; }")
    assert not k._facts or all(not f._derived for f in k._facts.values())


# -- the sweep: every kernel of the examples and of the golden catalog -------------------

def _bodies() -> list:
    """(name, module, kdef, binding) of every kernel: each .pk example, the golden cases."""
    from portakern.examples import EXAMPLES

    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_golden import CASES
    finally:
        sys.path.remove(str(ROOT / "tests"))
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, ex in sorted(EXAMPLES.items()):
            k = pk.Kernel(ex.source, ex.kernel, filename=ex.file, **dict(ex.constants))
            module, _kdef = k.parsed("c")
            for kdef in module.kernels:  # every kernel of the file, not only the example's
                out.append((f"{ex.file}:{kdef.name}", module, kdef, {}))
        for case in CASES:
            k = pk.Kernel(case.source, case.kernel, filename=case.filename, **case.constants)
            module, kdef = k.parsed("c")
            out.append((case.name, module, kdef, case.bindings))
    return out


def test_sweep_every_statement_parses_and_few_expressions_are_unknown():
    bodies = _bodies()
    assert len(bodies) >= 40
    files = {name.split(":")[0] for name, *_ in bodies if ":" in name}
    assert files == {p.name for p in (ROOT / "portakern" / "examples").glob("*.pk")}
    total = unknown = runs = 0
    for name, module, kdef, binding in bodies:
        root = parse_body(kdef.body, module.source_map)
        typed_ = typed_body(body_facts(root), module, kdef, binding)
        for node, _ in walk(root):
            for how, code in statement_code(node):
                runs += 1
                t = parse_run(how, code, set(module.type_names) | set(kdef.type_vars))
                assert t is not None, f"{name}: line {code[0].line} does not parse"
                # Every token of the run is in the tree, once.
                code_tokens = [c for c in code if c.kind not in ("ws", "comment", "pp")]
                if how == "statement" and code_tokens[-1].is_punct(";"):
                    code_tokens = code_tokens[:-1]
                assert sorted(map(id, tokens_in(t))) == sorted(map(id, code_tokens)), name
        assert not typed_.unparsed, name
        values = [n for n in typed_.expressions()
                  if not isinstance(n, (TypeName, Decl, ForHeader))]
        total += len(values)
        unknown += len(unknown_nodes(typed_))
    share = unknown / total
    print(f"\n{runs} runs of code in {len(bodies)} kernels; {total} expressions, "
          f"{unknown} typed unknown ({share:.1%})")
    assert runs > 300 and total > 2000
    assert share < 0.02


# -- nothing escapes --------------------------------------------------------------------

def test_a_very_long_expression_is_no_error():
    """An unrolled sum (Jinja writes them) deeper than Python's recursion: no tree, no error."""
    terms = " + ".join(f"x[{n}]" for n in range(3000))
    src = f"@kernel void k(float* x) {{\n    int i = @index(Global, Linear);\n" \
          f"    float s = {terms};\n    x[i] = s;\n}}\n"
    k = pk.Kernel(src)
    module, kdef = k.parsed("c")
    body = typed_body(k.facts("c"), module, kdef)
    assert len(body.unparsed) == 1 and body.unparsed[0].first.line == 3
    assert [n.name for n in body.index_narrowing] == ["i"]

_WORDS = ["a", "x", "n", "T", "float", "int", "unsigned", "const", "auto", "1", "2.0f", "'c'",
          "+", "-", "*", "/", "%", "<<", "&", "&&", "|", "^", "!", "~", "=", "+=", "==", "<",
          "?", ":", ",", ".", "->", "++", "(", ")", "[", "]", "@index", "Global", "Linear",
          "sizeof", "return", "xy"]


def _balanced(words: list[str]) -> bool:
    depth = []
    for w in words:
        if w in "([":
            depth.append(w)
        elif w in ")]":
            if not depth or "([".index(depth.pop()) != ")]".index(w):
                return False
    return not depth


@pytest.mark.parametrize("seed", range(4))
def test_random_statements_never_raise(seed):
    """Whatever the tokens, the parser gives a tree or None, and the typer a type."""
    rng = np.random.default_rng(seed)
    parsed = tried = 0
    for _ in range(300):
        words = list(rng.choice(_WORDS, size=int(rng.integers(1, 12))))
        if not _balanced(words) or "return" in words[1:]:
            continue
        src = "@kernel void k(float* x, int n, T a) {\n    " + " ".join(words) + ";\n}\n"
        smap = SourceMap("t.pk", src, [1, 2, 3, 4])
        try:
            module = parse(smap)
        except pk.KernelSyntaxError:
            continue
        tried += 1
        kdef = module.kernels[0]
        body = typed_body(body_facts(parse_body(kdef.body, smap)), module, kdef)
        for node in body.expressions():
            assert body.type_of(node).kind  # every node has a type, if only unknown
        parsed += not body.unparsed
    print(f"seed {seed}: {tried} accepted by the parser, {parsed} with a tree")
    assert tried > 50 and 0 < parsed < tried
