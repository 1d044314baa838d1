"""Regular expressions compiled on first use, for the module-level ones a warm start skips.

``re.compile`` at a module's top runs in every process that imports the module: about
0.1 ms each, and a new process that finds its kernel in the disk caches (DESIGN section 4)
uses few of them (the macro, comment and conversion patterns wait for a source that has
those). :func:`lazy` stands in for :func:`re.compile` at module level: the pattern is
compiled when one of its methods is first looked up, and the compiled pattern's methods
are then the object's own attributes, so a later call costs what a call on the pattern
costs.
"""

from __future__ import annotations

import re
from typing import Any, cast

__all__ = ["lazy"]


class _LazyPattern:
    """A :class:`re.Pattern` compiled on first use (see :func:`lazy`)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(*self._args)
        for attr in ("match", "fullmatch", "search", "sub", "subn", "split", "findall",
                     "finditer", "pattern", "flags", "groups", "groupindex"):
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._args[0]!r}, {self._args[1]!r})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled when first used."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))
