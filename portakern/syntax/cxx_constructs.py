"""C++-only constructs in a module's helpers and a kernel's body (DESIGN section 1a).

Each is found on the tokens of one target's rendering, so code under ``{% if target ==
"cuda" %}`` counts where it renders only. Which targets have which construct is a target
fact (:attr:`portakern.targets.TargetInfo.cxx_constructs`); two are refused on every
target (:func:`everywhere_refused`).

* ``overloads``: a helper function defined twice under one name (outside a
  ``#if``/``#else`` pair), or an operator function outside a struct;
* ``default_arguments``: ``float f(float x, float s = 2.0f)``;
* ``lambdas``: ``[=](float v) { ... }``, ``[&]``, ``[]``: a ``[`` where an expression
  starts (not after a name, a literal, ``)`` or ``]``: that is a subscript, or
  ``auto [i, j]``, a structured binding) whose ``]`` is followed by ``(`` or ``{``;
* ``constexpr``: the keyword (strings and comments are other tokens);
* ``templates``: ``template <typename U>`` before a helper;
* everywhere: a ``namespace name {`` block (``using namespace metal;`` under a target's
  branch is the dialect's own and passes), and a helper called with explicit template
  arguments, ``sq<int>(2)`` (debug mode's call rewriting does not see such a call).
"""

from __future__ import annotations

from typing import Any

from .tokens import Token, significant

__all__ = ["cxx_uses", "debug_conflicts", "everywhere_refused"]

#: Words before ``(`` that make no function declaration.
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "return", "sizeof", "do", "else",
                        "case", "struct", "union", "enum", "typedef", "__attribute__",
                        "alignas", "_Alignas", "decltype", "defined", "operator"})
#: Words after which a ``[`` starts an expression (``return [&](...) {...}(x)``).
_BEFORE_EXPRESSION = frozenset({"return", "case"})
#: Preprocessor lines that start or switch a conditional branch.
_CONDITIONALS = ("#if", "#ifdef", "#ifndef", "#elif", "#else")


def cxx_uses(helpers: list[Token], body: list[Token]) -> list[tuple[str, Token, str]]:
    """``(construct, token, what)`` for each C++-only construct in ``helpers`` (a module's
    helper code, preprocessor lines included) and ``body`` (a kernel's), in source order;
    ``what`` names the helper where there is one."""
    found: list[tuple[str, Token, str]] = _declarations(helpers)
    code = significant(helpers) + significant(body)
    found += [("lambdas", t, "") for t in _lambdas(code)]
    found += [("constexpr", t, "") for t in code if t.kind == "id" and t.text == "constexpr"]
    found += [("templates", t, "") for n, t in enumerate(code)
              if t.kind == "id" and t.text == "template" and n + 1 < len(code)
              and code[n + 1].is_punct("<")]
    return sorted(found, key=lambda f: (f[1].line, f[1].col))


def everywhere_refused(tokens: list[Token], helpers: frozenset[str] = frozenset(),
                       ) -> tuple[str, Token] | None:
    """The first ``namespace`` declaration in ``tokens``, or call of one of the
    ``helpers`` with explicit template arguments (``sq<int>(2)``), as ``("namespace" |
    "template arguments", its token)``, or None."""
    code = significant(tokens)
    for n, t in enumerate(code):
        if t.kind != "id":
            continue
        after = code[n + 1] if n + 1 < len(code) else None
        if t.text == "namespace" and not (n > 0 and code[n - 1].text == "using") and (
                after is not None and (after.is_punct("{") or after.kind == "id")):
            return "namespace", t
        if t.text in helpers and after is not None and after.is_punct("<") and not (
                n > 0 and code[n - 1].kind == "id"):  # not its own declaration
            close = _close_angle(code, n + 1)
            if close is not None and close + 1 < len(code) and code[close + 1].is_punct("("):
                return "template arguments", t
    return None


def _close_angle(code: list[Token], at: int) -> int | None:
    """The index of the ``>`` closing the ``<`` at ``code[at]`` before any ``;``, or None."""
    depth = 0
    for k in range(at, len(code)):
        t = code[k]
        if t.is_punct("<"):
            depth += 1
        elif t.is_punct(">") or t.is_punct(">>"):
            depth -= 1 if t.text == ">" else 2
            if depth <= 0:
                return k
        elif t.is_punct(";") or t.is_punct("{"):
            return None
    return None


