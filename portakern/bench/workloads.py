"""The workloads ``portakern bench`` times: each example kernel with its NumPy model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .rows import F32


@dataclass(frozen=True)
class Workload:
    """A benchmark problem: an example kernel (or an inline one) and its NumPy twin.

    Parameters
    ----------
    name : str
        Row name.
    example : str
        The catalog entry (:mod:`portakern.examples`) whose kernel, inputs and
        launch shape are used; with ``source``, the ``@kernel`` name instead.
    full, quick : int or tuple
        Problem sizes (in the example's ``size`` convention).
    numpy : callable
        ``numpy(args)``: the same result with NumPy, written into ``args`` in place
        (for a pipeline: returns the answer).
    kind : str
        ``"single"`` (one elementwise operation: portakern must not be slower),
        ``"fused"`` (several: portakern must be 2x faster) or ``""``.
    bytes, flops : callable, optional
        Memory traffic and floating-point work of one run, for GB/s and GFLOP/s.
    constants : dict
        Jinja constants for the kernel (``NSTEPS``).
    source : str, optional
        An inline kernel source (for operations no example covers).
    pipeline : bool
        Run the example's whole multi-launch pipeline (``Example.run``).
    cupy : str, optional
        The body of a ``cupy.ElementwiseKernel`` with the same result, or
        ``"matmul"`` for ``cupy.matmul``.
    patch : (str, str), optional
        Replace this text of the example's source by that one: a variant that
        shows the effect of a source change in the same run.
    make_args : callable, optional
        ``make_args(size, rng)``: the inputs of an inline ``source`` (default: an
        output of zeros and a uniform input, both float32); the ndrange is the
        first argument's shape.
    limit : float, optional
        The contract's bound on the ratio to NumPy, where ``kind`` does not give one.
    peers : tuple of str
        Other baselines (:data:`PEERS`): Numba, numexpr, a C++ loop. A peer whose
        package is not installed is left out of the run.
    blocked : bool
        Time the kernel and NumPy in blocks of their own (:func:`.measure.blocked`), not
        in alternating samples: for a NumPy call that leaves threads spinning after it
        returns (OpenBLAS's ``np.matmul``), which would take the cores from the kernel.
    """

    name: str
    example: str
    full: Any
    quick: Any
    numpy: Callable[[tuple], Any]
    kind: str = ""
    bytes: Callable[[tuple], float] | None = None
    flops: Callable[[tuple], float] | None = None
    constants: dict = field(default_factory=dict)
    source: str | None = None
    pipeline: bool = False
    cupy: str | None = None
    patch: tuple[str, str] | None = None
    make_args: Callable[[Any, np.random.Generator], tuple] | None = None
    limit: float | None = None
    peers: tuple[str, ...] = ()
    blocked: bool = False


def _nbytes(*which: int) -> Callable[[tuple], float]:
    return lambda args: float(sum(args[i].nbytes for i in which))


def _numpy_add(args: tuple) -> None:
    np.add(args[1], args[2], out=args[0])


def _numpy_saxpy(args: tuple) -> None:
    y, x, a = args
    y += a * x


def _numpy_polynomial(args: tuple) -> None:
    y, x, a, b, c = args
    y[...] = a * x * x + b * x + c


def _numpy_sin(args: tuple) -> None:
    np.sin(args[1], out=args[0])


def _numpy_exp(args: tuple) -> None:
    np.exp(args[1], out=args[0])


def _numpy_gray(args: tuple) -> None:
    gray, rgb = args
    r, g, b = (rgb[c].astype(np.uint32) for c in range(3))
    gray[...] = (77 * r + 150 * g + 29 * b + 128) >> 8


def _numpy_negative(args: tuple) -> None:
    np.subtract(255, args[1], out=args[0])


def _numpy_darken(args: tuple) -> None:
    out, img, factor = args
    out[...] = np.minimum(img * factor, np.float32(255))


def _numpy_argmax(args: tuple) -> dict:
    x = args[2]
    pos = int(np.argmax(x))
    return {"value": x.reshape(-1)[pos],
            "index": np.array(np.unravel_index(pos, x.shape), np.int64)}


def _numpy_histogram(args: tuple) -> None:
    counts, data = args
    counts += np.bincount(data.reshape(-1), minlength=counts.size).astype(np.uint32)


def _numpy_bitonic(args: tuple) -> None:
    # examples/bitonic.pk sorts each segment of 2 * GROUP = 512 keys.
    keys = args[0]
    whole = keys.size - keys.size % 512
    keys[:whole].reshape(-1, 512).sort(axis=1)
    keys[whole:].sort()


def _numpy_matmul(args: tuple) -> None:
    np.matmul(args[1], args[2], out=args[0])


def _numpy_particles(args: tuple, nsteps: int) -> None:
    x, v, dt, k, d = args
    for _ in range(nsteps):
        v += dt * (-k * x - d * v)
        x += dt * v


_NSTEPS = 200


def _numpy_particles200(args: tuple) -> None:
    _numpy_particles(args, _NSTEPS)


def _numpy_particles4(args: tuple) -> None:
    # One float4 per particle (examples/particles4.pk): x, y, z move; w is the mass.
    pos, vel, dt, k, d = args
    x, v, kk = pos[:, :3].T, vel[:, :3].T, k / pos[:, 3]
    x2, v2 = x.copy(), v.copy()
    _numpy_particles((x2, v2, dt, kk, d), _NSTEPS)
    pos[:, :3], vel[:, :3] = x2.T, v2.T


def _numpy_sum(args: tuple) -> dict:
    return {"result": args[1].sum(dtype=args[1].dtype)}


def _numpy_max(args: tuple) -> dict:
    return {"result": args[1].max()}


#: One Jacobi sweep of a 2D grid: each interior point becomes the mean of its four
#: neighbours, the boundary is copied.
_JACOBI = """@kernel void jacobi(T* out, const T* u) {
    auto [i, j] = @index(Global, NTuple);
    const long h = @ndrange(0);
    const long w = @ndrange(1);
    const long c = i * w + j;
    if (i > 0 && i < h - 1 && j > 0 && j < w - 1) {
        out[c] = (T)0.25 * (u[c - w] + u[c + w] + u[c - 1] + u[c + 1]);
    } else {
        out[c] = u[c];
    }
}
"""


def _jacobi_args(size: Any, rng: np.random.Generator) -> tuple:
    u = rng.uniform(0, 1, size).astype(F32)
    return np.zeros_like(u), u


def _numpy_jacobi(args: tuple) -> None:
    out, u = args
    out[1:-1, 1:-1] = np.float32(0.25) * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                          + u[1:-1, 2:])
    jacobi_edges(out, u)


def jacobi_edges(out: np.ndarray, u: np.ndarray) -> None:
    out[0], out[-1], out[:, 0], out[:, -1] = u[0], u[-1], u[:, 0], u[:, -1]


_UNARY = """@kernel void {name}(T* y, const T* x) {{
    const long i = @index(Global, Linear);
    y[i] = {expr};
}}
"""


#: What the bench runs, in order. Sizes follow the issue (10^7 elements, 4000x4000
#: images, 10^6 particles with NSTEPS=200), except the tiled matmul (1024).
WORKLOADS: tuple[Workload, ...] = (
    Workload("vector_add", "vector_add", 10**7, 10**4, _numpy_add, "single",
             bytes=_nbytes(0, 1, 2), flops=lambda a: a[0].size, cupy="c = a + b"),
    Workload("negative", "negative", (4000, 4000), (64, 64), _numpy_negative, "single",
             bytes=_nbytes(0, 1), cupy="out = 255 - img"),
    Workload("sin", "pk_sin", 10**7, 10**4, _numpy_sin, "single", bytes=_nbytes(0, 1),
             source=_UNARY.format(name="pk_sin", expr="sin(x[i])"), cupy="y = sin(x)"),
    Workload("exp", "pk_exp", 10**7, 10**4, _numpy_exp, "single", bytes=_nbytes(0, 1),
             source=_UNARY.format(name="pk_exp", expr="exp(x[i])"), cupy="y = exp(x)"),
    Workload("saxpy", "saxpy", 10**7, 10**4, _numpy_saxpy, "fused", bytes=_nbytes(0, 1, 0),
             flops=lambda a: 2 * a[0].size, cupy="y = a * x + y"),
    Workload("polynomial", "polynomial", 10**7, 10**4, _numpy_polynomial, "fused",
             bytes=_nbytes(0, 1), flops=lambda a: 5 * a[0].size,
             cupy="y = a * x * x + b * x + c"),
    Workload("rgb_to_gray", "rgb_to_gray", 4000, 64, _numpy_gray, "fused",
             bytes=_nbytes(0, 1)),
    Workload("darken", "darken", (4000, 4000), (64, 64), _numpy_darken, "fused",
             bytes=_nbytes(0, 1)),
    Workload("brightest_pixel", "brightest_pixel", (4000, 4000), (64, 64), _numpy_argmax,
             bytes=_nbytes(2), pipeline=True),
    Workload("histogram", "histogram", (4000, 4000), (64, 64), _numpy_histogram,
             bytes=_nbytes(1), peers=("cpp_histogram", "numba_histogram")),
    # A helper taking references (issue 14): a bitonic sort of 512-key segments.
    Workload("bitonic_sort", "bitonic_sort", 2**22, 2**12, _numpy_bitonic,
             bytes=_nbytes(0, 0)),
    # DESIGN section 4 (2026-12): a workgroup reduction within 1x NumPy's sum. The
    # example's partial sums, reduced again until one value is left.
    Workload("sum", "reduce_sum", 10**7, 10**4, _numpy_sum, bytes=_nbytes(1), pipeline=True,
             limit=1.0, peers=("numba_sum", "numexpr_sum")),
    # DESIGN section 4 names max beside sum: the example's reduce_max, the same pipeline.
    Workload("max", "reduce_max", 10**7, 10**4, _numpy_max, bytes=_nbytes(1), pipeline=True,
             limit=1.0),
    # The same sum with warp shuffles (@shuffle_down, @subgroupreduce).
    Workload("warp_sum", "warp_reduce", 10**7, 10**4, _numpy_sum, bytes=_nbytes(1),
             pipeline=True),
    Workload("jacobi", "jacobi", (4000, 4000), (64, 64), _numpy_jacobi, "fused",
             bytes=_nbytes(0, 1), flops=lambda a: 4.0 * a[0].size, source=_JACOBI,
             make_args=_jacobi_args, peers=("numba_jacobi", "numexpr_jacobi")),
    # Timed in blocks (blocked=True): after each np.matmul OpenBLAS's helper thread spins
    # for about 0.1 s, and a kernel sampled right after one shared the 2 cores with it
    # (15-25% of OpenBLAS alternated, 32-37% back to back; docs/performance.md).
    Workload("matmul_tiled", "matmul_tiled", 1024, 64, _numpy_matmul,
             flops=lambda a: 2.0 * a[1].shape[0] * a[1].shape[1] * a[2].shape[1],
             cupy="matmul", blocked=True),
    # The same example with 32 x 32 tiles (1024 work-items a group, the most CUDA and
    # Metal allow; some OpenCL GPUs allow 256, hence not the example's default): each
    # tile element loaded feeds twice the FMAs (docs/performance.md).
    Workload("matmul_tiled32", "matmul_tiled", 1024, 64, _numpy_matmul,
             flops=lambda a: 2.0 * a[1].shape[0] * a[1].shape[1] * a[2].shape[1],
             constants={"TILE": 32}, cupy="matmul", blocked=True),
    Workload("particle_push", "particle_push", 10**6, 10**3, _numpy_particles200, "fused",
             flops=lambda a: 21.0 * _NSTEPS * a[0].shape[1],
             constants={"NSTEPS": _NSTEPS}),
    # The same push with one float4 per particle (vector types, issue 14).
    Workload("particles4", "particles4", 10**6, 10**3, _numpy_particles4, "fused",
             flops=lambda a: 21.0 * _NSTEPS * a[0].shape[0],
             constants={"NSTEPS": _NSTEPS}),
    # PoCL vectorises across work-items only when a work-item's body has no loop left
    # (LLVM vectorises innermost loops): the example unrolls its step loop; this row
    # runs it without the `#pragma unroll`, to show what the pragma is worth.
    Workload("particle_push_rolled", "particle_push", 10**6, 10**3, _numpy_particles200,
             "fused", flops=lambda a: 21.0 * _NSTEPS * a[0].shape[1],
             constants={"NSTEPS": _NSTEPS},
             patch=("    #pragma unroll\n", "")),
)
