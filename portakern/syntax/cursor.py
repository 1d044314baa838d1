"""The one cursor: the expression parser and the statement parser read code with it.

Jinja's ``TokenStream`` idea: every parse function asks the same object what comes next
(``look``), takes it only if it is what it wants (``next_if``) or insists (``expect``).
Blanks and comments are skipped, and the operators the tokenizer splits (``+=`` is ``+``
then ``=``) are glued back when their tokens touch.
"""

from __future__ import annotations

from collections.abc import Iterable

from .tokens import Token

__all__ = ["Cursor", "NoParse"]

_BLANK = frozenset({"ws", "comment", "pp"})


class NoParse(Exception):
    """The tokens are not an expression this parser reads (caught inside the module)."""


class Cursor:
    """The one cursor over a statement's code: blanks skipped, split operators glued.

    ``look(k)`` peeks, ``next()`` takes, ``next_if(text)`` takes only a token (or glued
    operator) with that text, ``expect(text)`` takes it or fails with :class:`NoParse`.
    Each item is ``(text, tokens)``: ``+=`` is one item of two tokens.

    With ``parts=True`` (the statement parser, :mod:`portakern.syntax.tree`, which also
    reads lowered parts) a part that is not a token (generated text, a primitive call,
    the ``@uniform`` mark) is an item of its own, with the text ``""``, and nothing is
    glued, so each item is one element of the sequence: :attr:`pos` says where the
    cursor is in it, blanks included, for slicing the statements out losslessly.
    """

    def __init__(self, tokens: Iterable[object], *, parts: bool = False) -> None:
        items: list[tuple[str, tuple]] = []
        #: For each item, the position after it in the sequence given.
        ends: list[int] = []
        for n, t in enumerate(tokens):
            if not isinstance(t, Token):
                if not parts:
                    raise NoParse("generated parts")  # a lowered statement: not user code
                items.append(("", (t,)))
                ends.append(n + 1)
                continue
            if t.kind in _BLANK:
                continue
            if not parts and items and t.is_punct("=") and items[-1][0] in (
                    "+", "-", "*", "/", "%", "&", "^", "|"):
                prev = items[-1][1][-1]
                if prev.kind == "punct" and prev.line == t.line and prev.col + 1 == t.col:
                    items[-1] = (items[-1][0] + "=", (*items[-1][1], t))
                    ends[-1] = n + 1
                    continue
            items.append((t.text, (t,)))
            ends.append(n + 1)
        self.items = items
        self.ends = ends
        self.i = 0

    @property
    def pos(self) -> int:
        """The position in the sequence given just after the last item taken (0 at first)."""
        return self.ends[self.i - 1] if self.i else 0

    def part(self, k: int = 0) -> object:
        """The ``k``-th next item's first token or part, or None past the end."""
        j = self.i + k
        return self.items[j][1][0] if j < len(self.items) else None

    def done(self) -> bool:
        return self.i >= len(self.items)

    def look(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.items[j][0] if j < len(self.items) else None

    def token(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.items[j][1][0] if j < len(self.items) else None

    def kind(self, k: int = 0) -> str | None:
        t = self.token(k)
        if not isinstance(t, Token) or len(self.items[self.i + k][1]) > 1:
            return None  # past the end, a glued operator or a lowered part
        return t.kind

    def next(self) -> tuple[Token, ...]:
        if self.i >= len(self.items):
            raise NoParse("more code expected")
        self.i += 1
        return self.items[self.i - 1][1]

    def next_if(self, text: str) -> tuple[Token, ...] | None:
        if self.look() == text and self.kind() in ("punct", "id", "at", None):
            return self.next()
        return None

    def expect(self, text: str) -> tuple[Token, ...]:
        got = self.next_if(text)
        if got is None:
            raise NoParse(f"expected {text!r}, got {self.look()!r}")
        return got

    def previous(self) -> Token:
        return self.items[self.i - 1][1][-1]
