"""The report of ``portakern bench``: the table, the plot and the JSON records."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from .rows import Row


def _fmt_time(s: float) -> str:
    if not math.isfinite(s):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a plain-text table (ratio = portakern time / baseline time)."""
    head = ("kernel", "backend", "size", "portakern", "baseline", "base time", "ratio",
            "GB/s", "GFLOP/s", "target", "ok")
    lines = [head]
    for r in rows:
        rate = "" if r.gbps is None else f"{r.gbps:.3g}"
        flops = "" if r.gflops is None else f"{r.gflops:.3g}"
        target = "" if not r.target else f"{r.target} {'met' if r.meets else 'MISSED'}"
        ok = "" if r.ok is None else ("yes" if r.ok else "WRONG")
        lines.append((r.name, r.backend, r.size, _fmt_time(r.seconds),
                      r.baseline + (" (fastest)" if r.best else ""),
                      _fmt_time(r.baseline_seconds),
                      "-" if not math.isfinite(r.ratio) else f"{r.ratio:.3g}", rate, flops,
                      target, ok))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    out = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"{r.name} on {r.backend}: {r.note}" for r in rows if r.note and r.ok is False]
    return "\n".join(out + notes)


def load_pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install 'portakern[plot]'") from None
    return plt


def machine_label() -> str:
    """One line naming the machine a run was measured on: CPU, cores, load, Python."""
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f
                        if ln.startswith("model name")), cpu)
    except OSError:
        pass
    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (f"{cpu}, {os.cpu_count()} cores{load}, Python {platform.python_version()}, "
            f"{platform.system()}")


def write_plot(rows: Sequence[Row], path: str) -> None:
    """A bar chart of the ratios (log scale), one bar per row; needs matplotlib."""
    plt = load_pyplot()
    shown = [r for r in rows if math.isfinite(r.ratio) and r.ratio > 0]
    fig, ax = plt.subplots(figsize=(10, 0.3 * len(shown) + 1.5))
    labels = [f"{r.name} [{r.backend}] vs {r.baseline}" for r in shown]
    colors = ["tab:green" if r.ratio <= 1 else "tab:red" for r in shown]
    ax.barh(range(len(shown)), [r.ratio for r in shown], color=colors)
    ax.set_yticks(range(len(shown)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("portakern time / baseline time (left of 1: portakern faster)")
    ax.set_title(f"portakern bench\n{machine_label()}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_json(rows: Sequence[Row], path: str | None) -> None:
    """``--json FILE``: one record per row (nothing without the option)."""
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump([jsonable(asdict(r)) for r in rows], f, indent=1)


def jsonable(d: dict) -> dict:
    # JSON has no NaN: a row that failed reports null times.
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in d.items()}
