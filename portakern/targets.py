"""The one table of targets: what each dialect is and how its backend runs a kernel.

A target is a template folder (``templates/<name>/``) plus the facts below. Code
outside ``backends/`` and ``templates/`` asks this table instead of comparing
target names: whether barrier kernels are lowered into work-item loops, what the
portability scan looks for, what ``portakern check`` runs, how messages name it.
A plugin that adds a template folder for a new dialect declares its facts with
:func:`register_target`; a folder without a declaration gets the defaults (a GPU
dialect like OpenCL's, whose work-items run concurrently).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CANONICAL_TARGET", "METAL_RESERVED_WORDS", "OPENCL_RESERVED_WORDS", "TargetInfo",
           "builtin_targets", "register_target", "target_info"]

#: The target whose rendering fixes a kernel's signature and the list of a source's
#: kernels (every other target must agree), and the one ``render()`` uses by default.
CANONICAL_TARGET = "opencl"


@dataclass(frozen=True)
class TargetInfo:
    """What one target is.

    Attributes
    ----------
    name : str
        The template folder under ``templates/`` (and the ``target`` Jinja sees).
    title : str
        How messages name it.
    lockstep : bool
        Its launcher runs a workgroup's work-items one after another, so a kernel
        with ``@synchronize`` or ``@localmem`` is lowered into work-item loops cut
        at the barriers (:func:`portakern.lower.lower_kernel`'s ``lockstep``).
    printf : bool
        ``printf`` exists in kernels.
    prints : bool
        ``@print`` writes its output (else its ``print`` macro renders nothing, and
        the portability scan warns about each ``@print``).
    pointer_address_spaces : bool
        A pointer variable must name its address space (OpenCL 1.2, Metal), so a
        pointer declared in portable code is not portable to it.
    reserved_words : frozenset of str
        Identifiers the dialect reserves that C leaves free.
    double : bool
        ``double`` exists.
    checker : str or None
        ``"module:function"`` of its compile check (``portakern check``), which
        takes the rendered kernel, the user's sources and the kernel, and returns a
        one-line summary.
    """

    name: str
    title: str
    lockstep: bool = False
    printf: bool = True
    pointer_address_spaces: bool = False
    reserved_words: frozenset[str] = field(default_factory=frozenset)
    double: bool = True
    checker: str | None = None
    prints: bool = True


#: Words of Metal Shading Language that are not C++ keywords: function qualifiers and
#: address spaces. Apple's compiler rejects them as names.
METAL_RESERVED_WORDS = frozenset({
    "kernel", "vertex", "fragment", "device", "constant", "thread", "threadgroup",
    "threadgroup_imageblock", "ray_data", "object_data",
})

#: OpenCL C keywords that C leaves free: address spaces, access qualifiers, kernel.
OPENCL_RESERVED_WORDS = frozenset({
    "kernel", "global", "local", "constant", "private", "read_only", "write_only",
    "read_write", "pipe", "__kernel", "__global", "__local", "__constant", "__private",
})

_BUILTIN = (
    TargetInfo("opencl", "OpenCL", pointer_address_spaces=True,
               reserved_words=OPENCL_RESERVED_WORDS,
               checker="portakern.checks.targets:check_opencl"),
    TargetInfo("cuda", "CUDA", checker="portakern.checks.targets:check_cuda"),
    TargetInfo("metal", "Metal", printf=False, prints=False, pointer_address_spaces=True,
               reserved_words=METAL_RESERVED_WORDS, double=False,
               checker="portakern.checks.targets:check_metal"),
    TargetInfo("c", "the native C++ path (CPU())", lockstep=True, printf=False,
               checker="portakern.checks.targets:check_c"),
)
_TABLE: dict[str, TargetInfo] = {t.name: t for t in _BUILTIN}


def builtin_targets() -> tuple[str, ...]:
    """The targets portakern ships, in the order reports list them."""
    return tuple(t.name for t in _BUILTIN)


def register_target(info: TargetInfo) -> None:
    """Declare the facts of a plugin's target (its template folder is added separately)."""
    if not isinstance(info, TargetInfo):
        raise TypeError(f"register_target takes a portakern.targets.TargetInfo, got "
                        f"{type(info).__name__}")
    _TABLE[info.name] = info


def target_info(name: str) -> TargetInfo:
    """The facts of target ``name``; an undeclared plugin folder gets the defaults."""
    hit = _TABLE.get(name)
    return hit if hit is not None else TargetInfo(name, name)
