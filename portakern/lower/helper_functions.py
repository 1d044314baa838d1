"""Lowering of the helper functions a module declares next to its kernels.

Helpers are plain C-like functions; :func:`lower_helpers` passes them through with
the portable atomics and vector spellings mapped, and ``static``/``inline``
specifiers normalised so that no target sees them doubled.
"""

from __future__ import annotations

from ..syntax import vectors
from ..syntax.language import (
    Token,
    next_significant,
)
from ..syntax.parts import Call, Gen, starts_static_const
from ..syntax.pointer_checks import QUALIFIERS
from ..syntax.structs import tag_definition_ends
from .lowerer import ATOMIC_OPS, KEYWORDS

__all__ = ["array_parameters_as_pointers", "lower_helpers"]


def lower_helpers(helpers: list[Token]) -> list:
    """Lower the helper code: atomics, and a target prefix before each function.

    CUDA needs ``__device__`` on every helper function (definitions and
    prototypes); other targets render the ``function_prefix`` macro as nothing.
    """
    helpers = array_parameters_as_pointers(helpers)
    out: list = []
    tag_ends = tag_definition_ends(helpers)  # `struct tag {...};`: the bare name in C too
    depth = 0
    decl_start = 0  # index in `out` where the current top-level declaration begins
    for n, t in enumerate(helpers):
        if t.kind == "at" and t.text.startswith("@atomic_") and t.text[8:] in ATOMIC_OPS:
            out.append(Gen(f"pk_atomic_{t.text[8:]}"))
            continue
        if depth == 0 and t.kind not in ("ws", "comment", "pp") and decl_start is None:
            decl_start = len(out)
        if depth > 0 and t.kind == "id" and t.text == "static" and starts_static_const(helpers, n):
            out += [t, Call("static_constant", (), t.line)]  # in a body: constant memory
            continue
        out.append(vectors.helper_word(helpers, n) if t.text in vectors.VECTOR_TYPES else t)
        if t.kind == "pp":
            decl_start = None
        elif t.kind == "punct" and t.text in "([{":
            if (t.text == "(" and depth == 0 and decl_start is not None
                    and _is_function_declaration(helpers, n)):
                if decl_start >= 0:
                    out[decl_start:] = _without_specifiers(out[decl_start:])
                out.insert(_after_template(out, decl_start), Call("function_prefix", (),
                                                                  t.line))
                decl_start = -1  # prefixed; don't prefix this declaration again
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0 and t.text == "}" and _ends_declaration(helpers, n):
                decl_start = None
        elif t.kind == "punct" and t.text == ";" and depth == 0:
            if decl_start is not None and decl_start >= 0 and _constant_table(out[decl_start:]):
                out.insert(decl_start, Call("constant_prefix", (), t.line))
            decl_start = None
            if n in tag_ends:
                out.append(Gen(f" typedef struct {tag_ends[n]} {tag_ends[n]};"))
    return out


_NOT_TABLES = frozenset({"struct", "union", "enum", "typedef", "extern", "template", "using",
                         "namespace", "class"})


def _constant_table(decl: list) -> bool:
    """Whether a file-scope declaration is a ``const`` variable of plain type (a table,
    ``const float lut[4] = {...};``, or a scalar), which OpenCL C and Metal keep only in
    their constant address space and CUDA only as a ``__device__`` variable: the
    ``constant_prefix`` macro goes before it. A pointer, a function and a type are not."""
    words = []
    for it in decl:
        if isinstance(it, Token) and it.kind == "punct" and it.text in ("=", "[", ";", "{"):
            break
        if isinstance(it, Token) and it.kind in ("id", "punct"):
            words.append(it.text)
        elif isinstance(it, Call):
            return False
    return ("const" in words and not _NOT_TABLES.intersection(words)
            and not any(w in ("*", "&", "(", "<", "::") for w in words))


def _after_template(out: list, at: int) -> int:
    """Where a declaration's prefix goes: after its ``template <...>`` header, if any
    (``template <typename U> __device__ U sq(U v)``), else at ``at``."""
    code = [k for k in range(at, len(out)) if not (isinstance(out[k], Token)
                                                    and out[k].kind in ("ws", "comment"))]
    if not code or not (isinstance(out[code[0]], Token) and out[code[0]].text == "template"):
        return at
    depth = 0
    for k in code[1:]:
        it = out[k]
        if isinstance(it, Token) and it.kind == "punct" and it.text in ("<", ">", ">>"):
            depth += {"<": 1, ">": -1, ">>": -2}[it.text]
            if depth <= 0:
                return k + 1
    return at


#: What the user may write before a helper function; the target's ``function_prefix``
#: says it instead (C++: ``static inline``, CUDA: ``__device__``), so it is never doubled.
_FUNCTION_SPECIFIERS = frozenset({"static", "inline"})


