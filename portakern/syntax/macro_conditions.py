"""The value of an ``#if``/``#elif`` condition, for debug mode's macro expansion.

:mod:`portakern.syntax.macros` follows a source's ``#if`` groups so that a macro defined
under one is expanded when the source alone decides the condition. :func:`condition_value`
evaluates a condition as C does (integers of ``intmax_t``/``uintmax_t``, the usual
conversions, ``defined``, a name nobody defines as 0), after its caller has expanded the
source's macros in it, and answers None where it cannot be sure: a name the target's
compiler or headers define (:data:`TARGET_NAMES`: ``__CUDA_ARCH__``, ``_OPENMP``,
``cl_khr_fp64``, ``FLT_MAX``, portakern's ``PK_`` macros...), a macro whose definition an
unsure condition decides, or anything the compiler would reject or leave to the
implementation (a division by zero, a signed overflow, a float, a comma). ``0 && X`` and
``1 || X`` are decided whatever ``X`` is, as in C.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..patterns import lazy
from .tokens import Token

__all__ = ["TARGET_NAMES", "condition_value"]

#: Names a target's compiler, its headers or portakern's prelude may define: the names C
#: reserves for the implementation (``__x``, ``_X``), OpenCL's extension and version macros
#: (``cl_khr_fp64``, ``CL_VERSION_2_0``), portakern's (``PK_``, ``PORTAKERN_``), the limits
#: and constants of the standard headers, and the names the preludes in templates/ define
#: as macros on some target (address spaces, vector types, ``double`` on Metal, math
#: functions). A condition that reads one is not guessed.
TARGET_NAMES = lazy(
    r"(?:_[_A-Z]\w*|(?:PK|pk|PORTAKERN|CL|cl|FLT|DBL|HALF|CHAR|SCHAR|UCHAR|SHRT|USHRT|INT"
    r"|UINT|LONG|ULONG|LLONG|ULLONG|SIZE|PTRDIFF|INTPTR|UINTPTR|M|FP|MTL|metal)_\w*"
    r"|MAXFLOAT|HUGE_VALF?|INFINITY|NAN|NULL|EOF"
    r"|(?:u?(?:char|short|int|long)|float|double|half)(?:2|3|4|8|16)?"
    r"|global|local|constant|private|kernel|device|thread|threadgroup|read_only|write_only"
    r"|read_write|pipe|cbrt|erfc?|expm1|fmax|fmin|hypot|lgamma|log1p|logb|nearbyint"
    r"|remainder|tgamma)\Z")

_INT = lazy(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)?\Z")
_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92,
            "'": 39, '"': 34, "?": 63}
_BITS = 64
_LEVELS = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%")]

Value = tuple[int, bool] | None  # (value, unsigned), or None where unsure


class _Unsure(Exception):
    """The condition cannot be evaluated here: the compiler decides it."""


def condition_value(tokens: list[Token], known: Callable[[str], bool | None]) -> bool | None:
    """Whether the condition ``tokens`` holds, or None where only the compiler can say.

    ``tokens`` are the condition's significant tokens, the source's macros expanded and
    each ``defined X`` replaced by ``1``, ``0`` or the identifier ``defined`` (unsure);
    ``known(name)`` says whether an identifier left over is surely undefined (False: it
    is 0); one defined (True: a macro that was not expanded) or unsure (None) leaves the
    condition to the compiler.
    """
    parser = _Parser(tokens, known)
    try:
        value = parser.ternary()
        if parser.k != len(tokens):
            return None
    except (_Unsure, IndexError):
        return None
    return None if value is None else value[0] != 0


def _wrap(value: int, unsigned: bool) -> Value:
    if unsigned:
        return value % (1 << _BITS), True
    if not -(1 << (_BITS - 1)) <= value < (1 << (_BITS - 1)):
        raise _Unsure  # a signed overflow: undefined in C
    return value, False


class _Parser:
    def __init__(self, tokens: list[Token], known: Callable[[str], bool | None]) -> None:
        self.tokens, self.known, self.k = tokens, known, 0

    def peek(self) -> str | None:
        return self.tokens[self.k].text if self.k < len(self.tokens) else None

    def take(self, text: str) -> None:
        if self.peek() != text:
            raise _Unsure
        self.k += 1

    def ternary(self) -> Value:
        cond = self.binary(0)
        if self.peek() != "?":
            return cond
        self.k += 1
        then = self.ternary()
        self.take(":")
        other = self.ternary()
        if then is not None and other is not None and (then[1] or other[1]):
            then, other = _wrap(then[0], True), _wrap(other[0], True)
        if cond is None:
            return then if then == other else None
        return then if cond[0] else other

    def binary(self, level: int) -> Value:
        if level == len(_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _LEVELS[level]:
            op = self.tokens[self.k].text
            self.k += 1
            left = _combine(op, left, self.binary(level + 1))
        return left

    def unary(self) -> Value:
        t = self.tokens[self.k]
        if t.kind == "punct" and t.text in ("+", "-", "!", "~"):
            self.k += 1
            v = self.unary()
            if v is None:
                return None
            if t.text == "!":
                return int(v[0] == 0), False
            return _wrap({"+": v[0], "-": -v[0], "~": ~v[0]}[t.text], v[1])
        if t.is_punct("("):
            self.k += 1
            v = self.ternary()
            self.take(")")
            return v
        self.k += 1
        if t.kind == "num":
            return _number(t.text)
        if t.kind == "str" and t.text.startswith("'"):
            return _character(t.text[1:-1]), False
        if t.kind == "id":
            # A macro left unexpanded (one C rejects, say) or an unsure name: the compiler's.
            sure = self.known(t.text) if t.text != "defined" else None
            if sure is not False:
                return None
            if t.text in ("true", "false"):
                return int(t.text == "true"), False
            return 0, False  # a name nobody defines is 0, as in C
        raise _Unsure


def _number(text: str) -> Value:
    m = _INT.match(text.replace("'", ""))
    if m is None:
        raise _Unsure  # a float, or a literal the compiler rejects
    digits, suffix = m.groups()
    value = int(digits, 16 if digits[:2] in ("0x", "0X") else 8 if digits[0] == "0" else 10)
    if value >> _BITS:
        raise _Unsure
    return value, bool(suffix and suffix.lower().count("u")) or value >> (_BITS - 1) == 1


def _character(body: str) -> int:
    if len(body) == 1 and body != "\\":
        return ord(body)
    if len(body) >= 2 and body[0] == "\\":
        rest = body[1:]
        if rest in _ESCAPES:
            return _ESCAPES[rest]
        if re.fullmatch(r"[0-7]{1,3}", rest):
            return int(rest, 8)
        if re.fullmatch(r"x[0-9a-fA-F]{1,2}", rest):
            return int(rest[1:], 16)
    raise _Unsure  # a multi-character or wide constant: the implementation's


def _combine(op: str, a: Value, b: Value) -> Value:
    if op in ("&&", "||"):  # decided by one side where C's short circuit would decide it
        stop = 0 if op == "&&" else 1
        if any(v is not None and int(v[0] != 0) == stop for v in (a, b)):
            return stop, False
        return None if a is None or b is None else (1 - stop, False)
    if a is None or b is None:
        return None
    (x, xu), (y, yu) = a, b
    if op in ("<<", ">>"):
        if y < 0 or y >= _BITS or (op == "<<" and x < 0):
            raise _Unsure
        return _wrap(x << y if op == "<<" else x >> y, xu)
    unsigned = xu or yu
    if unsigned:
        x, y = x % (1 << _BITS), y % (1 << _BITS)
    if op in ("==", "!=", "<", ">", "<=", ">="):
        return int({"==": x == y, "!=": x != y, "<": x < y, ">": x > y, "<=": x <= y,
                    ">=": x >= y}[op]), False
    if op in ("/", "%"):
        if y == 0:
            raise _Unsure
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # C truncates toward 0
        return _wrap(q if op == "/" else x - y * q, unsigned)
    return _wrap({"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y,
                  "^": x ^ y}[op], unsigned)
