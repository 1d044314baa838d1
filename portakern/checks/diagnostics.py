"""Compiler logs as structured diagnostics, and messages that quote the user's line.

The compile checkers run clang (Metal), NVRTC or nvcc (CUDA). Their logs come in
two shapes:

* clang / gcc: ``file:line:col: error: message`` (the column may be missing), with
  ``note:`` lines that belong to the diagnostic above them;
* EDG, the front end of NVRTC and nvcc: ``file(line): error: message``, followed by
  the offending line and a caret line, from which the column is recovered.

Because the renderer emits ``#line`` directives, the file and line in these logs are
already the user's; :func:`format_diagnostics` only has to look the line up in the
user's source and draw the caret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Diagnostic", "compilation_error", "format_diagnostics", "parse_diagnostics",
           "user_columns"]

_ERROR_SEVERITIES = frozenset({"error", "fatal error", "catastrophic error"})

_CLANG_RE = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):(?:(?P<col>\d+):)? "
    r"(?P<sev>fatal error|error|warning|note|remark): (?P<msg>.*)$"
)
_EDG_RE = re.compile(
    r"^(?P<file>.+?)\((?P<line>\d+)\): "
    r"(?P<sev>catastrophic error|fatal error|error|warning|remark|note)"
    r"(?: #[\w-]+)?: (?P<msg>.*)$"
)
# Diagnostics without a location: "clang: error: unknown argument",
# "nvrtc: error: invalid value", "nvcc fatal   : Unsupported gpu architecture".
_TOOL_RE = re.compile(
    r"^(?:(?P<tool>[\w.+-]+)\s*:\s*)?(?P<sev>fatal error|catastrophic error|error)"
    r"\s*:\s*(?P<msg>.*)$"
)
# PoCL prints the severity first: "error: file:line:col: message".
_POCL_RE = re.compile(
    r"^(?P<sev>fatal error|error|warning|note): (?P<file>.+?):(?P<line>\d+):(?P<col>\d+): "
    r"(?P<msg>.*)$"
)
_NVCC_FATAL_RE = re.compile(r"^(?P<tool>[\w.+-]+) fatal\s*:\s*(?P<msg>.*)$")
_CARET_RE = re.compile(r"^\s*\^\s*$")
# EDG echoes the offending line indented by two spaces before the caret line.
_EDG_ECHO_INDENT = 2


@dataclass(frozen=True)
class Diagnostic:
    """One message from a compiler log.

    Parameters
    ----------
    filename : str or None
        File the message points at, as the compiler names it (after ``#line``).
        None for messages about the whole invocation.
    line : int or None
        1-based line number, None when unknown.
    column : int or None
        1-based column, None when the compiler gave none.
    severity : str
        ``"error"``, ``"fatal error"``, ``"catastrophic error"``, ``"warning"``,
        ``"remark"`` or ``"note"``.
    message : str
        The compiler's text after the severity.
    notes : tuple of Diagnostic
        ``note:`` messages that clang attached to this one (candidates,
        instantiation points).
    """

    filename: str | None
    line: int | None
    column: int | None
    severity: str
    message: str
    notes: tuple[Diagnostic, ...] = ()

    @property
    def is_error(self) -> bool:
        """Whether this diagnostic made the compilation fail."""
        return self.severity in _ERROR_SEVERITIES

    def location(self) -> str:
        """``file:line:col`` with the unknown parts left out; empty if no file."""
        if self.filename is None:
            return ""
        parts = [self.filename]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        where = self.location()
        head = f"{self.severity}: {self.message}"
        return f"{where}: {head}" if where else head


def parse_diagnostics(log: str) -> list[Diagnostic]:
    """Parse a clang, gcc, NVRTC or nvcc log.

    Parameters
    ----------
    log : str
        The compiler's combined output.

    Returns
    -------
    list of Diagnostic
        Errors, warnings and remarks in log order, each carrying the notes that
        followed it. Lines that are not diagnostics (source echoes, carets,
        "In file included from", summaries) are skipped.
    """
    lines = log.splitlines()
    found: list[Diagnostic] = []
    pending_notes: list[Diagnostic] = []

    def flush() -> None:
        # Notes are collected separately because Diagnostic is frozen.
        if pending_notes and found:
            last = found[-1]
            found[-1] = Diagnostic(last.filename, last.line, last.column,
                                   last.severity, last.message,
                                   last.notes + tuple(pending_notes))
        elif pending_notes:
            found.extend(pending_notes)
        pending_notes.clear()

    for index, text in enumerate(lines):
        diag = _parse_line(text)
        if diag is None:
            continue
        if diag.column is None and diag.line is not None and _EDG_RE.match(text):
            diag = _with_edg_column(diag, lines, index)
        if diag.severity == "note":
            pending_notes.append(diag)
            continue
        flush()
        found.append(diag)
    flush()
    return found


def _parse_line(text: str) -> Diagnostic | None:
    match = _POCL_RE.match(text) or _CLANG_RE.match(text)
    if match:
        col = match.group("col")
        return Diagnostic(match.group("file"), int(match.group("line")),
                          int(col) if col else None, match.group("sev"),
                          match.group("msg").strip())
    match = _EDG_RE.match(text)
    if match:
        return Diagnostic(match.group("file"), int(match.group("line")), None,
                          match.group("sev"), match.group("msg").strip())
    match = _NVCC_FATAL_RE.match(text)
    if match:
        return Diagnostic(None, None, None, "fatal error", match.group("msg").strip())
    match = _TOOL_RE.match(text)
    if match:
        return Diagnostic(None, None, None, match.group("sev"),
                          match.group("msg").strip())
    return None


def _with_edg_column(diag: Diagnostic, lines: list[str], index: int) -> Diagnostic:
    # EDG prints no column, but the caret under its echo of the line gives it.
    if index + 2 >= len(lines) or not _CARET_RE.match(lines[index + 2]):
        return diag
    column = lines[index + 2].index("^") - _EDG_ECHO_INDENT + 1
    if column < 1:
        return diag
    return Diagnostic(diag.filename, diag.line, column, diag.severity, diag.message,
                      diag.notes)


def format_diagnostics(diags: Iterable[Diagnostic], sources: Mapping[str, str]) -> str:
    """Render the errors among ``diags`` with the user's source line and a caret.

    Parameters
    ----------
    diags : iterable of Diagnostic
        Usually the result of :func:`parse_diagnostics`.
    sources : mapping of str to str
        File name (as the compiler reports it, i.e. the ``#line`` name) to the
        text of that file. Errors in a file not found here are printed without
        an excerpt, unless one of their notes points into a known file (an
        error inside a shim header, instantiated from the user's line).

    Returns
    -------
    str
        One block per error, ``file:line:col: error: message`` then the line and
        a caret; empty if there is no error.
    """
    blocks: list[str] = []
    for diag in diags:
        if not diag.is_error:
            continue
        block = [str(diag)]
        excerpt = _excerpt(diag, sources)
        if excerpt is None:
            for note in diag.notes:
                excerpt = _excerpt(note, sources)
                if excerpt is not None:
                    block.append(str(note))
                    break
        if excerpt is not None:
            block.extend(excerpt)
        blocks.append("\n".join(block))
    return "\n".join(blocks)


def _excerpt(diag: Diagnostic, sources: Mapping[str, str]) -> list[str] | None:
    if diag.filename is None or diag.line is None:
        return None
    text = sources.get(diag.filename)
    if text is None:
        return None
    # Split on "\n" only: compilers do not count \f or \v as line breaks,
    # which str.splitlines() would.
    source_lines = text.split("\n")
    if not 1 <= diag.line <= len(source_lines):
        return None
    line = source_lines[diag.line - 1].rstrip("\r")
    out = ["    " + line]
    if diag.column is not None:
        # Keep tabs so the caret sits under the same column as in the source.
        pad = "".join(c if c == "\t" else " " for c in line[: diag.column - 1])
        pad += " " * max(0, diag.column - 1 - len(line))
        out.append("    " + pad + "^")
    return out


_LINE_RE = re.compile(r'^\s*#\s*line\s+(\d+)\s+"((?:\\.|[^"\\])*)"')
_ESCAPE_RE = re.compile(r'\\([0-7]{1,3}|.)')


def _unescape(m: re.Match) -> str:
    """One escape of a ``#line`` file name (render.quote_filename's), undone."""
    c = m.group(1)
    return chr(int(c, 8)) if c[0] in "01234567" else c


def user_columns(diags: list[Diagnostic], generated: str,
                 sources: Mapping[str, str]) -> list[Diagnostic]:
    """``diags`` with each column counted in the user's line, not the generated one.

    A compiler counts columns in the text it compiled, where a lowered statement
    may start at another column than the user wrote it (the lockstep lowering puts
    it on a line of its own, unindented). Where the generated line (found through
    its ``#line`` directive) is a piece of the user's line, the column moves by the
    difference; any other column stays as the compiler gave it.
    """
    lines: dict[tuple[str, int], list[str]] = {}
    place: tuple[str, int] | None = None
    for text in generated.split("\n"):
        m = _LINE_RE.match(text)
        if m:
            place = (_ESCAPE_RE.sub(_unescape, m.group(2)), int(m.group(1)))
            continue
        if place is not None:
            lines.setdefault(place, []).append(text)
            place = (place[0], place[1] + 1)
    out = []
    for d in diags:
        column = d.column
        user = sources.get(d.filename or "")
        if column is not None and user is not None and d.line is not None:
            user_lines = user.split("\n")
            mine = user_lines[d.line - 1] if 0 < d.line <= len(user_lines) else ""
            column = _user_column(column, mine, lines.get((d.filename or "", d.line), ()))
        out.append(d if column == d.column else Diagnostic(
            d.filename, d.line, column, d.severity, d.message, d.notes))
    return out


def _user_column(column: int, mine: str, generated: Iterable[str]) -> int:
    """``column`` of a generated line moved to the same code in the user's line ``mine``."""
    for text in generated:
        code = text.strip()
        lead = len(text) - len(text.lstrip())
        if not lead < column <= lead + len(code):
            continue
        if mine.count(code) == 1:  # the user's code, indented otherwise
            return column + mine.index(code) - lead
        word = re.match(r"\w+|\S", text[column - 1:])
        if word is not None and mine.count(word.group(0)) == 1:
            return mine.index(word.group(0)) + 1  # the same token, once in the user's line
    return column


def compilation_error(headline: str, log: str, rendered: Any, target: str) -> Any:
    """A :class:`~portakern.errors.CompilationError` for a failed build of ``rendered``.

    The message is ``headline``, then the compiler's diagnostics about the user's
    file (``rendered.filename``), each with the user's line and a caret; the whole
    log when none is about that file.
    """
    from ..errors import CompilationError, locate

    diags = [d for d in parse_diagnostics(log) if d.filename == rendered.filename]
    sources = rendered.sources()
    diags = user_columns(diags, getattr(rendered, "source", ""), sources)
    msg = format_diagnostics(diags, sources) if diags else log
    err = CompilationError(f"{headline}:\n{msg}", log=log, source=rendered.source,
                           target=target)
    first = next((d for d in diags if d.is_error and d.line is not None), None)
    if first is not None:
        locate(err, rendered.filename, first.line, quote=False)
    return err
