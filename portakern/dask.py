"""Portable kernels over Dask arrays: one launch per chunk, on any Dask scheduler.

Install with ``pip install "portakern[dask]"``. See ``docs/dask.md``.

- :func:`map_blocks`: an elementwise kernel, chunk by chunk.
- :func:`map_overlap`: a stencil kernel on chunks extended by a halo (``depth``) with
  Dask's ``boundary`` modes at the array's edges.
- :func:`reduce`: each chunk writes a partial result (a histogram, a sum) of a fixed
  shape, and the partials are combined by ``"sum"``, ``"min"`` or ``"max"``.
- :func:`ufunc`: a plain function of NumPy/CuPy arrays for
  ``dask.array.apply_gufunc`` and ``xarray.apply_ufunc(..., dask="parallelized")``.

How arguments are given (every wrapper)
---------------------------------------
``*args`` are the kernel's arguments in signature order **without** the outputs.
``out`` names the parameters the wrapper allocates per chunk (zero-filled): a name,
a list of names (their dtype is the first array argument's) or a ``{name: dtype}``
dict. ``inout`` names parameters whose argument (an array in ``args``) the kernel
updates: each chunk is copied and the copy is returned, since Dask chunks are
never written in place. Results come back in signature order: one array, or a
tuple when there are several.

Global coordinates
------------------
Inside a chunk, ``@index(Global)`` and ``@ndrange`` are chunk-local. With
``global_args=True`` the wrapper passes ``2 * ndim`` trailing ``long`` arguments,
which the kernel declares last in its signature under names of its choosing:
first the global index of the chunk's element ``[0, ..., 0]`` along each axis
(for :func:`map_overlap`, of the halo's first element: it may be negative), then
the full array's shape. ``gi = off0 + i`` is then the element's index in the whole
array, and a kernel that uses it gives the same result chunked as unchunked.
"""

from __future__ import annotations

import itertools
import operator
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .kernels import Kernel
from .launch.launcher import Launcher

__all__ = ["ChunkKernel", "map_blocks", "map_overlap", "reduce", "ufunc", "warm"]

_COMBINE = ("sum", "min", "max")


def _import_dask() -> Any:
    try:
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ImportError(
            'portakern.dask needs Dask: pip install "portakern[dask]" '
            '(dask[array] and distributed)') from exc
    return da


def _params(kernel: Kernel | Launcher) -> list:
    k = kernel.kernel if isinstance(kernel, Launcher) else kernel
    return k.params


def _names(spec: Any, what: str) -> list[str]:
    if spec is None:
        return []
    if isinstance(spec, str):
        return [spec]
    if isinstance(spec, dict):
        return list(spec)
    if isinstance(spec, Sequence):
        return [str(s) for s in spec]
    raise TypeError(f"{what} must be a parameter name, a list of names or a dict, got {spec!r}")


