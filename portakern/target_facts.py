"""The one table of what each built-in target has: math, constants, atomics, names, features.

DESIGN section 1a, "Nothing passes silently": a kernel that builds on one target builds on
every target, or :mod:`portakern.analysis.portability` says at ``pk.kernel()`` which targets lack
what it uses. This module is that knowledge, as data:

* **math functions**: the C99 functions each dialect has itself (``native``), those
  portakern's prelude of the target defines (``provided``, only where a kernel names
  them), and therefore those it lacks (:meth:`TargetFacts.lacks_function`);
* **limit and math constants** (``FLT_MAX``, ``INT_MIN``, ``M_PI``, ...): each means the
  same on every target (:data:`CONSTANTS`); a target's prelude defines those it lacks,
  only when the kernel names them, so renderings of kernels that use none are unchanged;
* **64-bit atomics**: which element types ``@atomic_*`` works on;
* **reserved names**: the parameter suffixes MLX generates for an input on Metal (the
  words a dialect reserves are :attr:`portakern.targets.TargetInfo.reserved_words`, whose
  :meth:`~portakern.targets.TargetInfo.facts` is this table's row);
* **device features**: half arithmetic, which the target's language has but a device
  may lack (PoCL's CPU device has no ``cl_khr_fp16``).

Templates read it as ``target_facts("<target>")`` (a global of the dialect environment,
:func:`portakern.render.emit.target_environment`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from .patterns import lazy

__all__ = ["CONSTANTS", "Constant", "MATH_FUNCTIONS", "MLX_INPUT_SUFFIXES", "TargetFacts",
           "facts", "mlx_renames", "rename_identifiers"]


@dataclass(frozen=True)
class Constant:
    """One constant of C's ``<float.h>``, ``<limits.h>`` or ``<math.h>``.

    ``text`` is its definition in C, CUDA and OpenCL C; ``ctype`` its C type; ``value`` what
    it means, as a Python number (for tests and docs).
    """

    name: str
    ctype: str
    text: str
    value: float | int

    @property
    def double(self) -> bool:
        """A ``double`` constant (DBL_*, M_PI, ...), which needs float64 on the target."""
        return self.ctype == "double"


def _c(name: str, ctype: str, text: str, value: float | int) -> Constant:
    return Constant(name, ctype, text, value)


_PI = 3.14159265358979323846
#: Every constant portakern defines on every target, by name.
CONSTANTS: dict[str, Constant] = {c.name: c for c in (
    _c("CHAR_BIT", "int", "8", 8),
    _c("SCHAR_MIN", "int", "(-127 - 1)", -128), _c("SCHAR_MAX", "int", "127", 127),
    _c("UCHAR_MAX", "int", "255", 255),
    _c("SHRT_MIN", "int", "(-32767 - 1)", -32768), _c("SHRT_MAX", "int", "32767", 32767),
    _c("USHRT_MAX", "int", "65535", 65535),
    _c("INT_MIN", "int", "(-2147483647 - 1)", -2**31),
    _c("INT_MAX", "int", "2147483647", 2**31 - 1),
    _c("UINT_MAX", "uint", "4294967295u", 2**32 - 1),
    # portakern's long is 64 bits on every target (docs/language.md, "Types").
    _c("LONG_MIN", "long", "(-9223372036854775807L - 1)", -2**63),
    _c("LONG_MAX", "long", "9223372036854775807L", 2**63 - 1),
    _c("ULONG_MAX", "ulong", "18446744073709551615UL", 2**64 - 1),
    _c("FLT_MAX", "float", "0x1.fffffep127f", float.fromhex("0x1.fffffep127")),
    _c("FLT_MIN", "float", "0x1.0p-126f", 2.0**-126),
    _c("FLT_EPSILON", "float", "0x1.0p-23f", 2.0**-23),
    _c("FLT_DIG", "int", "6", 6), _c("FLT_MANT_DIG", "int", "24", 24),
    _c("MAXFLOAT", "float", "0x1.fffffep127f", float.fromhex("0x1.fffffep127")),
    _c("HUGE_VALF", "float", "(__builtin_huge_valf())", float("inf")),
    _c("INFINITY", "float", "(__builtin_inff())", float("inf")),
    _c("NAN", "float", "(__builtin_nanf(\"\"))", float("nan")),
    _c("DBL_MAX", "double", "0x1.fffffffffffffp1023", float.fromhex("0x1.fffffffffffffp1023")),
    _c("DBL_MIN", "double", "0x1.0p-1022", 2.0**-1022),
    _c("DBL_EPSILON", "double", "0x1.0p-52", 2.0**-52),
    _c("DBL_DIG", "int", "15", 15), _c("DBL_MANT_DIG", "int", "53", 53),
    _c("HUGE_VAL", "double", "(__builtin_huge_val())", float("inf")),
    *(c for name, value in (
        ("E", 2.71828182845904523536), ("LOG2E", 1.44269504088896340736),
        ("LOG10E", 0.434294481903251827651), ("LN2", 0.693147180559945309417),
        ("LN10", 2.30258509299404568402), ("PI", _PI), ("PI_2", _PI / 2),
        ("PI_4", _PI / 4), ("1_PI", 1 / _PI), ("2_PI", 2 / _PI),
        ("2_SQRTPI", 1.12837916709551257390), ("SQRT2", 1.41421356237309504880),
        ("SQRT1_2", 0.707106781186547524401))
      for c in (_c(f"M_{name}", "double", f"{value!r}", value),
                _c(f"M_{name}_F", "float", f"{value!r}f", value))),
)}

#: The C99 math functions of the portable subset (float and double overloads), and the
#: OpenCL/Metal names portakern accepts besides (``rsqrt``, ``mad``, ``clamp``, ...).
MATH_FUNCTIONS = frozenset("""
    acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2
    expm1 fabs fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma log log10
    log1p log2 logb modf nearbyint nextafter pow remainder rint round sin sinh sqrt tan
    tanh tgamma trunc
    exp10 rsqrt mad clamp min max sinpi cospi tanpi
