"""Testing helpers for kernel authors and backend authors.

- :func:`assert_backends_agree` runs one kernel on every available backend and
  compares the arrays it writes.
- :class:`ConformanceSuite` is a pytest test class that a backend adopts in a
  few lines (``class TestMine(ConformanceSuite): backend = Mine``).

``ConformanceSuite`` needs pytest; it is imported only when asked for, so
``assert_backends_agree`` works in any test runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .agree import assert_backends_agree, available_backends

if TYPE_CHECKING:  # for type checkers and pdoc; at run time it loads on first use
    from .conformance import ConformanceSuite

__all__ = ["ConformanceSuite", "assert_backends_agree", "available_backends"]


def __getattr__(name: str) -> Any:
    if name == "ConformanceSuite":
        from .conformance import ConformanceSuite

        return ConformanceSuite
    raise AttributeError(f"module 'portakern.testing' has no attribute {name!r}")
