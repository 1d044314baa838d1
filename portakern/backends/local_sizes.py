"""``@localmem`` arrays sized at launch (DESIGN §1a, "Sizes chosen at launch").

``@localmem float buf[n * 2];`` with ``n`` a scalar parameter (or ``@groupsize`` without a
declared size) lowers to a ``localmem_sized`` primitive (:mod:`portakern.lower.constructs`)
that carries its count twice: as C for the kernel, and as a Python expression of the
launch arguments ``a`` and the workgroup size ``g`` (hardware order) for the host. Before
each launch the backend works out each array's bytes here, checks the total against
``backend.limits.local_memory`` and passes it where the target wants it: CUDA's dynamic
shared memory, OpenCL's ``__local`` argument. The native path allocates the arrays itself
(per group, on the stack) and only checks; Metal compiles a variant per size.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import LaunchError

__all__ = ["SizedArray", "checked_header", "launch_bytes", "local_bytes", "sized_arrays",
           "sized_counts", "template_constants"]

#: Each array starts at a multiple of this many bytes in the launch's one buffer (the
#: lowering's offsets round the same way).
ALIGN = 16


class SizedArray(NamedTuple):
    """One launch-sized ``@localmem`` array of a rendered kernel."""

    name: str
    #: Bytes per element.
    itemsize: int
    #: The count, as compiled Python over ``a`` (launch arguments) and ``g`` (group size).
    count: Any
    #: The size as the source wrote it (for messages).
    text: str


def sized_arrays(rendered: Any) -> tuple[SizedArray, ...]:
    """The launch-sized ``@localmem`` arrays of ``rendered`` (its ``sized_local`` fact),
    in declaration order."""
    from ..types import TYPE_DTYPES

    fact = getattr(rendered, "fact", None)  # the native runtime's stub has no facts
    out = []
    for name, type_name, expr in fact("sized_local", ()) if fact else ():
        dtype = TYPE_DTYPES.get(type_name)
        if dtype is None:
            raise LaunchError(
                f"kernel {rendered.name!r}: @localmem {name!r} is sized at launch, which "
                f"needs an element type of known size (a scalar type such as float or int), "
                f"got {type_name!r}; give the array a constant size instead")
        out.append(SizedArray(name, int(np.dtype(dtype).itemsize),
                              compile(expr, name, "eval"), expr))
    return tuple(out)


def sized_counts(arrays: tuple[SizedArray, ...], args: Any,
                 local_size: tuple[int, ...]) -> list[int]:
    """Each array's element count for a launch with ``args`` and ``local_size``."""
    group = tuple(local_size) + (1,) * (3 - len(local_size))
    scope = {"a": args, "g": group}
    return [int(eval(arr.count, {"__builtins__": {"int": int}}, scope))  # noqa: S307
            for arr in arrays]


def local_bytes(arrays: tuple[SizedArray, ...], args: Any, local_size: tuple[int, ...],
                limit: int, kernel: str, backend: str) -> int:
    """The bytes of workgroup memory ``arrays`` take in this launch (their offsets
    rounded to :data:`ALIGN`), checked against ``limit``.

    Raises
    ------
    LaunchError
        A count is negative, or the total exceeds ``limit``; the message names each
        array, its size and the limit.
    """
    counts = sized_counts(arrays, args, local_size)
    total = 0
    parts = []
    for arr, count in zip(arrays, counts, strict=True):
        if count < 0:
            raise LaunchError(
                f"kernel {kernel!r}: @localmem {arr.name!r} would have {count} elements "
                f"({arr.text} with this launch's arguments); a size must not be negative")
        total = -(-total // ALIGN) * ALIGN + count * arr.itemsize
        parts.append(f"{arr.name!r}: {count} elements, {count * arr.itemsize} bytes")
    if total > limit:
        raise LaunchError(
            f"kernel {kernel!r} needs {total} bytes of workgroup memory at this launch "
            f"({'; '.join(parts)}), more than the {limit} bytes of {backend} "
            f"(backend.limits.local_memory); launch with smaller sizes or a smaller "
            f"workgroup")
    return total


def launch_bytes(compiled: Any, args: Any, local_size: tuple[int, ...], backend: Any) -> int:
    """The bytes of ``compiled``'s launch-sized arrays (its ``sized`` attribute) in this
    launch, checked against ``backend.limits.local_memory``; 0 without such arrays."""
    arrays = getattr(compiled, "sized", ())
    if not arrays:
        return 0
    return local_bytes(arrays, args, local_size, backend.limits.local_memory, compiled.name,
                       repr(backend))


def template_constants(program: Any, args: Any, local_size: tuple[int, ...],
                       backend: Any) -> list:
    """MLX's ``template=`` for an MLX program's launch-sized arrays: each count as the
    constant ``pk_local_<name>`` (MLX cannot size threadgroup memory at launch, so each
    size is a variant MLX compiles), after the check against ``local_memory``."""
    if not program.sized:
        return []
    if program.dialect != "metal":
        raise LaunchError(
            f"kernel {program.kernel_name!r} sizes @localmem at launch, which MLX's CUDA "
            f"path (mx.fast.cuda_kernel) cannot run yet; use pk.CUDA() (dynamic shared "
            f"memory) or give the array a constant size")
    local_bytes(program.sized, args, local_size, backend.limits.local_memory,
                program.kernel_name, repr(backend))
    counts = sized_counts(program.sized, args, local_size)
    return [(f"pk_local_{arr.name}", max(count, 1))
            for arr, count in zip(program.sized, counts, strict=True)]


def checked_header(header: str, arrays: tuple[SizedArray, ...]) -> str:
    """An MLX header for a check of the source MLX would compile: each launch-sized count
    bound to one element (the variant a check compiles)."""
    return header + "".join(f"constexpr constant int pk_local_{a.name} = 1;\n"
                            for a in arrays)