class ChunkKernel:
    """A kernel as a function of one chunk's arrays (what runs on a worker).

    Calling it with the kernel's arguments minus the outputs allocates the
    outputs, copies the in/out arguments, launches with ``ndrange`` the shape of
    the first array argument (or output) and returns the written arrays in
    signature order (one array, or a tuple). On CuPy chunks it returns only after
    the launch completed, waiting on the current stream alone.

    It pickles by recipe (its kernel does) and tokenizes deterministically, so
    Dask graph keys are stable. :func:`ufunc` returns one.
    """

    def __init__(self, kernel: Kernel | Launcher, out: Any = None, inout: Any = None, *,
                 global_args: bool = False, workgroupsize: Any = None,
                 fixed: dict[str, Any] | None = None) -> None:
        if not isinstance(kernel, (Kernel, Launcher)):
            raise TypeError(
                f"expected a portakern kernel or launcher, got {type(kernel).__name__}")
        self.kernel = kernel
        params = _params(kernel)
        names = [p.name for p in params]
        self.out = _names(out, "out")
        self.inout = _names(inout, "inout")
        self.out_dtypes = ({k: np.dtype(v) for k, v in out.items()}
                           if isinstance(out, dict) else {})
        self.global_args = bool(global_args)
        self.workgroupsize = workgroupsize
        #: Arguments bound by parameter name (scalars for ``apply_gufunc``); not passed.
        self.fixed = dict(fixed or {})
        for name in self.fixed:
            if name not in names:
                raise ValueError(
                    f"{name!r} is not a parameter of kernel {kernel!r} "
                    f"(its parameters: {', '.join(names)})")
            if name in self.out or name in self.inout:
                raise ValueError(f"{name!r} is an output; it cannot also be bound to a value")
        for name in self.out + self.inout:
            if name not in names:
                raise ValueError(
                    f"{name!r} is not a parameter of kernel {params and kernel!r} "
                    f"(its parameters: {', '.join(names)})")
            p = params[names.index(name)]
            if not p.pointer or p.const:
                raise ValueError(
                    f"parameter {name!r} is {p.describe()}: out/inout parameters must be "
                    f"writable arrays (T* {name})")
        both = set(self.out) & set(self.inout)
        if both:
            raise ValueError(f"{sorted(both)} given as both out and inout")
        if not self.out and not self.inout:
            raise ValueError(
                "name the parameters the kernel writes: out=... (allocated per chunk) "
                "or inout=... (copied per chunk)")
        self._names = names
        self._params = params

    def result_names(self) -> list[str]:
        """The written parameters, in signature order (the order of the results)."""
        return [n for n in self._names if n in self.out or n in self.inout]

    def __dask_tokenize__(self) -> tuple:
        from dask.base import tokenize

        return ("portakern.ChunkKernel", tokenize(self.kernel), tuple(self.out),
                tuple(sorted((k, str(v)) for k, v in self.out_dtypes.items())),
                tuple(self.inout), self.global_args, repr(self.workgroupsize),
                tokenize(sorted(self.fixed.items())))

    def __repr__(self) -> str:
        return f"<portakern.dask.ChunkKernel {self.kernel!r} out={self.out} inout={self.inout}>"

    # -- per chunk -------------------------------------------------------------------
    def __call__(self, *args: Any, offset: Sequence[int] | None = None,
                 shape: Sequence[int] | None = None) -> Any:
        first = next((a for a in args if _is_array(a)), None)
        xp = _namespace(first)
        n_global = 0
        if self.global_args:
            if offset is None:
                nd_shape = np.shape(first) if first is not None else ()
                offset, shape = (0,) * len(nd_shape), tuple(nd_shape)
            n_global = 2 * len(offset)
        expected = len(self._params) - len(self.out) - len(self.fixed) - n_global
        if len(args) != expected:
            raise TypeError(
                f"{self!r} takes {expected} argument(s) (the kernel's, less the outputs"
                f"{' and the global offset/shape' if n_global else ''}), got {len(args)}")
        it = iter(args)
        full: list = []
        results: dict[str, Any] = {}
        nd = None
        for p in self._params[:len(self._params) - n_global]:
            if p.name in self.out:
                full.append(p.name)  # filled below, once the chunk shape is known
                continue
            a = self.fixed[p.name] if p.name in self.fixed else next(it)
            if _is_array(a):
                a = _contiguous(xp, a)
                if p.name in self.inout:
                    a = a.copy()
                    results[p.name] = a
                elif p.pointer and not p.const:
                    a = a.copy()  # a scratch array the kernel may write: never the chunk
                if nd is None:
                    nd = a.shape
            full.append(a)
        if nd is None:
            nd = tuple(shape) if shape is not None else ()
        dtype0 = next((a.dtype for a in full if _is_array(a)), None)
        for i, item in enumerate(full):
            if isinstance(item, str) and item in self.out:
                dtype = self.out_dtypes.get(item, dtype0)
                if dtype is None:
                    raise TypeError(f"give the dtype of output {item!r}: out={{{item!r}: dtype}}")
                full[i] = results[item] = xp.zeros(nd, dtype)
        if n_global:
            full.extend(int(o) for o in offset)
            full.extend(int(s) for s in shape)
        _launch(self.kernel, full, nd, self.workgroupsize)
        if xp is not np:
            xp.cuda.get_current_stream().synchronize()  # this stream only, not the device
        out = [results[n] for n in self.result_names()]
        return out[0] if len(out) == 1 else tuple(out)


# -- one build per variant across the worker processes of a machine ----------------
_LAUNCHED: set[str] = set()


