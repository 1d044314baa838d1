"""Half fields of structs on OpenCL devices without half arithmetic (``cl_khr_fp16``).

Part of the half-storage rewrite (:mod:`portakern.lower.half_storage`). A struct's
``half d;`` keeps its layout (2 bytes, at NumPy's float16 field offset) by being declared as
its bits, ``ushort d;``, in the struct definition; its uses are rewritten in the lowered
helpers, body and ``@localmem`` declarations:

* a read of ``s.d``, ``p[i].d`` or ``p->d`` (and of an element ``s.h[j]`` of a ``half h[4]``
  field) becomes ``pk_half_from_bits(s.d)`` (``vload_half`` of the bits: a ``float``);
* ``s.d = v`` becomes ``s.d = pk_half_bits((float)(v))`` (``vstore_half_rte``: round to
  nearest even, as NumPy's ``astype(np.float16)``); ``s.d op= v`` loads, computes in float
  and stores (``s`` is written out twice, so it must have no side effects).

Struct locals, helper parameters and results and ``@localmem`` of such a struct hold the
same bits, so copies are exact. Refused with a :class:`~portakern.errors.KernelTypeError`
naming the fix: ``&s.d``, ``s.d++``, a half array field
used whole, a brace initializer of such a struct, and a half field name that another
struct's field of another type, a vector component or a complex part also spells (the
fields are found by name in the lowered code).
"""

from __future__ import annotations

import re

from ..errors import KernelTypeError
from ..syntax.parts import Call, Gen
from ..syntax.structs import StructDef, module_structs
from ..syntax.tokens import Token
from ..syntax.vectors import VECTOR_TYPES

__all__ = ["HalfFields", "expression_end", "half_fields"]

#: Names a vector component access or a complex part also spells (``v.xy``, ``v.s0``).
_COMPONENT = re.compile(r"^(?:[xyzw]{1,4}|s[0-9a-fA-F]{1,16}|lo|hi|even|odd|re|im)$")
_NOT_POSTFIX = frozenset({"return", "sizeof", "case", "else", "do", "goto"})


def _punct(part: object, *texts: str) -> bool:
    return isinstance(part, Token) and part.kind == "punct" and part.text in texts


def _blank(p: object) -> bool:
    return (isinstance(p, Token) and p.kind in ("ws", "comment")) or (
        isinstance(p, Gen) and not p.text.strip())


def _depth(part: object) -> int:
    if isinstance(part, Token):
        return 0 if part.kind != "punct" else (part.text in "([{") - (part.text in ")]}")
    if isinstance(part, Gen):
        t = part.text
        return (t.count("(") + t.count("[") + t.count("{")
                - t.count(")") - t.count("]") - t.count("}"))
    return 0


def _prev(parts: list, i: int) -> int:
    """The index of the last part before ``i`` that is not blank (-1 if none)."""
    i -= 1
    while i >= 0 and _blank(parts[i]):
        i -= 1
    return i


def _at(parts: list, k: int) -> object:
    return parts[k] if 0 <= k < len(parts) else None


def _next(parts: list, i: int) -> int:
    while i < len(parts) and _blank(parts[i]):
        i += 1
    return i


def _open_of(parts: list, close: int) -> int:
    depth = 0
    for j in range(close, -1, -1):
        depth += _depth(parts[j])
        if depth == 0:
            return j
    return -1


def _close_of(parts: list, open_: int) -> int:
    depth = 0
    for j in range(open_, len(parts)):
        depth += _depth(parts[j])
        if depth == 0:
            return j
    return -1


def expression_end(parts: list, i: int) -> int:
    """The end (exclusive) of the assigned expression starting at ``i``."""
    depth = 0
    for j in range(i, len(parts)):
        p = parts[j]
        if depth == 0 and _punct(p, ";", ","):
            return j
        depth += _depth(p)
        if depth < 0:
            return j
    return len(parts)


def _postfix_end(p: object) -> bool:
    """Whether ``p`` can end the postfix expression before a ``(...)`` or ``[...]``."""
    return (isinstance(p, Token) and p.kind == "id" and p.text not in _NOT_POSTFIX) or \
        _punct(p, ")", "]") or isinstance(p, Call)


