"""A helper function's name used as a value (``auto f = at;``, ``f = at;``, ``g(at)``).

OpenCL C and Metal have no pointers to functions ("pointers to functions are not
allowed"), and in debug mode a helper taking a pointer gets hidden parameters that a call
through a pointer could not pass: so such a use is a
:class:`~portakern.errors.KernelSyntaxError` at ``pk.kernel()`` on every target (DESIGN
section 1a), as the function-pointer declarators of :mod:`.pointer_checks` are.

The name is the helper only where nothing shadows it: a variable, parameter or struct
field of the same name (``float at = p[i];``, ``long at``, ``s.at``) is the variable from
its declaration to the end of its block. :func:`function_values` is that scoped walk, over
tokens or over the lowering's parts (whose non-token items it steps over), and
:mod:`portakern.lower.debug_helpers` reads it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .parts import Gen, is_tok
from .tokens import SourceMap, Token

__all__ = ["NOT_FUNCTIONS", "check_function_values", "declared_here", "function_values"]

_BLANK = ("ws", "comment", "pp")
#: Words before a ``(`` that do not make a function declaration.
NOT_FUNCTIONS = frozenset({"if", "for", "while", "switch", "return", "sizeof", "do",
                           "else", "case", "struct", "union", "enum", "typedef"})
#: Words that may stand before a name without declaring it (``return at;``).
_NOT_TYPES = NOT_FUNCTIONS | frozenset({"case", "goto", "else", "default"})


def _code(items: Iterable[object]) -> list:
    return [it for it in items if not (isinstance(it, Token) and it.kind in _BLANK)
            and not (isinstance(it, Gen) and not it.text.strip())]


def function_values(items: Iterable[object], names: Iterable[str],
                    outer: Iterable[str] = ()) -> Iterator[Token]:
    """Each token of ``items`` naming one of the functions ``names`` other than in a call,
    a declaration of its own or a member access (``s.at``), where no variable, parameter
    or field of that name declared in an enclosing block shadows it. ``outer`` names
    what is declared around ``items`` already (a kernel's parameters)."""
    wanted = frozenset(names)
    if not wanted:
        return
    code = _code(items)
    scopes: list[set[str]] = [set(outer) & wanted]  # names declared in each open block
    pending: set[str] = set()  # parameters (and for-loop variables): the next block's
    parens = 0
    for k, t in enumerate(code):
        if not isinstance(t, Token):
            continue
        if t.kind == "punct":
            if t.text == "{":
                scopes.append(pending)
                pending, parens = set(), 0
            elif t.text == "}" and len(scopes) > 1:
                scopes.pop()
            elif t.text == "(":
                parens += 1
            elif t.text == ")":
                parens = max(parens - 1, 0)
            elif t.text == ";" and not parens:
                pending = set()
            continue
        if t.kind != "id" or t.text not in wanted:
            continue
        if declared_here(code, k):
            (pending if parens else scopes[-1]).add(t.text)
            continue
        if t.text in pending or any(t.text in scope for scope in scopes) \
                or (k + 1 < len(code) and is_tok(code[k + 1], "(")) \
                or (k and is_tok(code[k - 1], ".", "->", "::")) or _construct_word(code, k):
            continue
        yield t


def _construct_word(code: list, k: int) -> bool:
    """Whether ``code[k]`` is the first argument of an ``@`` construct, a word of its own
    (``@groupreduce(add, v)``, ``@groupreduce(max, v)``), not a value."""
    return k > 1 and is_tok(code[k - 1], "(") and isinstance(code[k - 2], Token) \
        and code[k - 2].kind == "at"


def _binding_name(code: list, k: int) -> bool:
    """Whether ``code[k]`` is a name of a structured binding, ``auto [i, at] = ...``."""
    b = k - 1
    while b >= 0 and (is_tok(code[b], ",") or isinstance(code[b], Token)
                      and code[b].kind == "id" and b != k):
        b -= 1
    return b > 0 and is_tok(code[b], "[") and is_tok(code[b - 1], "auto", "&", "&&")


def declared_here(code: list, k: int) -> bool:
    """Does ``code[k]`` name a variable, parameter or field its declaration declares
    (``float at = 1;``, ``long at)``, ``float* at;``, ``float a, at;``)?"""
    if not (k + 1 < len(code) and is_tok(code[k + 1], "=", ";", ",", "[", ")", ":", "]")):
        return False
    if _binding_name(code, k):
        return True
    b = k - 1
    while b >= 0 and is_tok(code[b], "*", "&", "const", "volatile", "restrict"):
        b -= 1
    before = code[b] if b >= 0 else None
    if isinstance(before, Token) and before.kind == "id" and before.text not in _NOT_TYPES:
        return True  # a type (or a type variable, a struct name) before it
    if b == k - 1 and is_tok(before, ","):  # `float a = 1, at = 2;`: a declarator list
        depth, m = 0, b - 1
        while m >= 0 and (depth or not is_tok(code[m], ";", "{", "}", "(")):
            depth += is_tok(code[m], ")", "]") - is_tok(code[m], "(", "[")
            m -= 1
        first = [it for it in code[m + 1:b]
                 if not is_tok(it, "const", "volatile", "static", "unsigned", "signed")]
        return len(first) > 1 and all(
            isinstance(it, Token) and it.kind == "id" and it.text not in _NOT_TYPES
            for it in first[:1]) and (
            isinstance(first[1], Token) and first[1].kind == "id"
            or is_tok(first[1], "*", "&"))
    return False


def check_function_values(body: list[Token], helpers: list[Token], names: Iterable[str],
                          params: Iterable[str], smap: SourceMap) -> None:
    """Refuse a helper function of ``names`` used as a value in the kernel ``body`` (whose
    parameters are ``params``) or in the ``helpers``.

    Raises
    ------
    KernelSyntaxError
        At the name, with a caret, saying to call the helper directly.
    """
    names = frozenset(names)
    for items, outer in ((helpers, ()), (body, params)):
        for t in function_values(items, names, outer):
            raise smap.error_at(
                f"helper {t.text!r} is used as a function pointer (a function's name as a "
                f"value): OpenCL C and Metal have no pointers to functions, so it is not "
                f"portable; call {t.text!r} directly (a switch over the helpers, or a Jinja "
                f"{{% for %}} that renders one kernel per helper)", t)