def _launch(kernel: Kernel | Launcher, full: list, nd: tuple, workgroupsize: Any) -> None:
    """Launch; the first launch of a variant in this process holds a per-machine file lock.

    Worker processes that share a disk cache and meet a new variant at once would
    each compile it. The first launch of each (kernel, argument types, ndrange
    shape) in a process takes an exclusive lock named after it and the cache
    folder, so one process builds and fills the cache while the others wait and
    then load it. Later launches take no lock. Without ``fcntl`` (Windows), a
    disabled disk cache or a lock folder that is not private, it launches unlocked.
    """
    key = _variant_key(kernel, full, nd)
    if key is None or key in _LAUNCHED:
        kernel(*full, ndrange=nd, workgroupsize=workgroupsize)
        return
    with _file_lock(key):
        kernel(*full, ndrange=nd, workgroupsize=workgroupsize)
    _LAUNCHED.add(key)


def _variant_key(kernel: Kernel | Launcher, full: list, nd: tuple) -> str | None:
    from .cache import store as cache
    from .launch.recipes import kernel_token, launcher_token, token_digest

    if not cache.cache_enabled():
        return None
    token = launcher_token(kernel) if isinstance(kernel, Launcher) else kernel_token(kernel)
    types = tuple((type(a).__module__, type(a).__qualname__, str(getattr(a, "dtype", "")))
                  for a in full)
    return token_digest((token, types, tuple(nd), str(cache.cache_dir())))


class _file_lock:  # noqa: N801 - used as a context manager, like a function
    def __init__(self, key: str) -> None:
        self.key, self.fd = key, None

    def __enter__(self) -> None:
        try:
            import fcntl
            import tempfile

            folder = os.path.join(tempfile.gettempdir(), f"portakern-locks-{os.getuid()}")
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.stat(folder)
            if st.st_uid != os.getuid() or st.st_mode & 0o077:
                return  # not private: another user could hold or replace the locks
            self.fd = os.open(os.path.join(folder, self.key[:40] + ".lock"),
                              os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except (ImportError, OSError, AttributeError):
            if self.fd is not None:
                os.close(self.fd)
            self.fd = None

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock
            self.fd = None


def _is_array(a: Any) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.generic)


def _contiguous(xp: Any, a: Any) -> Any:
    """``a`` itself when C-contiguous, else a contiguous copy (a chunk may be a view)."""
    if a.flags.c_contiguous:
        return a
    return a.copy(order="C") if xp is not np else np.ascontiguousarray(a)


def _namespace(a: Any) -> Any:
    if a is not None and type(a).__module__.split(".")[0] == "cupy":
        import sys

        return sys.modules["cupy"]
    return np


def ufunc(kernel: Kernel | Launcher, out: Any = None, inout: Any = None, *,
          workgroupsize: Any = None, **fixed: Any) -> ChunkKernel:
    """The kernel as a function of NumPy or CuPy arrays, for ``apply_gufunc``-style callers.

    ``f = pk.dask.ufunc(kernel, out="z", a=np.float32(2))`` then
    ``da.apply_gufunc(f, "(),()->()", x, y, meta=np.empty((0,), np.float32))`` or
    ``xarray.apply_ufunc(f, x, y, dask="parallelized", output_dtypes=[np.float32])``.
    Keyword arguments bind parameters by name (scalars, which those callers do not
    pass); the call takes the remaining inputs positionally and launches over the
    shape of its first array argument.
    """
    return ChunkKernel(kernel, out, inout, workgroupsize=workgroupsize, fixed=fixed)


# -- graph construction ---------------------------------------------------------------
def _dask_arrays(args: tuple) -> list:
    da = _import_dask()
    return [a for a in args if isinstance(a, da.Array)]


def _metas(fn: ChunkKernel, args: tuple, ndim: int) -> list:
    from dask.array.utils import meta_from_array

    arrays = _dask_arrays(args)
    if not arrays:
        raise TypeError("pass at least one dask array argument")
    first = arrays[0]
    by_name = {}
    it = iter(args)
    for p in fn._params:
        if p.name in fn.out or p.name in fn.fixed:
            continue
        try:
            by_name[p.name] = next(it)
        except StopIteration:
            break
    metas = []
    for name in fn.result_names():
        if name in fn.inout:
            dtype = by_name[name].dtype
        else:
            dtype = fn.out_dtypes.get(name, first.dtype)
        metas.append(meta_from_array(first, ndim=ndim, dtype=dtype))
    return metas


