"""Debug mode: what a call to a checked helper or method passes, and the checks in a body
that has pointer parameters (shared by :mod:`.debug_helpers` and :mod:`.debug_methods`,
so neither imports the other for them)."""

from __future__ import annotations

from ..syntax.language import Token
from ..syntax.parts import Call, Gen
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from .debug_helper_parts import KINDS as _KINDS
from .debug_helper_parts import Whole, access_kind_of, where
from .debug_helper_parts import code_of as _code
from .debug_helper_parts import skip as _next
from .debug_helper_parts import tok as _tok

__all__ = ["check_body", "handed_on", "hidden_args"]


def hidden_args(args: list[list], params: list[tuple[str, bool]], ids: list[list],
                 known: dict[str, tuple], record: str, context: Call) -> list:
    out: list = [Gen(record)]
    for g in ids:
        out += [Gen(", "), *g]
    out.append(context)  # renders with its own leading comma, or as nothing
    for (_, pointer), arg in zip(params, args, strict=False):
        if pointer:
            off, extent, code, shadows = where(arg, known)
            if isinstance(extent, list):  # a @localmem or private array's size
                out += [Gen(", "), *off, Gen(", "), *extent, Gen(f", {code}")]
            else:
                out += [Gen(", "), *off, Gen(f", {extent}, {code}")]
            out += [Gen(", "), *shadows]
    return out


def handed_on(inner: list, args: list[list], params: list[tuple[str, bool]],
               known: dict[str, tuple]) -> list:
    """A call's arguments ``inner`` with the ``&`` of each pointer argument ``&s[e]`` whose
    array the helper is given shadows of a :class:`~.initcheck.HandedOn`: the call marks
    nothing there, the helper's own accesses are initchecked and racechecked."""
    amps = set()
    for (_, pointer), arg in zip(params, args, strict=False):
        sig = _code(arg)
        if pointer and len(sig) > 3 and _is_tok(sig[0], "&") and isinstance(sig[1], Token) \
                and sig[1].text in known and len(known[sig[1].text]) > 3 \
                and not isinstance(known[sig[1].text], Whole) \
                and _is_tok(sig[2], "[") and _match_items(sig, 2) == len(sig) - 1:
            amps.add(id(sig[0]))
    if not amps:
        return inner
    from .initcheck import HandedOn

    return [HandedOn(it.kind, it.text, it.line, it.col) if id(it) in amps else it
            for it in inner]


def check_body(body: list, known: dict[str, tuple[str, str, str]],
                slots: dict[str, int]) -> list:
    """A helper body with each subscript of a pointer parameter in ``known`` (its offset,
    extent and fault code) checked, and tracked (``helper_local``: initcheck and racecheck
    where the kernel passed the pointer's shadows; ``slots`` gives each pointer's position)."""
    ids = [[Gen(f"pk_dbg_g{d}")] for d in range(3)]
    out: list = []
    n = 0
    while n < len(body):
        it = body[n]
        t = _tok(it)
        if t is not None and t.kind == "id" and t.text in known:
            prev = next((o for o in reversed(_code(out))), None)
            j = _next(body, n + 1)
            if j < len(body) and _is_tok(body[j], "[") and not _is_tok(prev, ".", "->", "::"):
                close = _match_items(body, j)
                inner = check_body(body[j + 1:close], known, slots)
                off, extent, code = known[t.text]
                index = [Gen(f"{off} + ("), *inner, Gen(")")]
                access = [it, body[j], Gen(f"{extent} < 0 ? ("), *inner, Gen(") : "),
                          Call("checked_local", (index, extent, code, t.line, *ids), t.line),
                          Gen(f" - {off}"), body[close]]
                kind = access_kind_of(out, body, close)
                if kind == _KINDS["mark"] and _handed(prev):  # the callee checks its accesses
                    out += access
                    n = close + 1
                    continue
                out.append(Call("helper_local", (kind, access, f"({t.text} - ({off}))",
                                                 slots[t.text], t.line), t.line))
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def _handed(prev: object) -> bool:
    from .initcheck import HandedOn

    return isinstance(prev, HandedOn)
