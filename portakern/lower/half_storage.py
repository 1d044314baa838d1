"""Half storage on OpenCL devices without half arithmetic (``cl_khr_fp16``).

OpenCL C without ``cl_khr_fp16`` allows ``half`` only as the element type of a pointer, read
and written by ``vload_half``/``vstore_half`` (core OpenCL since 1.0). :func:`half_storage`
rewrites the lowered parts of one rendering so that a kernel written with ``half`` runs there,
computing in ``float`` (DESIGN section 1a, docs/language.md "Half and bfloat16"):

* ``p[i]`` read, where ``p`` points to ``half`` (a parameter, a helper's parameter or a
  local pointer), becomes ``vload_half(i, p)`` (a ``float``);
* ``p[i] = v`` becomes ``vstore_half_rte(v, i, p)`` (round to nearest even, as NumPy's
  ``astype(np.float16)``); ``p[i] op= v`` and ``p[i]++`` load, compute in float and store;
* every other ``half`` (a local, a cast, a helper's value parameter or return type, a
  ``@localmem`` element) becomes ``float``, and a ``1.5h`` literal ``1.5f``;
* a ``half`` field of a struct is its bits, ``ushort``, read and written through float
  (:mod:`portakern.lower.half_fields`).

A value is rounded to half where it is stored into a half array, not at each operation: the
result equals half arithmetic wherever every intermediate is exact in half, and is at least
as accurate elsewhere. The rewrite runs on the lowered parts of the target's rendering
(after address spaces are placed), only for the variant a device without half asks for
(``RenderedKernel.variant(half_storage=True)``), so other renderings are untouched.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import KernelSyntaxError
from ..syntax.parts import Call, Gen
from ..syntax.tokens import Token
from .half_fields import expression_end, half_fields

__all__ = ["StorageRewriter", "half_storage", "half_words", "pointer_names"]

_BIT_MACROS = frozenset({"bitcast", "load_bytes", "store_bytes"})
#: The conversions the half-storage rewrite of @bitcast/@load/@store of half calls.
_BIT_HELPERS = """\
static inline float pk_half_from_bits(ushort u) { return vload_half(0, (const half*)&u); }
static inline ushort __attribute__((overloadable)) pk_half_bits(float x) {
    ushort u; vstore_half_rte(x, 0, (half*)&u); return u; }
