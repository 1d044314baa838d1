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
from typing import Any

__all__ = ["CANONICAL_TARGET", "CXX_CONSTRUCTS", "DIALECT_WORDS", "METAL_RESERVED_WORDS",
           "OPENCL_RESERVED_WORDS", "TargetInfo", "builtin_targets", "register_target",
           "target_info"]

#: The target whose rendering fixes a kernel's signature and the list of a source's
#: kernels (every other target must agree), and the one ``render()`` uses by default.
CANONICAL_TARGET = "opencl"


#: Every construct of ``TargetInfo.cxx_constructs`` (found by
#: :mod:`portakern.syntax.cxx_constructs`): the C++ dialects have them all.
CXX_CONSTRUCTS = frozenset({"overloads", "default_arguments", "lambdas", "constexpr",
                            "templates"})


_INDEX = ("write @index(Global|Local|Group, Linear) (or NTuple), @groupsize(d), @groups(d), "
          "@ndrange(d)")
_BARRIER = "write @synchronize()"
_ATOMIC = "write @atomic_add(&a[i], v) (also sub, min, max, xchg, and, or, xor, cas)"
_BITCAST = "write @bitcast(float, bits) (or int, uint, half, ushort)"
_QUALIFIER = "drop it (portakern writes each target's helper qualifier)"
#: One dialect's own spelling of what portakern spells once for every target: word ->
#: (how it is used: ``call`` a function, ``member`` an object read with ``.``, ``word`` any
#: use; what to write instead). Which dialect has which is ``TargetInfo.dialect_words``;
#: a word a target lacks warns at ``pk.kernel()`` and its rendering there is refused
#: (:func:`portakern.analysis.portability.refuse_dialect_words`), instead of that
#: compiler's error or the native path's fall-back to PoCL.
DIALECT_WORDS: dict[str, tuple[str, str]] = {
    **{w: ("member", _INDEX) for w in ("threadIdx", "blockIdx", "blockDim", "gridDim")},
    **{w: ("call", _INDEX) for w in ("get_global_id", "get_local_id", "get_group_id",
                                     "get_global_size", "get_local_size", "get_num_groups")},
    **{w: ("call", _BARRIER) for w in ("__syncthreads", "barrier", "work_group_barrier",
                                       "threadgroup_barrier")},
    **{w: ("word", _BARRIER) for w in ("CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE")},
    "__shared__": ("word", "write @localmem T name[size]; (or @localmem T name; for one value)"),
    **{w: ("call", _ATOMIC) for w in (
        "atomicAdd", "atomicSub", "atomicMin", "atomicMax", "atomicExch", "atomicCAS",
        "atomicAnd", "atomicOr", "atomicXor", "atomic_add", "atomic_sub", "atomic_min",
        "atomic_max", "atomic_xchg", "atomic_cmpxchg", "atomic_and", "atomic_or",
        "atomic_xor", "atomic_inc", "atomic_dec", "atomic_fetch_add_explicit")},
    **{w: ("word", _QUALIFIER) for w in ("__device__", "__forceinline__", "__host__",
                                         "__noinline__")},
    "__constant__": ("word", "write a #define, or pass the table as a const array parameter"),
    **{w: ("call", _BITCAST) for w in (
        "__int_as_float", "__float_as_int", "__uint_as_float", "__float_as_uint",
        "as_float", "as_int", "as_uint", "as_type")},
    "select": ("call", "write the conditional operator, 'c ? b : a' for select(a, b, c)"),
}
_CUDA_WORDS = frozenset({
    "threadIdx", "blockIdx", "blockDim", "gridDim", "__syncthreads", "__shared__",
    "atomicAdd", "atomicSub", "atomicMin", "atomicMax", "atomicExch", "atomicCAS",
    "atomicAnd", "atomicOr", "atomicXor", "__device__", "__forceinline__", "__host__",
    "__noinline__", "__constant__", "__int_as_float", "__float_as_int", "__uint_as_float",
    "__float_as_uint"})
