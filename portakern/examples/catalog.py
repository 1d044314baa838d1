"""The :class:`Example` record: one example kernel and how to run and check it.

:mod:`portakern.examples` builds the catalog of these records; this module holds
the record itself, the shared type aliases and dtypes, and :func:`copy_args`.
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

__all__ = ["EXAMPLES_DIR", "Example", "copy_args"]

#: The folder holding the ``.pk`` sources (inside the installed package).
EXAMPLES_DIR = Path(__file__).resolve().parent

Size = int | tuple[int, ...]
Args = tuple
Consts = Mapping[str, Any]

F32, F64, I32, U8 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.uint8))
NUMERIC = (F32, F64, I32)


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
    dtypes: tuple[np.dtype, ...] = (F32,)
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
        """Largest absolute difference over every expected output (complex ones as complex
        numbers); an infinity or NaN where the reference has the same is no error, one
        where it has anything else is an infinite one."""
        worst = 0.0
        for name, want in expected.items():
            want = np.asarray(want)
            have = np.asarray(got[name])
            if want.size:
                kind = np.complex128 if np.iscomplexobj(want) or np.iscomplexobj(have) \
                    else np.float64
                h, w = have.astype(kind), want.astype(kind)
                same = (h == w) | (np.isnan(h) & np.isnan(w))
                with np.errstate(invalid="ignore"):
                    diff = np.where(same, 0.0, np.abs(h - w))
                worst = max(worst, float(np.where(np.isnan(diff), np.inf, diff).max()))
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
