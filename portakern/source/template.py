"""The user's kernel source as a Jinja template, and the line map back to it.

The user's source is itself a template (``{{ TILE }}``, ``{% for %}``,
``{% if target == "cuda" %}``). Before rendering it, :class:`KernelTemplate` puts an
invisible marker at the start of every line that begins outside a Jinja tag; after
rendering, the markers tell which user line each output line came from (unrolled
loops repeat their line), and are removed. That line map feeds the parser's error
positions and the ``#line`` directives of the generated source
(:mod:`portakern.render.emit` renders the lowered kernel through the per-dialect
templates). Templates run in Jinja's sandbox with ``StrictUndefined``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..errors import KernelSyntaxError, KernelTypeError
from ..types import KNOWN_TYPES, as_type_name
from .source_map import SourceMap

if TYPE_CHECKING:

    pass

# Jinja and the lowering are imported when something is rendered, not with portakern
# (DESIGN section 4: `import portakern` within 20 ms of `import numpy`): a source with
# no Jinja syntax is its own rendering, and a launch from the disk cache renders nothing.

__all__ = ["ExpressionConstant", "KernelTemplate", "check_constants"]

_MARK_RE = re.compile("\x02L(\\d+)\x03")
_TAG_OPEN_RE = re.compile(r"\{\{|\{%|\{#")
_NEWLINE_RE = re.compile(r"\r\n|\r")  # Jinja's newline_re, less "\n" itself


@dataclass(frozen=True)
class ExpressionConstant:
    """A constant that is a C expression (``op="a + b"``): only ``{{ op | expr }}`` uses it.

    Not a ``str``, so it reaches the text only through the ``expr`` filter, which parses
    it (:attr:`KernelTemplate.check_expression`) and writes it parenthesised.
    """

    name: str
    text: str

    def __repr__(self) -> str:
        return f"the expression {self.text!r}"


def _unfiltered(name: str) -> str:
    return (f"constant {name!r} is a string that is not a type name, so it is a C "
            f"expression: write {{{{ {name} | expr }}}} where the template wants it (the "
            f"expr filter parses and checks it); a constant string is never pasted as is")


def _finalize(value: object) -> object:
    if isinstance(value, ExpressionConstant):
        raise KernelSyntaxError(_unfiltered(value.name), f"constant {value.name!r}", 1, 1,
                                value.text)
    # C spells booleans in lower case; Python's str(True) would not compile.
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return value


# The user's source renders in Jinja's sandbox: a tool that renders kernels it did
# not write (a server, a notebook extension) must not run code by doing so
# ({{ cycler.__init__.__globals__.os.system(...) }}). The sandbox costs only when a
# kernel variant is first rendered; rendered sources are cached (memory and disk).
# The dialect templates in templates/ (and a plugin's, from add_template_dir) are
# code of portakern or of an installed package, trusted like its Python modules,
# and keep the plain environment.
_USER_ENV: dict[Any, Any] = {}

#: Checks one C expression: ``(constant name, text) -> the text to write``.
ExpressionCheck = Callable[[str, str], str]


def _user_environment(check: ExpressionCheck | None = None) -> Any:
    """The sandboxed environment of user templates whose ``expr`` filter uses ``check``."""
    if check not in _USER_ENV:
        import jinja2.sandbox

        env = jinja2.sandbox.SandboxedEnvironment(
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            finalize=_finalize,
        )
        env.filters["expr"] = lambda value: _expr_filter(value, check)
        _USER_ENV[check] = env
    return _USER_ENV[check]


def _expr_filter(value: object, check: ExpressionCheck | None) -> str:
    """``{{ op | expr }}``: the constant's C expression, checked, in parentheses."""
    import jinja2

    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined raises: a constant still to bind, named as usual
    if isinstance(value, ExpressionConstant):
        name, text = value.name, value.text
    elif isinstance(value, str):
        name, text = "given to the expr filter", str.__str__(value)
    elif isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)):
        return f"({_finalize(value)})"
    else:
        raise TypeError(f"the expr filter takes a constant string (a C expression) or a "
                        f"number, got {type(value).__name__}")
    if check is None:
        raise KernelSyntaxError(
            "the expr filter needs the syntax stage to check the expression: render "
            "through portakern.render.emit.KernelTemplate", f"constant {name!r}", 1, 1, text)
    return check(name, text)


