"""The pieces of debug mode's helper lowering that its modules share (issue 28):
:mod:`.debug_helpers` (the hidden parameters and the calls), :mod:`.debug_helper_arrays`
(parameters ``b[][4]``) and :mod:`.debug_helper_moves` (a pointer parameter that moves).

:func:`definitions` finds the helper functions; :func:`where` is the place a call passes for
a pointer argument (offset, extent, fault code and shadows, from the ``known`` places);
:func:`access_kind_of` tells ``helper_local`` what an access does.
"""

from __future__ import annotations

from ..syntax.function_values import NOT_FUNCTIONS
from ..syntax.language import Token
from ..syntax.parts import Call, Gen
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from ..syntax.parts import split_top as _split_top

__all__ = ["BLANK", "KINDS", "Whole", "access_kind_of", "code_of", "definitions", "params_of",
           "skip", "tok", "where"]

BLANK = ("ws", "comment")


def tok(it: object) -> Token | None:
    return it if isinstance(it, Token) else None


def code_of(items: list) -> list:
    return [it for it in items if not (isinstance(it, Token) and it.kind in BLANK)
            and not (isinstance(it, Gen) and not it.text.strip())]


def skip(parts: list, k: int) -> int:
    while k < len(parts) and isinstance(parts[k], Token) and parts[k].kind in BLANK:
        k += 1
    return k


def definitions(parts: list) -> list[tuple[int, int, int, int]]:
    """``(name, open, close, brace or -1)`` of each top-level function declaration."""
    found = []
    depth = 0
    n = 0
    while n < len(parts):
        it = parts[n]
        if isinstance(it, Token) and it.kind == "punct" and it.text in "([{":
            if it.text == "(" and depth == 0:
                k = n - 1
                while k >= 0 and isinstance(parts[k], Token) and parts[k].kind in BLANK:
                    k -= 1
                name = tok(parts[k]) if k >= 0 else None
                b = k - 1
                while b >= 0 and isinstance(parts[b], Token) and parts[b].kind in BLANK:
                    b -= 1
                # A declaration's name follows its type (not '=': `float k = f(2);`).
                typed = b >= 0 and (
                    (isinstance(parts[b], Token) and parts[b].kind == "id"
                     and parts[b].text not in NOT_FUNCTIONS)
                    or _is_tok(parts[b], "*", "&", ">") or isinstance(parts[b], (Gen, Call)))
                close = _match_items(parts, n)
                after = skip(parts, close + 1)
                if name is not None and name.kind == "id" and name.text not in NOT_FUNCTIONS \
                        and typed and after < len(parts) and _is_tok(parts[after], "{", ";"):
                    found.append((k, n, close, after if _is_tok(parts[after], "{") else -1))
                    n = close + 1
                    continue
            depth += 1
        elif isinstance(it, Token) and it.kind == "punct" and it.text in ")]}":
            depth -= 1
        n += 1
    return found


#: The shadows a helper is passed for a pointer that is not into a ``@localmem`` array
#: with initcheck's shadows: none.
_NO_SHADOWS = (Gen("0, 0"),)


def _shadows(entry: tuple) -> list:
    """The shadow arguments of a ``known`` entry (its optional fourth item)."""
    return list(entry[3]) if len(entry) > 3 else list(_NO_SHADOWS)


class Whole(tuple):
    """A ``known`` entry of a multi-dimensional array (or a parameter ``b[][4]``) passed
    whole: its flat place. Only the bare name is that (``g + 1`` moves by a row)."""


def where(arg: list, known: dict[str, tuple]) -> tuple[list, str, str, list]:
    """``(offset parts, extent, code, shadow parts)`` of a pointer argument ``arg``."""
    sig = code_of(arg)
    head = tok(sig[0]) if sig else None
    if (head is not None and isinstance(known.get(head.text), Whole) and len(sig) > 1) or (
            len(sig) > 1 and isinstance(sig[1], Token)
            and isinstance(known.get(sig[1].text), Whole)):
        return [Gen("0")], "-1", "0", list(_NO_SHADOWS)
    if head is not None and head.kind == "id" and head.text in known:
        off, extent, code = known[head.text][:3]
        if len(sig) == 1:
            return [Gen(off)], extent, code, _shadows(known[head.text])
        if len(sig) > 2 and _is_tok(sig[1], "+", "-") \
                and not any(_is_tok(t, ",", "?", ":", "=", "<", ">", "==", "!=", "&&", "||",
                                    "<<", ">>", "&", "|", "^") for t in sig[2:]):
            return [Gen(f"{off} {sig[1].text} ("), *arg[arg.index(sig[1]) + 1:], Gen(")")], \
                extent, code, _shadows(known[head.text])
    if len(sig) > 3 and _is_tok(sig[0], "&") and isinstance(sig[1], Token) \
            and sig[1].text in known and _is_tok(sig[2], "[") and _is_tok(sig[-1], "]") \
            and _match_items(sig, 2) == len(sig) - 1:
        off, extent, code = known[sig[1].text][:3]
        return [Gen(f"{off} + ("), *sig[3:-1], Gen(")")], extent, code, _shadows(known[sig[1].text])
    return [Gen("0")], "-1", "0", list(_NO_SHADOWS)




#: ``helper_local``'s ``kind`` for each of :func:`.initcheck.access_kind`'s answers.
KINDS = {"read": 0, "write": 1, "update": 2, "atomic": 3, "mark": 4}


def access_kind_of(out: list, body: list, close: int) -> int:
    """``helper_local``'s kind of the access whose last subscript closes at ``body[close]``,
    ``out`` being the code before it (:func:`.initcheck.access_kind`; ``*p++`` as itself)."""
    from .initcheck import access_kind

    stepped = _stepped(out, body, close)
    return KINDS[access_kind(*stepped) if stepped else access_kind(out, body, close + 1)]


def _stepped(out: list, body: list, close: int) -> tuple[list, list, int] | None:
    """For the element of ``*(p++, &p[-1])`` (:func:`.debug_helper_moves.step_derefs`)
    whose subscript closes at ``body[close]``: the code before the ``*``, and the body and
    index after the ``)``, so the access is told apart (read, write, update) as ``*p++`` itself."""
    seen = code_of(out)
    if len(seen) < 6 or not _is_tok(seen[-1], "&") or not _is_tok(seen[-2], ",") \
            or not _is_tok(seen[-5], "(") or not _is_tok(seen[-6], "*"):
        return None
    k = skip(body, close + 1)
    if k >= len(body) or not _is_tok(body[k], ")"):
        return None
    star = max(i for i, o in enumerate(out) if o is seen[-6])
    return out[:star], body, k + 1


def params_of(inner: list) -> list[tuple[str, bool]]:
    """``(name, is pointer)`` of each parameter in a declaration's parameter list."""
    out = []
    for group in _split_top(inner, ","):
        sig = code_of(group)
        if not sig or (len(sig) == 1 and _is_tok(sig[0], "void")):
            continue
        ids = [t for t in sig if isinstance(t, Token) and t.kind == "id"]
        pointer = any(_is_tok(t, "*", "[") for t in sig)
        name = ids[-1].text if len(ids) > 1 else ""
        if any(_is_tok(t, "[") for t in sig):  # float a[] / float a[4]
            before = [t for t in sig[:next(k for k, t in enumerate(sig) if _is_tok(t, "["))]
                      if isinstance(t, Token) and t.kind == "id"]
            name = before[-1].text if before else name
        out.append((name, pointer))
    return out