_OPENCL_WORDS = frozenset({
    "get_global_id", "get_local_id", "get_group_id", "get_global_size", "get_local_size",
    "get_num_groups", "barrier", "work_group_barrier", "CLK_LOCAL_MEM_FENCE",
    "CLK_GLOBAL_MEM_FENCE", "atomic_add", "atomic_sub", "atomic_min", "atomic_max",
    "atomic_xchg", "atomic_cmpxchg", "atomic_and", "atomic_or", "atomic_xor", "atomic_inc",
    "atomic_dec", "as_float", "as_int", "as_uint", "select"})
_METAL_WORDS = frozenset({"threadgroup_barrier", "atomic_fetch_add_explicit", "as_type",
                          "select"})


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
        at the barriers (:func:`portakern.lower.lowering.lower_kernel`'s ``lockstep``).
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
        For a plugin's target: ``"module:function"`` of its compile check
        (``portakern check``; the built-in targets' are in
        :mod:`portakern.cli.check_targets`), which takes the rendered kernel, the
        user's sources and the kernel, and returns a one-line summary.
    checker_status : str or None
        ``"module:function"`` returning ``(ok, detail)``: whether the compile check can
        run on this machine (``portakern info`` lists it).
    checker_note : str
        What ``portakern info`` says of the compile check when there is no
        ``checker_status`` (how the check is built).
    address_spaces : AddressSpaces or None
        How pointers' address spaces are spelled (:meth:`pointer_spaces` when None).
    operators : bool
        The dialect overloads operators and functions for a struct (the C++ dialects),
        so ``cfloat``'s ``+ - * /`` and ``exp(z)`` are written as they are; without it
        (OpenCL C) :mod:`portakern.lower.complex_ops` rewrites them into calls.
    constructors : bool
        A struct may have constructors (``cfloat(re, im)``, ``cfloat z = 1.0f``); without
        them (Metal, whose address spaces a constructor's copies trip over) the complex
        struct is an aggregate and those are rewritten into ``pk_cfloat_make`` calls.
    methods : bool
        A struct the source defines may have member functions (methods, constructors,
        operators: C++). Without them (OpenCL C) such a struct warns at ``pk.kernel()``
        and its rendering is refused (:func:`portakern.analysis.portability.refuse_methods`).
    method_pointers : bool
        A struct method's pointer parameter may point into any memory. Metal's pointer
        parameters carry an address space, which portakern infers for helper functions
        only: a method's are ``thread`` pointers there, and a method taking a pointer warns
        at ``pk.kernel()`` (not portable to Metal).
    cxx_constructs : frozenset of str
        The C++ constructs its language has, of :data:`CXX_CONSTRUCTS`: ``overloads``
        (two helpers of one name, an operator function), ``default_arguments``,
        ``lambdas``, ``constexpr``, ``templates`` (a ``template <...>`` helper). A
        construct it lacks warns at ``pk.kernel()`` and its rendering is refused
        (:func:`portakern.analysis.portability.refuse_cxx_constructs`).
    dialect_words : frozenset of str
        The words of :data:`DIALECT_WORDS` its language has (CUDA's ``threadIdx``,
        OpenCL's ``barrier``, Metal's ``as_type``); a plugin's target has none.
    half_literals : bool
        A ``1.5h`` literal is the language's (OpenCL, Metal); without it (CUDA, C++) the
        renderer writes ``((half)1.5f)``.
    initcheck : bool
        Its ``macros.j2`` defines debug mode's initcheck primitives (``initcheck_clear``,
        ``local_read``, ``local_write``, ``local_update``) for a kernel lowered without
        ``lockstep`` (:mod:`portakern.lower.initcheck`; a lockstep lowering needs none).
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
    checker_status: str | None = None
    checker_note: str = ""
    address_spaces: AddressSpaces | None = None
    initcheck: bool = False
    operators: bool = True
    constructors: bool = True
    methods: bool = True
    method_pointers: bool = True
    cxx_constructs: frozenset[str] = CXX_CONSTRUCTS
    dialect_words: frozenset[str] = frozenset()
    half_literals: bool = True

    def facts(self) -> Any:
        """What this target has: math functions, constants, atomics, device features
        (:func:`portakern.target_facts.facts`)."""
        from .target_facts import facts

        return facts(self.name)

    def pointer_spaces(self) -> AddressSpaces:
        """How this target spells pointers' address spaces: its own declaration, else
        OpenCL C's words where it needs spaces (a plugin target), else one flat space."""
        if self.address_spaces is not None:
            return self.address_spaces
        return OPENCL_SPACES if self.pointer_address_spaces else FLAT_SPACES


@dataclass(frozen=True)
class AddressSpaces:
    """How a dialect spells the memory a pointer points into (see portakern.lower.pointers).

    ``words`` maps portakern's spaces (``global``, ``input`` for a read-only array
    parameter, ``local``, ``private``, ``constant``) to the dialect's words; empty words
    and ``flat`` mean one flat address space (CUDA, C++). ``references``: the dialect
    has C++ references (else a reference becomes a pointer). ``overloads``: helper
    copies for different spaces may share a name (else each copy is renamed).
    ``input_spaces``: the spaces a read-only array may arrive in, when the launch
    chooses (Metal under MLX: ``device`` or ``constant``); empty when it is ``words["input"]``.
    """

    words: tuple[tuple[str, str], ...]
    references: bool = True
    overloads: bool = True
    input_spaces: tuple[str, ...] = ()
    flat: bool = False

    def word(self, space: str) -> str:
        """The dialect's word for one of portakern's spaces."""
        return dict(self.words)[space]


#: OpenCL C 1.2: a word on every pointer, no references, no overloading.
OPENCL_SPACES = AddressSpaces(
    (("global", "__global"), ("input", "__global"), ("local", "__local"),
     ("private", "__private"), ("constant", "__constant")),
    references=False, overloads=False)
#: Metal: a word on every pointer; a read-only array is device or constant memory.
METAL_SPACES = AddressSpaces(
    (("global", "device"), ("input", "input"), ("local", "threadgroup"),
     ("private", "thread"), ("constant", "constant")),
    input_spaces=("device", "constant"))
#: One flat address space (CUDA, the native C++ path).
FLAT_SPACES = AddressSpaces(
    (("global", ""), ("input", ""), ("local", ""), ("private", ""), ("constant", "")),
    flat=True)


#: Words of Metal Shading Language that are not C++ keywords: function qualifiers and
#: address spaces. Apple's compiler rejects them as names.
METAL_RESERVED_WORDS = frozenset({
    "kernel", "vertex", "fragment", "device", "constant", "thread", "threadgroup",
    "threadgroup_imageblock", "ray_data", "object_data",
})

#: OpenCL C keywords that C leaves free: address spaces (OpenCL 2's ``generic`` too),
#: access qualifiers, kernel.
OPENCL_RESERVED_WORDS = frozenset({
    "kernel", "global", "local", "constant", "private", "generic", "read_only", "write_only",
    "read_write", "pipe", "__kernel", "__global", "__local", "__constant", "__private",
    "__generic", "__read_only", "__write_only", "__read_write",
})

_BUILTIN = (
    TargetInfo("opencl", "OpenCL", pointer_address_spaces=True, address_spaces=OPENCL_SPACES,
               reserved_words=OPENCL_RESERVED_WORDS, initcheck=True, operators=False,
               methods=False, cxx_constructs=frozenset(), dialect_words=_OPENCL_WORDS),
    TargetInfo("cuda", "CUDA", initcheck=True, dialect_words=_CUDA_WORDS, half_literals=False),
    TargetInfo("metal", "Metal", printf=False, prints=False, pointer_address_spaces=True,
               address_spaces=METAL_SPACES,
               reserved_words=METAL_RESERVED_WORDS, double=False, initcheck=True,
               constructors=False, method_pointers=False,
               # The MSL specification (1.5.4, "Restrictions") has no lambda expressions.
               cxx_constructs=CXX_CONSTRUCTS - {"lambdas"}, dialect_words=_METAL_WORDS),
    TargetInfo("c", "the native C++ path (CPU())", lockstep=True, printf=False,
               half_literals=False),
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
