"""Exception hierarchy.

Every error portakern raises derives from :class:`PortakernError` *and* from the
standard category a Python user would already catch, so ``except ValueError``
keeps working around a bad ndrange and ``except SyntaxError`` around a bad kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = [
    "PortakernError",
    "KernelSyntaxError",
    "KernelArgumentError",
    "KernelTypeError",
    "NDRangeError",
    "BackendUnavailableError",
    "BackendMismatchError",
    "CompilationError",
    "LaunchError",
    "KernelFaultError",
    "NativeFallbackWarning",
    "PortabilityWarning",
]


class PortakernError(Exception):
    """Root of every exception raised by portakern."""


class _AtSource(PortakernError):
    """An error that can point at the user's kernel source (:func:`locate` sets it).

    ``filename`` and ``lineno`` are the user's file and line (a ``.pk`` file, a
    package resource, or ``<kernel ...>`` for a source given as a string), None
    when the error is not about one place in it.
    """

    filename: str | None = None
    lineno: int | None = None


class KernelSyntaxError(PortakernError, SyntaxError):
    """The kernel source is malformed; raised before any compiler runs.

    Carries ``filename``, ``lineno``, ``offset`` (1-based column) and ``text`` (the
    offending source line) like :class:`SyntaxError`, and prints a caret under the
    offending column.
    """

    def __init__(self, msg: str, filename: str = "<kernel>", lineno: int = 1,
                 offset: int = 1, text: str | None = None) -> None:
        super().__init__(msg, (filename, lineno, offset, text))
        self.msg = msg

    def __reduce__(self) -> tuple:
        # SyntaxError's args are (msg, details); rebuild from our own signature so the
        # error survives pickling (multiprocessing, pytest-xdist) with its position.
        return (type(self), (self.msg, self.filename, self.lineno, self.offset, self.text))

    def __str__(self) -> str:
        where = f'File "{self.filename}", line {self.lineno}'
        out = [f"{where}: {self.msg}"]
        if self.text is not None:
            line = self.text.rstrip("\n")
            out.append("    " + line)
            col = max(1, int(self.offset or 1))
            # Keep tabs so the caret lines up under the same column as in the source.
            pad = "".join(c if c == "\t" else " " for c in line[: col - 1])
            out.append("    " + pad + "^")
        return "\n".join(out)


class TargetRefusal(KernelSyntaxError):
    """Valid kernel code that one target's language lacks (OpenCL's ``get_global_id`` on the
    C++ path, a default argument on OpenCL): raised when the kernel is rendered for that
    target. ``CPU()`` then runs the kernel on its OpenCL device, as after a failed C++
    build (docs/cpu.md); elsewhere it is the error a launch raises."""


class KernelArgumentError(_AtSource, ValueError):
    """An argument has the right type but a bad value (shape, range, layout)."""


class KernelTypeError(_AtSource, TypeError):
    """An argument has the wrong type or dtype, or the count is wrong."""


class NDRangeError(_AtSource, ValueError):
    """The ndrange or workgroup size is invalid for the kernel or the device."""


class BackendUnavailableError(PortakernError, ImportError):
    """The backend cannot run here; the message says why and how to install it."""


class BackendMismatchError(_AtSource, TypeError):
    """Arrays from different backends, or an array type no backend claims."""


class CompilationError(_AtSource, RuntimeError):
    """The vendor compiler rejected the rendered source.

    ``log`` holds the compiler's output, ``source`` the rendered source that was
    compiled, and ``target`` the dialect. The vendor exception, if any, is
    ``__cause__``.
    """

    def __init__(self, msg: str, *, log: str = "", source: str = "",
                 target: str = "") -> None:
        super().__init__(msg)
        self.log = log
        self.source = source
        self.target = target


class LaunchError(_AtSource, RuntimeError):
    """The device reported an error while running a kernel."""


class KernelFaultError(PortakernError, IndexError):
    """A debug-mode launch found an out-of-bounds subscript (docs/debugging.md).

    Raised after the launch for the first work-item that faulted; the faulting
    access touched no memory outside the arrays. Also raised before a launch, in any
    mode, for a ``@localmem`` or private-array subscript that provably leaves its
    array for that launch's workgroup (``message`` then says so; nothing ran).

    Attributes
    ----------
    kernel : str
        The kernel's name.
    parameter : str
        The array parameter subscripted, and ``argument`` its position; or the
        ``@localmem`` array, with ``argument`` None and ``dimension`` the subscript's.
    index : int
        The subscript's value.
    extent : int
        The number of elements of the array passed.
    work_item : tuple of int or None
        The global index of the faulting work-item, per ndrange axis (None for a
        subscript that runs once per workgroup on the CPU's lockstep path).
    filename, lineno : str, int
        Where the subscript is in the user's source.
    """

    def __init__(self, kernel: str, parameter: str, argument: int, index: int, extent: int,
                 work_item: tuple[int, ...] | None, filename: str, lineno: int,
                 text: str | None = None, dimension: int | None = None, *,
                 message: str | None = None) -> None:
        self.kernel, self.parameter, self.argument = kernel, parameter, argument
        self.index, self.extent, self.work_item = index, extent, work_item
        self.filename, self.lineno, self.text = filename, lineno, text
        self.dimension = dimension
        valid = f"valid indices 0 to {extent - 1}" if extent > 0 else "it is empty"
        item = (f"work-item {work_item}" if work_item is not None
                else "the code that runs once per workgroup")
        count = f"{extent} element{'' if extent == 1 else 's'} ({valid})"
        if argument is None:
            msg = (f"kernel {kernel!r}: out-of-bounds subscript {index} of @localmem array "
                   f"{parameter!r} (dimension {dimension}) at {filename}:{lineno}: that "
                   f"dimension has {count}; {item} faulted first. The access went to index 0 "
                   f"of that dimension instead (no memory outside the arrays was touched)")
        elif dimension is not None:  # axis `dimension` of an N-d array parameter
            msg = (f"kernel {kernel!r}: out-of-bounds index {index} on axis {dimension} of "
                   f"{parameter!r} at {filename}:{lineno}: argument {argument} {parameter!r} "
                   f"has extent {extent} along axis {dimension} ({valid}); {item} faulted "
                   f"first. The access went to index 0 of that axis instead (no memory "
                   f"outside the arrays was touched)")
        else:
            msg = (f"kernel {kernel!r}: out-of-bounds subscript {parameter}[{index}] at "
                   f"{filename}:{lineno}: argument {argument} {parameter!r} has {count}; "
                   f"{item} faulted first. The access was skipped (no memory outside the "
                   f"arrays was touched)")
        if text is not None:
            msg += f"\n    {lineno} | {text.strip()}"
        self.message = message
        super().__init__(msg if message is None else message)

    def __reduce__(self) -> tuple:
        import functools

        return (functools.partial(type(self), message=self.message),
                (self.kernel, self.parameter, self.argument, self.index, self.extent,
                 self.work_item, self.filename, self.lineno, self.text, self.dimension))


class NativeFallbackWarning(UserWarning):
    """``CPU()``'s native path could not compile a kernel that its OpenCL path could.

    The kernel runs on the OpenCL device; the warning quotes the C++ compiler's error
    (typically OpenCL-only code outside a ``{% if target == "opencl" %}`` escape).
    """


class PortabilityWarning(UserWarning):
    """The kernel uses something outside the portable subset (DESIGN section 1).

    Issued when the kernel is created (``pk.kernel(...)``, ``kernel.specialize``),
    once per use: the message names the file, line and column, what is not
    portable, how to avoid it, and the targets that lack it. The kernel still runs
    on the others. Turn it into an error with
    ``warnings.simplefilter("error", pk.PortabilityWarning)``.
    """


def locate(exc: PortakernError, filename: str, lineno: int, text: str | None = None,
           where: str | None = None, *, quote: bool = True) -> PortakernError:
    """Point ``exc`` at the user's ``filename`` and ``lineno``; return it.

    Sets ``exc.filename`` and ``exc.lineno`` and, with ``quote``, ends the message
    with the place as a Python traceback shows one (``File "k.pk", line 3, in
    kernel 'f'``) and the line's ``text``, so an editor or terminal can open it. An
    error already located keeps its place (the innermost knows best); a
    :class:`KernelSyntaxError` has its own.
    """
    if isinstance(exc, SyntaxError) or getattr(exc, "filename", None) is not None:
        return exc
    exc.filename, exc.lineno = filename, lineno  # type: ignore[attr-defined]
    if quote:
        head = f'  File "{filename}", line {lineno}' + (f", {where}" if where else "")
        if text is not None and text.strip():
            head += "\n    " + text.strip()
        first = str(exc.args[0]) if exc.args else ""
        exc.args = (f"{first}\n{head}", *exc.args[1:])
    return exc


def source_line(source: str, lineno: int) -> str | None:
    """Line ``lineno`` (1-based) of ``source``, or None past its end."""
    lines = source.split("\n")
    return lines[lineno - 1] if 0 < lineno <= len(lines) else None


_PACKAGE_DIR = str(Path(__file__).resolve().parent)


def user_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` that names the first frame outside portakern."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(
            _PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level
