"""Metal Shading Language syntax check with clang, for machines without Xcode.

Apple's Metal compiler runs only on macOS. Metal Shading Language is C++ with
address spaces, which is close enough to C++ for OpenCL that clang (14 or newer)
can parse it, given:

* ``templates/metal/shim/metal_stdlib``, a header that declares Metal's names
  (address-space keywords as macros, ``mem_flags``, ``threadgroup_barrier``, the
  math, atomic and SIMD-group functions, vector types and constructors);
* a pre-pass here that blanks out the Metal attributes clang does not know
  (``[[buffer(0)]]``, ``[[thread_position_in_grid]]``, ...) and turns
  ``[[kernel]]`` into OpenCL's ``__kernel``. It replaces characters one for one
  and never touches a newline, so line numbers, columns and the renderer's
  ``#line`` directives all still hold.

clang runs without OpenCL's own builtins (``-cl-no-stdinc``) and without
``double`` (Metal has none), so OpenCL-only names are rejected as they would be by
Apple's compiler. Unknown attributes are errors (``-Werror=unknown-attributes``).

Where C++ for OpenCL is more lenient than Metal, the check is tightened:

* the generic address space is turned off (``__opencl_c_generic_address_space``,
  with the pipes and device-enqueue features that depend on it), so a pointer
  without an address space is a ``thread`` pointer, as in Metal, and
  ``const float* p = x;`` for a ``device`` pointer ``x`` is an error;
* the shim gives ``threadgroup atomic_float`` no operations (Metal has float
  atomics on threadgroup memory only from Metal 4.1; MLX builds for 3.1 to 4.0);
* words Metal reserves (``kernel``, ``vertex``, ``fragment``, the address
  spaces, ...) used as names are errors naming the word, found by a scan here
  before clang runs (:data:`METAL_RESERVED_WORDS`).

This is a syntax and type check: it cannot prove that Apple's compiler accepts a
source, only catch what would certainly fail.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from portakern.analysis.portability import METAL_RESERVED_WORDS
from portakern.checks.diagnostics import (
    Diagnostic,
    format_diagnostics,
    parse_diagnostics,
)
from portakern.errors import BackendUnavailableError, CompilationError
from portakern.subprocesses import run, scratch_dir

__all__ = ["METAL_RESERVED_WORDS", "check_metal", "metal_check_available"]

_MIN_CLANG = 14  # first release with -cl-std=clc++2021
_INSTALL_HINT = "install it with `apt-get install clang` (Debian/Ubuntu)"
_TIMEOUT_S = 120

# Attributes of Metal compute functions and their arguments. Those in
# _ATTRS_WITH_ARGS take a parenthesised argument, the others must not.
_ATTRS_NO_ARGS = frozenset({
    "kernel",
    "thread_position_in_grid",
    "thread_position_in_threadgroup",
    "threadgroup_position_in_grid",
    "threads_per_threadgroup",
    "threadgroups_per_grid",
    "threads_per_grid",
    "thread_index_in_threadgroup",
    "thread_index_in_simdgroup",
    "thread_index_in_quadgroup",
    "simdgroup_index_in_threadgroup",
    "quadgroup_index_in_threadgroup",
    "threads_per_simdgroup",
    "simdgroups_per_threadgroup",
    "quadgroups_per_threadgroup",
    "thread_execution_width",
    "dispatch_threads_per_threadgroup",
    "dispatch_simdgroups_per_threadgroup",
    "dispatch_quadgroups_per_threadgroup",
    "grid_origin",
    "grid_size",
    "stage_in",
    "visible",
})
_ATTRS_WITH_ARGS = frozenset({
    "buffer",
    "texture",
    "sampler",
    "threadgroup",
    "host_name",
    "max_total_threads_per_threadgroup",
    "function_constant",
    "id",
    "user",
    "raster_order_group",
})

_ATTR_GROUP_RE = re.compile(r"\[\[(?P<body>[^\[\]]*)\]\]")
_ATTR_ITEM_RE = re.compile(
    r"^\s*(?:metal::)?(?P<name>[A-Za-z_]\w*)\s*(?P<args>\(.*\))?\s*$", re.DOTALL
)
_CLANG_VERSION_RE = re.compile(r"clang version (\d+)\.(\d+)(?:\.(\d+))?")


# What the reserved-word scan steps over: comments, string and character literals,
# attribute groups, preprocessor lines (one match each), then words.
_SCAN_RE = re.compile(
    r"""(?P<skip>//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\[\[.*?\]\])
      | (?P<pp>^[ \t]*\#(?:[^\n\\]|\\.|\\\n)*)
      | (?P<word>[A-Za-z_]\w*)
      | (?P<other>\S)""",
    re.VERBOSE | re.DOTALL | re.MULTILINE)
_LINE_DIRECTIVE_RE = re.compile(
    r"^[ \t]*#[ \t]*(?:line[ \t]+)?(\d+)(?:[ \t]+\"((?:\\.|[^\"])*)\")?")
# A reserved word followed by one of these is a qualifier (`device float* x`,
# `kernel void f`, `kernel [[attr]]`); followed by anything else it is a name.
_QUALIFIER_FOLLOWERS = re.compile(r"[A-Za-z_\[]")
# Before a reserved word, these make it a name whatever follows (`struct vertex v`).
_NAME_LEADERS = frozenset({"struct", "class", "enum", "union", "using", "namespace",
                           "typename", ".", "->", "::"})

# clang words its messages in OpenCL terms; a Metal author should read Metal's.
_METAL_WORDING = [
    (re.compile(r"use of type 'double' requires cl_khr_fp64 and __opencl_c_fp64 "
                r"support"), "Metal has no 'double' type"),
    (re.compile(r"\blocal address space\b"), "threadgroup address space"),
    # OpenCL spells out the private address space of every local variable and
    # pointer ('__private float', 'float *__private'); Metal leaves it implicit.
    (re.compile(r"'__private ([^'*]*)'"), r"'\1'"),
    (re.compile(r"\*\s*__private\b"), "*"),
    (re.compile(r"\b__global\b"), "device"),
    (re.compile(r"\b__local\b"), "threadgroup"),
    (re.compile(r"\b__private\b"), "thread"),
    (re.compile(r"\b__constant\b"), "constant"),
    (re.compile(r"\b__kernel\b"), "kernel"),
    # Undo the shim's renaming of OpenCL keywords that Metal leaves free.
    (re.compile(r"\bpk_metal_(\w+?)_\b"), r"\1"),
]


def metal_check_available() -> tuple[bool, str]:
    """Whether :func:`check_metal` can run here.

    Returns
    -------
    tuple of (bool, str)
        ``(True, description of the clang used)`` or ``(False, why not and how
        to install clang)``.
    """
    clang, detail = _find_clang()
    return clang is not None, detail


def check_metal(source: str, *, sources: Mapping[str, str] | None = None,
                name: str = "kernel.metal") -> None:
    """Syntax- and type-check a Metal Shading Language source with clang.

    Parameters
    ----------
    source : str
        A complete MSL translation unit (``#include <metal_stdlib>``, helper
        functions, ``[[kernel]]`` functions), possibly with ``#line`` directives.
    sources : mapping of str to str, optional
        Original text of the files named by ``#line`` directives, so that errors
        quote the user's line. ``source`` itself is always known under ``name``.
    name : str, optional
        File name under which ``source`` is compiled and reported.

    Raises
    ------
    CompilationError
        clang rejected the source; the message lists each error with the
        offending line and a caret, ``log`` holds clang's output.
    BackendUnavailableError
        No suitable clang on this machine.
    """
    clang, detail = _find_clang()
    if clang is None:
        raise BackendUnavailableError(f"cannot check Metal source: {detail}")
    shim = _shim_dir()
    relative = Path(name)
    if relative.is_absolute() or ".." in relative.parts:
        raise ValueError(f"name must be a relative file name, got {name!r}")
    with scratch_dir("metal") as tmp:
        path = Path(tmp, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        reserved = _reserved_word_diagnostics(source, name)
        if reserved:
            known = {name: source, **(sources or {})}
            log = "\n".join(str(d) for d in reserved)
            raise CompilationError(format_diagnostics(reserved, known), log=log,
                                   source=source, target="metal")
        path.write_text(_strip_metal_attributes(source), encoding="utf-8")
        proc = run(_clang_command(clang, shim, relative, generic=False), cwd=tmp,
                   timeout=_TIMEOUT_S)
        if proc.returncode == 0:
            return
        log = proc.stdout + proc.stderr
        diags = parse_diagnostics(log)
        if any(_is_struct_copy_artefact(d) for d in diags):
            # Metal copies and returns structs; see _is_struct_copy_artefact. What the
            # lenient pass (generic address space on) rejects is still an error.
            lenient = run(_clang_command(clang, shim, relative, generic=True), cwd=tmp,
                          timeout=_TIMEOUT_S)
            diags = _without_struct_copy_artefacts(
                diags, parse_diagnostics(lenient.stdout + lenient.stderr))
            if not any(d.severity in _ERRORS for d in diags):
                return
    known = {name: source, **(sources or {})}
    diags = [_in_metal_terms(d) for d in diags]
    message = format_diagnostics(diags, known) or log.strip()
    raise CompilationError(message, log=log, source=source, target="metal")


def _clang_command(clang: str, shim: Path, relative: Path, generic: bool) -> list[str]:
    """clang's command line; ``generic=False`` is the strict check (see the module doc)."""
    # Metal has none of OpenCL's builtins and no double, and no generic address space:
    # a pointer needs one (the pipes and device-enqueue features require the generic
    # address space, so they go too).
    extensions = "-cl_khr_fp64,-__opencl_c_fp64"
    if not generic:
        extensions += (",-__opencl_c_generic_address_space,-__opencl_c_pipes,"
                       "-__opencl_c_device_enqueue")
    return [
        clang, "-x", "clcpp", "-cl-std=clc++2021", "--target=spir64",
        "-cl-no-stdinc", "-Xclang", f"-cl-ext={extensions}",
        "-isystem", str(shim), "-fsyntax-only", "-fno-color-diagnostics",
        "-ferror-limit=0", "-Werror=unknown-attributes", str(relative),
    ]


# -- structs: copied and returned in Metal ----------------------------------------------
#
# Without the generic address space, clang 14's C++ for OpenCL declares a struct's
# implicit copy and move members for __private objects only: returning a struct, passing
# one by value, copying one out of device memory or into it (`out[i] = p;`) finds no
# constructor or assignment that fits ("cannot be used to construct an object in address
# space unqualified", "cannot bind reference in address space '__global'"). Metal accepts
# all of these. Such an error is dropped, unless the lenient pass (the same source with
# the generic address space on, where those members fit) rejects the same line as well:
# a write through a const or constant pointer is still reported.

_ERRORS = frozenset({"error", "fatal error"})
_SPECIAL_MEMBER_ERROR = re.compile(
    r"^(?:no matching constructor for initialization of '[^']*'|no viable overloaded '=')$")
_IMPLICIT_MEMBER = re.compile(
    r"^candidate (?:constructor|function) (?:\(the implicit (?:copy|move|default) "
    r"(?:constructor|assignment operator)\) )?(?:not viable|ignored): ")
_ADDRESS_SPACE_REASON = re.compile(
    r"address space|expects an rvalue|requires 0 arguments")


def _is_struct_copy_artefact(diag: Diagnostic) -> bool:
    """A struct copy that only the missing generic address space makes an error."""
    if diag.severity not in _ERRORS or not _SPECIAL_MEMBER_ERROR.match(diag.message):
        return False
    candidates = [n.message for n in diag.notes if n.message.startswith("candidate ")]
    return bool(candidates) and all(
        _IMPLICIT_MEMBER.match(m) and _ADDRESS_SPACE_REASON.search(m) for m in candidates
    ) and any("address space" in m for m in candidates)


def _without_struct_copy_artefacts(strict: list[Diagnostic],
                                   lenient: list[Diagnostic]) -> list[Diagnostic]:
    """``strict`` less its struct-copy artefacts, plus what ``lenient`` reports there."""
    where = {(d.filename, d.line) for d in lenient if d.severity in _ERRORS}
    kept: list[Diagnostic] = []
    for d in strict:
        if not _is_struct_copy_artefact(d):
            kept.append(d)
        elif (d.filename, d.line) in where:
            kept.extend(x for x in lenient if (x.filename, x.line) == (d.filename, d.line)
                        and x.severity in _ERRORS and x not in kept)
    return kept


def _reserved_word_diagnostics(source: str, name: str) -> list[Diagnostic]:
    """An error for each word of :data:`METAL_RESERVED_WORDS` used as a name.

    Positions follow the source's ``#line`` directives, as clang's would.
    """
    tokens: list[tuple[str, str, int]] = []  # (kind, text, offset)
    for match in _SCAN_RE.finditer(source):
        kind = match.lastgroup or "other"
        if kind != "skip":
            tokens.append((kind, match.group(kind), match.start()))
    if not any(kind == "word" and text in METAL_RESERVED_WORDS for kind, text, _ in tokens):
        return []
    # Physical line (0-based) -> (file, line) after the #line directives.
    line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
    where: list[tuple[str, int]] = []
    current_file, next_line = name, 1
    for start in line_starts:
        end = source.find("\n", start)
        text = source[start:] if end < 0 else source[start:end]
        where.append((current_file, next_line))
        directive = _LINE_DIRECTIVE_RE.match(text)
        if directive:
            next_line = int(directive.group(1))
            if directive.group(2) is not None:
                current_file = re.sub(r"\\(.)", r"\1", directive.group(2))
        else:
            next_line += 1
    diags = []
    for n, (kind, text, offset) in enumerate(tokens):
        if kind != "word" or text not in METAL_RESERVED_WORDS:
            continue
        # A #line directive between a qualifier and its type (`constant` + line marker +
        # `const float t[4]`) leaves it a qualifier: neighbours skip preprocessor lines.
        after = next((t for k, t, _ in tokens[n + 1:] if k != "pp"), "")
        before = next((t for k, t, _ in reversed(tokens[:n]) if k != "pp"), "")
        if _QUALIFIER_FOLLOWERS.match(after) and before not in _NAME_LEADERS:
            continue
        physical = bisect.bisect_right(line_starts, offset) - 1
        filename, line = where[physical]
        column = offset - line_starts[physical] + 1
        diags.append(Diagnostic(
            filename, line, column, "error",
            f"'{text}' is a reserved word in Metal Shading Language and cannot be used "
            f"as a name; rename it"))
    return diags


def _in_metal_terms(diag: Diagnostic) -> Diagnostic:
    message = diag.message
    hints = [hint for marker, hint in _SHIM_REASONS.items()
             if any(marker in note.message for note in diag.notes)]
    if _ADDRESS_SPACES_DIFFER.search(message):
        hints.append(_NO_ADDRESS_SPACE_HINT)
    for pattern, replacement in _METAL_WORDING:
        message = pattern.sub(replacement, message)
    if hints:
        message += " (" + "; ".join(hints) + ")"
    notes = tuple(_in_metal_terms(note) for note in diag.notes)
    return dataclasses.replace(diag, message=message, notes=notes)


# Names the shim gives to what Metal lacks; a note that mentions one explains the error.
_SHIM_REASONS = {
    "pk_metal_has_no_float_atomics_on_threadgroup_memory_before_metal_4_1":
        "Metal has no float atomics on threadgroup memory before Metal 4.1; use a "
        "compare-and-swap loop on a threadgroup atomic_uint",
}
# A thread (unqualified) pointer meets one into another address space.
_ADDRESS_SPACES_DIFFER = re.compile(
    r"'[^']*\b__private\b[^'*]*\*[^']*'.*'[^']*\b__(?:global|local|constant)\b[^'*]*\*"
    r"|'[^']*\b__(?:global|local|constant)\b[^'*]*\*[^']*'.*'[^']*\b__private\b[^'*]*\*")
_NO_ADDRESS_SPACE_HINT = (
    "the address spaces differ: Metal has no generic address space, and a pointer "
    "declared without one is a thread pointer; declare it device, constant or "
    "threadgroup like the memory it points into")


def _strip_metal_attributes(source: str) -> str:
    """Blank out Metal attributes clang does not know, keeping every offset."""
    return _ATTR_GROUP_RE.sub(_rewrite_attribute_group, source)


def _rewrite_attribute_group(match: re.Match[str]) -> str:
    group = match.group(0)
    items = _split_items(match.group("body"))
    known = [_is_known_attribute(item) for item in items]
    if not any(known):
        return group
    unknown = [item for item, ok in zip(items, known, strict=True) if not ok]
    if any(ok and _attribute_name(item) == "kernel"
           for item, ok in zip(items, known, strict=True)):
        # A threadgroup variable is legal only inside an OpenCL __kernel, so
        # [[kernel]] must become one, not just vanish.
        if not unknown:
            return _blank("__kernel", group)
        return "__kernel [[" + ",".join(unknown) + "]]"
    if not unknown:
        return _blank("", group)
    # Keep the unknown ones in place for clang to reject; an empty element in
    # an attribute list is valid C++.
    body = ",".join(_blank("", item) if ok else item
                    for item, ok in zip(items, known, strict=True))
    return "[[" + body + "]]"


def _split_items(body: str) -> list[str]:
    # Split on commas outside parentheses: [[buffer(0), function_constant(a)]].
    items, depth, start = [], 0, 0
    for i, char in enumerate(body):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return items


def _attribute_name(item: str) -> str | None:
    match = _ATTR_ITEM_RE.match(item)
    return match.group("name") if match else None


def _is_known_attribute(item: str) -> bool:
    match = _ATTR_ITEM_RE.match(item)
    if match is None:
        return False
    name, args = match.group("name"), match.group("args")
    if args is None:
        return name in _ATTRS_NO_ARGS
    return name in _ATTRS_WITH_ARGS


def _blank(prefix: str, text: str) -> str:
    # Same length as text, newlines kept, so no line or column moves.
    rest = "".join(c if c in "\r\n" else " " for c in text[len(prefix):])
    return prefix + rest


@functools.lru_cache(maxsize=1)
def _find_clang() -> tuple[str | None, str]:
    # Debian/Ubuntu ship versioned binaries (clang-15) next to, or instead of,
    # the plain name.
    names = ["clang", *(f"clang-{v}" for v in range(25, _MIN_CLANG - 1, -1))]
    too_old = []
    for candidate in names:
        path = shutil.which(candidate)
        if path is None:
            continue
        version = _clang_version(path)
        if version is None:
            continue
        if version[0] >= _MIN_CLANG:
            return path, f"clang {'.'.join(map(str, version))} ({path})"
        too_old.append(f"{path} is clang {version[0]}")
    reason = f"clang >= {_MIN_CLANG} is needed for the Metal syntax check"
    if too_old:
        reason += f" ({'; '.join(too_old)})"
    else:
        reason += " and was not found on PATH"
    return None, f"{reason}; {_INSTALL_HINT}"


def _clang_version(path: str) -> tuple[int, ...] | None:
    try:
        proc = run([path, "--version"], timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    match = _CLANG_VERSION_RE.search(proc.stdout)
    if match is None:
        return None
    return tuple(int(g) for g in match.groups() if g is not None)


@functools.lru_cache(maxsize=1)
def _shim_dir() -> Path:
    here = Path(__file__).resolve().parent.parent
    # Installed wheels carry templates/ inside the package; a source checkout
    # has it next to the package.
    candidates = [here / "templates" / "metal" / "shim",
                  here.parent / "templates" / "metal" / "shim"]
    for candidate in candidates:
        if (candidate / "metal_stdlib").is_file():
            return candidate
    searched = ", ".join(str(c) for c in candidates)
    raise BackendUnavailableError(
        f"portakern's Metal shim header (metal_stdlib) is missing; looked in "
        f"{searched}. Reinstall portakern."
    )
