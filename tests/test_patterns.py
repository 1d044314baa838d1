"""portakern.patterns.lazy: a module-level pattern compiled on first use, then as re's."""

from __future__ import annotations

import re

from portakern import patterns


def test_a_lazy_pattern_compiles_on_first_use_only(monkeypatch):
    calls = []
    real = re.compile
    monkeypatch.setattr(patterns.re, "compile", lambda *a: calls.append(a) or real(*a))
    p = patterns.lazy(r"#\s*(define|undef)\s+(\w+)", re.DOTALL)
    assert calls == []
    assert p.match("#  define  N 4").group(2) == "N"
    assert p.sub("X", "a #define B c") == "a X c"
    assert p.findall("#define A\n#undef B") == [("define", "A"), ("undef", "B")]
    assert calls == [(r"#\s*(define|undef)\s+(\w+)", re.DOTALL)]


def test_a_lazy_pattern_answers_as_the_compiled_one():
    text = "x = a1 + _b; // c2\n"
    lazy, real = patterns.lazy(r"[A-Za-z_]\w*"), re.compile(r"[A-Za-z_]\w*")
    assert lazy.findall(text) == real.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.fullmatch("abc") and not lazy.fullmatch("1abc")
    assert (lazy.pattern, lazy.flags, lazy.groups) == (real.pattern, real.flags, real.groups)
    assert lazy.search("  q").start() == 2 and lazy.split("a b") == real.split("a b")


def test_the_warm_path_modules_compile_their_macro_patterns_lazily():
    from portakern.syntax import macros

    assert isinstance(macros._LINE, patterns._LazyPattern)
    assert "lazy(" in repr(macros._COMMENT)