class HalfFields:
    """The half fields of a module's structs, and the rewrite of their uses."""

    def __init__(self, structs: dict[str, StructDef], sections: list[list],
                 bindings: dict[str, str], kernel: str) -> None:
        self.kernel = kernel
        #: field name -> its array extents (``()`` for a scalar half).
        self.fields: dict[str, tuple[int, ...]] = {}
        self.structs: set[str] = set()
        others: dict[str, str] = {}
        for name, d in structs.items():
            for f in d.fields:
                if f.type != "half":
                    others[f.name] = f"struct {name}'s field {f.name!r} is a {f.type}"
                elif self.fields.get(f.name, f.dims) != f.dims:
                    others[f.name] = f"struct {name}'s half field {f.name!r} has other extents"
                else:
                    self.fields[f.name] = f.dims
                    self.structs.update(d.names, (name,))
        grown = True
        while grown:  # a struct holding one with a half field holds its bits too
            holders = {n for n, d in structs.items() if n not in self.structs
                       and any(f.type in self.structs for f in d.fields)}
            grown = bool(holders)
            self.structs |= holders
        vectors = _mentions_vectors(sections, bindings)
        for f in self.fields:
            clash = others.get(f) or (
                f"{f!r} also names a vector component or a complex part"
                if vectors and _COMPONENT.match(f) else "")
            if clash:
                raise KernelTypeError(
                    f"kernel {kernel!r}: the half field {f!r} is rewritten by name for this "
                    f"OpenCL device without half arithmetic (cl_khr_fp16), but {clash}; "
                    f"give the half field a name of its own")

    def use(self, rewriter, parts: list, i: int, out: list) -> int | None:
        """At token ``parts[i]``: a struct definition, a half field's use (onto ``out``;
        the index after it) or a struct with a half field (its initializer checked)."""
        p = parts[i]
        if p.kind == "id" and p.text == "struct":
            return self.definition(parts, i, out)
        if _punct(p, ".", "->"):
            return self.member(rewriter, parts, i, out)
        if p.kind == "id" and p.text in self.structs:
            self.initializer(parts, i)
        return None

    # -- the struct definition ---------------------------------------------------------
    def definition(self, parts: list, i: int, out: list) -> int | None:
        """At ``struct [tag] {``: the definition with ``half`` fields as ``ushort``;
        the index after its ``}`` (None if ``parts[i]`` starts no definition)."""
        j = _next(parts, i + 1)
        if j < len(parts) and isinstance(parts[j], Token) and parts[j].kind == "id":
            j = _next(parts, j + 1)
        if not (j < len(parts) and _punct(parts[j], "{")):
            return None
        close = _close_of(parts, j)
        for k in range(i, close + 1):
            p = parts[k]
            # A half field is its bits; a half* field stays a pointer to half.
            bits = (isinstance(p, Token) and p.kind == "id" and p.text == "half"
                    and not _punct(_at(parts, _next(parts, k + 1)), "*"))
            out.append(Token("id", "ushort", p.line, p.col) if bits else p)
        return close + 1

    def initializer(self, parts: list, i: int) -> None:
        """At a use of a struct with a half field: refuse a brace initializer of it."""
        j = _next(parts, i + 1)
        if _punct(_at(parts, j), ")") and _punct(_at(parts, _next(parts, j + 1)), "{"):
            self._refuse_braces(parts[i])
        depth = 0
        for k in range(i + 1, len(parts)):
            p = parts[k]
            if depth == 0 and _punct(p, ";"):
                return
            if depth == 0 and _punct(p, "{"):
                if _punct(parts[_prev(parts, k)], "="):
                    self._refuse_braces(parts[i])
                return
            depth += _depth(p)
            if depth < 0:
                return

    def _refuse_braces(self, t: Token) -> None:
        raise KernelTypeError(
            f"kernel {self.kernel!r}, line {t.line}: struct {t.text} has a half field, "
            f"which this OpenCL device without half arithmetic (cl_khr_fp16) stores as its "
            f"bits; a brace initializer cannot convert it: assign the fields one by one")

    # -- uses --------------------------------------------------------------------------
    def member(self, rewriter, parts: list, i: int, out: list) -> int | None:
        """At ``.`` or ``->`` before a half field name: the use rewritten onto ``out``
        (whose end is the base, already rewritten); the index after it."""
        j = _next(parts, i + 1)
        name = parts[j] if j < len(parts) else None
        if not (isinstance(name, Token) and name.kind == "id" and name.text in self.fields):
            return None
        start = self._base_start(out, name)
        if _punct(_at(out, _prev(out, start)), "++", "--"):
            self._refuse(name, "an increment of it", f"write {name.text} += 1.0f")
        unary = _prev(out, start)
        if _punct(_at(out, unary), "&") and not _postfix_end(_at(out, _prev(out, unary))):
            self._refuse(name, "its address (&)", "copy it into a float first")
        base = out[start:]
        del out[start:]
        place = [*base, parts[i], name]
        after = j + 1
        k = _next(parts, after)
        for _ in self.fields[name.text]:
            if not (k < len(parts) and _punct(parts[k], "[")):
                self._refuse(name, "the whole array field",
                             f"read and write it element by element ({name.text}[j])")
            close = _close_of(parts, k)
            place += [parts[k], *rewriter.parts(parts[k + 1:close]), parts[close]]
            after = close + 1
            k = _next(parts, after)
        nxt = parts[k] if k < len(parts) else None
        rewriter.used_bits = True
        op = None
        if _punct(nxt, "="):
            begin = k + 1
        elif (_punct(nxt, "+", "-", "*", "/") and k + 1 < len(parts)
              and _punct(parts[k + 1], "=")):
            op, begin = nxt.text, k + 2  # type: ignore[union-attr]
        elif _punct(nxt, "++", "--"):
            self._refuse(name, "an increment of it", f"write {name.text} += 1.0f")
        else:
            out += [Gen("pk_half_from_bits("), *place, Gen(")")]
            return after
        end = expression_end(parts, begin)
        value = rewriter.parts(parts[begin:end])
        if op is not None:
            if any(_punct(p, "++", "--", "=") for p in base):
                self._refuse(name, f"'{op}=' where the struct expression has side effects",
                             "write the struct's address into a pointer first")
            value = [Gen("pk_half_from_bits("), *place, Gen(f") {op} ("), *value, Gen(")")]
        out += [*place, Gen(" = pk_half_bits((float)("), *value, Gen("))")]
        return end

    def _base_start(self, out: list, name: Token) -> int:
        """The index in ``out`` where the postfix expression ending ``out`` starts."""
        k = _prev(out, len(out))
        while k >= 0:
            p = out[k]
            if _punct(p, ")", "]"):
                open_ = _open_of(out, k)
                if open_ < 0:
                    break
                before = _prev(out, open_)
                if before >= 0 and _postfix_end(out[before]) and not _is_cast(out, before):
                    k = before
                    continue
                return open_
            if (isinstance(p, Token) and p.kind == "id") or isinstance(p, (Call, Gen)):
                before = _prev(out, k)
                if before >= 0 and _punct(out[before], ".", "->"):
                    k = _prev(out, before)
                    continue
                return k
            break
        self._refuse(name, "this expression before it", "read the struct into a local first")
        return 0

    def _refuse(self, name: Token, what: str, fix: str) -> None:
        raise KernelTypeError(
            f"kernel {self.kernel!r}, line {name.line}: {name.text!r} is a half field, "
            f"which this OpenCL device without half arithmetic (cl_khr_fp16) stores as its "
            f"bits and reads and writes through float; {what} is not rewritten: {fix}")