def _starts(chunks: tuple) -> list[list[int]]:
    return [[0, *itertools.accumulate(c)][:-1] for c in chunks]


class _Located:
    """Calls a :class:`ChunkKernel` with the chunk's global offset and the full shape."""

    def __init__(self, fn: ChunkKernel, starts: list, shape: tuple, depth: tuple,
                 lowside: tuple) -> None:
        self.fn, self.starts, self.shape = fn, starts, shape
        self.depth, self.lowside = depth, lowside

    def __call__(self, *args: Any, block_id: tuple = ()) -> Any:
        offset = tuple(self.starts[d][b] - (self.depth[d] if (b > 0 or self.lowside[d]) else 0)
                       for d, b in enumerate(block_id))
        return self.fn(*args, offset=offset, shape=self.shape)

    def __dask_tokenize__(self) -> tuple:
        from dask.base import tokenize

        return ("portakern.dask._Located", tokenize(self.fn), repr(self.starts),
                self.shape, self.depth, self.lowside)


def _aligned(args: tuple, arrays: list, strict: bool = True) -> tuple[tuple, Any]:
    """``args`` with every dask array of the first's shape chunked like the first.

    (Global offsets need one chunk grid; ``strict`` refuses arrays of other shapes.)
    """
    ref = arrays[0]
    for a in arrays[1:]:
        if a.shape != ref.shape and strict:
            raise ValueError(
                f"global_args=True needs dask arrays of one shape, got {ref.shape} and "
                f"{a.shape}")
    da = _import_dask()
    if not strict:
        return tuple(a.rechunk(ref.chunks) if isinstance(a, da.Array) and a.shape == ref.shape
                     and a.chunks != ref.chunks else a for a in args), ref
    return tuple(a.rechunk(ref.chunks) if isinstance(a, da.Array) and a.chunks != ref.chunks
                 else a for a in args), ref


def _split(result: Any, metas: list, n: int) -> Any:
    if n == 1:
        return result
    return tuple(result.map_blocks(operator.getitem, i, meta=metas[i], dtype=metas[i].dtype)
                 for i in range(n))


def _check_args(fn: ChunkKernel, args: tuple, ndim: int) -> None:
    expected = (len(fn._params) - len(fn.out) - len(fn.fixed)
                - (2 * ndim if fn.global_args else 0))
    if len(args) != expected:
        names = [p.name for p in fn._params if p.name not in fn.out and p.name not in fn.fixed]
        if fn.global_args:
            names = names[:expected] if expected >= 0 else names
        raise TypeError(
            f"kernel {fn.kernel!r} takes {expected} argument(s) here ({', '.join(names)}: its "
            f"parameters less the outputs {fn.out}"
            f"{' and the trailing global offset/shape' if fn.global_args else ''}), "
            f"got {len(args)}")


def _prepare(fn: ChunkKernel, args: tuple, global_args: bool,
             what: str) -> tuple[tuple, list, int, list]:
    """Check and align the arguments of a wrapper; its arrays, rank and output metas."""
    arrays = _dask_arrays(args)
    if not arrays:
        raise TypeError(f"{what} needs at least one dask array argument")
    ndim = arrays[0].ndim
    _check_args(fn, args, ndim)
    args, _ = _aligned(args, arrays, strict=global_args)
    return args, arrays, ndim, _metas(fn, args, ndim)


def map_blocks(kernel: Kernel | Launcher, *args: Any, out: Any = None, inout: Any = None,
               global_args: bool = False, workgroupsize: Any = None) -> Any:
    """Run an elementwise kernel on every chunk of Dask arrays.

    The ndrange of each launch is the chunk's shape. Arrays are aligned (rechunked)
    as :func:`dask.array.map_blocks` does; scalars pass through unchanged. ``meta``
    is always given to Dask, so nothing is compiled or launched while the graph is
    built. Returns the written arrays in signature order (one, or a tuple).
    """
    da = _import_dask()
    fn = ChunkKernel(kernel, out, inout, global_args=global_args, workgroupsize=workgroupsize)
    args, arrays, ndim, metas = _prepare(fn, args, global_args, "map_blocks")
    func: Any = fn
    if global_args:
        args, ref = _aligned(args, arrays)
        func = _Located(fn, _starts(ref.chunks), ref.shape, (0,) * ndim, (False,) * ndim)
    # (Several outputs: each chunk is a tuple, split below; meta describes the first.)
    result = da.map_blocks(func, *args, dtype=metas[0].dtype, meta=metas[0])
    return _split(result, metas, len(metas))


