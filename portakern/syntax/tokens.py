"""Tokens of the kernel dialect and the helpers that walk them.

This is the lowest layer of the front end: the parser (:mod:`portakern.syntax.language`),
the statement helpers (:mod:`portakern.syntax.parts`) and the vector types
(:mod:`portakern.syntax.vectors`) all read tokens, so they import them from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..patterns import lazy
from ..source.source_map import SourceMap

__all__ = ["Token", "SourceMap", "tokenize", "significant", "match_bracket", "split_top",
           "next_significant", "function_signatures"]


@dataclass(frozen=True)
class Token:
    """One lexical token; ``line``/``col`` are positions in the user's file."""

    kind: str  # id, num, str, punct, ws, comment, pp, at
    text: str
    line: int
    col: int

    def is_punct(self, text: str) -> bool:
        return self.kind == "punct" and self.text == text


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f\v]+|\\\n)
  | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<num>(?:0[xX][0-9a-fA-F']+|(?:\d[\d']*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[uUlLfFhH]*)
  | (?P<id>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<at>@[A-Za-z_][A-Za-z_0-9]*)
  | (?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<punct><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!~<>=?:;,.()\[\]{}#])
    """,
    re.VERBOSE | re.DOTALL,
)

_PP_RE = lazy(r"#(?:[^\n\\]|\\.|\\\n)*", re.DOTALL)


def tokenize(text: str, smap: SourceMap) -> list[Token]:
    """Split rendered kernel text into tokens positioned in the user's file."""
    tokens: list[Token] = []
    pos = 0
    rline = 0  # rendered line index
    line_start = 0
    at_line_start = True
    n = len(text)
    line_of = smap.line_of
    while pos < n:
        user_line = line_of[rline] if rline < len(line_of) else (line_of[-1] if line_of else 1)
        col = pos - line_start + 1
        if at_line_start and text[pos] == "#":
            m = _PP_RE.match(text, pos)
            assert m is not None
            kind, value = "pp", m.group(0)
        else:
            m = _TOKEN_RE.match(text, pos)
            if m is None:
                bad = text[pos]
                raise smap.error(f"unexpected character {bad!r} in kernel source",
                                 user_line, col, rline)
            kind = m.lastgroup or "punct"
            value = m.group(0)
            if kind == "comment" and value.startswith("/*") and (
                    len(value) < 4 or not value.endswith("*/")):
                raise smap.error("unterminated comment", user_line, col, rline)
        tokens.append(Token(kind, value, user_line, col))
        newlines = value.count("\n")
        if newlines:
            rline += newlines
            line_start = pos + value.rfind("\n") + 1
        pos += len(value)
        # A preprocessor line only starts at the beginning of a line (after blanks).
        if kind == "ws":
            at_line_start = at_line_start or newlines > 0
        else:
            at_line_start = False
    return tokens


def significant(tokens: list[Token]) -> list[Token]:
    """The tokens that are neither whitespace nor comments."""
    return [t for t in tokens if t.kind not in ("ws", "comment")]


#: The bracket that closes each opening bracket.
CLOSING = {"(": ")", "[": "]", "{": "}"}


def match_bracket(tokens: list[Token], i: int, smap: SourceMap) -> int:
    """Index of the bracket closing ``tokens[i]``."""
    stack = [tokens[i]]
    j = i + 1
    while j < len(tokens):
        t = tokens[j]
        if t.kind == "punct":
            if t.text in CLOSING:
                stack.append(t)
            elif t.text in (")", "]", "}"):
                opener = stack.pop()
                if CLOSING[opener.text] != t.text:
                    raise smap.error_at(
                        f"'{t.text}' does not match '{opener.text}' opened on line {opener.line}",
                        t)
                if not stack:
                    return j
        j += 1
    raise smap.error_at(f"'{tokens[i].text}' is never closed", tokens[i])


def next_significant(tokens: list[Token], i: int) -> int:
    """Index of the first significant token at or after ``i`` (len if none)."""
    while i < len(tokens) and tokens[i].kind in ("ws", "comment"):
        i += 1
    return i


def split_top(tokens: list[Token], separator: str) -> list[list[Token]]:
    """``tokens`` split at each ``separator`` (a punctuator) outside brackets, the
    separators dropped; an empty list gives ``[[]]``."""
    groups: list[list[Token]] = [[]]
    depth = 0
    for t in tokens:
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        if depth == 0 and t.is_punct(separator):
            groups.append([])
        else:
            groups[-1].append(t)
    return groups


def split_commas(tokens: list[Token]) -> list[list[Token]]:
    """``tokens`` split at each comma outside brackets, the commas dropped.

    An empty list gives ``[[]]`` (one empty group), as an empty argument list does.
    """
    return split_top(tokens, ",")


def function_signatures(helpers: list[Token]) -> list[tuple[str, str]]:
    """``(name, return type)`` of each function the module defines (or declares)."""
    sig = [t for t in helpers if t.kind not in ("ws", "comment", "pp")]
    out = []
    depth = 0
    for n, t in enumerate(sig):
        if t.kind == "punct" and t.text in "([{":
            if t.text == "(" and depth == 0 and n > 0 and sig[n - 1].kind == "id":
                words: list[str] = []
                k = n - 2
                while k >= 0 and (sig[k].kind == "id" or sig[k].text in ("*", "&")):
                    words.insert(0, sig[k].text)
                    k -= 1
                if words and not (k >= 0 and sig[k].text in ("=", ",", "(")):
                    out.append((sig[n - 1].text, " ".join(words)))
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
    return out
