"""``-D NAME=VALUE`` constants from a command line (``portakern check``/``render``/``bench``)."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

__all__ = ["parse_define"]


def parse_define(text: str) -> tuple[str, Any]:
    """Parse ``NAME=VALUE`` from ``-D``: an int, a float, true/false, or a type name.

    NumPy dtype names (``float32``, ``int64``) are accepted for types and turned
    into the language's names (``float``, ``long``).
    """
    from ..types import KNOWN_TYPES, type_name_of

    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name.isidentifier() or not value:
        raise argparse.ArgumentTypeError(
            f"expected NAME=VALUE (e.g. TILE=16 or T=double), got {text!r}")
    lowered = value.lower()
    if lowered in ("true", "false"):
        return name, lowered == "true"
    for convert in (int, lambda v: int(v, 0), float):
        try:
            return name, convert(value)
        except ValueError:
            pass
    if value in KNOWN_TYPES:
        return name, value
    try:
        as_language = type_name_of(np.dtype(value))
    except (TypeError, ValueError, SyntaxError):  # NumPy's dtype parser raises all three
        as_language = None
    if as_language is not None:
        return name, as_language
    known = ", ".join(sorted(KNOWN_TYPES))
    raise argparse.ArgumentTypeError(
        f"-D {name}={value}: a value is an int, a float, true/false or a type name ({known})")
