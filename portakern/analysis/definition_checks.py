"""Checks of a parsed module's definitions that compilers miss, or report in generated code.

:func:`check_definitions` runs once per parse (:meth:`portakern.Kernel.parsed`) and
raises a :class:`~portakern.errors.KernelSyntaxError` at the user's line for:

* a helper that can reach its closing brace without returning a value. In C++ (the
  native path) a non-void function whose control reaches its closing ``}`` is
  undefined behaviour, and compilers optimise on it: GCC takes every call of such a
  helper to be unreachable, so a kernel's loop over its work-items can vanish, or
  ``pk_launch`` report a Ctrl-C that never came. C (OpenCL) and CUDA return an
  indeterminate value instead. The check is conservative: it reads each helper's
  statement tree (:func:`portakern.syntax.tree.parse_body`) and refuses only a body that
  surely can reach its end; a ``goto``, a call of ``abort``-like functions, or a loop
  whose condition may be a constant (a macro) count as not reaching it. The
  compiler's own ``-Wreturn-type`` sees more.
* a kernel parameter whose type (a type variable, ``T* x``) is a C or C++ keyword:
  every target declares a type variable (``typedef float T;``), and a keyword there
  is an error in portakern's generated code, not in the user's.
"""

from __future__ import annotations

import re

from ..errors import KernelSyntaxError
from ..syntax.functions import functions_of, skip_blank
from ..syntax.language import Module, Token
from ..syntax.tree import Block, If, Jump, Label, Loop, Node, Simple, Switch, parse_body

__all__ = ["check_definitions"]

_BLANK = ("ws", "comment", "pp")
#: Calls after which control never comes back.
_NO_RETURN = frozenset({"abort", "exit", "_Exit", "quick_exit", "__builtin_trap",
                        "__builtin_unreachable", "__trap", "throw", "__assert_fail"})
_SPECIFIERS = frozenset({"static", "inline", "extern", "constexpr", "__device__",
                         "__forceinline__"})
_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)")


def check_definitions(module: Module) -> None:
    """Refuse what the module docstring lists, at the user's line.

    Raises
    ------
    KernelSyntaxError
        At a helper's name (its return type and the line of its ``}`` named), or at a
        parameter's type.
    """
    _check_parameter_types(module)
    _check_returns(module)


#: Words no type variable may be: keywords of C, C++ and the targets' dialects.
_KEYWORDS = frozenset("""
    auto break case catch char class const constexpr continue default delete do double
    else enum extern false float for goto if inline int long namespace new nullptr
    operator private protected public register restrict return short signed sizeof static
    struct switch template this throw true try typedef typename union unsigned using
    virtual void volatile while kernel __kernel device constant __constant global
    __global local __local thread threadgroup
""".split())


def _check_parameter_types(module: Module) -> None:
    smap = module.source_map
    for kernel in module.kernels:
        for p in kernel.params:
            if p.type in kernel.type_vars and p.type in _KEYWORDS:
                text = next((smap.lines()[n] for n, user in enumerate(smap.line_of)
                             if user == p.line), None)
                col = 1 + (text.find(p.type) if text and p.type in text else 0)
                raise KernelSyntaxError(
                    f"parameter {p.name!r} of kernel {kernel.name!r} has type {p.type!r}, "
                    f"a keyword: a type variable needs a name of its own (T, U, ...)",
                    smap.filename, p.line or kernel.line, col, text)


def _check_returns(module: Module) -> None:
    """Refuse a non-``void`` helper of ``module`` that can end without ``return``."""
    toks = module.helpers
    macros = {m.group(1) for t in toks if t.kind == "pp" for m in [_DEFINE.match(t.text)] if m}
    for name, returns, body, close in _definitions(module):
        if returns == "void" or any(isinstance(t, Token) and t.kind == "id"
                                         and t.text == "goto" for t in body):
            continue
        try:
            root = parse_body(body, module.source_map)
        except KernelSyntaxError:
            continue  # the compiler says what is wrong with it
        if _completes(root, macros):
            raise module.source_map.error_at(
                f"helper {name.text}() returns {returns} but can reach its closing '}}' "
                f"(line {close.line}) without a 'return': the value it then gives is "
                f"undefined (in C++ the call is undefined behaviour, which compilers turn "
                f"into wrong results or a launch that does nothing); end every path with "
                f"'return ...;'", name)


