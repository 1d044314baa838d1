"""Where each line of the rendered source came from in the user's file.

The template stage (:mod:`portakern.source.template`) makes a :class:`SourceMap`;
the syntax stage reads its text and reports errors at user positions through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..errors import KernelSyntaxError

__all__ = ["Positioned", "SourceMap"]


class Positioned(Protocol):
    """Anything with a user position (a token of :mod:`portakern.syntax.tokens`)."""

    line: int
    col: int


@dataclass
class SourceMap:
    """Where each line of the rendered text came from in the user's file."""

    filename: str
    rendered: str
    line_of: list[int]  # rendered line index (0-based) -> user line (1-based)

    def lines(self) -> list[str]:
        return self.rendered.split("\n")

    def error(self, msg: str, line: int, col: int, rendered_line: int | None = None,
              ) -> KernelSyntaxError:
        """Build a :class:`KernelSyntaxError` at a user position."""
        text = None
        if rendered_line is not None:
            lines = self.lines()
            if 0 <= rendered_line < len(lines):
                text = lines[rendered_line]
        return KernelSyntaxError(msg, self.filename, line, col, text)

    def error_at(self, msg: str, tok: Positioned,
                 cls: type[KernelSyntaxError] = KernelSyntaxError) -> KernelSyntaxError:
        return cls(msg, self.filename, tok.line, tok.col, self._text_for(tok))

    def _text_for(self, tok: Positioned) -> str | None:
        # The token records the user line; find the rendered line it came from.
        for idx, user_line in enumerate(self.line_of):
            if user_line == tok.line:
                return self.lines()[idx]
        return None