def map_overlap(kernel: Kernel | Launcher, *args: Any, depth: Any, boundary: Any = "none",
                out: Any = None, inout: Any = None, global_args: bool = False,
                workgroupsize: Any = None) -> Any:
    """Run a stencil kernel on chunks extended by ``depth`` cells of their neighbours.

    ``depth`` and ``boundary`` mean what they mean to :func:`dask.array.map_overlap`
    (``"reflect"``, ``"periodic"``, ``"nearest"``, ``"none"`` or a constant). The
    kernel runs over the whole extended chunk (ndrange = its shape); the halo is
    trimmed from the results afterwards, so a result cell may read up to ``depth``
    cells away. With ``global_args=True`` the offset is that of the halo's first
    cell, so ``off0 + i`` stays the cell's index in the whole array (negative or
    past the end in the padding Dask adds at the array's edges).
    """
    da = _import_dask()
    fn = ChunkKernel(kernel, out, inout, global_args=global_args, workgroupsize=workgroupsize)
    args, arrays, ndim, metas = _prepare(fn, args, global_args, "map_overlap")
    if len(metas) != 1:
        raise ValueError("map_overlap returns one array: name one out or inout parameter")
    depths = _per_axis(depth, ndim, "depth")
    func: Any = fn
    if global_args:
        args, ref = _aligned(args, arrays)
        lowside = tuple(_boundary_of(boundary, d) != "none" for d in range(ndim))
        func = _Located(fn, _starts(ref.chunks), ref.shape, depths, lowside)
    return da.map_overlap(func, *args, depth=depth, boundary=boundary, trim=True,
                          dtype=metas[0].dtype, meta=metas[0])


def _per_axis(value: Any, ndim: int, what: str) -> tuple[int, ...]:
    if isinstance(value, dict):
        return tuple(int(value.get(d, 0)) for d in range(ndim))
    if isinstance(value, (tuple, list)):
        if len(value) != ndim:
            raise ValueError(f"{what} has {len(value)} entries for {ndim} axes")
        return tuple(int(v) for v in value)
    return (int(value),) * ndim


def _boundary_of(boundary: Any, axis: int) -> Any:
    if isinstance(boundary, dict):
        return boundary.get(axis, "none")
    return boundary


class _Partial:
    """One chunk's partial result, with the chunk grid's axes kept as length-1 axes."""

    def __init__(self, fn: ChunkKernel, name: str, shape: tuple, dtype: Any, init: Any,
                 ndim: int, located: _Located | None) -> None:
        self.fn, self.name, self.shape, self.dtype = fn, name, shape, np.dtype(dtype)
        self.init, self.ndim, self.located = init, ndim, located

    def __call__(self, *args: Any, block_id: tuple = ()) -> Any:
        first = next((a for a in args if _is_array(a)), None)
        xp = _namespace(first)
        acc = xp.full(self.shape, self.init, dtype=self.dtype)
        full, it = [], iter(args)
        n_global = 2 * self.ndim if self.fn.global_args else 0
        for p in self.fn._params[:len(self.fn._params) - n_global]:
            if p.name == self.name:
                full.append(acc)
                continue
            a = next(it)
            if _is_array(a):
                a = _contiguous(xp, a)
                if p.pointer and not p.const:
                    a = a.copy()  # never write a Dask chunk in place
            full.append(a)
        nd = first.shape
        if n_global:
            offset = tuple(self.located.starts[d][b] for d, b in enumerate(block_id[:self.ndim]))
            full.extend(int(o) for o in offset)
            full.extend(int(s) for s in self.located.shape)
        _launch(self.fn.kernel, full, nd, self.fn.workgroupsize)
        if xp is not np:
            xp.cuda.get_current_stream().synchronize()
        return acc.reshape((1,) * self.ndim + tuple(self.shape))

    def __dask_tokenize__(self) -> tuple:
        from dask.base import tokenize

        return ("portakern.dask._Partial", tokenize(self.fn), self.name, self.shape,
                str(self.dtype), repr(self.init), self.ndim, tokenize(self.located))