static inline ushort __attribute__((overloadable)) pk_half_bits(ushort x) { return x; }
static inline ushort __attribute__((overloadable)) pk_half_bits(short x) { return as_ushort(x); }
static inline ushort __attribute__((overloadable)) pk_half_bits(int x) { return (ushort)x; }
static inline ushort __attribute__((overloadable)) pk_half_bits(uint x) { return (ushort)x; }
"""
_COMPOUND = ("+", "-", "*", "/", "%", "&", "|", "^")
_QUALIFIERS = frozenset({"const", "volatile", "restrict", "__global", "__local", "__private",
                         "__constant", "global", "local", "private", "constant"})


def half_words(bindings: dict[str, str]) -> frozenset[str]:
    """``half`` and the type variables bound to it (``typedef half T``)."""
    return frozenset({"half"} | {name for name, t in bindings.items() if t == "half"})


def _sig(parts: list, i: int) -> int:
    """The index of the first part at or after ``i`` that is not blank (len if none)."""
    while i < len(parts):
        p = parts[i]
        if isinstance(p, Token) and p.kind in ("ws", "comment"):
            i += 1
        elif isinstance(p, Gen) and not p.text.strip():
            i += 1
        else:
            return i
    return i


def _punct(part: object, *texts: str) -> bool:
    return isinstance(part, Token) and part.kind == "punct" and part.text in texts


def _depth(part: object) -> int:
    """The bracket balance a part adds."""
    if isinstance(part, Token):
        if part.kind != "punct":
            return 0
        return (part.text in "([{") - (part.text in ")]}")
    if isinstance(part, Gen):
        t = part.text
        return (t.count("(") + t.count("[") + t.count("{")
                - t.count(")") - t.count("]") - t.count("}"))
    return 0


def _match(parts: list, i: int) -> int:
    """The index of the bracket closing the one at ``i``."""
    depth = 0
    for j in range(i, len(parts)):
        depth += _depth(parts[j])
        if depth == 0:
            return j
    raise KernelSyntaxError(f"unbalanced brackets after line {getattr(parts[i], 'line', 0)}")


def pointer_names(parts: Iterable, words: frozenset[str], found: set[str]) -> None:
    """Names declared as pointers to half: ``half* p``, ``const T *p``."""
    parts = list(parts)
    for i, p in enumerate(parts):
        if isinstance(p, Call):
            for a in p.args:
                if isinstance(a, list):
                    pointer_names(a, words, found)
            continue
        if not (isinstance(p, Token) and p.kind == "id" and p.text in words):
            continue
        j = _sig(parts, i + 1)
        while j < len(parts) and isinstance(parts[j], Token) and parts[j].text in _QUALIFIERS:
            j = _sig(parts, j + 1)
        if j < len(parts) and _punct(parts[j], "*"):
            j = _sig(parts, j + 1)
            while (j < len(parts) and isinstance(parts[j], Token)
                   and parts[j].text in _QUALIFIERS):
                j = _sig(parts, j + 1)
            if j < len(parts) and isinstance(parts[j], Token) and parts[j].kind == "id":
                found.add(parts[j].text)


def _is_pointer_type(parts: list, i: int) -> bool:
    j = _sig(parts, i + 1)
    while j < len(parts) and isinstance(parts[j], Token) and parts[j].text in _QUALIFIERS:
        j = _sig(parts, j + 1)
    return j < len(parts) and _punct(parts[j], "*")


class StorageRewriter:
    """The rewrite for one storage type: ``LOAD(i, p)`` reads ``p[i]`` as a float,
    ``STORE(v, i, p)`` writes ``v`` rounded, pointers keep ``POINTER`` as their element
    type, and bit casts pass through ``FROM_BITS``/``TO_BITS``
    (:mod:`portakern.lower.bf16_storage` has the bfloat16 one)."""

    LOAD, STORE, POINTER = "vload_half", "vstore_half_rte", "half"
    FROM_BITS, TO_BITS, BITS_TYPE, LITERALS = "pk_half_from_bits", "pk_half_bits", "ushort", "hH"

    def __init__(self, words: frozenset[str], pointers: set[str]) -> None:
        self.words = words
        self.pointers = pointers
        self.used_bits = False
        #: The structs' half fields (:mod:`portakern.lower.half_fields`), where any.
        self.fields = None

    def parts(self, parts: list) -> list:
        out: list = []
        i = 0
        n = len(parts)
        while i < n:
            p = parts[i]
            if self.fields is not None and isinstance(p, Token):
                after = self.fields.use(self, parts, i, out)
                if after is not None:
                    i = after
                    continue
            if isinstance(p, Call) and p.macro in _BIT_MACROS:
                out += self.bits(p)
            elif isinstance(p, Call):
                out.append(Call(p.macro, tuple(self.parts(a) if isinstance(a, list) else
                                               ("float" if a in self.words and not
                                                p.macro.startswith("atomic") else a)
                                               for a in p.args), p.line, p.col))
            elif isinstance(p, Token) and p.kind == "id" and p.text in self.words:
                text = self.POINTER if _is_pointer_type(parts, i) else "float"
                out.append(Token("id", text, p.line, p.col))
            elif isinstance(p, Token) and p.kind == "num" and p.text[-1:] \
                    and p.text[-1:] in self.LITERALS \
                    and not p.text.lower().startswith("0x"):
                out.append(Token("num", p.text[:-1] + "f", p.line, p.col))
            elif (isinstance(p, Token) and p.kind == "id" and p.text in self.pointers
                  and (j := _sig(parts, i + 1)) < n and _punct(parts[j], "[")):
                i = self.subscript(parts, i, j, out)
                continue
            else:
                out.append(p)
            i += 1
        return out

    def bits(self, call: Call) -> list:
        """``@bitcast``/``@load``/``@store`` of half (:mod:`portakern.lower.bits`): through
        its 16 bits, a ``ushort``; a 16-bit integer from a half value (now a float) takes
        the bits ``vstore_half_rte`` writes (``pk_half_bits``, by overload)."""
        t, size, *rest = call.args
        rest = [self.parts(a) for a in rest]
        self.used_bits = True
        if call.macro == "bitcast" and t in self.words:
            return [Gen(f"{self.FROM_BITS}(({self.BITS_TYPE})("), *rest[0], Gen("))")]
        if call.macro == "bitcast" and size == 2:
            return [Call("bitcast", (t, size, [Gen(f"{self.TO_BITS}("), *rest[0], Gen(")")]),
                         call.line, call.col)]
        if call.macro == "load_bytes" and t in self.words:
            return [Gen(f"{self.FROM_BITS}("), Call("load_bytes", (self.BITS_TYPE, 2, *rest),
                                                     call.line, call.col), Gen(")")]
        if call.macro == "store_bytes" and t in self.words:
            p, offset, v = rest
            return [Call("store_bytes", (self.BITS_TYPE, 2, p, offset,
                                         [Gen(f"{self.TO_BITS}("), *v, Gen(")")]),
                         call.line, call.col)]
        return [Call(call.macro, (t, size, *rest), call.line, call.col)]

    def subscript(self, parts: list, i: int, open_: int, out: list) -> int:
        name = parts[i]
        close = _match(parts, open_)
        index = self.parts(parts[open_ + 1:close])
        k = _sig(parts, close + 1)
        nxt = parts[k] if k < len(parts) else None
        op = None
        if _punct(nxt, "=") :
            start = k + 1
        elif (_punct(nxt, *_COMPOUND, "<<=", ">>=") and (k + 1 < len(parts))
              and (_punct(parts[k + 1], "=") or nxt.text in ("<<=", ">>="))):  # type: ignore[union-attr]
            op = nxt.text.rstrip("=")  # type: ignore[union-attr]
            start = k + 1 if nxt.text in ("<<=", ">>=") else k + 2  # type: ignore[union-attr]
        elif _punct(nxt, "++", "--"):
            out += [Gen(f"{self.STORE}({self.LOAD}("), *index, Gen(", "), name,
                    Gen(f") {nxt.text[0]} 1.0f, "), *index, Gen(", "), name,  # type: ignore[union-attr]
                    Gen(")")]
            return k + 1
        else:
            out += [Gen(f"{self.LOAD}("), *index, Gen(", "), name, Gen(")")]
            return close + 1
        end = expression_end(parts, start)
        value = self.parts(parts[start:end])
        if op is not None:
            value = [Gen(f"{self.LOAD}("), *index, Gen(", "), name, Gen(f") {op} ("), *value,
                     Gen(")")]
        out += [Gen(f"{self.STORE}("), *value, Gen(", "), *index, Gen(", "), name, Gen(")")]
        return end


def half_storage(sections: list[list], words: frozenset[str],
                 pointers: Iterable[str], bindings: dict[str, str] | None = None,
                 kernel: str = "") -> list[list]:
    """Each part list of ``sections`` (helpers, body, local declarations) rewritten for
    half storage; ``pointers`` are the kernel's half array parameters. The half fields of
    the helpers' structs are their bits (:mod:`portakern.lower.half_fields`)."""
    found = set(pointers)
    for s in sections:
        pointer_names(s, words, found)
    rewriter = StorageRewriter(words, found)
    rewriter.fields = half_fields(sections, bindings or {}, kernel)
    out = [rewriter.parts(list(s)) for s in sections]
    if rewriter.used_bits and out:
        out[0] = [Gen(_BIT_HELPERS), *out[0]]
    return out


def storage_variant(lowered, helpers: list, body: list, bindings: dict[str, str],
                    local: list | None = None) -> tuple[list, list, list, dict[str, str]]:
    """The parts of a ``half_storage`` rendering: helpers, body and ``@localmem``
    declarations rewritten (:func:`half_storage`), and ``{name: bits name}`` for each scalar
    ``half`` parameter, which the kernel takes as its 16 bits (a ``ushort``: OpenCL refuses a
    ``half`` argument without ``cl_khr_fp16``) and reads into a float of its name.
    ``local``: the ``@localmem`` declarations, if not the lowered kernel's own."""
    words = half_words(bindings)
    arrays = [p.name for p in lowered.params if p.pointer and p.type in words]
    scalars = {p.name: f"pk_bits_{p.name}" for p in lowered.params
               if not p.pointer and p.type in words}
    sections = [helpers, body, *(lowered.localmem if local is None else local)]
    helpers, body, *local = half_storage(sections, words, arrays, bindings, lowered.name)
    prologue = [Gen(f"const float {name} = vload_half(0, (const half*)&{bits});\n")
                for name, bits in scalars.items()]
    return helpers, prologue + body, local, scalars
