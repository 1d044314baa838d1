"""``portakern bench``: DESIGN section 4 measured, as ratios against baselines in one run.

Every row times a portakern launch and one baseline on the same inputs, in
alternation (so drift in the machine's load hits both alike), and reports the
median of the repeats and their ratio, ``seconds / baseline_seconds``: below 1
portakern is faster. The baselines are

* ``numpy``: the NumPy expression a user would write for the same result;
* ``pyopencl``: a hand-written PyOpenCL launch of the very kernel portakern
  built (arguments set once, ``enqueue_nd_range_kernel`` then a wait), which
  isolates what portakern's checks and bookkeeping cost;
* ``cupy``: CuPy's ``ElementwiseKernel``, ``RawKernel`` and ``cupy.matmul`` on
  CUDA;
* peers on ``CPU()`` (:data:`PEERS`): Numba ``prange`` loops and numexpr, each only
  when installed, and a C++/OpenMP loop with per-thread bins for the histogram; the
  fastest baseline of a workload is marked ``(fastest)``;
* ``target``: a fixed number from the contract (``get_backend`` under 1 us, a
  ready kernel in a new process under 50 ms).

Each row is checked against NumPy before it is timed (the ``ok`` column). The
sizes are those of the issue, except the tiled matmul (1024 instead of 2048:
PoCL runs it at ~1 GFLOP/s, so 2048 would take minutes); ``--quick`` is a smoke
test (tiny sizes, one sample per row, no new-process rows). See ``docs/performance.md``
for the figures and ``--quick``'s measured time.

The package's modules, bottom up: :mod:`.rows` (one row), :mod:`.workloads` (what is
timed, with its NumPy model), :mod:`.measure` (alternating samples, a prepared case),
:mod:`.baselines` (the hand-written launches and the peers), :mod:`.suite` (the rows
of a run), :mod:`.debug_rows`, :mod:`.user` (``--kernel``), :mod:`.dask_rows`
(``--dask``), :mod:`.report` (table, plot, JSON) and :mod:`.command` (the command line).
"""

from __future__ import annotations

from .command import main
from .report import format_table, machine_label, write_plot
from .rows import Row
from .suite import bench_backend, bench_busy, bench_get_backend, bench_startup, run
from .workloads import WORKLOADS, Workload

__all__ = ["Row", "Workload", "WORKLOADS", "main", "run", "format_table", "machine_label",
           "write_plot", "bench_backend", "bench_busy", "bench_get_backend", "bench_startup"]
