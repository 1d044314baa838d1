"""One row of ``portakern bench``: a portakern time against one baseline."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The dtype of most benchmark inputs.
F32 = np.float32


@dataclass
class Row:
    """One measurement: portakern against one baseline (fields as in ``--json``)."""

    name: str
    backend: str
    seconds: float
    baseline: str
    baseline_seconds: float
    ratio: float
    size: str = ""
    gbps: float | None = None
    baseline_gbps: float | None = None
    gflops: float | None = None
    baseline_gflops: float | None = None
    target: str = ""
    meets: bool | None = None
    ok: bool | None = None
    note: str = ""
    #: The fastest of a workload's baselines (NumPy and its peers): the one to beat.
    best: bool | None = None