""".split())

#: The C99 functions Metal's standard library lacks (Metal Shading Language 3.2, 6.5);
#: its frexp and modf take a reference, not C's pointer, so no call is portable.
_METAL_LACKS = frozenset("""
    cbrt erf erfc expm1 hypot ilogb lgamma log1p logb nearbyint remainder tgamma mad
    frexp modf
""".split())

#: The ones templates/metal/prelude.j2 defines (accurate float versions).
_METAL_PROVIDES = frozenset("""
    cbrt erf erfc expm1 hypot lgamma log1p logb nearbyint remainder tgamma mad
""".split())

#: Constants each dialect's own headers define (the rest are portakern's prelude's).
_OPENCL_CONSTANTS = frozenset(CONSTANTS)
_METAL_CONSTANTS = frozenset("""
    CHAR_BIT INT_MIN INT_MAX UINT_MAX LONG_MIN LONG_MAX ULONG_MAX FLT_MAX FLT_MIN
    FLT_EPSILON MAXFLOAT HUGE_VALF INFINITY NAN
""".split()) | {n for n in CONSTANTS if n.startswith("M_") and n.endswith("_F")}
#: C99's <math.h> defines these; M_PI and its kin are POSIX's, not C's (MSVC wants
#: _USE_MATH_DEFINES), so the prelude defines those where <math.h> did not.
_C_CONSTANTS = frozenset({"INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF"})

#: The parameters MLX's ``metal_kernel`` and ``cuda_kernel`` declare for an input ``x``
#: whose name plus the suffix occurs in the body: ``x_shape``, ``x_strides``, ``x_ndim``.
MLX_INPUT_SUFFIXES = ("_shape", "_strides", "_ndim")


@dataclass(frozen=True)
class TargetFacts:
    """What one built-in target has.

    Attributes
    ----------
    name : str
        The target (``c``, ``cuda``, ``metal``, ``opencl``).
    native_math : frozenset of str
        The :data:`MATH_FUNCTIONS` the dialect has itself.
    provided_math : frozenset of str
        Those its portakern prelude defines when a kernel names them.
    native_constants : frozenset of str
        The :data:`CONSTANTS` its own headers define; the prelude defines the others.
    double : bool
        ``double`` exists (else the double constants are missing, not provided).
    atomic_types : frozenset of str
        Element types ``@atomic_*`` works on (``long`` and ``ulong`` are 64-bit).
    atomics64 : str
        Where 64-bit atomics work: ``"yes"``, ``"device"`` (an optional extension the
        launch's device may lack) or ``"no"``.
    half_arithmetic : str
        ``"yes"``, ``"device"`` (OpenCL: only on a device with ``cl_khr_fp16``; PoCL's CPU
        device has none) or ``"no"``.
    reserved_suffixes : tuple of str
        Suffixes of a name generated per array input (MLX: ``_shape``, ...), which
        portakern's rendering renames out of the way (:func:`mlx_renames`).
    constant_texts : tuple of (str, str)
        Definitions of constants that differ from :data:`CONSTANTS`' in this dialect.
    """

    name: str
    native_math: frozenset[str]
    provided_math: frozenset[str] = frozenset()
    native_constants: frozenset[str] = frozenset()
    double: bool = True
    atomic_types: frozenset[str] = frozenset({"int", "uint", "float", "long", "ulong",
                                              "double"})
    atomics64: str = "yes"
    half_arithmetic: str = "yes"
    reserved_suffixes: tuple[str, ...] = ()
    constant_texts: tuple[tuple[str, str], ...] = ()

    @cached_property
    def lacks_anything(self) -> bool:
        """Whether some math function, constant or atomic element type is missing here
        (else the portability scan has nothing to look for)."""
        return (any(self.lacks_function(f) for f in MATH_FUNCTIONS)
                or not all(self.has_constant(c) for c in CONSTANTS)
                or not {"int", "uint", "float", "long", "ulong", "double"} <= self.atomic_types)

    def has_function(self, name: str) -> bool:
        """Whether a kernel may call math function ``name`` here (natively or from the prelude)."""
        return name in self.native_math or name in self.provided_math

    def lacks_function(self, name: str) -> bool:
        """Whether ``name`` is a portable math function this target has no way to call."""
        return name in MATH_FUNCTIONS and not self.has_function(name)

    def has_constant(self, name: str) -> bool:
        """Whether constant ``name`` builds here (natively or from the prelude).

        Without ``double`` the ``DBL_*`` limits are missing (a float cannot mean them);
        ``M_PI`` and the other double constants are float, as ``float64="cast"`` makes
        every double of a kernel.
        """
        return name in CONSTANTS and (self.double or not name.startswith("DBL_"))

    def constant_definitions(self, names: object) -> list[tuple[str, str]]:
        """``(name, definition)`` of each constant among ``names`` (the identifiers a
        kernel uses) that the prelude must define here, in :data:`CONSTANTS` order."""
        return [(n, self.constant_text(n)) for n in CONSTANTS
                if n in names and n not in self.native_constants and self.has_constant(n)]

    def constant_text(self, name: str) -> str:
        """The definition of constant ``name`` in this dialect."""
        text = dict(self.constant_texts).get(name)
        if text is not None:
            return text
        if not self.double and name.startswith("M_") and not name.endswith("_F"):
            return CONSTANTS[name + "_F"].text
        if not self.double and name == "HUGE_VAL":
            return "HUGE_VALF"
        return CONSTANTS[name].text

    def atomic_lacks(self, ctype: str) -> bool:
        """Whether ``@atomic_*`` on elements of C type ``ctype`` does not exist here."""
        return _ATOMIC_ALIASES.get(ctype, ctype) not in self.atomic_types


#: C spellings of portakern's 64-bit types, for :meth:`TargetFacts.atomic_lacks`.
_ATOMIC_ALIASES = {"int64_t": "long", "uint64_t": "ulong", "long long": "long",
                   "unsigned long": "ulong", "int32_t": "int", "uint32_t": "uint",
                   "unsigned int": "uint", "unsigned": "uint"}

_ALL_MATH = MATH_FUNCTIONS
_C_PRELUDE_MATH = frozenset({"sinpi", "cospi", "tanpi", "rsqrt", "mad", "clamp", "min", "max"})
_FACTS: dict[str, TargetFacts] = {f.name: f for f in (
    # C has no sinpi, cospi, tanpi (the prelude defines them), rsqrt, mad, clamp, min, max
    # (the prelude's templates).
    TargetFacts("c", _ALL_MATH - _C_PRELUDE_MATH, _C_PRELUDE_MATH,
                native_constants=_C_CONSTANTS),
    # NVRTC has no <float.h>, <limits.h> or <math.h> constants, nor GCC's builtins.
    TargetFacts("cuda", _ALL_MATH - {"mad", "tanpi", "clamp"}, frozenset({"mad", "tanpi", "clamp"}),
                constant_texts=(
        ("INFINITY", "__int_as_float(0x7f800000)"), ("HUGE_VALF", "__int_as_float(0x7f800000)"),
        ("NAN", "__int_as_float(0x7fffffff)"),
        ("HUGE_VAL", "__longlong_as_double(0x7ff0000000000000LL)"))),
    # OpenCL C has every C99 function but nearbyint (rint is the same in the default
    # rounding mode: the prelude maps it); 64-bit atomics and half are extensions.
    TargetFacts("opencl", _ALL_MATH - {"nearbyint"}, frozenset({"nearbyint"}),
                _OPENCL_CONSTANTS, atomics64="device", half_arithmetic="device"),
    TargetFacts("metal", _ALL_MATH - _METAL_LACKS, _METAL_PROVIDES, _METAL_CONSTANTS,
                double=False, atomic_types=frozenset({"int", "uint", "float"}),
                atomics64="no", reserved_suffixes=MLX_INPUT_SUFFIXES),
)}


def facts(target: str) -> TargetFacts:
    """The facts of built-in ``target``; a plugin target is taken to have everything C has."""
    hit = _FACTS.get(target)
    return hit if hit is not None else TargetFacts(target, _ALL_MATH)


def mlx_renames(inputs: object, source: str) -> dict[str, str]:
    """Identifiers of a kernel that MLX's generated parameters would collide with.

    MLX declares ``x_shape``, ``x_strides`` and ``x_ndim`` for an array input ``x``
    wherever the body's text contains that name; a parameter, variable or helper of the
    kernel so named would then clash with MLX's (or be hidden by it). Returns
    ``{name: new name}`` for each identifier of ``source`` (a rendering of the kernel)
    that is an input of ``inputs`` (the MLX input names of arrays) plus a suffix. The new
    name (``x_shape`` becomes ``pkshape_of_x``) contains none of the suffixes, so MLX
    declares nothing for it.
    """
    names = set(_IDENTIFIER.findall(source))
    out = {}
    for x in inputs:  # type: ignore[attr-defined]
        for suffix in MLX_INPUT_SUFFIXES:
            if x + suffix in names:
                new = f"pk{suffix[1:]}_of_{x}"
                while new in names:
                    new += "_"
                out[x + suffix] = new
    return out


_IDENTIFIER = lazy(r"[A-Za-z_]\w*")


def rename_identifiers(text: str, renames: dict[str, str]) -> str:
    """``text`` with each identifier of ``renames`` renamed; string literals (the file names
    of ``#line`` directives) are left alone."""
    pattern = re.compile(r'"(?:\\.|[^"\\\n])*"|\b(' + "|".join(map(re.escape, renames))
                         + r")\b")
    return pattern.sub(lambda m: renames[m.group(1)] if m.group(1) else m.group(0), text)
