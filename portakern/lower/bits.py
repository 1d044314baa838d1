"""``@bitcast(T, v)``, ``@load(T, p, offset)`` and ``@store(T, p, offset, v)``.

* ``@bitcast(T, v)`` reinterprets the bits of the scalar ``v`` as the scalar type ``T`` of
  the same size (``float``/``uint``, ``half``/``uint16_t``, ``int``/``uint``,
  ``double``/``ulong``): OpenCL's ``as_T``, Metal's ``as_type<T>``, a ``memcpy`` on C++
  and CUDA (the ``bitcast`` macro of each target).
* ``@load(T, p, offset)`` reads a ``T`` from the bytes ``p[offset] ..
  p[offset + sizeof(T) - 1]`` of a byte array (``const uint8_t* p``), ``@store(T, p,
  offset, v)`` writes one there; no alignment is needed on any target (a ``memcpy`` on C++
  and CUDA, the bytes assembled on OpenCL and Metal), and the bytes are little-endian as on
  every device portakern runs.

Each becomes a :class:`~portakern.syntax.parts.Call` of the target's macro, the arguments
lowered like the rest of the body (docs/language.md, "Bit casts and byte-addressed loads").
"""

from __future__ import annotations

from collections.abc import Callable

from ..syntax.language import SourceMap, Token, next_significant, significant
from ..syntax.parts import Call
from ..syntax.parts import split_top as _split_top
from ..syntax.vectors import lower_access

__all__ = ["ACCESS_CONSTRUCTS", "BIT_CONSTRUCTS", "BIT_SIZES", "lower_bits", "lower_access_or_bits"]

BIT_CONSTRUCTS = ("@bitcast", "@load", "@store")
#: The constructs :func:`lower_access_or_bits` lowers (``@vload``/``@vstore`` included).
ACCESS_CONSTRUCTS = frozenset({"@vload", "@vstore", *BIT_CONSTRUCTS})
#: The scalar types these constructs take, and their sizes in bytes.
BIT_SIZES = {
    "char": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "bfloat16": 2,
    "int": 4, "uint": 4, "int32_t": 4, "uint32_t": 4, "float": 4,
    "long": 8, "ulong": 8, "int64_t": 8, "uint64_t": 8, "double": 8,
}
_FORMS = {"@bitcast": ("@bitcast(T, v)", 2), "@load": ("@load(T, p, offset)", 3),
          "@store": ("@store(T, p, offset, v)", 4)}


def lower_access_or_bits(toks: list[Token], i: int, out: list, smap: SourceMap,
                         lower: Callable[[list], list]) -> int:
    """``@vload``/``@vstore`` (:func:`portakern.syntax.vectors.lower_access`) or one of
    :data:`BIT_CONSTRUCTS`; returns the index after the construct."""
    if toks[i].text in BIT_CONSTRUCTS:
        return lower_bits(toks, i, out, smap, lower)
    return lower_access(toks, i, out, smap, lower)


def lower_bits(toks: list[Token], i: int, out: list, smap: SourceMap,
               lower: Callable[[list], list]) -> int:
    """One of :data:`BIT_CONSTRUCTS` at ``toks[i]`` -> a ``bitcast``, ``load_bytes`` or
    ``store_bytes`` primitive call; returns the index after its closing parenthesis."""
    t = toks[i]
    form, want = _FORMS[t.text]
    j = next_significant(toks, i + 1)
    if j >= len(toks) or not toks[j].is_punct("("):
        raise smap.error_at(f"expected '(' after {t.text}: {form}", t)
    close = _close(toks, j)
    if close is None:
        raise smap.error_at(f"{t.text}( is never closed: {form}", t)
    args = _split_top(toks[j + 1:close], ",")
    if len(args) != want or any(not significant(a) for a in args):
        raise smap.error_at(f"{t.text} takes {want} arguments: {form}", t)
    words = significant(args[0])
    name = " ".join(w.text for w in words)
    if name == "unsigned int":
        name = "uint"
    if name not in BIT_SIZES:
        raise smap.error_at(
            f"{t.text}'s first argument is a scalar type name ({', '.join(BIT_SIZES)}), "
            f"got {name!r}: {form}", words[0] if words else t)
    rest = [lower(a) for a in args[1:]]
    macro = {"@bitcast": "bitcast", "@load": "load_bytes", "@store": "store_bytes"}[t.text]
    out.append(Call(macro, (name, BIT_SIZES[name], *rest), t.line, t.col))
    return close + 1


def _close(toks: list[Token], j: int) -> int | None:
    depth = 0
    for k in range(j, len(toks)):
        if toks[k].kind == "punct" and toks[k].text in "([{":
            depth += 1
        elif toks[k].kind == "punct" and toks[k].text in ")]}":
            depth -= 1
            if depth == 0:
                return k
    return None
