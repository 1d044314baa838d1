"""Helpers that contain ``@synchronize()``: inlined into the kernel body that calls them.

A barrier must be reached by every work-item of the group. portakern arranges that
in the kernel body: work-items outside the ndrange run the barriers but skip the
rest (the implicit bounds mask, cut at each barrier), control flow around a barrier
must be group-uniform (:mod:`portakern.analysis.convergence`), and the native C++ path cuts
the body into work-item loops at each barrier. None of that can reach inside a
function call, so a ``void`` helper that contains ``@synchronize()`` is not rendered
as a function: each call, a statement of its own in a kernel body, is replaced by
the helper's body in a block, its parameters declared as variables initialised with
the arguments (``T* a`` a pointer, ``T& a`` a reference, ``T a`` a copy). Every
target then lowers one kernel body, and every rule of the body applies to the
helper's code too (a call under per-item control is the usual ``KernelSyntaxError``).

:func:`inline_barrier_helpers` runs once per parse (:meth:`portakern.Kernel.parsed`),
so every later analysis sees the inlined body.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..syntax.functions import functions_of, skip_blank
from ..syntax.language import KernelDef, Module, Token
from ..syntax.tokens import match_bracket, split_commas

__all__ = ["inline_barrier_helpers"]

_CODE = ("ws", "comment", "pp")
_SPECIFIERS = frozenset({"static", "inline"})


@dataclass(frozen=True)
class _BarrierHelper:
    name: str
    start: int  # index in module.helpers of its first token (return type)
    end: int  # index of its closing '}'
    params: tuple[tuple[tuple[Token, ...], Token], ...]  # (type tokens, name)
    body: tuple[Token, ...]  # the tokens between its braces


def _find(module: Module) -> dict[str, _BarrierHelper]:
    toks = module.helpers
    smap = module.source_map
    found: dict[str, _BarrierHelper] = {}
    for f in functions_of(module):
        if not any(b.kind == "at" and b.text == "@synchronize" for b in f.body):
            continue
        name = f.name
        returns = [r for r in f.returns(toks) if r.text not in _SPECIFIERS]
        if [r.text for r in returns] != ["void"]:
            raise smap.error_at(
                f"helper {name.text}() contains @synchronize(), so it is inlined "
                f"into the kernel body that calls it, and must return void "
                f"(pass a reference, T& result, for a value)", name)
        for b in f.body:
            if b.kind == "id" and b.text == "return":
                raise smap.error_at(
                    f"helper {name.text}() contains @synchronize(), so it is "
                    f"inlined into the kernel body, where 'return' would end "
                    f"the kernel: let it run to its end", b)
        found[name.text] = _BarrierHelper(name.text, f.start, f.end, _params(list(f.params)),
                                          f.body)
    return found


def _params(tokens: list[Token]) -> tuple[tuple[tuple[Token, ...], Token], ...]:
    out = []
    chunk: list[Token] = []
    for t in [*tokens, Token("punct", ",", 0, 0)]:
        if t.is_punct(","):
            code = [c for c in chunk if c.kind not in _CODE]
            if code and not (len(code) == 1 and code[0].text == "void"):
                out.append((tuple(code[:-1]), code[-1]))
            chunk = []
        else:
            chunk.append(t)
    return tuple(out)


def inline_barrier_helpers(module: Module, kernel: KernelDef) -> tuple[Module, KernelDef]:
    """``module`` without its barrier helpers and ``kernel`` with each call inlined."""
    helpers = _find(module)
    if not helpers:
        return module, kernel
    smap = module.source_map
    kept: list[Token] = []
    spans = sorted((h.start, h.end) for h in helpers.values())
    n = 0
    for start, end in spans:
        kept += module.helpers[n:start]
        n = end + 1
    kept += module.helpers[n:]
    for t in kept:
        if t.kind == "id" and t.text in helpers:
            raise smap.error_at(
                f"helper {t.text}() contains @synchronize(), so it is inlined into the "
                f"kernel body and can be called from a kernel only, not from another helper",
                t)
    body = list(kernel.body)
    for _ in range(8):  # a barrier helper may call another; no recursion
        body, changed = _inline_calls(body, helpers, module)
        if not changed:
            break
    else:
        raise smap.error_at("helpers with @synchronize() call each other too deeply (or "
                            "recursively) to inline", Token("at", "@kernel", kernel.line,
                                                            kernel.col))
    return dataclasses.replace(module, helpers=kept), dataclasses.replace(kernel, body=body)


def _inline_calls(body: list[Token], helpers: dict[str, _BarrierHelper],
                  module: Module) -> tuple[list[Token], bool]:
    smap = module.source_map
    out: list[Token] = []
    changed = False
    n = 0
    while n < len(body):
        t = body[n]
        after = skip_blank(body, n + 1, 1)
        if not (t.kind == "id" and t.text in helpers and after < len(body)
                and body[after].is_punct("(")):
            out.append(t)
            n += 1
            continue
        h = helpers[t.text]
        close = match_bracket(body, after, smap)
        semi = skip_blank(body, close + 1, 1)
        before = next((o for o in reversed(out) if o.kind not in _CODE), None)
        statement = before is None or (before.kind == "punct" and before.text in ";{})") \
            or (before.kind == "id" and before.text == "else")
        if not statement or semi >= len(body) or not body[semi].is_punct(";"):
            raise smap.error_at(
                f"helper {h.name}() contains @synchronize(), so it is inlined into the "
                f"kernel body: call it as a statement of its own ({h.name}(...);)", t)
        args = _split_args(body[after + 1:close])
        if len(args) != len(h.params):
            raise smap.error_at(
                f"helper {h.name}() takes {len(h.params)} argument(s), got {len(args)}", t)
        out += _block(h, args, t)
        changed = True
        n = semi + 1
    return out, changed


def _split_args(tokens: list[Token]) -> list[list[Token]]:
    args = split_commas(tokens)
    return [] if args == [[]] else args


def _block(h: _BarrierHelper, args: list[list[Token]], call: Token) -> list[Token]:
    """``{ T a = (arg); ... body ... }`` for one call, parameters renamed apart."""
    def gen(kind: str, text: str) -> Token:
        return Token(kind, text, call.line, call.col)

    rename = {name.text: [dataclasses.replace(name, text=f"pk_{h.name}_{name.text}")]
              for _, name in h.params}
    out = [gen("punct", "{"), gen("ws", "\n")]
    for (type_tokens, name), arg in zip(h.params, args, strict=True):
        if type_tokens and type_tokens[-1].is_punct("&") and _plain_lvalue(arg):
            # A reference to a plain lvalue (v, s[i + k]) is the lvalue itself, so the
            # native path's work-item loops see the writes to it by name (a postfix
            # expression: no parentheses needed, and none hide the name).
            rename[name.text] = [t for t in arg if t.kind not in _CODE]
            continue
        for t in type_tokens:
            out += [t, gen("ws", " ")]
        out += [*rename[name.text], gen("ws", " "), gen("punct", "="), gen("ws", " "),
                gen("punct", "("), *arg, gen("punct", ")"), gen("punct", ";"),
                gen("ws", "\n")]
    prev: Token | None = None
    for t in h.body:
        if t.kind == "id" and t.text in rename and not (
                prev is not None and prev.kind == "punct" and prev.text in (".", "->")):
            out += rename[t.text]
        else:
            out.append(t)
        if t.kind not in _CODE:
            prev = t
    return [*out, gen("ws", "\n"), gen("punct", "}")]


def _plain_lvalue(arg: list[Token]) -> bool:
    """A name, optionally subscripted, with no call, assignment or increment in it."""
    code = [t for t in arg if t.kind not in _CODE]
    if not code or code[0].kind != "id":
        return False
    for t in code[1:]:
        if t.kind == "at" or t.is_punct("(") or t.is_punct("++") or t.is_punct("--"):
            return False
        if t.kind == "punct" and t.text.endswith("=") and t.text not in ("==", "!=", "<=", ">="):
            return False
    # Only `name` or `name[...]...`: anything else at the top level is an operator.
    depth = 0
    for t in code[1:]:
        if t.is_punct("["):
            depth += 1
        elif t.is_punct("]"):
            depth -= 1
        elif depth == 0:
            return False
    return True
