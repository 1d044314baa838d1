"""Jinja: the user's kernel template, the per-dialect templates, and the line map.

Two Jinja stages meet here.

1. The user's source is itself a template (``{{ TILE }}``, ``{% for %}``,
   ``{% if target == "cuda" %}``). Before rendering it we put an invisible marker
   at the start of every line that begins outside a Jinja tag; after rendering,
   the markers tell which user line each output line came from (unrolled loops
   repeat their line), and are removed. That line map feeds the parser's error
   positions and the ``#line`` directives of the generated source.
2. The lowered kernel is rendered through ``templates/<target>/module.j2``. Every
   target folder defines the same primitive macros in ``macros.j2``; adding a
   target is a folder of templates plus one launcher.
"""

from __future__ import annotations

import math
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import KernelSyntaxError, KernelTypeError
from .language import SourceMap, Token
from .types import KNOWN_TYPES, as_type_name

if TYPE_CHECKING:
    import jinja2

    from .lower import Call, LoweredKernel

# Jinja and the lowering are imported when something is rendered, not with portakern
# (DESIGN section 4: `import portakern` within 20 ms of `import numpy`): a source with
# no Jinja syntax is its own rendering, and a launch from the disk cache renders nothing.

__all__ = ["KernelTemplate", "RenderedKernel", "render_lowered", "check_constants",
           "template_dirs", "add_template_dir", "target_environment"]

_MARK_RE = re.compile("\x02L(\\d+)\x03")
_TAG_OPEN_RE = re.compile(r"\{\{|\{%|\{#")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_NEWLINE_RE = re.compile(r"\r\n|\r")  # Jinja's newline_re, less "\n" itself
_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def _packaged_templates() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates", here.parent / "templates"):
        if (candidate / "opencl" / "module.j2").is_file():
            return candidate
    raise FileNotFoundError(  # pragma: no cover - a broken install
        "portakern's templates/ folder is missing; reinstall portakern")


_EXTRA_DIRS: list[Path] = []
_ENV: jinja2.Environment | None = None


def template_dirs() -> list[Path]:
    """The template search path: plugin folders first, then portakern's own."""
    return [*_EXTRA_DIRS, _packaged_templates()]


def add_template_dir(path: str | Path) -> None:
    """Put a plugin's template folder ahead of the built-in ones.

    A folder ``path/<target>/`` either adds a new target or, file by file,
    overrides templates of an existing one.
    """
    global _ENV
    p = Path(path)
    if p not in _EXTRA_DIRS:
        _EXTRA_DIRS.insert(0, p)
    _ENV = None


def target_environment() -> jinja2.Environment:
    """The Jinja environment of the dialect templates (built once)."""
    global _ENV
    if _ENV is None:
        import jinja2

        _ENV = jinja2.Environment(
            loader=jinja2.FileSystemLoader([str(d) for d in template_dirs()]),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            autoescape=False,
        )
    return _ENV


def lockstep_for(target: str, kernel: Any) -> bool:
    """The ``lockstep`` argument of :func:`~portakern.lower.lower_kernel` on ``target``.

    True for a kernel with ``@synchronize`` or ``@localmem`` on a target whose
    launcher runs a group's work-items one after another
    (:attr:`portakern.targets.TargetInfo.lockstep`): barriers become the ends of
    work-item loops.
    """
    from .lower import needs_lockstep
    from .targets import target_info

    return target_info(target).lockstep and needs_lockstep(kernel)


def _finalize(value: object) -> object:
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
_USER_ENV: list[Any] = []


