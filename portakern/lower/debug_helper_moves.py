"""Debug mode: a helper's pointer parameter that moves (issue 28, :mod:`.debug_helpers`).

:func:`moves` tells whether a helper moves a pointer parameter (``a++``, ``a += k``, ``a = a +
k``, ``a = &a[k]``), so its offset is tracked from where it started (``debug_origin``), and
refuses pointing it at another array or ``a++[k]`` (:class:`~portakern.errors.KernelSyntaxError`);
:func:`step_derefs` spells ``*p++`` as ``*(p++, &p[-1])`` so the element is checked once ``p``
has moved.
"""

from __future__ import annotations

from ..syntax.language import Token
from ..syntax.parts import is_tok as _is_tok
from .debug_helper_parts import code_of as _code
from .debug_helper_parts import skip as _next
from .debug_helper_parts import where

__all__ = ["moves", "step_derefs"]


def moves(body: list, name: str, fn: str, filename: str) -> bool:
    """Whether the helper ``fn`` moves its pointer parameter ``name`` (``a++``, ``a += k``,
    ``a = a + k``, ``a = &a[k]``): its offset is then tracked. Pointing it at another
    array (``a = b``) is a :class:`~portakern.errors.KernelSyntaxError` in debug mode."""
    sig = _code(body)
    moved = False
    for k, t in enumerate(sig):
        if not (isinstance(t, Token) and t.kind == "id" and t.text == name):
            continue
        before = sig[k - 1] if k else None
        after = sig[k + 1] if k + 1 < len(sig) else None
        if _is_tok(before, ".", "->", "::"):
            continue
        if _is_tok(after, "++", "--"):
            if k + 2 < len(sig) and _is_tok(sig[k + 2], "["):
                _refuse(fn, name, t, filename, f"subscripts '{name}{sig[k + 1].text}[...]'",
                        f"write '{name}[k]' and move '{name}' in a statement of its own")
            moved = True
        elif _is_tok(before, "++", "--") or _is_tok(after, "+=", "-="):
            moved = True
        elif _is_tok(after, "=") and not _is_tok(before, "*"):
            rhs = []
            depth = 0
            for it in sig[k + 2:]:
                if _is_tok(it, "(", "[", "{"):
                    depth += 1
                elif _is_tok(it, ")", "]", "}"):
                    depth -= 1
                if depth < 0 or (depth == 0 and _is_tok(it, ";", ",")):
                    break
                rhs.append(it)
            if where(rhs, {name: ("0", "0", "0")})[1] != "0":
                _refuse(fn, name, t, filename, "points it at another array",
                        f"index the other array directly, or give it a pointer variable of "
                        f"its own (const float* q = ...;) and leave '{name}' as passed")
            moved = True
    return moved


def _refuse(fn: str, name: str, at: Token, filename: str, what: str, instead: str) -> None:
    from ..errors import KernelSyntaxError

    raise KernelSyntaxError(
        f"debug mode: helper {fn!r} {what} with its pointer parameter {name!r}, which debug "
        f"mode checks only while it stays in the array it was passed (moved by {name}++, "
        f"{name} += k, {name} = {name} + k) or as a pointer variable declared from it; "
        f"{instead}", filename, at.line, at.col)


def step_derefs(body: list, pointers: set[str]) -> list:
    """``*p++`` as ``*(p++, &p[-1])`` (and ``*p--``, ``*++p``, ``*--p`` alike), so the
    element's subscript is checked once ``p`` has moved."""
    from ..syntax.parts import is_unary
    from .debug_views import after_header

    out: list = []
    n = 0
    while n < len(body):
        it = body[n]
        prev = next((o for o in reversed(_code(out))), None)
        if _is_tok(it, "*") and (prev is None or is_unary([prev, it], 1)
                                 or after_header(_code(out))):
            j = _next(body, n + 1)
            k = _next(body, j + 1)
            p = op = None
            if j < len(body) and k < len(body) and isinstance(body[j], Token) \
                    and body[j].text in pointers and _is_tok(body[k], "++", "--"):
                p, op, post = body[j], body[k], True
            elif j < len(body) and k < len(body) and _is_tok(body[j], "++", "--") \
                    and isinstance(body[k], Token) and body[k].text in pointers:
                p, op, post = body[k], body[j], False
            if p is not None and op is not None:
                nxt = _next(body, k + 1)
                if not (nxt < len(body) and _is_tok(body[nxt], "[", "(", ".", "->")):
                    def tk(text: str, kind: str = "punct", at: Token = p) -> Token:
                        return Token(kind, text, at.line, at.col)

                    step = [p, op] if post else [op, p]
                    back = ([tk("-"), tk("1", "num")] if op.text == "++" else [tk("1", "num")]) \
                        if post else [tk("0", "num")]
                    out += [it, tk("("), *step, tk(","), tk("&"), p, tk("["), *back, tk("]"),
                            tk(")")]
                    n = k + 1
                    continue
        out.append(it)
        n += 1
    return out