def _is_plain(source: str) -> bool:
    """True when ``source`` holds no Jinja syntax: rendering it changes nothing.

    Jinja's default delimiters all start with ``{`` followed by ``{``, ``%`` or
    ``#`` (no line statements are configured); such a source renders to itself,
    with its line ends normalised to LF as Jinja does.
    """
    return _TAG_OPEN_RE.search(source) is None


#: The range an integer constant may have: int64 or uint64 (C has no wider literal).
_CONST_MIN, _CONST_MAX = -(2**63), 2**64 - 1


def check_constants(constants: dict[str, object]) -> dict[str, object]:
    """Validate Jinja constants: ints, floats, bools, type names and C expressions.

    A constant can never inject source text: values are coerced to exact ``int``,
    ``float``, ``bool`` or ``str`` (a subclass's overridden methods never run in
    the template), dtypes are turned into type names, and integers must fit int64
    or uint64. A string that names no type becomes an :class:`ExpressionConstant`,
    which the template may use only as ``{{ name | expr }}`` (parsed, then written
    in parentheses).
    """
    out: dict[str, object] = {}
    for name, value in constants.items():
        name = str.__str__(name)
        if not name.isidentifier() or name == "target":
            raise KernelTypeError(
                f"constant name {name!r} is not allowed: use a Python identifier other than "
                f"'target' (portakern sets target itself)")
        if isinstance(value, (bool, np.bool_)):
            out[name] = value is True or value is np.True_
        elif isinstance(value, (np.timedelta64, np.datetime64)):
            raise KernelTypeError(
                f"constant {name} is a NumPy {type(value).__name__}; constants are ints, "
                f"floats, bools or type names")
        elif isinstance(value, (int, np.integer)):
            v = int.__int__(int(value))
            if not _CONST_MIN <= v <= _CONST_MAX:
                raise KernelTypeError(
                    f"constant {name}={_short(v)} is out of range: integer constants must "
                    f"fit int64 or uint64 [{_CONST_MIN}, {_CONST_MAX}]")
            out[name] = v
        elif isinstance(value, (float, np.floating)):
            f = float.__float__(float(value))
            if not math.isfinite(f):
                raise KernelTypeError(
                    f"constant {name}={f!r} must be finite; define inf or nan in the "
                    f"kernel source (INFINITY, NAN) instead")
            out[name] = f
        elif isinstance(value, str):
            text = str.__str__(value)  # an exact str: a subclass's __eq__ is not asked
            out[name] = text if text in KNOWN_TYPES else ExpressionConstant(name, text)
        elif isinstance(value, ExpressionConstant):  # a recipe's constant, rebuilt
            out[name] = ExpressionConstant(name, str.__str__(value.text))
        elif isinstance(value, (np.dtype, type)):
            out[name] = str.__str__(as_type_name(value, what=f"constant {name}"))
        else:
            raise KernelTypeError(
                f"constant {name}={value!r} has type {type(value).__name__}; constants are "
                f"ints, floats, bools, type names or C expression strings")
    return out


def _short(v: int) -> str:
    """An integer for a message: 10**400 is not printed in full."""
    if v.bit_length() <= 128:
        return str(v)
    return f"<an integer of {v.bit_length()} bits>"


def _add_markers(source: str) -> str:
    """Prefix each line that starts outside a Jinja tag with a line marker."""
    out: list[str] = []
    in_tag: str | None = None  # the closing delimiter we wait for
    closers = {"{{": "}}", "{%": "%}", "{#": "#}"}
    for lineno, line in enumerate(source.split("\n"), start=1):
        if in_tag is None:
            out.append(f"\x02L{lineno}\x03")
        pos = 0
        while pos < len(line):
            if in_tag is None:
                m = _TAG_OPEN_RE.search(line, pos)
                if m is None:
                    break
                in_tag = closers[m.group(0)]
                pos = m.end()
            else:
                end = line.find(in_tag, pos)
                if end < 0:
                    break
                pos = end + 2
                in_tag = None
        out.append(line)
        out.append("\n")
    out.pop()
    return "".join(out)


