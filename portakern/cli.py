"""The ``portakern`` command line: ``info``, ``render``, ``check``, ``demo``, ``bench``,
``cache``.

``portakern`` (the console script) and ``python -m portakern`` both call
:func:`main`. Errors that portakern raises on purpose (:class:`PortakernError`)
print their message, which names the user's file and line, and exit with status
1; a bad command line exits with status 2, as argparse does.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.metadata
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from .errors import BackendUnavailableError, KernelSyntaxError, PortakernError
from .targets import CANONICAL_TARGET, builtin_targets, target_info

__all__ = ["main", "parse_define"]

_DEFAULT_TYPE = "float"


class _UsageError(Exception):
    """A command-line mistake found after parsing (exit status 2)."""


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
    except _UsageError as exc:
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
    from .version import __version__

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


# -- -D NAME=VALUE -----------------------------------------------------------------------

def parse_define(text: str) -> tuple[str, Any]:
    """Parse ``NAME=VALUE`` from ``-D``: an int, a float, true/false, or a type name.

    NumPy dtype names (``float32``, ``int64``) are accepted for types and turned
    into the language's names (``float``, ``long``).
    """
    from .types import KNOWN_TYPES, type_name_of

    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name.isidentifier() or not value:
        raise argparse.ArgumentTypeError(
            f"expected NAME=VALUE (e.g. TILE=16 or T=double), got {text!r}")
    lowered = value.lower()
    if lowered in ("true", "false"):
        return name, lowered == "true"
    for convert in (int, lambda v: int(v, 0), float):
        try:
            return name, convert(value)
        except ValueError:
            pass
    if value in KNOWN_TYPES:
        return name, value
    try:
        as_language = type_name_of(np.dtype(value))
    except (TypeError, ValueError, SyntaxError):  # NumPy's dtype parser raises all three
        as_language = None
    if as_language is not None:
        return name, as_language
    known = ", ".join(sorted(KNOWN_TYPES))
    raise argparse.ArgumentTypeError(
        f"-D {name}={value}: a value is an int, a float, true/false or a type name ({known})")


# -- loading a source ---------------------------------------------------------------------

@dataclass
class _Source:
    filename: str
    text: str
    constants: dict[str, Any]
    kernel_names: list[str]
    default_kernel: str | None = None


def _load_source(args: argparse.Namespace) -> _Source:
    from .examples import EXAMPLES, EXAMPLES_DIR

    arg = args.file
    path = Path(arg)
    constants: dict[str, Any] = {}
    default_kernel = None
    if not path.is_file():
        # A bare name may be a shipped example; anything written as a path (a .pk
        # file, a folder) must exist, or a typo would silently render an example.
        looks_like_path = arg.endswith(".pk") or "/" in arg or "\\" in arg
        if looks_like_path:
            raise _UsageError(
                f"no such file: {arg}" + (f" (to render the shipped example, write its "
                                          f"name: {path.stem})" if path.stem in EXAMPLES
                                          else ""))
        if arg in EXAMPLES:
            ex = EXAMPLES[arg]
            path, default_kernel = ex.path, ex.kernel
        elif (EXAMPLES_DIR / f"{arg}.pk").is_file():
            path = EXAMPLES_DIR / f"{arg}.pk"
        else:
            raise _UsageError(
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
        raise _UsageError(f"cannot read {arg}: {exc}") from exc
    # Errors and #line directives name the file as the user wrote it.
    source = _Source(str(path), text, constants, [], default_kernel)
    source.kernel_names = _kernel_names(source, args.kernel)
    return source


def _kernel_names(source: _Source, wanted: str | None) -> list[str]:
    from .language import parse
    from .render import KernelTemplate, check_constants

    try:
        constants = check_constants(source.constants)
        smap = KernelTemplate(source.text, source.filename).render(CANONICAL_TARGET, constants)
    except KernelSyntaxError as exc:
        raise _with_define_hint(exc) from None
    module = parse(smap)
    names = [k.name for k in module.kernels]
    if wanted is not None:
        if wanted not in names:
            raise _UsageError(
                f"{source.filename} has no @kernel named {wanted!r}; it defines "
                f"{', '.join(names)}")
        return [wanted]
    if source.default_kernel is not None:
        return [source.default_kernel]
    return names


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
    from .kernels import Kernel

    kernel = Kernel(source.text, name, filename=source.filename, **source.constants)
    defaults = {tv: _DEFAULT_TYPE for tv in kernel.type_vars}
    if defaults:
        kernel = kernel.specialize(**defaults)
    bound = {tv: str(kernel.constants[tv]) for tv in _type_vars(kernel)}
    return kernel, bound


def _type_vars(kernel: Any) -> tuple[str, ...]:
    from .types import KNOWN_TYPES

    return tuple(dict.fromkeys(p.type for p in kernel.params if p.type not in KNOWN_TYPES))


def _ndim(kernel: Any, target: str, wanted: int | None) -> int:
    from .lower import infer_ndim

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
    from .render import available_targets

    if args.target not in available_targets():
        raise _UsageError(f"unknown target {args.target!r}; use one of "
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
    from .render import available_targets

    targets = args.targets or list(builtin_targets())
    unknown = [t for t in targets if t not in available_targets()]
    if unknown:
        raise _UsageError(f"unknown target {unknown[0]!r}; use one of "
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
        # reported once, before any compiler runs.
        kernel.rendered(targets[0], {}, _ndim(kernel, targets[0], ndim))
    except PortakernError as exc:
        if isinstance(exc, KernelSyntaxError):
            exc = _with_define_hint(exc)
        out.write(f"{source.filename}: kernel {name}: FAILED before any compiler ran\n"
                  f"{_indent(str(exc))}\n")
        return 1
    label = f" ({_describe_bindings(bound)})" if bound else ""
    out.write(f"{source.filename}: kernel {name}{label}\n")
    sources = {source.filename: source.text}
    failed = 0
    for target in targets:
        info = target_info(target)
        if info.checker is None:
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
            detail = _checker(info.checker)(rendered, sources, kernel)
        except BackendUnavailableError as exc:
            out.write(f"  {target:<7} SKIPPED ({exc})\n")
        except PortakernError as exc:
            failed += 1
            out.write(f"  {target:<7} FAILED\n{_indent(str(exc))}\n")
        else:
            out.write(f"  {target:<7} OK      {detail}\n")
    return failed


def _checker(path: str) -> Callable[[Any, dict[str, str], Any], str]:
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.rstrip().split("\n"))


# -- info -----------------------------------------------------------------------------------

_VERSIONS = ("numpy", "jinja2", "pyopencl", "pocl-binary-distribution", "platformdirs",
             "cupy", "mlx")


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    """Top-level module -> distributions; one scan of the installed packages (~65 ms)."""
    return importlib.metadata.packages_distributions()


def _version(module: str) -> str | None:
    """The installed version of a package, read from metadata (nothing is imported)."""
    dists = _distributions().get(module.replace("-", "_"))
    candidates = [*(dists or []), module]
    if module == "cupy":
        # CuPy's wheels are named for their CUDA version.
        candidates += ["cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x"]
    for dist in candidates:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _backend_status(name: str) -> tuple[bool, str]:
    from . import registry

    status = registry.backend_status(name)
    return bool(status), status.reason


def _opencl_devices() -> list[str]:
    try:
        import pyopencl as cl

        lines = []
        for p in cl.get_platforms():
            for d in p.get_devices():
                kind = "/".join(k for k in ("CPU", "GPU", "ACCELERATOR")
                                if d.type & getattr(cl.device_type, k)) or "other"
                lines.append(f"{p.name.strip()} {p.version.strip()}: {d.name.strip()} "
                             f"[{kind}, {d.max_compute_units} units, "
                             f"{d.global_mem_size // 2**20} MiB]")
        return lines
    except Exception as exc:  # noqa: BLE001 - the ICD loader fails in many ways
        return [f"(cannot list OpenCL devices: {exc})"]


def _device_label(name: str) -> str:
    from . import registry

    try:
        text = registry.backend_class(name).describe()
    except Exception:  # noqa: BLE001 - a label must not break info
        return ""
    return f" ({text})" if text else ""


def cmd_info(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``portakern info``: backends, devices, versions, and what to install."""
    out = out or sys.stdout
    from .registry import registered_backends
    from .version import __version__

    out.write(f"portakern {__version__} ({Path(__file__).resolve().parent})\n")
    out.write(f"python {platform.python_version()} on {platform.system()} "
              f"{platform.machine()}\n\n")
    out.write("versions:\n")
    for module in _VERSIONS:
        version = _version(module)
        out.write(f"  {module:<26} {version or 'not installed'}\n")
    out.write("\nbackends:\n")
    records = registered_backends()
    for name in records:
        ok, reason = _backend_status(name)
        if ok:
            out.write(f"  {name:<8} available{_device_label(name)}\n")
        else:
            hint = records[name]["install_hint"]
            out.write(f"  {name:<8} unavailable: {reason}\n")
            # Say how to install it, unless the reason already does.
            if hint and hint.split(" (")[0] not in reason:
                out.write(f"  {'':<8} install: {hint}\n")
    out.write("\nOpenCL devices:\n")
    for line in _opencl_devices():
        out.write(f"  {line}\n")
    out.write("\ncompile checks (portakern check):\n")
    from .checks.cuda import cuda_check_available
    from .checks.metal import metal_check_available

    for target, (ok, detail) in (("cuda", cuda_check_available()),
                                 ("metal", metal_check_available())):
        out.write(f"  {target:<8} {'yes' if ok else 'no'}: {detail}\n")
    out.write("  opencl   built on the CPU OpenCL device when it is available\n")
    out.write("  c        built by the CPU native path's C++ compiler when it is available\n")
    return 0


