"""The user's code fragments: checked like kernel source, errors at their own text.

A fragment (an ``operation``, a ``map_expr``) is placed in the generated kernel on lines
of its own, starting at column 1, so a :class:`~portakern.errors.KernelSyntaxError` that
the parser raises inside it maps back to the fragment's line and column unchanged. Before
that, the fragment is tokenized by the syntax stage's lexer and checked for balanced
brackets and for names it may not know (the parser leaves unknown names to the C
compiler, whose message would point into generated code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import KernelSyntaxError
from ..source.source_map import SourceMap
from ..syntax.tokens import significant, tokenize
from ..target_facts import CONSTANTS, MATH_FUNCTIONS
from ..types import KNOWN_TYPES

__all__ = ["Fragment", "check_fragment", "placed", "remap"]

_C_WORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register return short signed sizeof static struct switch typedef union
unsigned void volatile while true false NULL bool half size_t ptrdiff_t
""".split())
_VECTOR_RE = re.compile(r"(?:u?char|u?short|u?int|u?long|float|double|half)[234]\Z")
#: CuPy's ``_ind.size()`` is written as a name of the same length, so columns still match.
_IND_SIZE_RE = re.compile(r"\b_ind\s*\.\s*size\s*\(\s*\)")
IND_SIZE = "_ind_size"


@dataclass(frozen=True)
class Fragment:
    """A checked fragment: its text, what it is (``"operation"``) and its kernel's name."""

    text: str
    what: str
    kernel: str

    @property
    def filename(self) -> str:
        return f"<{self.kernel}: {self.what}>"


def _error(frag: Fragment, msg: str, line: int, col: int) -> KernelSyntaxError:
    lines = frag.text.split("\n")
    text = lines[line - 1] if 0 < line <= len(lines) else None
    return KernelSyntaxError(msg, frag.filename, line, col, text)


def rewrite(text: str) -> str:
    """``_ind.size()`` -> ``_ind_size`` padded to the same width."""
    return _IND_SIZE_RE.sub(lambda m: IND_SIZE.ljust(len(m.group(0))), text)


def check_fragment(text: object, what: str, kernel: str, names: set[str],
                   preamble_names: set[str], *, expression: bool,
                   types: frozenset[str] = frozenset()) -> Fragment:
    """Check ``text`` (an expression when ``expression``); return it as a :class:`Fragment`.

    ``names`` are the names the fragment may use (parameters and special variables);
    ``preamble_names`` the identifiers the preamble defines; ``types`` the type variables.

    Raises
    ------
    KernelSyntaxError
        At the fragment's own line and column: an unbalanced bracket, a stray ``;`` in an
        expression, a ``{{``/``{%`` (the generated kernel is a Jinja template), or a name
        that is neither a parameter, a special variable, a local it declares, a type, a
        math function, a constant nor defined by the preamble.
    """
    if not isinstance(text, str) or not text.strip():
        raise KernelSyntaxError(f"{what} of {kernel!r} must be C source text, got {text!r}",
                                f"<{kernel}: {what}>", 1, 1, None)
    frag = Fragment(text, what, kernel)
    for marker in ("{%", "%}", "{#", "#}", "{{", "}}"):
        at = text.find(marker)
        if at >= 0 and marker not in ("{{", "}}"):
            line = text.count("\n", 0, at) + 1
            raise _error(frag, f"{marker!r} is not C; fragments are never Jinja templates",
                         line, at - (text.rfind("\n", 0, at) + 1) + 1)
    smap = SourceMap(frag.filename, text, list(range(1, text.count("\n") + 2)))
    try:
        toks = significant(tokenize(rewrite(text), smap))
    except KernelSyntaxError as exc:
        raise _error(frag, exc.msg, exc.lineno or 1, exc.offset or 1) from None
    stack = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for t in toks:
        if t.kind == "punct" and t.text in "([{":
            stack.append(t)
        elif t.kind == "punct" and t.text in pairs:
            if not stack or stack[-1].text != pairs[t.text]:
                raise _error(frag, f"{t.text!r} closes nothing in {what}", t.line, t.col)
            stack.pop()
        elif expression and t.kind == "punct" and t.text in (";", "{", "}") and not stack:
            raise _error(frag, f"{what} is one C expression; {t.text!r} cannot appear in it",
                         t.line, t.col)
        elif t.kind == "pp":
            raise _error(frag, f"a preprocessor line cannot appear in {what}; put it in "
                               f"the preamble", t.line, t.col)
    if stack:
        t = stack[-1]
        raise _error(frag, f"{t.text!r} is never closed in {what}", t.line, t.col)
    _check_names(frag, toks, names | preamble_names, types | preamble_names)
    return frag


def _typeish(word: str, known: set[str]) -> bool:
    return (word in KNOWN_TYPES or word in _C_WORDS or bool(_VECTOR_RE.match(word))
            or word in known)


def _check_names(frag: Fragment, toks: list, known: set[str], types: frozenset[str]) -> None:
    declared: set[str] = set()
    in_decl = False
    depth = 0
    for k, t in enumerate(toks):
        prev = toks[k - 1] if k else None
        if t.kind == "punct":
            depth += t.text in "([{"
            depth -= t.text in ")]}"
            if t.text == ";":
                in_decl = False
            continue
        if t.kind != "id" or prev is None:
            if t.kind == "id" and k + 1 < len(toks) and toks[k + 1].kind == "id":
                in_decl = True
            continue
        if prev.kind == "id" and _typeish(prev.text, known | declared):
            declared.add(t.text)
            in_decl = True
        elif prev.kind == "punct" and prev.text in ("*", "&") and k >= 2 and (
                toks[k - 2].kind == "id" and _typeish(toks[k - 2].text, set(types))):
            declared.add(t.text)
        elif prev.kind == "punct" and prev.text == "," and in_decl:
            declared.add(t.text)
    for k, t in enumerate(toks):
        if t.kind != "id":
            continue
        prev = toks[k - 1] if k else None
        if prev is not None and prev.kind == "punct" and prev.text in (".", "->"):
            continue  # a member
        word = t.text
        if (_typeish(word, known | declared) or word in MATH_FUNCTIONS or word in CONSTANTS
                or word.startswith("__")):
            continue
        listing = ", ".join(sorted({n for n in known if not n.startswith("_")}
                                   | ({"_ind.size()"} if IND_SIZE in known else set())))
        raise _error(frag, f"unknown name {word!r} in {frag.what}; it may use {listing}, "
                           f"locals it declares, math functions and what the preamble "
                           f"defines", t.line, t.col)


def placed(frag: Fragment) -> str:
    """The fragment as it goes into the generated template: raw text, Jinja left alone."""
    return "{% raw %}" + "\n" + rewrite(frag.text) + "\n{% endraw %}"


def remap(exc: KernelSyntaxError, frag: Fragment, first_line: int) -> KernelSyntaxError:
    """An error the parser raised at generated line ``exc.lineno``, moved into ``frag``
    when it lies there (the fragment starts at generated line ``first_line``)."""
    count = frag.text.count("\n") + 1
    line = (exc.lineno or 0) - first_line + 1
    if not 1 <= line <= count:
        return exc

    def inside(m: re.Match) -> str:  # "line 10" of the generated source, where it is ours
        n = int(m.group(1)) - first_line + 1
        return f"line {n}" if 1 <= n <= count else f"generated line {m.group(1)}"

    msg = re.sub(r"\bline (\d+)", inside, exc.msg)
    return _error(frag, msg, line, exc.offset or 1)