def debug_conflicts(helpers: list[Token]) -> list[tuple[str, Token, str]]:
    """The overloads and default arguments of helpers that take a pointer (or an array),
    as :func:`cxx_uses` gives them: debug mode passes such a helper hidden parameters
    after its own (:mod:`portakern.lower.debug_helpers`), at every call of its name."""
    found, pointers = _declarations(helpers, with_pointers=True)
    return [f for f in found if f[2] in pointers]


def _declarations(helpers: list[Token], with_pointers: bool = False) -> Any:
    """Overloads and default arguments among the top-level function declarations (and,
    ``with_pointers``, the names of those declared with a pointer or array parameter)."""
    toks = [t for t in helpers if t.kind not in ("ws", "comment")]
    out: list[tuple[str, Token, str]] = []
    pointers: set[str] = set()
    defined: dict[str, int] = {}  # a helper's name -> index of its first definition
    depth = 0
    for n, t in enumerate(toks):
        if t.kind == "punct" and t.text in ")]}":
            depth -= 1
            continue
        if t.kind != "punct" or t.text not in "([{":
            if depth == 0 and t.kind == "id" and t.text == "operator" and not (
                    n > 0 and toks[n - 1].is_punct(":")):  # V::operator+: a method
                out.append(("overloads", t, "operator"))
            continue
        depth += 1
        if t.text != "(" or depth != 1 or n == 0:
            continue
        name = toks[n - 1]
        if name.kind != "id" or name.text in _NOT_NAMES or (
                n > 1 and toks[n - 2].text == "operator"):
            continue
        close = _close(toks, n)
        after = toks[close + 1] if close + 1 < len(toks) else None
        if after is None or not (after.is_punct("{") or after.is_punct(";")
                                 or after.kind == "id" and after.text == "const"):
            continue
        out += [("default_arguments", p, name.text) for p in _defaults(toks[n + 1:close])]
        if any(p.is_punct("*") or p.is_punct("[") for p in toks[n + 1:close]):
            pointers.add(name.text)
        if not after.is_punct("{"):
            continue
        first = defined.get(name.text)
        qualified = n > 1 and toks[n - 2].is_punct(":")  # float V::norm(): a method
        if first is not None and not qualified and not any(
                x.kind == "pp" and x.text.replace(" ", "").startswith(_CONDITIONALS)
                for x in toks[first:n]):
            out.append(("overloads", name, name.text))
        if not qualified:
            defined.setdefault(name.text, n)
    return (out, pointers) if with_pointers else out


def _defaults(params: list[Token]) -> list[Token]:
    """The ``=`` of each parameter with a default value."""
    depth = 0
    out = []
    for t in params:
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        elif depth == 0 and t.is_punct("="):
            out.append(t)
    return out


def _lambdas(code: list[Token]) -> list[Token]:
    """The ``[`` of each lambda introducer in ``code`` (significant tokens)."""
    out = []
    for n, t in enumerate(code):
        if not t.is_punct("[") or n + 1 >= len(code) or code[n + 1].is_punct("["):
            continue  # `[[attribute]]`
        if n > 0:
            prev = code[n - 1]
            if prev.kind in ("num", "str", "at") or prev.is_punct(")") or prev.is_punct("]"):
                continue  # a subscript
            if prev.kind == "id" and prev.text not in _BEFORE_EXPRESSION:
                continue  # a subscript, or `auto [i, j]`
        close = _close(code, n)
        after = code[close + 1] if close + 1 < len(code) else None
        if after is not None and (after.is_punct("(") or after.is_punct("{")
                                  or after.text in ("mutable", "->")):
            out.append(t)
    return out


def _close(toks: list[Token], at: int) -> int:
    """The index of the bracket closing ``toks[at]`` (or the last index)."""
    depth = 0
    for k in range(at, len(toks)):
        t = toks[k]
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0:
                return k
    return len(toks) - 1
