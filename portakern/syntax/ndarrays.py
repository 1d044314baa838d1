"""The parameter form of N-d arrays, ``T x[:, :]`` (one ``:`` per axis).

How such a parameter is subscripted is :mod:`portakern.lower.subscripts`'s; the hidden
scalars it brings are :func:`portakern.syntax.language.hidden_params`.
"""

from __future__ import annotations

from .tokens import SourceMap, Token

__all__ = ["MAX_AXES", "nd_suffix"]

#: The most axes an N-d array parameter ``T x[:, :, :, :]`` may have.
MAX_AXES = 4


def nd_suffix(group: list[Token], smap: SourceMap) -> int:
    """The number of axes of a parameter ending ``[:, :]`` (one ``:`` per axis), or 0."""
    if not group or not group[-1].is_punct("]"):
        return 0
    open_at = max((n for n, t in enumerate(group) if t.is_punct("[")), default=None)
    if open_at is None:
        return 0
    inner = group[open_at + 1:-1]
    form = "one ':' per axis, 1 to 4 axes: 'T x[:]', 'T x[:, :]', ..."
    axes = 0
    for n, t in enumerate(inner):
        if t.is_punct(":" if n % 2 == 0 else ","):
            axes += n % 2 == 0
        else:
            raise smap.error_at(
                f"unexpected '[' in a kernel parameter: a parameter is not a fixed-size "
                f"array ('{t.text}' in the brackets); write 'T* x' for a flat array, or "
                f"{form} for an N-d array (the extents come with the array at launch)",
                group[open_at])
    if not inner or inner[-1].is_punct(","):
        raise smap.error_at(f"an N-d array parameter needs {form}", group[open_at])
    if axes > MAX_AXES:
        raise smap.error_at(
            f"an N-d array parameter has at most {MAX_AXES} axes, got {axes}", group[open_at])
    if open_at != len(group) - 2 * axes - 1:
        raise smap.error_at(f"misplaced '[' in a kernel parameter; write {form}",
                            group[open_at])
    return axes