def _user_environment() -> Any:
    """The sandboxed environment of user templates (built on first use)."""
    if not _USER_ENV:
        import jinja2.sandbox

        _USER_ENV.append(jinja2.sandbox.SandboxedEnvironment(
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            finalize=_finalize,
        ))
    return _USER_ENV[0]


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
    """Validate Jinja constants: ints, floats, bools and type names only.

    A constant can never inject source text: values are coerced to exact ``int``,
    ``float``, ``bool`` or ``str`` (a subclass's overridden methods never run in
    the template), strings are accepted only when they name a type, dtypes are
    turned into type names, and integers must fit int64 or uint64.
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
            if text not in KNOWN_TYPES:
                known = ", ".join(sorted(KNOWN_TYPES))
                raise KernelTypeError(
                    f"constant {name}={text!r} is a string that is not a type name; constants "
                    f"are ints, floats, bools or type names ({known}), so they can never "
                    f"inject source text")
            out[name] = text
        elif isinstance(value, (np.dtype, type)):
            out[name] = str.__str__(as_type_name(value, what=f"constant {name}"))
        else:
            raise KernelTypeError(
                f"constant {name}={value!r} has type {type(value).__name__}; constants are "
                f"ints, floats, bools or type names")
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
    """The user's source as a Jinja template, compiled once."""

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
        if _is_plain(source):
            return
        import jinja2

        try:
            self._template = _user_environment().from_string(_add_markers(source))
        except jinja2.TemplateSyntaxError as exc:
            lineno = exc.lineno or 1
            raise KernelSyntaxError(f"template error: {exc.message}", filename, lineno, 1,
                                    self._line(lineno)) from None
        except RecursionError:
            # e.g. a run of '{' that Jinja reads as '{{ {{{ ...': its parser recurses.
            raise KernelSyntaxError(
                "template error: Jinja expressions nested too deeply (a run of '{' is read "
                "as '{{'; separate braces with spaces)", filename, 1, 1, self._line(1)) from None

    def _line(self, lineno: int) -> str | None:
        return self._lines[lineno - 1] if 0 < lineno <= len(self._lines) else None

    def render(self, target: str, constants: dict[str, object]) -> SourceMap:
        """Render for a target; return the text and its map back to user lines."""
        if self._template is None:
            clean, line_of = _strip_markers(_NEWLINE_RE.sub("\n", _add_markers(self.source)))
            return SourceMap(self.filename, clean, line_of)
        import jinja2.sandbox

        try:
            text = self._template.render(target=target, **constants)
        except jinja2.sandbox.SecurityError as exc:
            lineno = _template_line(exc.__traceback__)
            raise KernelSyntaxError(
                f"template error: refused by Jinja's sandbox ({exc}); kernel templates may "
                f"use constants, loops and filters, not Python internals",
                self.filename, lineno, 1, self._line(lineno)) from None
        except jinja2.UndefinedError as exc:
            lineno = _template_line(exc.__traceback__)
            name = _undefined_name(str(exc))
            text = self._line(lineno)
            # Point the caret at the name when the line spells it.
            m = re.search(rf"\b{re.escape(name)}\b", text or "")
            raise KernelSyntaxError(
                f"undefined name {name!r} in the kernel template; bind it with "
                f"pk.kernel(source, {name}=...) or kernel.specialize({name}=...)",
                self.filename, lineno, m.start() + 1 if m else 1, text) from None
        except jinja2.TemplateError as exc:
            lineno = _template_line(exc.__traceback__)
            raise KernelSyntaxError(f"template error: {exc}", self.filename, lineno, 1,
                                    self._line(lineno)) from None
        except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
            lineno = _template_line(exc.__traceback__)
            raise KernelSyntaxError(f"template error: {type(exc).__name__}: {exc}",
                                    self.filename, lineno, 1, self._line(lineno)) from None
        clean, line_of = _strip_markers(text)
        return SourceMap(self.filename, clean, line_of)


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
    line = 1
    for frame, lineno in traceback.walk_tb(tb):  # type: ignore[arg-type]
        if frame.f_code.co_filename == "<template>":
            line = lineno
    return line


def _undefined_name(message: str) -> str:
    m = re.search(r"'([^']+)' is undefined", message)
    return m.group(1) if m else message


@dataclass(frozen=True)
class RenderedKernel:
    """Source for one target, with what a launcher needs to know about it."""

    target: str
    name: str
    source: str
    filename: str
    ndim: int
    params: tuple
    bindings: tuple[tuple[str, str], ...]
    extra: tuple[tuple[str, object], ...] = ()
    #: The user's source text, to quote lines in compiler errors.
    user_source: str = ""
    #: Each ``{% block %}`` of the module template rendered on its own, as
    #: (name, text): how a launcher that takes a header and a body separately
    #: (MLX's ``metal_kernel``) gets them.
    sections: tuple[tuple[str, str], ...] = ()
    #: What this was rendered from, so that :meth:`variant` can render it again.
    lowered: Any = field(default=None, compare=False, repr=False)
    helpers: Any = field(default=None, compare=False, repr=False)

    def sources(self) -> dict[str, str]:
        """Filename -> user source, for :func:`portakern.checks.diagnostics.format_diagnostics`."""
        return {self.filename: self.user_source}

    def section(self, name: str) -> str:
        """The text of the module template's ``{% block name %}``."""
        return dict(self.sections)[name]

    def variant(self, **extra: object) -> RenderedKernel:
        """Render the same lowered kernel again, with other template options.

        ``template="metal/mlx.j2"`` picks another module template (still with this
        target's macros); other keywords reach the template as variables. Options
        given when this one was rendered are kept unless overridden.
        """
        return render_lowered(self.lowered, self.helpers, self.target, dict(self.bindings),
                              self.filename, user_source=self.user_source,
                              **{**dict(self.extra), **extra})


def quote_filename(filename: str) -> str:
    """``filename`` as the string literal of a ``#line`` directive.

    Quotes and backslashes are escaped, and control characters (a newline would
    end the directive and start a line of code) become octal escapes.
    """
    out = []
    for c in filename:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\{ord(c):03o}")
        elif 0xDC80 <= ord(c) <= 0xDCFF:  # a byte os.fsdecode could not decode
            out.append(f"\\{ord(c) - 0xDC00:03o}")
        elif 0xD800 <= ord(c) <= 0xDFFF:
            out.append("?")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


