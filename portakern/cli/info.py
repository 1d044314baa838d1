"""``portakern info`` and ``portakern cache``: what this machine has, and the disk cache."""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.metadata
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from ..targets import builtin_targets, target_info

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
    from .. import registry

    status = registry.backend_status(name)
    return bool(status), status.reason


def _opencl_devices() -> list[str]:
    try:
        import pyopencl as cl

        from ..backends.cl_devices import compiler_failure

        lines = []
        for p in cl.get_platforms():
            for d in p.get_devices():
                kind = "/".join(k for k in ("CPU", "GPU", "ACCELERATOR")
                                if d.type & getattr(cl.device_type, k)) or "other"
                lines.append(f"{p.name.strip()} {p.version.strip()}: {d.name.strip()} "
                             f"[{kind}, {d.max_compute_units} units, "
                             f"{d.global_mem_size // 2**20} MiB]")
                why = compiler_failure(cl, d)
                if why is not None:  # passed over by CPU() and OpenCL() (docs/cpu.md)
                    lines[-1] += f" (builds no kernel: {why})"
        return lines
    except Exception as exc:  # noqa: BLE001 - the ICD loader fails in many ways
        return [f"(cannot list OpenCL devices: {exc})"]


def _device_label(name: str) -> str:
    from .. import registry

    try:
        text = registry.backend_class(name).describe()
    except Exception:  # noqa: BLE001 - a label must not break info
        return ""
    return f" ({text})" if text else ""


def cmd_info(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``portakern info``: backends, devices, versions, and what to install."""
    out = out or sys.stdout
    from ..registry import registered_backends
    from ..version import __version__

    out.write(f"portakern {__version__} ({Path(__file__).resolve().parent.parent})\n")
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
    # Those that can tell whether they run here first, then how the others are built.
    from .check_targets import note_of, status_of

    statuses = [(target_info(t), status_of(target_info(t))) for t in builtin_targets()]
    for info, status in sorted(statuses, key=lambda pair: pair[1] is None):
        if status is not None:
            ok, detail = status
            out.write(f"  {info.name:<8} {'yes' if ok else 'no'}: {detail}\n")
        elif note_of(info):
            out.write(f"  {info.name:<8} {note_of(info)}\n")
    return 0


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

    from ..cache import store as cache

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