# -- demo -----------------------------------------------------------------------------------

_SMALL = {"vector_add": 10_000, "saxpy": 10_000, "polynomial": 10_000, "translate": (61, 97),
          "matmul": (45, 37, 29), "matmul_tiled": (45, 37, 29), "reduce_sum": 10_000,
          "reduce_max": 10_000, "brightest_pixel": (61, 97), "histogram": 10_000,
          "rgb_to_gray": (61, 97), "negative": (61, 97), "darken": (61, 97),
          "particle_push": 1000}


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return "none"
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"  # pragma: no cover


def cmd_cache(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``portakern cache [info|clear]``."""
    import warnings

    from . import cache

    out = out or sys.stdout
    store = cache.DiskCache(cache.cache_dir() if cache.cache_enabled() else None)
    with warnings.catch_warnings():
        # The status line says the same as a CacheWarning would.
        warnings.simplefilter("ignore", cache.CacheWarning)
        if args.action == "clear":
            if store.directory is None:
                print("the disk cache is off (PORTAKERN_CACHE=0): nothing to clear", file=out)
                return 0
            removed = store.clear()
            print(f"removed {removed} file{'' if removed == 1 else 's'} from "
                  f"{store.directory}", file=out)
            return 0
        info = store.info()
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(info["kinds"].items())) or "none"
    print(f"folder:  {info['directory'] or '-'}", file=out)
    print(f"status:  {info['status']}", file=out)
    print(f"size:    {_fmt_bytes(info['size'])} of {_fmt_bytes(info['limit'])} "
          f"(PORTAKERN_CACHE_SIZE)", file=out)
    print(f"entries: {info['entries']} ({kinds})", file=out)
    return 0


def _fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def _run_once(ex: Any, backend: Any, args: tuple) -> dict[str, Any]:
    if ex.has_pipeline:
        return ex.run(backend, args)
    ex.launch(backend, args)
    return ex.outputs(args, backend)


def cmd_demo(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``portakern demo``: every example on ``CPU()``, checked against NumPy."""
    out = out or sys.stdout
    from .backends.opencl import CPU
    from .examples import EXAMPLES, copy_args, get

    # Progress goes to stderr as it happens (the first run probes the compiler and builds
    # every kernel, seconds of silence otherwise); the table goes to `out`.
    def progress(text: str) -> None:
        sys.stderr.write(f"portakern demo: {text}\n")
        sys.stderr.flush()

    progress("finding the CPU backend (probes the C++ compiler and OpenMP on first use)")
    status = CPU.available()
    if not status:
        raise BackendUnavailableError(f"the demo runs on the CPU backend: {status.reason}")
    backend = CPU()
    names = [n for group in args.only for n in group.split(",") if n] if args.only \
        else list(EXAMPLES)
    try:
        chosen = [get(n) for n in names]
    except KeyError as exc:
        raise _UsageError(exc.args[0]) from None
    repeat = max(1, args.repeats)
    # start=False: kernels the native path runs never need the OpenCL runtime.
    out.write(f"portakern demo on {backend!r} ({CPU.describe(start=False)})\n")
    header = f"{'kernel':<16} {'shape':<16} {'dtype':<8} {'time':>10} {'NumPy':>10} " \
             f"{'max error':>10}  result"
    out.write(header + "\n" + "-" * len(header) + "\n")
    rng = np.random.default_rng(2024)
    failures = 0
    start = time.perf_counter()
    for k, ex in enumerate(chosen, 1):
        progress(f"[{k}/{len(chosen)}] {ex.name}: building (cached after the first run) "
                 f"and timing")
        size = _SMALL.get(ex.name, 1000) if args.small else None
        base = ex.make_args(size, rng)
        numpy_best = kernel_best = float("inf")
        for _ in range(repeat):
            trial = copy_args(base)
            t0 = time.perf_counter()
            expected = ex.run_reference(trial) if ex.has_pipeline else ex.reference(trial)
            numpy_best = min(numpy_best, time.perf_counter() - t0)
        # The first launch renders and compiles; it is not timed.
        _run_once(ex, backend, copy_args(base))
        got: dict[str, Any] = {}
        for _ in range(repeat):
            trial = copy_args(base)
            t0 = time.perf_counter()
            got = _run_once(ex, backend, trial)
            kernel_best = min(kernel_best, time.perf_counter() - t0)
        ok = ex.agrees(got, expected)
        failures += not ok
        shape = _shape_label(ex, base)
        dtype = str(_main_dtype(base))
        out.write(f"{ex.name:<16} {shape:<16} {dtype:<8} {_fmt_time(kernel_best):>10} "
                  f"{_fmt_time(numpy_best):>10} {ex.max_error(got, expected):>10.3g}  "
                  f"{'OK' if ok else 'FAIL'}\n")
    elapsed = time.perf_counter() - start
    out.write(f"{len(chosen) - failures}/{len(chosen)} examples agree with NumPy "
              f"({elapsed:.1f} s; times are the best of {repeat}, after a compiling run)\n")
    return 1 if failures else 0


def _shape_label(ex: Any, args: tuple) -> str:
    if ex.name.startswith("matmul"):
        _, a, b, _k = args
        return f"{a.shape[0]}x{a.shape[1]}x{b.shape[1]}"
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    biggest = max(arrays, key=lambda a: a.size)
    return "x".join(str(s) for s in biggest.shape)


def _main_dtype(args: tuple) -> np.dtype:
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return max(arrays, key=lambda a: a.size).dtype


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