class _Emitter:
    """Turn parts into text, inserting #line where the user line changes."""

    def __init__(self, macros: object, type_names: dict[str, str], filename: str,
                 line_directives: bool = True) -> None:
        self.macros = macros
        self.type_names = type_names
        self.quoted = quote_filename(filename)
        self.line_directives = line_directives

    def emit(self, parts: list) -> str:
        from .lower import Call, Gen

        out: list[str] = []
        cur: int | None = None  # the line the compiler believes the current line is
        bol = True

        def put(text: str) -> None:
            nonlocal cur, bol
            if not text:
                return
            out.append(text)
            if cur is not None:
                cur += text.count("\n")
            bol = text.endswith("\n")

        for part in parts:
            if isinstance(part, Token):
                if (self.line_directives and part.kind not in ("ws", "comment")
                        and part.line != cur):
                    if not bol:
                        put("\n")
                    out.append(f"#line {part.line} {self.quoted}\n")
                    cur = part.line
                    bol = True
                text = part.text
                if part.kind == "id":
                    text = self.type_names.get(text, text)
                put(text)
            elif isinstance(part, Gen):
                put(part.text)
            elif isinstance(part, Call):
                put(self.call(part))
            # the @uniform marker renders as nothing
        return "".join(out)

    def call(self, part: Call) -> str:
        args = []
        for a in part.args:
            if isinstance(a, list):
                args.append(_Emitter(self.macros, self.type_names, "", False).emit(a))
            else:
                args.append(a)
        macro = getattr(self.macros, part.macro)
        return str(macro(*args))


def render_lowered(lowered: LoweredKernel, module_helpers: object, target: str,
                   bindings: dict[str, str], filename: str, *, user_source: str = "",
                   template: str | None = None, **extra: object) -> RenderedKernel:
    """Render a lowered kernel (and the module's helpers) for one target.

    ``template`` names the module template, ``<target>/module.j2`` by default; each
    of its ``{% block %}``s also comes back alone in :attr:`RenderedKernel.sections`.
    """
    import jinja2

    from .lower import lower_helpers

    env = target_environment()
    try:
        macros = env.get_template(f"{target}/macros.j2").module
        module_template = env.get_template(template or f"{target}/module.j2")
    except jinja2.TemplateNotFound as exc:
        if template and exc.name == template:
            raise
        raise KernelTypeError(
            f"unknown target {target!r}; known targets: {', '.join(available_targets())}"
        ) from exc
    type_names: dict[str, str] = dict(getattr(macros, "type_names", {}))
    emitter = _Emitter(macros, type_names, filename)
    helpers = emitter.emit(lower_helpers(module_helpers))  # type: ignore[arg-type]
    if lowered.line:
        # The generated signature (and local memory) belong to the user's @kernel line,
        # not to the last helper line: a compiler error there must not blame a helper.
        helpers += f"\n#line {lowered.line} {emitter.quoted}"
    body = emitter.emit(lowered.rendered_body)
    localmem = "\n".join(
        (f"#line {decl[0].line} {emitter.quoted}\n" if getattr(decl[0], "line", 0) else "")
        + emitter.emit(decl) for decl in lowered.localmem if decl)
    resolved = []
    for p in lowered.params:
        t = bindings.get(p.type, p.type)
        resolved.append((p, type_names.get(t, t), t))
    typedefs = [(name, type_names.get(t, t), t) for name, t in bindings.items()]
    all_text = helpers + body + localmem + " ".join(t for _, t, _ in typedefs) + " ".join(
        c for _, c, _ in resolved)
    # The identifiers the code uses (comments excluded), so templates emit only the
    # prelude pieces a kernel needs.
    names = frozenset(_IDENT_RE.findall(_COMMENT_RE.sub(" ", all_text)))
    variables = dict(
        pk=macros,
        kernel=lowered,
        params=resolved,
        typedefs=typedefs,
        helpers=helpers,
        localmem=localmem,
        body=body,
        ndim=lowered.ndim,
        names=names,
        uses_double="double" in names,
        uses_half="half" in names or "__half" in names,
        uses_atomics=any(n.startswith("pk_atomic_") for n in names),
        **extra,
    )
    source = module_template.render(variables)
    sections = tuple((name, "".join(block(module_template.new_context(variables))))
                     for name, block in module_template.blocks.items())
    if template:
        extra = {**extra, "template": template}
    return RenderedKernel(target, lowered.name, source, filename, lowered.ndim,
                          tuple(lowered.params), tuple(sorted(bindings.items())),
                          tuple(sorted(extra.items())), user_source, sections,
                          lowered, module_helpers)


def available_targets() -> list[str]:
    """Targets that have a template folder on the search path."""
    names = set()
    for d in template_dirs():
        if d.is_dir():
            names.update(p.parent.name for p in d.glob("*/module.j2"))
    return sorted(names)