def _definitions(module: Module) -> list[tuple[Token, str, list[Token], Token]]:
    """Each top-level function definition: (name, return type, body tokens, its '}')."""
    out = []
    for f in functions_of(module):
        returns = _return_type(module.helpers, skip_blank(module.helpers, f.name_at - 1, -1))
        if returns:
            out.append((f.name, returns, list(f.body), f.close))
    return out


def _return_type(toks: list[Token], k: int) -> str:
    """The return type that ends at ``toks[k]`` (``float``, ``float*``), '' if none."""
    words: list[str] = []
    while k >= 0 and (toks[k].kind == "id" or toks[k].kind == "punct" and toks[k].text in "*&"):
        if toks[k].text == "operator":
            return ""
        if toks[k].text not in _SPECIFIERS:
            words.insert(0, toks[k].text)
        k = skip_blank(toks, k - 1, -1)
    if words and words[-1] in "*&":
        return " ".join(words[:-1]) + words[-1]
    return " ".join(words)


def _completes(node: Node | None, macros: set[str]) -> bool:
    """Whether control can flow past ``node`` (when unsure: False, so nothing is refused)."""
    if node is None:
        return True
    if isinstance(node, Block):
        reach = True
        for stmt in node.body:
            if isinstance(stmt, Label):
                reach = True  # a case label: reached from the switch
            elif reach:
                reach = _completes(stmt, macros)
        return reach
    if isinstance(node, Jump):
        return False  # return, or break/continue (their loop or switch decides)
    if isinstance(node, Label):
        return True
    if isinstance(node, If):
        return _completes(node.then, macros) or node.orelse is None \
            or _completes(node.orelse, macros)
    if isinstance(node, Loop):
        cond = _condition(node)
        leaves = _jumps(node.body, "break")
        if node.word == "do":
            once = (_completes(node.body, macros) or _jumps(node.body, "continue"))
            if _kind(cond, macros) == "variable":
                return leaves or once
            return leaves or (once and _kind(cond, macros) == "false")
        kind = _kind(cond, macros)
        return kind in ("variable", "false") or leaves
    if isinstance(node, Switch):
        labels = [s for s in _own(node.body) if isinstance(s, Label)]
        if not any(lab.first.text == "default" for lab in labels):
            return True
        return _completes(node.body, macros) or _jumps(node.body, "break")
    if isinstance(node, Simple):
        return not any(isinstance(t, Token) and t.kind == "id" and t.text in _NO_RETURN
                       for t in node.tokens)
    return False


def _condition(loop: Loop) -> list[Token]:
    """The tokens of a loop's condition (a ``for``'s second clause)."""
    header = [t for t in loop.header if isinstance(t, Token) and t.kind not in _BLANK]
    if loop.word != "for":
        return header
    depth, clauses = 0, [[]]
    for t in header:
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        if t.is_punct(";") and depth == 0:
            clauses.append([])
        else:
            clauses[-1].append(t)
    return clauses[1] if len(clauses) > 1 else []


def _kind(cond: list[Token], macros: set[str]) -> str:
    """``"true"`` (empty, or a nonzero literal), ``"false"``, ``"variable"``, or
    ``"unknown"`` (a constant the check cannot evaluate: a macro, an expression)."""
    code = [t for t in cond if not (t.kind == "punct" and t.text in "()")]
    if not code:
        return "true"
    if len(code) == 1 and code[0].kind == "num":
        return "false" if re.fullmatch(r"0+[uUlL]*|0[xX]0+[uUlL]*", code[0].text) else "true"
    if len(code) == 1 and code[0].text in ("true", "false"):
        return code[0].text
    if any(t.kind == "id" and t.text not in macros and t.text not in ("true", "false")
           for t in code):
        return "variable"
    return "unknown"


def _own(node: Node | None) -> list[Node]:
    """The statements of ``node`` not inside a nested loop or switch."""
    if node is None:
        return []
    out: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        if current is node or not isinstance(current, (Loop, Switch)):
            stack.extend(current.children())
    return out


def _jumps(body: Node | None, word: str) -> bool:
    """Whether ``body`` has a ``word`` jump (break, continue) that leaves its own loop."""
    return any(isinstance(node, Jump) and node.word == word for node in _own(body))
