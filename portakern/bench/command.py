"""``portakern bench [options]``: the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .report import format_table, load_pyplot, write_json, write_plot
from .suite import run
from .workloads import WORKLOADS


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="portakern bench",
        description="Time the example kernels on every available backend against NumPy, a "
                    "hand-written PyOpenCL launch and (on CUDA) CuPy; ratio = portakern "
                    "time / baseline time.")
    p.add_argument("--backend", metavar="NAME", help="only this backend (CPU, OpenCL, CUDA)")
    p.add_argument("--quick", action="store_true",
                   help="a smoke test: tiny sizes, one sample per row, no new-process rows")
    p.add_argument("--only", metavar="NAMES", default="",
                   help="comma-separated workloads: " + ", ".join(w.name for w in WORKLOADS))
    p.add_argument("--repeats", type=int, default=7, metavar="N",
                   help="timed runs per row, at most (default 7; fewer for slow rows)")
    p.add_argument("--no-startup", action="store_true",
                   help="skip the new-process measurements (import, ready kernel)")
    p.add_argument("--json", metavar="FILE", help="write one record per row")
    p.add_argument("--plot", metavar="FILE.png", help="draw the ratios (needs matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--kernel", metavar="FILE.pk",
                   help="time the kernels of your own .pk file instead (see -D, --ndrange)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="with --kernel: a Jinja constant, a type variable (T=double) or a "
                        "scalar parameter's value (n=1000); repeatable")
    p.add_argument("--ndrange", metavar="N[xM[xK]]",
                   help="with --kernel: the launch size (default 4194304, 2048x2048 or "
                        "128x128x256 by the kernel's rank)")
    p.add_argument("--dask", action="store_true",
                   help="only the portakern.dask rows: a LocalCluster of worker processes, "
                        "against plain dask.array (needs portakern[dask])")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``portakern bench [options]``; returns the exit status."""
    opts = make_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if opts.repeats < 1:
        print("portakern bench: --repeats must be >= 1", file=sys.stderr)
        return 2
    only = [s.strip() for s in opts.only.split(",") if s.strip()]
    if opts.plot:
        try:
            load_pyplot()  # before the run, not after minutes of measuring
        except ImportError as exc:
            print(f"portakern bench: {exc}", file=sys.stderr)
            return 1
    if opts.dask:
        return _main_dask(opts)
    if opts.kernel:
        return _main_user(opts)
    try:
        rows, reasons = run(backend=opts.backend, quick=opts.quick, only=only,
                            repeats=opts.repeats, startup=not opts.no_startup,
                            progress=not opts.no_progress)
    except ValueError as exc:
        print(f"portakern bench: {exc}", file=sys.stderr)
        return 2
    print(format_table(rows))
    for name, why in reasons.items():
        print(f"skipped {name}: {why}")
    write_json(rows, opts.json)
    if opts.plot:
        try:
            write_plot(rows, opts.plot)
        except ImportError as exc:
            print(f"portakern bench: {exc}", file=sys.stderr)
            return 1
    if not rows:
        print("portakern bench: no backend to run on", file=sys.stderr)
        return 1
    return 0


def _main_user(opts: argparse.Namespace) -> int:
    """``portakern bench --kernel FILE``: see :mod:`portakern.bench.user`."""
    from ..errors import PortakernError
    from ..registry import backend_by_name
    from ..source.defines import parse_define
    from .user import parse_ndrange, run_file

    try:
        defines = dict(parse_define(d) for d in opts.defines)
        nd = parse_ndrange(opts.ndrange) if opts.ndrange else None
        backend = backend_by_name(opts.backend or "CPU")
        rows = run_file(opts.kernel, defines, nd, backend, repeats=opts.repeats)
    except (OSError, ValueError, argparse.ArgumentTypeError, PortakernError) as exc:
        print(f"portakern bench --kernel: {exc}", file=sys.stderr)
        return 2
    print(format_table(rows))
    write_json(rows, opts.json)
    return 0 if all(r.ok for r in rows) else 1


def _main_dask(opts: argparse.Namespace) -> int:
    """``portakern bench --dask``: see :mod:`portakern.bench.dask_rows`."""
    try:
        from . import dask_rows

        rows = dask_rows.run(quick=opts.quick, repeats=opts.repeats)
    except ImportError as exc:
        print(f"portakern bench --dask: {exc}; pip install 'portakern[dask]'", file=sys.stderr)
        return 1
    print(format_table(rows))
    write_json(rows, opts.json)
    return 0 if all(r.ok for r in rows) else 1