def _without_specifiers(decl: list) -> list:
    """A helper's declaration without ``static``/``inline`` (and the blank after each)."""
    out: list = []
    skip_blank = False
    for it in decl:
        if isinstance(it, Token) and it.kind == "id" and it.text in _FUNCTION_SPECIFIERS:
            skip_blank = True
            continue
        if skip_blank and isinstance(it, Token) and it.kind == "ws" and "\n" not in it.text:
            skip_blank = False
            continue
        skip_blank = False
        out.append(it)
    return out


def _ends_declaration(helpers: list[Token], n: int) -> bool:
    """A '}' at depth 0 ends a function body unless ';' or a declarator follows (struct)."""
    k = next_significant(helpers, n + 1)
    return k >= len(helpers) or helpers[k].kind == "pp" or not (
        helpers[k].is_punct(";") or helpers[k].kind == "id" and helpers[k].text != "static"
        and helpers[k].text != "inline" and _followed_by_semicolon(helpers, k))


def _followed_by_semicolon(helpers: list[Token], k: int) -> bool:
    j = next_significant(helpers, k + 1)
    return j < len(helpers) and helpers[j].text in (";", ",", "=")


def _is_function_declaration(helpers: list[Token], n: int) -> bool:
    """Is ``helpers[n]`` (a '(' at depth 0) the parameter list of a function?"""
    prev = n - 1
    while prev >= 0 and helpers[prev].kind in ("ws", "comment"):
        prev -= 1
    if prev < 0 or helpers[prev].kind != "id" or helpers[prev].text in KEYWORDS:
        return False
    depth = 0
    for k in range(n, len(helpers)):
        t = helpers[k]
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0:
                j = next_significant(helpers, k + 1)
                return j < len(helpers) and (helpers[j].is_punct("{") or helpers[j].is_punct(";"))
    return False


def array_parameters_as_pointers(helpers: list[Token]) -> list[Token]:
    """Each helper parameter declared as an array, ``const T b[]`` (or ``T b[N]``), as the
    pointer C makes of it, ``const T *b``: a pointer parameter, so that OpenCL and Metal
    get its address space and debug mode checks its subscripts like any other.

    Only one pair of brackets is rewritten; ``T b[][4]`` (a pointer to rows, which
    :mod:`.pointers` gives its address space) and the ``[:, :]`` of an ndarray stay as
    written.
    """
    out = list(helpers)
    edits: dict[int, list[Token]] = {}  # token index -> its replacement
    top = 0  # bracket depth
    for n, t in enumerate(helpers):
        if t.kind != "punct" or t.text not in ("(", "[", "{", ")", "]", "}"):
            continue
        top += 1 if t.text in ("(", "[", "{") else -1
        if not (t.text == "(" and top == 1 and _is_function_declaration(helpers, n)):
            continue
        depth, start = 0, n + 1
        for k in range(n, len(helpers)):
            u = helpers[k]
            if u.kind == "punct" and u.text in "([{":
                depth += 1
            elif u.kind == "punct" and u.text in ")]}":
                depth -= 1
            if (depth == 1 and u.is_punct(",")) or depth == 0:
                _pointer_parameter(helpers, start, k, edits)
                start = k + 1
            if depth == 0:
                break
    for k in sorted(edits, reverse=True):
        out[k:k + 1] = edits[k]
    return out


#: Words of C's own types: never a parameter's name (``long long[]`` is unnamed).
_TYPE_WORDS = frozenset({"void", "bool", "char", "short", "int", "long", "float", "double",
                         "half", "unsigned", "signed"})


def _pointer_parameter(helpers: list[Token], lo: int, hi: int, edits: dict) -> None:
    """The parameter ``helpers[lo:hi]``: where it is ``... name [ size ]``, edits that
    make it ``... *name``."""
    sig = [k for k in range(lo, hi) if helpers[k].kind not in ("ws", "comment")]
    if len(sig) < 4 or not helpers[sig[-1]].is_punct("]"):
        return
    opens = [k for k in sig if helpers[k].is_punct("[")]
    closes = [k for k in sig if helpers[k].is_punct("]")]
    if len(opens) != 1 or len(closes) != 1 or any(helpers[k].is_punct(":") for k in sig):
        return
    at = sig.index(opens[0])
    name = helpers[sig[at - 1]]
    if name.kind != "id" or name.text in KEYWORDS or name.text in _TYPE_WORDS:
        return
    if not any(helpers[k].kind == "id" and helpers[k].text not in QUALIFIERS
               for k in sig[:at - 1]):
        return  # no type before it: `const T[]`, a prototype's unnamed parameter
    edits[sig[at - 1]] = [Token("punct", "*", name.line, name.col), name]
    for k in range(opens[0], closes[0] + 1):
        edits[k] = []