def _strip_markers(text: str) -> tuple[str, list[int]]:
    lines = text.split("\n")
    line_of: list[int] = []
    last = 0
    clean: list[str] = []
    for line in lines:
        m = _MARK_RE.search(line)
        if m:
            last = int(m.group(1))
        else:
            last = last + 1 if last else 1
        line_of.append(last)
        clean.append(_MARK_RE.sub("", line))
    return "\n".join(clean), line_of


class KernelTemplate:
    """The user's source as a Jinja template, compiled once.

    :attr:`check_expression` is what the ``expr`` filter parses a constant's C expression
    with: this stage cannot tokenize (only the syntax stage does), so the subclass that
    :mod:`portakern.render.emit` exports sets it, and this class alone refuses the filter.
    """

    #: ``(constant name, text) -> the text to write``; None: the expr filter refuses.
    check_expression: ClassVar[ExpressionCheck | None] = None

    def __init__(self, source: str, filename: str) -> None:
        if not isinstance(source, str):
            raise KernelTypeError(
                f"kernel source must be a str, got {type(source).__name__}; "
                f"use pk.kernel.from_file(path) for a file")
        self.source = source
        self.filename = filename
        self._lines = source.split("\n")
        _check_encodable(source, filename, self._lines)
        #: The compiled template, or None for a source with no Jinja syntax.
        self._template = None
        #: Kernel name -> this source without the other kernels (see _narrowed).
        self._narrow_cache: dict[str, KernelTemplate | None] = {}
        #: Constant name -> the first line using it other than as ``name | expr``.
        self._unfiltered: dict[str, int] | None = None
        if _is_plain(source):
            return
        import jinja2

        try:
            self._template = _user_environment(type(self).check_expression).from_string(
                _add_markers(source))
        except jinja2.TemplateSyntaxError as exc:
            lineno = exc.lineno or 1
            text = self._line(lineno) or ""
            hint, col = "", 1
            start = text.find("{{")
            inner = text[start + 2:].split("}}", 1)[0] if start >= 0 else ""
            if start >= 0 and ("}" in inner or "}}" not in text[start:]):
                # a C initialiser's braces ({{1, 2}, {3, 4}}) read as a Jinja expression
                col = start + 1
                hint = ("; '{{' starts a Jinja expression in kernel source: for nested braces "
                        "write '{ {' with a space (int t[2][2] = { {1, 2}, {3, 4} };), or put "
                        "the line between {% raw %} and {% endraw %}")
            raise KernelSyntaxError(f"template error: {exc.message}{hint}", filename, lineno,
                                    col, self._line(lineno)) from None
        except RecursionError:
            # e.g. a run of '{' that Jinja reads as '{{ {{{ ...': its parser recurses.
            raise KernelSyntaxError(
                "template error: Jinja expressions nested too deeply (a run of '{' is read "
                "as '{{'; separate braces with spaces)", filename, 1, 1, self._line(1)) from None

    def _line(self, lineno: int) -> str | None:
        return self._lines[lineno - 1] if 0 < lineno <= len(self._lines) else None

    def render(self, target: str, constants: dict[str, object], kernel: str | None = None,
               ) -> SourceMap:
        """Render for a target; return the text and its map back to user lines.

        ``kernel`` names the ``@kernel`` wanted: a constant that only the source's other
        kernels use may then be left unbound (:mod:`portakern.source.narrow`).
        """
        if self._template is None:
            clean, line_of = _strip_markers(_NEWLINE_RE.sub("\n", _add_markers(self.source)))
            return SourceMap(self.filename, clean, line_of)
        import jinja2.sandbox

        for value in constants.values():
            if isinstance(value, ExpressionConstant):
                lineno = self._unfiltered_uses().get(value.name)
                if lineno is not None:
                    line = self._line(lineno)
                    m = re.search(rf"\b{re.escape(value.name)}\b", line or "")
                    raise KernelSyntaxError(_unfiltered(value.name), self.filename, lineno,
                                            m.start() + 1 if m else 1, line)
        narrowed = None
        try:
            text = self._template.render(target=target, **constants)
        except jinja2.sandbox.SecurityError as exc:
            lineno = _template_line(exc.__traceback__)
            raise KernelSyntaxError(
                f"template error: refused by Jinja's sandbox ({exc}); kernel templates may "
                f"use constants, loops and filters, not Python internals",
                self.filename, lineno, 1, self._line(lineno)) from None
        except jinja2.UndefinedError as exc:
            narrowed = self._narrowed(kernel)
            if narrowed is not None:
                text = ""  # the narrowed source renders below, outside this handler
            else:
                lineno = _template_line(exc.__traceback__)
                name = _undefined_name(str(exc))
                text = self._line(lineno)
                # Point the caret at the name when the line spells it.
                m = re.search(rf"\b{re.escape(name)}\b", text or "")
                unbound = KernelSyntaxError(
                    f"undefined name {name!r} in the kernel template; bind it with "
                    f"pk.kernel(source, {name}=...) or kernel.specialize({name}=...)",
                    self.filename, lineno, m.start() + 1 if m else 1, text)
                unbound.unbound = name  # a constant still to come, not a bad source
                raise unbound from None
        except jinja2.TemplateError as exc:
            lineno = _template_line(exc.__traceback__)
            raise KernelSyntaxError(f"template error: {exc}", self.filename, lineno, 1,
                                    self._line(lineno)) from None
        except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
            lineno = _template_line(exc.__traceback__)
            raise KernelSyntaxError(f"template error: {type(exc).__name__}: {exc}",
                                    self.filename, lineno, 1, self._line(lineno)) from None
        if narrowed is not None:
            return narrowed.render(target, constants)
        clean, line_of = _strip_markers(text)
        return SourceMap(self.filename, clean, line_of)

    def _unfiltered_uses(self) -> dict[str, int]:
        """Each name the template uses other than as ``{{ name | expr }}``, with its line."""
        if self._unfiltered is None:
            from jinja2 import nodes

            tree = _user_environment(None).parse(_add_markers(self.source))
            filtered = {id(f.node) for f in tree.find_all(nodes.Filter)
                        if f.name == "expr" and isinstance(f.node, nodes.Name)}
            found: dict[str, int] = {}
            for n in tree.find_all(nodes.Name):
                if id(n) not in filtered:
                    found.setdefault(n.name, n.lineno)
            self._unfiltered = found
        return self._unfiltered

    def _narrowed(self, kernel: str | None) -> KernelTemplate | None:
        """This source with the other ``@kernel``\\ s blanked out, or None (see narrow.py)."""
        if kernel is None:
            return None
        from .narrow import only_kernel

        cache = self._narrow_cache
        if kernel not in cache:
            text = only_kernel(self.source, kernel)
            try:
                cache[kernel] = None if text is None else type(self)(text, self.filename)
            except KernelSyntaxError:
                cache[kernel] = None  # the cut left the template malformed: not used
        return cache[kernel]


def _check_encodable(source: str, filename: str, lines: list[str]) -> None:
    """Refuse text that cannot be written as UTF-8 (a lone surrogate), where it is."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as exc:
        lineno = source.count("\n", 0, exc.start) + 1
        col = exc.start - (source.rfind("\n", 0, exc.start) + 1) + 1
        text = lines[lineno - 1].encode("utf-8", "replace").decode()
        raise KernelSyntaxError(
            f"the kernel source holds {source[exc.start]!r} (U+{ord(source[exc.start]):04X}), "
            f"a lone surrogate that is not a character and cannot be written as UTF-8; "
            f"remove it (was the file decoded with errors='surrogateescape'?)",
            filename, lineno, col, text) from None


def _template_line(tb: object) -> int:
    import traceback  # here: only a template that fails needs it

    line = 1
    for frame, lineno in traceback.walk_tb(tb):  # type: ignore[arg-type]
        if frame.f_code.co_filename == "<template>":
            line = lineno
    return line


def _undefined_name(message: str) -> str:
    m = re.search(r"'([^']+)' is undefined", message)
    return m.group(1) if m else message
