"""Example kernels shipped with portakern, and a catalog that knows how to run them.

Each ``.pk`` file in this folder is a kernel source in the portakern language.
:data:`EXAMPLES` describes every example kernel: which file and ``@kernel`` it
is, its default Jinja constants, how to build NumPy inputs for a problem size,
the ndrange and workgroup size to launch with, and a NumPy reference that says
what the kernel must write. The demo (``portakern demo``), the tests, the
benchmark and the golden renderings all read this one table.

Typical use::

    import numpy as np
    from portakern import examples

    ex = examples.get("saxpy")
    args = ex.make_args(10**6, np.random.default_rng(0), dtype=np.float32)
    expected = ex.reference(args)          # before the launch: kernels write in place
    ex.launch(None, args)                  # backend resolved from the arrays (CPU here)
    for name, got in ex.outputs(args).items():
        np.testing.assert_allclose(got, expected[name], rtol=ex.rtol, atol=ex.atol)

Conventions, stable for the other users of this catalog:

* ``args`` is a tuple in the kernel's parameter order: arrays (C-contiguous
  NumPy arrays, output arrays already allocated and initialised) and NumPy
  scalars of the parameter's dtype.
* ``reference(args)`` computes, from ``args`` as they are *before* the launch,
  the expected final value of every array the kernel writes, keyed by
  parameter name. It never modifies ``args``.
* ``size`` is an int or a shape; what it means is in each example's
  ``size_doc`` (an int is always a sensible "problem size"). ``default_size``
  suits the demo, ``bench_size`` a benchmark.
* Kernels whose answer needs several launches (the reductions) also have
  :meth:`Example.run` / :meth:`Example.run_reference`, which return the final
  answer as a dict of NumPy values.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ..kernels import Kernel
from ..resolve import get_backend

__all__ = ["EXAMPLES", "EXAMPLES_DIR", "Example", "copy_args", "get", "names"]

#: The folder holding the ``.pk`` sources (inside the installed package).
EXAMPLES_DIR = Path(__file__).resolve().parent

Size = int | tuple[int, ...]
Args = tuple
Consts = Mapping[str, Any]

_F32, _F64, _I32, _U8 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.uint8))
_NUMERIC = (_F32, _F64, _I32)


@dataclass(frozen=True)
class Example:
    """One example kernel and everything needed to run and check it.

    Parameters
    ----------
    name : str
        Key in :data:`EXAMPLES`.
    description : str
        One line: what the kernel computes and which language features it shows.
    file : str
        The ``.pk`` file name, relative to :data:`EXAMPLES_DIR`.
    kernel : str
        The ``@kernel`` function's name in that file.
    size_doc : str
        What ``size`` means for :meth:`make_args`.
    shape_fn : callable
        ``shape_fn(size) -> tuple``: the normalised problem shape.
    args_fn : callable
        ``args_fn(shape, rng, dtype, constants) -> args``.
    ndrange_fn : callable
        ``ndrange_fn(args) -> tuple``: the ndrange for those arguments.
    reference_fn : callable
        ``reference_fn(args, constants) -> {param name: expected array}``.
    constants : mapping
        Default Jinja constants (``TILE``, ``GROUP``, ``NSTEPS`` ...).
    workgroupsize_fn : callable, optional
        ``workgroupsize_fn(constants) -> int | tuple``; None lets the backend choose.
    dtypes : tuple of numpy.dtype
        The dtypes :meth:`make_args` accepts; the first is the default.
    ndims : tuple of int
        The ndrange ranks the kernel supports.
    default_size, bench_size : int or tuple
        A demo-sized and a benchmark-sized problem.
    rtol, atol : float
        Tolerances for floating-point outputs; integer outputs must match exactly.
    run_fn, run_reference_fn : callable, optional
        The whole multi-launch pipeline (``run_fn(backend, args, constants, example)``)
        and its NumPy answer (``run_reference_fn(args, constants)``).
    """

    name: str
    description: str
    file: str
    kernel: str
    size_doc: str
    shape_fn: Callable[[Size], tuple[int, ...]]
    args_fn: Callable[[tuple[int, ...], np.random.Generator, np.dtype, Consts], Args]
    ndrange_fn: Callable[[Args], tuple[int, ...]]
    reference_fn: Callable[[Args, Consts], dict[str, np.ndarray]]
    constants: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    workgroupsize_fn: Callable[[Consts], Any] | None = None
    dtypes: tuple[np.dtype, ...] = (_F32,)
    ndims: tuple[int, ...] = (1,)
    default_size: Size = 1 << 20
    bench_size: Size = 1 << 24
    rtol: float = 1e-5
    atol: float = 1e-6
    run_fn: Callable[..., dict[str, Any]] | None = None
    run_reference_fn: Callable[[Args, Consts], dict[str, Any]] | None = None

    # -- the source ------------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The ``.pk`` file."""
        return EXAMPLES_DIR / self.file

    @property
    def source(self) -> str:
        """The text of the ``.pk`` file."""
        return self.path.read_text(encoding="utf-8")

    def merged_constants(self, **constants: Any) -> dict[str, Any]:
        """The default constants updated with ``constants``."""
        out = dict(self.constants)
        out.update(constants)
        return out

    def load(self, **constants: Any) -> Any:
        """The :class:`portakern.Kernel`, with the default constants (overridable).

        Kernels are cached per set of constants, so repeated calls reuse the
        rendered and compiled variants.
        """
        merged = self.merged_constants(**constants)
        key = (self.name, tuple(sorted((k, repr(v)) for k, v in merged.items())))
        hit = _LOADED.get(key)
        if hit is None:
            hit = _LOADED[key] = Kernel.from_file(self.path, self.kernel, **merged)
        return hit

    # -- inputs and launch ---------------------------------------------------------------
    def make_args(self, size: Size | None = None, rng: np.random.Generator | None = None,
                  dtype: Any = None, **constants: Any) -> Args:
        """Build NumPy arguments (inputs and initialised outputs) for a problem size.

        Parameters
        ----------
        size : int or tuple, optional
            The problem size, see :attr:`size_doc`; :attr:`default_size` if omitted.
        rng : numpy.random.Generator, optional
            Source of the random inputs; ``numpy.random.default_rng(0)`` if omitted.
        dtype : dtype-like, optional
            Element type for the type variable(s), one of :attr:`dtypes`.
        **constants
            Overrides of the default constants that shape the arguments
            (``GROUP`` sizes the reductions' partial-result arrays).
        """
        dt = self.dtypes[0] if dtype is None else np.dtype(dtype)
        if dt not in self.dtypes:
            allowed = ", ".join(str(d) for d in self.dtypes)
            raise ValueError(f"example {self.name!r} supports dtypes {allowed}, got {dt}")
        shape = self.shape_fn(self.default_size if size is None else size)
        if rng is None:
            rng = np.random.default_rng(0)
        return self.args_fn(shape, rng, dt, self.merged_constants(**constants))

    def ndrange(self, args: Args) -> tuple[int, ...]:
        """The ndrange to launch with for these arguments."""
        return self.ndrange_fn(args)

    def workgroupsize(self, **constants: Any) -> Any:
        """The workgroup size the kernel needs, or None to let the backend choose."""
        if self.workgroupsize_fn is None:
            return None
        return self.workgroupsize_fn(self.merged_constants(**constants))

    def launch(self, backend: Any, args: Args, **constants: Any) -> None:
        """Launch the kernel once on ``args`` (in place).

        ``backend`` None resolves it from the arrays (NumPy -> ``CPU()``);
        otherwise ``args`` must already be that backend's arrays (see
        :meth:`to_device`). GPU backends return before the kernel finishes.
        """
        kernel = self.load(**constants)
        wg = self.workgroupsize(**constants)
        nd = self.ndrange(args)
        if backend is None:
            kernel(*args, ndrange=nd, workgroupsize=wg)
        else:
            kernel(backend, wg)(*args, ndrange=nd)

    def written(self, args: Args) -> dict[str, Any]:
        """The arrays the kernel may write, by parameter name (no copy)."""
        params = self.load().params
        if len(args) != len(params):
            raise ValueError(f"example {self.name!r} takes {len(params)} arguments, "
                             f"got {len(args)}")
        return {p.name: a for p, a in zip(params, args, strict=True) if p.writable}

    def outputs(self, args: Args, backend: Any = None) -> dict[str, np.ndarray]:
        """Host copies of the written arrays (waits for ``backend`` first)."""
        if backend is not None:
            backend.synchronize()
        to_host = backend.to_host if backend is not None else np.array
        return {k: to_host(v) for k, v in self.written(args).items()}

    def to_device(self, args: Args, backend: Any) -> Args:
        """Copy the array arguments to ``backend``; scalars pass through."""
        return tuple(backend.to_device(a) if isinstance(a, np.ndarray) else a for a in args)

    # -- the expected answer -------------------------------------------------------------
    def reference(self, args: Args, **constants: Any) -> dict[str, np.ndarray]:
        """NumPy's answer: the final value of every written array, by parameter name.

        Computed from ``args`` as they are before the launch; ``args`` is not modified.
        """
        return self.reference_fn(args, self.merged_constants(**constants))

    def tolerance(self, dtype: Any) -> tuple[float, float]:
        """``(rtol, atol)`` for an output of ``dtype``: exact for integers."""
        if np.issubdtype(np.dtype(dtype), np.inexact):
            return self.rtol, self.atol
        return 0.0, 0.0

    def max_error(self, got: Mapping[str, Any], expected: Mapping[str, Any]) -> float:
        """Largest absolute difference over every expected output."""
        worst = 0.0
        for name, want in expected.items():
            want = np.asarray(want)
            have = np.asarray(got[name])
            if want.size:
                diff = np.abs(have.astype(np.float64) - want.astype(np.float64))
                worst = max(worst, float(diff.max()))
        return worst

    def agrees(self, got: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
        """Whether every output matches the reference within :meth:`tolerance`."""
        for name, want in expected.items():
            want = np.asarray(want)
            have = np.asarray(got[name])
            rtol, atol = self.tolerance(want.dtype)
            if have.shape != want.shape or not np.allclose(have, want, rtol=rtol, atol=atol):
                return False
        return True

    # -- multi-launch pipelines ------------------------------------------------------
    @property
    def has_pipeline(self) -> bool:
        """Whether :meth:`run` exists (the answer needs several launches)."""
        return self.run_fn is not None

    def run(self, backend: Any, args: Args, **constants: Any) -> dict[str, Any]:
        """Run the whole pipeline (several launches) and return the final answer.

        ``backend`` None means ``portakern.get_backend(*arrays)``. Only the
        examples with :attr:`has_pipeline` have one.
        """
        if self.run_fn is None:
            raise TypeError(f"example {self.name!r} is a single launch; use launch()")
        return self.run_fn(backend, args, self.merged_constants(**constants), self)

    def run_reference(self, args: Args, **constants: Any) -> dict[str, Any]:
        """NumPy's answer for :meth:`run`."""
        if self.run_reference_fn is None:
            raise TypeError(f"example {self.name!r} is a single launch; use reference()")
        return self.run_reference_fn(args, self.merged_constants(**constants))


_LOADED: dict[tuple, Any] = {}


def copy_args(args: Args) -> Args:
    """A copy of ``args`` with every NumPy array copied (scalars shared)."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else copy.copy(a) for a in args)


# -- helpers for building inputs ---------------------------------------------------------

def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype,
            low: float = -1.0, high: float = 1.0) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        # Small integers keep products and sums far from overflow.
        lo, hi = (0, 256) if dtype == _U8 else (-10, 10)
        return rng.integers(lo, hi, size=shape, dtype=dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def _scalar(dtype: np.dtype, value: float) -> np.generic:
    if np.issubdtype(dtype, np.integer):
        return dtype.type(int(round(value)) or 1)
    return dtype.type(value)


def _shape_any(size: Size) -> tuple[int, ...]:
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"size must be an int or a shape of 1-3 axes, got {size!r}")
    return shape


def _shape_2d(size: Size) -> tuple[int, ...]:
    shape = (size, size) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    if len(shape) != 2:
        raise ValueError(f"size must be an int n (an n x n image) or (H, W), got {size!r}")
    return shape


def _shape_matmul(size: Size) -> tuple[int, ...]:
    if isinstance(size, (int, np.integer)):
        return (int(size),) * 3
    shape = tuple(int(s) for s in size)
    if len(shape) != 3:
        raise ValueError(f"size must be an int n (n x n matrices) or (M, K, N), got {size!r}")
    return shape


def _shape_flat(size: Size) -> tuple[int, ...]:
    # Any shape: the reductions and the histogram run over the flattened array.
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    if not shape:
        raise ValueError("size must be an int or a non-empty shape")
    return shape


def _groups(n: int, group: int) -> int:
    return max(1, -(-n // group))


def _first_shape(args: Args) -> tuple[int, ...]:
    return tuple(args[0].shape)


def _input_size(index: int) -> Callable[[Args], tuple[int, ...]]:
    return lambda args: (int(args[index].size),)


# -- elementwise ----------------------------------------------------------------------------

def _vector_add_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                     c: Consts) -> Args:
    return (np.zeros(shape, dt), _random(rng, shape, dt), _random(rng, shape, dt))


def _vector_add_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, a, b = args
    return {"c": a + b}


def _saxpy_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                c: Consts) -> Args:
    return (_random(rng, shape, dt), _random(rng, shape, dt), _scalar(dt, 2.5))


def _saxpy_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    y, x, a = args
    return {"y": a * x + y}


def _polynomial_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                     c: Consts) -> Args:
    return (np.zeros(shape, dt), _random(rng, shape, dt), _scalar(dt, 1.5),
            _scalar(dt, -2.0), _scalar(dt, 0.5))


def _polynomial_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, x, a, b, cc = args
    return {"y": a * x * x + b * x + cc}


# -- 2D: translate, matmul, images -------------------------------------------------------

def _translate_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                    c: Consts) -> Args:
    h, w = shape
    # A shift down and to the left, so writes fall off two different edges.
    return (np.zeros(shape, dt), _random(rng, shape, dt), np.int64(h // 5 + 1),
            np.int64(-(w // 7) - 1))


def _translate_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    out, img, dy, dx = args
    h, w = img.shape
    dy, dx = int(dy), int(dx)
    want = out.copy()
    src_rows = slice(max(0, -dy), min(h, h - dy))
    src_cols = slice(max(0, -dx), min(w, w - dx))
    dst_rows = slice(max(0, dy), min(h, h + dy))
    dst_cols = slice(max(0, dx), min(w, w + dx))
    if src_rows.start < src_rows.stop and src_cols.start < src_cols.stop:
        want[dst_rows, dst_cols] = img[src_rows, src_cols]
    return {"out": want}


def _matmul_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                 c: Consts) -> Args:
    m, k, n = shape
    return (np.zeros((m, n), dt), _random(rng, (m, k), dt), _random(rng, (k, n), dt),
            np.int64(k))


def _matmul_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, a, b, _k = args
    return {"c": a @ b}


def _matmul_ndrange(args: Args) -> tuple[int, ...]:
    return tuple(args[0].shape)


def _gray_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
               c: Consts) -> Args:
    return (np.zeros(shape, _U8), _random(rng, (3, *shape), _U8))


def _gray_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, rgb = args
    r, g, b = rgb.astype(np.uint32)
    return {"gray": ((77 * r + 150 * g + 29 * b + 128) >> 8).astype(np.uint8)}


def _image_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                c: Consts) -> Args:
    return (np.zeros(shape, _U8), _random(rng, shape, _U8))


def _negative_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, img = args
    return {"out": (255 - img).astype(np.uint8)}


def _darken_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                 c: Consts) -> Args:
    return (*_image_args(shape, rng, dt, c), np.float32(0.6))


def _darken_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    _, img, factor = args
    scaled = np.minimum(img.astype(np.float32) * np.float32(factor), np.float32(255))
    return {"out": scaled.astype(np.uint8)}


# -- reductions and the histogram ------------------------------------------------------

def _reduce_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                 c: Consts) -> Args:
    x = _random(rng, shape, dt, 0.0, 1.0)
    return (np.zeros(_groups(x.size, c["GROUP"]), dt), x)


def _per_group(x: np.ndarray, group: int, fn: Callable[..., np.ndarray]) -> np.ndarray:
    flat = x.reshape(-1)
    return fn(flat, np.arange(0, flat.size, group))


def _reduce_sum_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    partial, x = args
    return {"partial": _per_group(x, c["GROUP"], np.add.reduceat).astype(partial.dtype)}


def _reduce_max_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    partial, x = args
    return {"partial": _per_group(x, c["GROUP"], np.maximum.reduceat).astype(partial.dtype)}


def _argmax_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                 c: Consts) -> Args:
    x = _random(rng, shape, dt, 0.0, 1.0)
    ngroups = _groups(x.size, c["GROUP"])
    return (np.zeros(ngroups, dt), np.zeros(ngroups, np.int64), x)


def _argmax_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    best, _, x = args
    flat = x.reshape(-1)
    group = c["GROUP"]
    starts = np.arange(0, flat.size, group)
    where = np.array([s + int(np.argmax(flat[s:s + group])) for s in starts], np.int64)
    return {"best": flat[where].astype(best.dtype), "best_index": where}


def _backend_for(backend: Any, arrays: Args) -> Any:
    if backend is not None:
        return backend
    return get_backend(*(a for a in arrays if not isinstance(a, np.generic)))


def _reduce_run(backend: Any, args: Args, c: Consts, ex: Example) -> dict[str, Any]:
    partial, x = args
    backend = _backend_for(backend, args)
    group = c["GROUP"]
    launch = ex.load(**c)(backend, group)
    launch(partial, x, ndrange=(int(np.prod(x.shape)),))
    current = partial
    # Each pass reduces GROUP-fold; a few passes reach one value.
    while int(np.prod(current.shape)) > 1:
        n = int(np.prod(current.shape))
        nxt = backend.allocate((_groups(n, group),), backend.array_info(current).dtype)
        launch(nxt, current, ndrange=(n,))
        current = nxt
    backend.synchronize()
    return {"result": backend.to_host(current)[0]}


def _reduce_sum_total(args: Args, c: Consts) -> dict[str, Any]:
    return {"result": args[1].sum(dtype=args[1].dtype)}


def _reduce_max_total(args: Args, c: Consts) -> dict[str, Any]:
    return {"result": args[1].max()}


def _argmax_run(backend: Any, args: Args, c: Consts, ex: Example) -> dict[str, Any]:
    best, best_index, x = args
    backend = _backend_for(backend, args)
    group = c["GROUP"]
    launch = ex.load(**c)(backend, group)
    launch(best, best_index, x, ndrange=(int(np.prod(x.shape)),))
    chain = [best_index]
    current = best
    while int(np.prod(current.shape)) > 1:
        n = int(np.prod(current.shape))
        m = _groups(n, group)
        dtype = backend.array_info(current).dtype  # a NumPy dtype, whatever the array type
        nxt, nxt_index = backend.allocate((m,), dtype), backend.allocate((m,), np.int64)
        launch(nxt, nxt_index, current, ndrange=(n,))
        chain.append(nxt_index)
        current = nxt
    backend.synchronize()
    # Each level's index points into the level below; follow them down to x.
    pos = 0
    for level in reversed(chain):
        pos = int(backend.to_host(level)[pos])
    return {"value": backend.to_host(current)[0],
            "index": np.array(np.unravel_index(pos, tuple(x.shape)), np.int64)}


def _argmax_total(args: Args, c: Consts) -> dict[str, Any]:
    x = args[2]
    pos = int(np.argmax(x))
    return {"value": x.reshape(-1)[pos],
            "index": np.array(np.unravel_index(pos, x.shape), np.int64)}


def _histogram_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                    c: Consts) -> Args:
    # A peaked distribution, so a few bins see heavy atomic contention.
    data = np.clip(rng.normal(128, 40, size=shape), 0, 255).astype(np.uint8)
    return (np.zeros(c["BINS"], np.uint32), data)


def _histogram_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    counts, data = args
    bins = (data.reshape(-1).astype(np.int64) * c["BINS"]) // 256
    return {"counts": (counts + np.bincount(bins, minlength=c["BINS"])).astype(np.uint32)}


# -- particles ------------------------------------------------------------------------------

def _particles_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                    c: Consts) -> Args:
    (n,) = shape
    return (_random(rng, (3, n), dt), _random(rng, (3, n), dt, -0.1, 0.1),
            dt.type(0.01), dt.type(4.0), dt.type(0.05))


def _particles_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    pos, vel, dt, stiffness, damping = args
    x, v = pos.copy(), vel.copy()
    for _ in range(c["NSTEPS"]):
        v += dt * (-stiffness * x - damping * v)
        x += dt * v
    return {"pos": x, "vel": v}


def _particles_shape(size: Size) -> tuple[int, ...]:
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    shape = tuple(int(s) for s in size)
    if len(shape) != 1:
        raise ValueError(f"size must be the number of particles, got {size!r}")
    return shape


def _ndrange_particles(args: Args) -> tuple[int, ...]:
    return (int(args[0].shape[1]),)


def _constant(name: str) -> Callable[[Consts], Any]:
    return lambda c: c[name]


def _tile(c: Consts) -> tuple[int, int]:
    return (c["TILE"], c["TILE"])


def _transpose_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                    c: Consts) -> Args:
    return (np.zeros(shape[::-1], dt), _random(rng, shape, dt))


def _transpose_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    return {"out": np.ascontiguousarray(args[1].T)}


def _input_shape(args: Args) -> tuple[int, ...]:
    return tuple(args[1].shape)


_ELEMENTWISE = "an int n (n elements) or a shape of 1-3 axes"
_IMAGE = "an int n (an n x n image) or (H, W)"
_FLAT = "an int n (n elements) or any shape (reduced over all its elements)"

_CATALOG = [
    Example(
        "vector_add", "c = a + b elementwise; dtype-generic, any ndrange rank (Linear index)",
        "vector_add.pk", "vector_add", _ELEMENTWISE, _shape_any, _vector_add_args,
        _first_shape, _vector_add_ref, dtypes=_NUMERIC, ndims=(1, 2, 3)),
    Example(
        "saxpy", "y = a * x + y; the type variable T is bound from the arrays' dtype",
        "saxpy.pk", "saxpy", _ELEMENTWISE, _shape_any, _saxpy_args, _first_shape, _saxpy_ref,
        dtypes=_NUMERIC, ndims=(1, 2, 3)),
    Example(
        "polynomial", "y = a*x*x + b*x + c fused in one pass (NumPy needs five)",
        "polynomial.pk", "polynomial", _ELEMENTWISE, _shape_any, _polynomial_args,
        _first_shape, _polynomial_ref, dtypes=_NUMERIC, ndims=(1, 2, 3)),
    Example(
        "translate", "shift a 2D image by (dy, dx) with NTuple indices; "
        "writes off the edge are dropped",
        "translate.pk", "translate", _IMAGE, _shape_2d, _translate_args, _first_shape,
        _translate_ref, dtypes=(*_NUMERIC, _U8), ndims=(2,), default_size=1024,
        bench_size=4096),
    Example(
        "matmul", "naive matrix multiply, one work-item per output element",
        "matmul.pk", "matmul", "an int n (n x n matrices) or (M, K, N)", _shape_matmul,
        _matmul_args, _matmul_ndrange, _matmul_ref, dtypes=_NUMERIC, ndims=(2,),
        default_size=256, bench_size=1024, rtol=1e-4, atol=1e-4),
    Example(
        "matmul_tiled", "tiled matrix multiply: @localmem tiles, @synchronize, "
        "unsafe_indices with explicit bounds, {% for %} unrolling",
        "matmul_tiled.pk", "matmul_tiled", "an int n (n x n matrices) or (M, K, N)",
        _shape_matmul, _matmul_args, _matmul_ndrange, _matmul_ref,
        constants=MappingProxyType({"TILE": 16}), workgroupsize_fn=_tile, dtypes=_NUMERIC,
        ndims=(2,), default_size=256, bench_size=2048, rtol=1e-4, atol=1e-4),
    Example(
        "transpose", "tiled transpose with a declared workgroup size: "
        "@kernel(workgroupsize=...) and a @localmem tile sized by @groupsize",
        "transpose.pk", "transpose", _IMAGE, _shape_2d, _transpose_args, _input_shape,
        _transpose_ref, constants=MappingProxyType({"TILE": 16}), dtypes=(*_NUMERIC, _U8),
        ndims=(2,), default_size=(1000, 600), bench_size=4096),
    Example(
        "reduce_sum", "workgroup sum with @groupreduce(add, ...); "
        "run() reduces to one value",
        "reduce.pk", "reduce_sum", _FLAT, _shape_flat, _reduce_args, _input_size(1),
        _reduce_sum_ref, constants=MappingProxyType({"GROUP": 256}),
        workgroupsize_fn=_constant("GROUP"), dtypes=_NUMERIC, rtol=1e-4, atol=1e-4,
        run_fn=_reduce_run, run_reference_fn=_reduce_sum_total),
    Example(
        "reduce_max", "workgroup maximum with @groupreduce(max, ...); run() reduces to one value",
        "reduce.pk", "reduce_max", _FLAT, _shape_flat, _reduce_args, _input_size(1),
        _reduce_max_ref, constants=MappingProxyType({"GROUP": 256}),
        workgroupsize_fn=_constant("GROUP"), dtypes=_NUMERIC,
        run_fn=_reduce_run, run_reference_fn=_reduce_max_total),
    Example(
        "brightest_pixel", "argmax of an image: per-group max and first index with two "
        "@groupreduce, then further passes; run() gives (row, col)",
        "reduce.pk", "argmax_groups", _IMAGE + " (any shape works)", _shape_flat,
        _argmax_args, _input_size(2), _argmax_ref, constants=MappingProxyType({"GROUP": 256}),
        workgroupsize_fn=_constant("GROUP"), dtypes=_NUMERIC, default_size=(1024, 1024),
        bench_size=(4096, 4096), run_fn=_argmax_run, run_reference_fn=_argmax_total),
    Example(
        "histogram", "256-bin histogram of uint8 data: @atomic_add on @localmem, "
        "then on global memory",
        "histogram.pk", "histogram", _FLAT, _shape_flat, _histogram_args, _input_size(1),
        _histogram_ref, constants=MappingProxyType({"BINS": 256}), dtypes=(_U8,),
        default_size=1 << 22, bench_size=1 << 26),
    Example(
        "rgb_to_gray", "RGB planes (3, H, W) uint8 to gray (H, W), fixed-point weights",
        "image.pk", "rgb_to_gray", _IMAGE, _shape_2d, _gray_args, _first_shape, _gray_ref,
        dtypes=(_U8,), ndims=(2,), default_size=1024, bench_size=4096),
    Example(
        "negative", "image negative, 255 - x, on uint8 pixels of any shape",
        "image.pk", "negative", _ELEMENTWISE, _shape_any, _image_args, _first_shape,
        _negative_ref, dtypes=(_U8,), ndims=(1, 2, 3), default_size=(1024, 1024),
        bench_size=(4096, 4096)),
    Example(
        "darken", "scale uint8 pixels by a float factor, truncating and saturating",
        "image.pk", "darken", _ELEMENTWISE, _shape_any, _darken_args, _first_shape,
        _darken_ref, dtypes=(_U8,), ndims=(1, 2, 3), default_size=(1024, 1024),
        bench_size=(4096, 4096)),
    Example(
        "particle_push", "NSTEPS steps of a damped oscillator per particle: "
        "compile-time NSTEPS, @private registers, unrolled axes",
        "particles.pk", "particle_push", "an int n (n particles)", _particles_shape,
        _particles_args, _ndrange_particles, _particles_ref,
        constants=MappingProxyType({"NSTEPS": 100}), dtypes=(_F32, _F64),
        default_size=1 << 16, bench_size=1 << 20, rtol=1e-4, atol=1e-5),
]

#: Every example, by name, in a stable order (simple kernels first). Treat it as read-only.
EXAMPLES: dict[str, Example] = {ex.name: ex for ex in _CATALOG}


def get(name: str) -> Example:
    """The example called ``name``; a :class:`KeyError` lists the known names."""
    try:
        return EXAMPLES[name]
    except KeyError:
        raise KeyError(f"no example named {name!r}; known: {', '.join(EXAMPLES)}") from None


def names() -> list[str]:
    """The example names, in catalog order."""
    return list(EXAMPLES)