def reduce(kernel: Kernel | Launcher, *args: Any, out: str, shape: Any = (),
           dtype: Any = None, combine: str = "sum", init: Any = None,
           global_args: bool = False, workgroupsize: Any = None) -> Any:
    """Per-chunk partial results (``out``, of ``shape``), combined into one array.

    Each chunk launches with ndrange the chunk's shape and writes (typically with
    ``@atomic_add``) into its own ``out`` array of ``shape``, filled with ``init``
    first. The partials are then combined by ``combine`` (``"sum"``, ``"min"``,
    ``"max"``) in Dask's tree reduction. ``init`` defaults to the identity of
    ``combine`` (0, the dtype's largest, its smallest); another value is applied
    once per chunk. ``shape=()`` is a scalar (a 1-element array in the kernel:
    ``out[0]``). Returns a Dask array of ``shape``.
    """
    da = _import_dask()
    if combine not in _COMBINE:
        raise ValueError(f"combine must be one of {', '.join(_COMBINE)}, got {combine!r}")
    if not isinstance(out, str):
        raise TypeError("reduce takes one output: out='name' of the partial-result parameter")
    arrays = _dask_arrays(args)
    if not arrays:
        raise TypeError("reduce needs at least one dask array argument")
    fn = ChunkKernel(kernel, out, global_args=global_args, workgroupsize=workgroupsize)
    ref = arrays[0]
    ndim = ref.ndim
    _check_args(fn, args, ndim)
    args, _ = _aligned(args, arrays, strict=global_args)
    dtype = np.dtype(dtype if dtype is not None else ref.dtype)
    pshape = tuple(_per_axis(shape, len(shape), "shape")) if isinstance(
        shape, (tuple, list)) else (int(shape),)
    kshape = pshape or (1,)
    if init is None:
        if combine == "sum":
            init = 0
        elif dtype.kind == "f":
            init = np.inf if combine == "min" else -np.inf
        else:
            info = np.iinfo(dtype)
            init = info.max if combine == "min" else info.min
    located = None
    if global_args:
        args, ref = _aligned(args, arrays)
        located = _Located(fn, _starts(ref.chunks), ref.shape, (0,) * ndim, (False,) * ndim)
    part = _Partial(fn, out, kshape, dtype, init, ndim, located)
    from dask.array.utils import meta_from_array

    meta = meta_from_array(ref, ndim=ndim + len(kshape), dtype=dtype)
    partials = da.map_blocks(
        part, *args, dtype=dtype, meta=meta,
        chunks=tuple((1,) * len(c) for c in ref.chunks) + tuple((s,) for s in kshape),
        new_axis=list(range(ndim, ndim + len(kshape))))
    axes = tuple(range(ndim))
    total = getattr(partials, combine)(axis=axes)
    return total.reshape(()) if not pshape else total


def _call_discard(fn: ChunkKernel, args: tuple) -> None:
    fn(*args)


def warm(client: Any, kernel: Kernel | Launcher, *args: Any, out: Any = None,
         inout: Any = None, global_args: bool = False, **fixed: Any) -> None:
    """Compile a kernel on every worker of ``client`` before the real work.

    ``args`` are small NumPy (or CuPy) arrays and scalars of the dtypes and rank
    the real chunks have (each dtype binding and rank is one compiled variant);
    ``out``/``inout``/``global_args``/keywords mean what they mean to
    :func:`map_blocks`. The first worker compiles and writes the disk cache, then
    the others run: workers that share a cache folder load it instead of compiling
    the same variant at once.
    """
    fn = ChunkKernel(kernel, out, inout, global_args=global_args, fixed=fixed)
    workers = sorted(client.scheduler_info()["workers"])
    if not workers:
        return
    client.run(_call_discard, fn, args, workers=workers[:1])
    if len(workers) > 1:
        client.run(_call_discard, fn, args, workers=workers[1:])