def _is_cast(parts: list, close: int) -> bool:
    """Whether the ``(...)`` ending at ``close`` is a cast, ``(uint8_t)``, ``(const T*)``,
    not a call's arguments or a parenthesised expression."""
    if not _punct(parts[close], ")"):
        return False
    open_ = _open_of(parts, close)
    inner = [p for p in parts[open_ + 1:close] if not _blank(p)]
    if not inner or not all(isinstance(p, Token) and (p.kind == "id" or _punct(p, "*"))
                            for p in inner):
        return False
    return not _postfix_end(_at(parts, _prev(parts, open_)))


def _mentions_vectors(sections: list[list], bindings: dict[str, str]) -> bool:
    from ..analysis.c_types import COMPLEX

    if any(t in VECTOR_TYPES or t in COMPLEX for t in bindings.values()):
        return True

    def walk(parts) -> bool:
        for p in parts:
            if isinstance(p, Token) and p.kind == "id" and (
                    p.text in VECTOR_TYPES or p.text in COMPLEX):
                return True
            if isinstance(p, Call) and any(isinstance(a, list) and walk(a) or
                                           isinstance(a, str) and a in VECTOR_TYPES
                                           for a in p.args):
                return True
        return False

    return any(walk(s) for s in sections)


def half_fields(sections: list[list], bindings: dict[str, str], kernel: str) -> HalfFields | None:
    """The half fields of the structs the helpers (``sections[0]``) define, or None."""
    tokens = [p for p in sections[0] if isinstance(p, Token)] if sections else []
    structs = module_structs(tokens)
    if not any(f.type == "half" for d in structs.values() for f in d.fields):
        return None
    found = HalfFields(structs, sections, bindings, kernel)
    return found if found.fields else None
