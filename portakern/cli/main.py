"""The ``portakern`` command line: ``info``, ``render``, ``check``, ``demo``, ``bench``,
``cache``.

``portakern`` (the console script) and ``python -m portakern`` both call
:func:`main`. Errors that portakern raises on purpose (:class:`PortakernError`)
print their message, which names the user's file and line, and exit with status
1; a bad command line exits with status 2, as argparse does.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..errors import BackendUnavailableError, KernelSyntaxError, PortakernError, TargetRefusal
from ..source.defines import parse_define
from ..targets import CANONICAL_TARGET, builtin_targets, target_info
from . import check_targets
from .demo import UsageError, cmd_demo
from .info import cmd_cache, cmd_info

__all__ = ["main", "parse_define"]

_DEFAULT_TYPE = "float"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        # Everything after "bench" belongs to the benchmark's own parser (--help included).
        return cmd_bench(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        parser.exit(2, f"portakern {args.command}: error: {exc}\n")
    except PortakernError as exc:
        print(f"portakern {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `portakern render ... | head`: the reader left; stop quietly, as cat does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="portakern",
        description="Write a GPU kernel once; render, check and run it for CUDA, Metal "
                    "and OpenCL.")
    from ..version import __version__

    parser.add_argument("--version", action="version", version=f"portakern {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("info", help="backends, devices, versions, and how to install what "
                                    "is missing")
    p.set_defaults(func=cmd_info)

    defines = argparse.ArgumentParser(add_help=False)
    defines.add_argument(
        "-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
        type=parse_define,
        help="bind a Jinja constant or a type variable: an int, a float, true/false, or a "
             "type name (-D TILE=16 -D T=double); repeatable")
    defines.add_argument("--kernel", metavar="NAME",
                         help="the @kernel to use when the file defines several "
                              "(default: all of them)")
    defines.add_argument("--ndim", type=int, choices=(0, 1, 2, 3),
                         help="ndrange rank to render for (default: what the kernel's "
                              "NTuple indices imply, else 1)")

    p = sub.add_parser(
        "render", parents=[defines], help="print the generated source for one target",
        description="Print the source portakern generates for FILE. Type variables are "
                    "bound to float unless given with -D. FILE may also be the name of a "
                    "shipped example (portakern render saxpy --target cuda).")
    p.add_argument("file", metavar="FILE", help="a .pk kernel source, or an example name")
    p.add_argument("--target", "-t", required=True, metavar="TARGET",
                   help="cuda, metal or opencl (or a target a plugin adds)")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser(
        "check", parents=[defines],
        help="compile-check every target that can be checked on this machine",
        description="Compile FILE for every target this machine can check: OpenCL is built "
                    "on the CPU OpenCL device, CUDA compiled to PTX with NVRTC or nvcc, "
                    "Metal syntax-checked with clang. Type variables are bound to float "
                    "unless given with -D. Exits with status 1 if any check fails.")
    p.add_argument("file", metavar="FILE", help="a .pk kernel source, or an example name")
    p.add_argument("--target", "-t", dest="targets", action="append", metavar="TARGET",
                   help="check only this target (repeatable; default: all)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "demo", help="run the example kernels on the CPU and check them against NumPy",
        description="Run every shipped example kernel on the default CPU backend, compare "
                    "with NumPy, and print a table. Exits with status 1 on any mismatch.")
    p.add_argument("--small", action="store_true",
                   help="small problem sizes (a quick smoke test)")
    # The same spellings as `portakern bench`: --only a,b (also repeatable), --repeats N.
    p.add_argument("--only", action="append", metavar="NAMES",
                   help="comma-separated examples to run (repeatable)")
    p.add_argument("--repeats", "--repeat", dest="repeats", type=int, default=3, metavar="N",
                   help="time the best of N runs (default 3)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "cache", help="the disk cache: where it is, its size and limit (info), or empty it "
                      "(clear)",
        description="Show the kernel cache's folder, status, size, entries and size limit "
                    "(PORTAKERN_CACHE_SIZE), or delete every entry.")
    p.add_argument("action", choices=("info", "clear"), nargs="?", default="info")
    p.set_defaults(func=cmd_cache)

    # main() hands "bench ..." over before parsing; this entry is for --help.
    sub.add_parser("bench", help="the performance benchmarks (portakern bench --help)",
                   add_help=False)
    return parser


# -- loading a source ---------------------------------------------------------------------

@dataclass
class _Source:
    filename: str
    text: str
    constants: dict[str, Any]
    kernel_names: list[str]
    default_kernel: str | None = None


def _load_source(args: argparse.Namespace) -> _Source:
    from ..examples import EXAMPLES, EXAMPLES_DIR

    arg = args.file
    path = Path(arg)
    constants: dict[str, Any] = {}
    default_kernel = None
    if not path.is_file():
        # A bare name may be a shipped example; anything written as a path (a .pk
        # file, a folder) must exist, or a typo would silently render an example.
        looks_like_path = arg.endswith(".pk") or "/" in arg or "\\" in arg
        if looks_like_path:
            raise UsageError(
                f"no such file: {arg}" + (f" (to render the shipped example, write its "
                                          f"name: {path.stem})" if path.stem in EXAMPLES
                                          else ""))
        if arg in EXAMPLES:
            ex = EXAMPLES[arg]
            path, default_kernel = ex.path, ex.kernel
        elif (EXAMPLES_DIR / f"{arg}.pk").is_file():
            path = EXAMPLES_DIR / f"{arg}.pk"
        else:
            raise UsageError(
                f"no such file: {arg} (nor a shipped example; examples: "
                f"{', '.join(EXAMPLES)})")
    # A shipped example's file gets its catalog constants, so it renders as is.
    resolved = path.resolve()
    for ex in EXAMPLES.values():
        if ex.path == resolved:
            constants.update(ex.constants)
    constants.update(dict(args.defines))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {arg}: {exc}") from exc
    # Errors and #line directives name the file as the user wrote it.
    source = _Source(str(path), text, constants, [], default_kernel)
    source.kernel_names = _kernel_names(source, args.kernel)
    return source


def _kernel_names(source: _Source, wanted: str | None) -> list[str]:
    """The kernels to render or check, each needing only its own constants.

    With ``--kernel`` (or an example's kernel) the source is rendered for that kernel
    alone (:meth:`KernelTemplate.render <portakern.source.template.KernelTemplate.render>`
    blanks the others when a constant is missing), as ``pk.kernel(source, name=...)``
    does. Without one, a file whose other kernels' constants are not all given still
    lists its kernels by their spelled-out names, and each is then rendered with its
    own constants only.
    """
    from ..render.emit import KernelTemplate, check_constants
    from ..syntax.language import parse

    if wanted is None and source.default_kernel is not None:
        return [source.default_kernel]
    spelled = _spelled_kernel_names(source.text)
    if wanted is not None and spelled is not None and wanted not in spelled:
        raise UsageError(f"{source.filename} has no @kernel named {wanted!r}; it defines "
                         f"{', '.join(spelled)}")
    try:
        constants = check_constants(source.constants)
        template = KernelTemplate(source.text, source.filename)
        smap = template.render(CANONICAL_TARGET, constants, wanted)
    except KernelSyntaxError as exc:
        if wanted is None and spelled and exc.msg.startswith("undefined name"):
            return spelled  # each kernel then reports the constants it lacks itself
        raise _with_define_hint(exc) from None
    names = [k.name for k in parse(smap).kernels]
    if wanted is not None:
        if wanted not in names:
            raise UsageError(
                f"{source.filename} has no @kernel named {wanted!r}; it defines "
                f"{', '.join(names)}")
        return [wanted]
    return names


def _spelled_kernel_names(text: str) -> list[str] | None:
    """The ``@kernel`` names written out in ``text``, or None where Jinja makes one."""
    from ..source.narrow import kernel_names  # the cut KernelTemplate.render makes, by name

    names = kernel_names(text)
    if not names or any(name is None for name in names):
        return None
    return list(dict.fromkeys(n for n in names if n is not None))


def _with_define_hint(exc: KernelSyntaxError) -> KernelSyntaxError:
    # The library's hint names the Python API; on the command line it is -D.
    if exc.msg.startswith("undefined name"):
        name = exc.msg.split("'")[1] if "'" in exc.msg else "NAME"
        msg = f"undefined name {name!r} in the kernel template; bind it with -D {name}=VALUE"
        return KernelSyntaxError(msg, exc.filename or "<kernel>", exc.lineno or 1,
                                 exc.offset or 1, exc.text)
    return exc


def _kernel(source: _Source, name: str) -> tuple[Any, dict[str, str]]:
    """The kernel ``name`` with every type variable bound (to float by default)."""
    from ..kernels import Kernel

    kernel = Kernel(source.text, name, filename=source.filename, **source.constants)
    defaults = {tv: _DEFAULT_TYPE for tv in kernel.type_vars}
    if defaults:
        kernel = kernel.specialize(**defaults)
    bound = {tv: str(kernel.constants[tv]) for tv in _type_vars(kernel)}
    return kernel, bound


def _type_vars(kernel: Any) -> tuple[str, ...]:
    from ..syntax.vectors import VECTOR_TYPES
    from ..types import KNOWN_TYPES

    structs = kernel.parsed("c")[1].structs  # a struct's name is never a type variable
    return tuple(dict.fromkeys(p.type for p in kernel.params
                               if p.type not in KNOWN_TYPES and p.type not in VECTOR_TYPES
                               and p.type not in structs))


def _ndim(kernel: Any, target: str, wanted: int | None) -> int:
    from ..lower.lowering import infer_ndim

    if wanted is not None:
        return wanted
    # The rank Kernel.render would pick: the one the kernel's NTuple indices imply.
    return infer_ndim(kernel.parsed(target)[1])


def _describe_bindings(bound: dict[str, str], ndim: int | None = None) -> str:
    parts = [f"{k}={v}" for k, v in bound.items()]
    if ndim is not None:
        parts.append(f"ndim={ndim}")
    return ", ".join(parts)


# -- render ---------------------------------------------------------------------------------

def cmd_render(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``portakern render FILE --target T``: print the generated source."""
    out = out or sys.stdout
    from ..render.emit import available_targets

    if args.target not in available_targets():
        raise UsageError(f"unknown target {args.target!r}; use one of "
                          f"{', '.join(available_targets())}")
    source = _load_source(args)
    several = len(source.kernel_names) > 1
    for name in source.kernel_names:
        try:
            kernel, bound = _kernel(source, name)
            ndim = _ndim(kernel, args.target, args.ndim)
            text = kernel.rendered(args.target, {}, ndim).source
        except KernelSyntaxError as exc:
            raise _with_define_hint(exc) from None
        if several:
            out.write(f"// ---- portakern render: kernel {name} for {args.target} "
                      f"({_describe_bindings(bound, ndim)}) ----\n")
        out.write(text if text.endswith("\n") else text + "\n")
    return 0


# -- check ----------------------------------------------------------------------------------

def cmd_check(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``portakern check FILE``: compile-check every target checkable here."""
    out = out or sys.stdout
    from ..render.emit import available_targets

    targets = args.targets or list(builtin_targets())
    unknown = [t for t in targets if t not in available_targets()]
    if unknown:
        raise UsageError(f"unknown target {unknown[0]!r}; use one of "
                          f"{', '.join(available_targets())}")
    try:
        source = _load_source(args)
    except KernelSyntaxError as exc:
        out.write(f"{args.file}: FAILED before any compiler ran\n{_indent(str(exc))}\n")
        return 1
    failed = sum(_check_kernel(source, name, targets, args.ndim, out)
                 for name in source.kernel_names)
    if failed:
        out.write(f"{failed} check{'s' if failed > 1 else ''} failed\n")
    return 1 if failed else 0


def _check_kernel(source: _Source, name: str, targets: list[str], ndim: int | None,
                  out: TextIO) -> int:
    """Check one kernel for each target; print a line per target; return the failures."""
    try:
        kernel, bound = _kernel(source, name)
        # Parsing and lowering do not depend on the target: an error there is
        # reported once, before any compiler runs. (The canonical target: the
        # lockstep lowering of the c target has limits of its own, below.) A refusal
        # of the canonical target alone (a construct OpenCL C lacks) is that target's
        # line: the others are still checked.
        try:
            kernel.rendered(CANONICAL_TARGET, {}, _ndim(kernel, CANONICAL_TARGET, ndim))
        except PortakernError:
            if not _renders_elsewhere(kernel, targets, ndim):
                raise
    except PortakernError as exc:
        if isinstance(exc, KernelSyntaxError):
            exc = _with_define_hint(exc)
        out.write(f"{source.filename}: kernel {name}: FAILED before any compiler ran\n"
                  f"{_indent(str(exc))}\n")
        return 1
    from ..lower.lowering import NotLockstep

    label = f" ({_describe_bindings(bound)})" if bound else ""
    out.write(f"{source.filename}: kernel {name}{label}\n")
    sources = {source.filename: source.text}
    failed = 0
    for target in targets:
        info = target_info(target)
        check = check_targets.check_of(info)
        if check is None:
            out.write(f"  {target:<7} SKIPPED (no compile check for this target)\n")
            continue
        doubles = [tv for tv, t in bound.items() if t == "double"]
        if not info.double and doubles:
            # Not a bug in the kernel: the caller chose a type the target does not have.
            out.write(f"  {target:<7} SKIPPED ({info.title} has no double; "
                      f"{doubles[0]}=double runs on CUDA and OpenCL only)\n")
            continue
        try:
            rendered = kernel.rendered(target, {}, _ndim(kernel, target, ndim))
            detail = check(rendered, sources, kernel)
        except BackendUnavailableError as exc:
            out.write(f"  {target:<7} SKIPPED ({exc})\n")
        except NotLockstep as exc:
            # A documented limit of the work-item loops (docs/cpu.md): CPU() runs the
            # kernel on its OpenCL device instead, as a launch does.
            out.write(f"  {target:<7} SKIPPED ({_first_line(exc)}: CPU() runs it on its "
                      f"OpenCL device, checked on the opencl line)\n")
        except TargetRefusal as exc:
            if check is not check_targets.check_c or not _renders(kernel, CANONICAL_TARGET,
                                                                   ndim):
                failed += 1
                out.write(f"  {target:<7} FAILED\n{_indent(str(exc))}\n")
                continue
            # OpenCL-only code (get_global_id): CPU() runs it on its OpenCL device.
            out.write(f"  {target:<7} SKIPPED (the C++ rendering is refused: CPU() runs it "
                      f"on its OpenCL device, checked on the opencl line)\n")
        except PortakernError as exc:
            failed += 1
            out.write(f"  {target:<7} FAILED\n{_indent(str(exc))}\n")
        else:
            out.write(f"  {target:<7} OK      {detail}\n")
    return failed


def _renders_elsewhere(kernel: Any, targets: list[str], ndim: int | None) -> bool:
    """Whether one of ``targets`` other than the canonical one renders ``kernel``."""
    return any(_renders(kernel, t, ndim) for t in targets if t != CANONICAL_TARGET)


def _renders(kernel: Any, target: str, ndim: int | None) -> bool:
    try:
        kernel.rendered(target, {}, _ndim(kernel, target, ndim))
    except PortakernError:
        return False
    return True


def _first_line(exc: Exception) -> str:
    return next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)



def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.rstrip().split("\n"))


# -- bench ----------------------------------------------------------------------------------

def cmd_bench(argv: list[str]) -> int:
    """``portakern bench ...``: hand ``argv`` over to :func:`portakern.bench.main`."""
    try:
        bench = importlib.import_module("portakern.bench")
    except ModuleNotFoundError as exc:
        if exc.name not in ("portakern.bench",):
            raise
        print("portakern bench: the benchmark module (portakern.bench) is not part of this "
              "installation", file=sys.stderr)
        return 2
    try:
        result = bench.main(list(argv))
    except PortakernError as exc:
        print(f"portakern bench: error: {exc}", file=sys.stderr)
        return 1
    return int(result or 0)
