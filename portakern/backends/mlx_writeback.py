"""Which write-back each written parameter of an MLX kernel gets (see :mod:`._mlx`):
``"fused"`` where every access is proven to be at an index the work-item owns, else
``"staged"``, whose copies in and out are the small MLX kernels of :func:`copy_kernel`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..lower.subscripts import DEBUG_RECORD
from ..syntax.language import Token
from ..syntax.parts import Call, Gen

__all__ = ["copy_kernel", "writeback_modes"]


def _significant(parts: Sequence[Any]) -> list[tuple]:
    """Parts as comparable items, without blanks: ("id", text), ("gen", text), ("call", ...)."""
    out: list[tuple] = []
    for part in parts:
        if isinstance(part, Token):
            if part.kind not in ("ws", "comment"):
                out.append((part.kind, part.text))
        elif isinstance(part, Gen):
            text = part.text.strip()
            if text:
                out.append(("gen", text))
        elif isinstance(part, Call):
            out.append(("call", part.macro, tuple(part.args)))
        # the @uniform marker is not code
    return out


_ASSIGN_OPS = frozenset("+-*/%&|^")


def _is_modified(items: list[tuple], k: int) -> bool:
    """Whether the identifier at ``items[k]`` is assigned, incremented or has its address taken."""
    nxt = items[k + 1] if k + 1 < len(items) else ("", "")
    after = items[k + 2] if k + 2 < len(items) else ("", "")
    prev = items[k - 1] if k else ("", "")
    if nxt[:2] in (("punct", "="), ("gen", "="), ("punct", "++"), ("punct", "--"),
                   ("punct", "<<="), ("punct", ">>=")):
        return True
    if nxt[0] == "punct" and nxt[1] in _ASSIGN_OPS and after[:2] == ("punct", "="):
        return True
    return prev[:2] in (("punct", "++"), ("punct", "--"), ("punct", "&"))


def _rhs(items: list[tuple], k: int) -> list[tuple]:
    """The expression assigned at ``items[k] =``: up to ';' or ',' at depth 0."""
    out, depth = [], 0
    for item in items[k + 2:]:
        if item[0] == "punct" and item[1] in "([{":
            depth += 1
        elif item[0] == "punct" and item[1] in ")]}":
            depth -= 1
        # A hoisted declaration's assignment ends in a generated ';'.
        ends = item[:2] in (("punct", ";"), ("punct", ","), ("gen", ";"), ("gen", ","))
        if depth <= 0 and ends or depth < 0:
            break
        out.append(item)
    return out


def _generated(rhs: list[tuple], ndim: int, macro: str) -> bool:
    """Whether ``rhs`` is lowering output made of ``macro`` over every axis (and ndrange)."""
    if not rhs or any(item[0] not in ("gen", "call") for item in rhs):
        return False
    calls = [item for item in rhs if item[0] == "call"]
    if any(c[1] not in (macro, "ndrange") for c in calls):
        return False
    axes = sorted(c[2][0] for c in calls if c[1] == macro)
    if macro == "ndrange":
        return axes == list(range(ndim)) if ndim else rhs == [("gen", "1")]
    return axes == list(range(ndim)) if ndim else rhs == [("gen", "0")]


def _assigned_once(items: list[tuple], ndim: int, macro: str) -> set[str]:
    """Names assigned exactly once, from ``@index(Global, Linear)`` or ``@ndrange()``, and
    never modified otherwise."""
    assigned: dict[str, list[list[tuple]]] = {}
    modified: set[str] = set()
    for k, item in enumerate(items):
        if item[0] != "id":
            continue
        if k + 1 < len(items) and items[k + 1][:2] in (("punct", "="), ("gen", "=")):
            assigned.setdefault(item[1], []).append(_rhs(items, k))
        elif _is_modified(items, k):
            modified.add(item[1])
    return {name for name, rhss in assigned.items()
            if name not in modified and len(rhss) == 1 and _generated(rhss[0], ndim, macro)}


def _owned_subscript(sub: list[tuple], index: set[str], sizes: set[str]) -> bool:
    """``[i]``, ``[K * n + i]``, ``[n * K + i]``, ``[i + K * n]`` or ``[i + n * K]``."""
    def is_i(item: tuple) -> bool:
        return item[0] == "id" and item[1] in index

    def is_plane(a: tuple, op: tuple, b: tuple) -> bool:
        if op != ("punct", "*"):
            return False
        pair = {a[0], b[0]}
        num = a if a[0] == "num" else b
        name = b if a[0] == "num" else a
        return pair == {"num", "id"} and num[1].isdigit() and name[1] in sizes

    if len(sub) == 1:
        return is_i(sub[0])
    if len(sub) == 5 and sub[3] == ("punct", "+") and is_i(sub[4]):
        return is_plane(sub[0], sub[1], sub[2])
    if len(sub) == 5 and sub[1] == ("punct", "+") and is_i(sub[0]):
        return is_plane(sub[2], sub[3], sub[4])
    return False


def _accesses_owned(items: list[tuple], name: str, index: set[str], sizes: set[str]) -> bool:
    for k, item in enumerate(items):
        if item[:2] != ("id", name):
            continue
        if k and items[k - 1][:2] == ("punct", "&"):
            return False
        if k + 1 >= len(items) or items[k + 1][:2] != ("punct", "["):
            return False
        sub, depth = [], 0
        for inner in items[k + 2:]:
            if inner[0] == "punct" and inner[1] in "([{":
                depth += 1
            elif inner[0] == "punct" and inner[1] in ")]}":
                if depth == 0:
                    break
                depth -= 1
            sub.append(inner)
        if not _owned_subscript(sub, index, sizes):
            return False
    return True


def writeback_modes(lowered: Any, helpers: Sequence[Any] = ()) -> dict[str, str]:
    """``"fused"`` or ``"staged"`` for each written parameter of a lowered kernel.

    Fused only where the source proves that every work-item touches only
    elements it owns (see the module docstring); anything the analysis does not
    recognise is staged, which is always correct.
    """
    written = [p for p in lowered.params if p.pointer and not p.const]
    if not written:
        return {}
    if lowered.unsafe_indices:
        # Work-items outside the ndrange run the body too, and own nothing.
        return {p.name: "staged" for p in written}
    items = _significant(lowered.body)
    index = _assigned_once(items, lowered.ndim, "global_id")
    sizes = _assigned_once(items, lowered.ndim, "ndrange")
    macro_text = " ".join(t.text for t in [*lowered.body, *helpers]
                          if isinstance(t, Token) and t.kind == "pp")
    modes = {}
    for p in written:
        # A #define could hide an access the analysis cannot see.
        hidden = re.search(rf"\b{re.escape(p.name)}\b", macro_text) is not None
        owned = not hidden and _accesses_owned(items, p.name, index, sizes)
        # Debug mode's record (portakern.launch.debug) is written by whichever item faults first.
        owned = owned and p.name != DEBUG_RECORD
        modes[p.name] = "fused" if owned else "staged"
    return modes


# -- copy kernels (staged write-back) ------------------------------------------------------------

_COPY_SOURCE = {
    "metal": "    const long k = (long)thread_position_in_grid.x;\n"
             "    if (k < n[0]) { dst[k] = src[k]; }\n",
    "cuda": "    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (k < n[0]) { dst[k] = src[k]; }\n",
}

_COPY_KERNELS: dict[tuple[str, str, str], tuple[Any, Any]] = {}


def copy_kernel(factory: Any, dialect: str, which: str, dtype_name: str) -> Any:
    """The MLX kernel copying a ``dtype_name`` array into a staged parameter (``"in"``)
    or out of it (``"out"``), made once per factory."""
    # One kernel per dtype: MLX's CUDA path caches JIT modules by name alone.
    key = (dialect, which, dtype_name)
    hit = _COPY_KERNELS.get(key)
    if hit is None or hit[0] is not factory:
        inputs = ["src", "n"] if which == "in" else ["src", "n", "after"]
        kernel = factory(name=f"pk_copy_{which}_{key[2]}", input_names=inputs,
                         output_names=["dst"], source=_COPY_SOURCE[dialect], header="",
                         ensure_row_contiguous=True)
        hit = _COPY_KERNELS[key] = (factory, kernel)
    return hit[1]
