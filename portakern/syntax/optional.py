"""Optional array parameters: ``const T* mask = null`` (DESIGN section 1a, "Optional arrays").

A launch may pass None for such a parameter; the kernel receives a null pointer and
tests it with ``if (mask)``. The parse of the default lives here; the launch side is
:func:`portakern.launch.arguments.check_args`.
"""

from __future__ import annotations

from .tokens import SourceMap, Token

__all__ = ["null_default", "check_null_default"]


def null_default(group: list[Token], smap: SourceMap) -> tuple[list[Token], bool]:
    """``group`` (one parameter's tokens) without a trailing ``= null``, and whether it had one.

    Only ``null`` may follow ``=``: a kernel parameter has no other default.
    """
    for k, t in enumerate(group):
        if t.is_punct("="):
            rest = group[k + 1:]
            if len(rest) != 1 or rest[0].text != "null":
                raise smap.error_at(
                    "a kernel parameter's only default is '= null', on an array "
                    "('const T* mask = null')", t)
            return group[:k], True
    return group, False


def check_null_default(name: Token, type_name: str, stars: int, axes: int,
                       smap: SourceMap) -> None:
    """Refuse ``= null`` on a parameter that is not a flat array (``T* x`` or ``const T* x``)."""
    if axes:
        raise smap.error_at(
            f"{name.text!r}: '= null' is for flat array parameters; declare "
            f"'const {type_name}* {name.text} = null'", name)
    if stars != 1:
        raise smap.error_at(
            f"{name.text!r}: only an array parameter may default to null; declare "
            f"'const {type_name}* {name.text} = null'", name)
