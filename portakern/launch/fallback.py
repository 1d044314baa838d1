"""What ``CPU()`` says when it runs a kernel on its OpenCL device instead of the native path
(:meth:`portakern.launch.launcher.Launcher._fall_back`, docs/cpu.md)."""

from __future__ import annotations

from typing import Any

from ..errors import CompilationError, TargetRefusal

__all__ = ["fallback_message", "with_compiler_error"]


def fallback_message(name: str, backend: Any, theirs: str, exc: Exception) -> str:
    """The :class:`~portakern.errors.NativeFallbackWarning` of kernel ``name``: its ``theirs``
    rendering was refused (``exc``: the compiler's error, or portakern's
    :class:`~portakern.errors.TargetRefusal` of a word that dialect lacks)."""
    ours = backend.target
    said = "portakern's check said" if isinstance(exc, TargetRefusal) else "The compiler said"
    return (f"kernel {name!r} runs on {backend!r} as {ours!r}: its {theirs!r} rendering does "
            f"not build. If the kernel has {ours!r}-only code, put it under "
            f"{{% if target == \"{ours}\" %}} to run it as {theirs!r}; if not, this is a "
            f"portakern bug (please report it). {said}:\n{exc}")


def with_compiler_error(exc: CompilationError, compiler: CompilationError,
                        backend: Any) -> CompilationError:
    """``exc`` (a lowering's refusal) with the error of the build it fell back to.

    That build failing means the code does not compile at all: the compiler's
    message, at the user's line, is what to fix, and its place becomes ``exc``'s.
    """
    exc.args = (f"{compiler}\n(Before that, the lockstep lowering of {backend!r}'s native "
                f"path refused it: {exc.args[0]})", *exc.args[1:])
    if compiler.filename is not None:
        exc.filename, exc.lineno = compiler.filename, compiler.lineno
    return exc
