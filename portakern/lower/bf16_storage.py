"""``bfloat16`` storage on every target, computed in ``float``.

No target portakern renders for has bfloat16 arithmetic that all its devices share (OpenCL
C has no bfloat16 at all), so a ``bfloat16`` array is stored as its 16 bits, a 16-bit
unsigned integer array, on every target, and computed in float (DESIGN section 1a,
docs/language.md "Half and bfloat16 storage"). :func:`bf16_storage` rewrites the lowered
parts of a rendering the way :mod:`portakern.lower.half_storage` does for half on a device
without half arithmetic:

* ``p[i]`` read, where ``p`` points to ``bfloat16``, becomes ``pk_bf16_load(i, p)`` (the
  16 bits shifted into the top of a float: exact);
* ``p[i] = v`` becomes ``pk_bf16_store(v, i, p)``: ``v`` rounded to nearest even (NaN to
  the quiet NaN of its sign), as ``ml_dtypes.bfloat16`` converts; ``p[i] op= v`` and
  ``p[i]++`` load, compute in float and store;
* every other ``bfloat16`` (a local, a cast, a helper's value parameter or return type, a
  ``@localmem`` element) becomes ``float``;
* ``@bitcast(bfloat16, u)`` widens the 16 bits ``u``, ``@bitcast(uint16_t, b)`` of a
  bfloat16 value rounds it and takes its bits; ``@load``/``@store`` of bfloat16 go through
  ``uint16_t`` the same way.

The conversions are in each target's prelude (``templates/c/bfloat16.j2``), emitted only
for a kernel that uses them, so no other rendering changes.
"""

from __future__ import annotations

from ..errors import KernelTypeError
from .half_storage import StorageRewriter, pointer_names

__all__ = ["BF16", "bf16_words", "uses_bf16", "bf16_variant"]

BF16 = "bfloat16"


class _Bf16Rewriter(StorageRewriter):
    LOAD, STORE, POINTER = "pk_bf16_load", "pk_bf16_store", "uint16_t"
    FROM_BITS, TO_BITS, LITERALS = "pk_bf16_to_float", "pk_bf16_bits", ""

    def __init__(self, words: frozenset[str], pointers: set[str], bits_type: str,
                 half_too: bool, kernel: str) -> None:
        super().__init__(words, pointers)
        self.BITS_TYPE = bits_type
        self.half_too, self.kernel = half_too, kernel

    def bits(self, call):
        # Of a 16-bit integer, the value may be a half or a bfloat16 (both floats now): only
        # one of them can own the conversion.
        t, size = call.args[:2]
        if (self.half_too and size == 2 and t not in self.words
                and call.macro in ("bitcast", "store_bytes")):
            raise KernelTypeError(
                f"kernel {self.kernel!r} uses both half and bfloat16, and "
                f"@{'bitcast' if call.macro == 'bitcast' else 'store'}({t}, ...) at line "
                f"{call.line} cannot tell which one's bits to take; take the 16 bits in a "
                f"kernel (or helper module) that uses only one of the two types")
        return super().bits(call)


def bf16_words(bindings: dict[str, str]) -> frozenset[str]:
    """``bfloat16`` and the type variables bound to it (``typedef bfloat16 T``)."""
    return frozenset({BF16} | {name for name, t in bindings.items() if t == BF16})


def _mentions(parts: list, words: frozenset[str]) -> bool:
    from ..syntax.parts import Call
    from ..syntax.tokens import Token

    for p in parts:
        if isinstance(p, Token) and p.kind == "id" and p.text in words:
            return True
        if isinstance(p, Call) and any(
                (a in words) if isinstance(a, str) else isinstance(a, list) and _mentions(a, words)
                for a in p.args):
            return True
    return False


def uses_bf16(lowered, sections: list[list], bindings: dict[str, str]) -> bool:
    """Whether the kernel (its parameters, helpers, body or local memory) names bfloat16."""
    words = bf16_words(bindings)
    return (any(p.type in words for p in lowered.params)
            or any(_mentions(list(s), words) for s in sections))


def bf16_variant(lowered, helpers: list, body: list, local: list, bindings: dict[str, str],
                 bits_type: str) -> tuple[list, list, list]:
    """Helpers, body and ``@localmem`` declarations rewritten for bfloat16 storage;
    ``bits_type`` is the target's name of a 16-bit unsigned integer. A scalar bfloat16
    parameter and debug mode's checked accesses are refused (not yet covered)."""
    words = bf16_words(bindings)
    for p in lowered.params:
        if not p.pointer and p.type in words:
            raise KernelTypeError(
                f"kernel {lowered.name!r}: parameter {p.name!r} is a bfloat16 scalar; "
                f"bfloat16 is a storage type for arrays, computed in float: declare "
                f"'{p.name}' as float (or pass it in a one-element bfloat16 array)")
    if getattr(lowered, "debug", False):
        raise KernelTypeError(
            f"kernel {lowered.name!r} uses bfloat16 arrays, and debug mode's checked "
            f"accesses are not yet rewritten as bfloat16 storage; run it without debug mode, "
            f"or debug a float32 version of it")
    arrays = {p.name for p in lowered.params if p.pointer and p.type in words}
    sections = [helpers, body, *local]
    for s in sections:
        pointer_names(s, words, arrays)
    from .half_storage import half_words

    half_too = any(_mentions(list(s), half_words(bindings)) for s in sections) or any(
        p.type in half_words(bindings) for p in lowered.params)
    rewriter = _Bf16Rewriter(words, arrays, bits_type, half_too, lowered.name)
    helpers, body, *local = [rewriter.parts(list(s)) for s in sections]
    return helpers, body, local
