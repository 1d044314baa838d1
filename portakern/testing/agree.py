"""``assert_backends_agree``: one kernel, every backend, the same answer."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import registry
from ..backends.base import Backend
from ..kernels import Kernel

__all__ = ["assert_backends_agree", "available_backends", "default_tolerance"]

#: Built-ins in the order they are tried; the first (CPU) is the reference.
_BUILTIN_ORDER = ("CPU", "OpenCL", "CUDA", "Metal")

# Separate devices round differently (FMA contraction, math library ulps), so
# floating-point results are compared with a tolerance that suits the dtype.
_TOLERANCE = {
    np.dtype(np.float16): (1e-3, 1e-3),
    np.dtype(np.float32): (1e-5, 1e-6),
    np.dtype(np.float64): (1e-12, 1e-12),
}


def default_tolerance(dtype: Any) -> tuple[float, float]:
    """``(rtol, atol)`` used for ``dtype`` when the caller gives none (0 for integers)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        dtype = np.dtype(dtype.char.lower())
    return _TOLERANCE.get(dtype, (0.0, 0.0))


def available_backends(reasons: dict[str, str] | None = None) -> list[Backend]:
    """Default instances of every registered backend that can run here, CPU first.

    Parameters
    ----------
    reasons : dict, optional
        Filled with ``name -> why not`` for each backend left out.

    Returns
    -------
    list of Backend
        Built-ins first (``CPU``, ``OpenCL``, ``CUDA``, ``Metal``), then plugins
        and registered backends by name. Registering or installing a plugin adds
        it here; a backend equal to one already listed is not repeated.
    """
    names = list(registry.registered_backends())
    order = [n for n in _BUILTIN_ORDER if n in names] + sorted(
        n for n in names if n not in _BUILTIN_ORDER)
    out: list[Backend] = []
    for name in order:
        status = registry.backend_status(name)
        if not status:
            if reasons is not None:
                reasons[name] = status.reason
            continue
        try:
            backend = registry.backend_by_name(name)
        except Exception as exc:  # noqa: BLE001 - report any failure to construct it
            if reasons is not None:
                reasons[name] = f"{type(exc).__name__}: {exc}"
            continue
        if backend not in out:
            out.append(backend)
    return out


def _resolve_backends(backends: Sequence[Any] | None) -> list[Backend]:
    if backends is None:
        found = available_backends()
        if not found:
            raise AssertionError("no portakern backend is available here to run the kernel on")
        return found
    out = []
    for b in backends:
        if isinstance(b, str):
            b = registry.backend_by_name(b)
        elif isinstance(b, type) and issubclass(b, Backend):
            b = b()
        if not isinstance(b, Backend):
            raise TypeError(f"backends must hold Backend objects, classes or names, got {b!r}")
        b.check_available()
        out.append(b)
    if not out:
        raise ValueError("backends is empty; pass None to use every available backend")
    return out


def _wants_backend(make_args: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(make_args)
    except (TypeError, ValueError):
        return False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            return True
    return False


def _make(make_args: Callable[..., Any], backend: Backend | None, params: list) -> list:
    raw = make_args(backend) if _wants_backend(make_args) else make_args()
    if isinstance(raw, Mapping):
        missing = [p.name for p in params if p.name not in raw]
        if missing:
            raise TypeError(f"make_args returned no value for {', '.join(missing)}")
        raw = [raw[p.name] for p in params]
    if not isinstance(raw, (tuple, list)):
        raise TypeError(
            f"make_args must return a tuple, list or dict of the kernel's arguments, got "
            f"{type(raw).__name__}")
    return list(raw)


def _index(idx: tuple) -> str:
    idx = tuple(int(i) for i in idx)
    return str(idx[0]) if len(idx) == 1 else str(idx)


def _difference(got: Any, want: np.ndarray, rtol: float | None,
                atol: float | None) -> str | None:
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"has shape {got.shape}, expected {want.shape}"
    if got.dtype != want.dtype:
        return f"has dtype {got.dtype}, expected {want.dtype}"
    if want.dtype.kind in "fc":
        r, a = default_tolerance(want.dtype)
        r = r if rtol is None else rtol
        a = a if atol is None else atol
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~np.isclose(got, want, rtol=r, atol=a, equal_nan=True)
        tol = f" (rtol={r:g}, atol={a:g})"
    else:
        bad = got != want
        tol = ""
    if not bad.any():
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    text = (f"{int(bad.sum())} of {want.size} elements differ{tol}; first at index "
            f"{_index(first)}: got {got[first]}, expected {want[first]}")
    if want.dtype.kind in "fc":
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(got.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
                          - want)
        diff = np.where(bad, diff, 0)
        k = np.unravel_index(int(np.nanargmax(diff)), diff.shape) if np.isfinite(diff).any() \
            else first
        text += f"; largest difference {diff[k]:g} at index {_index(k)}"
    return text


def assert_backends_agree(kernel: Kernel, make_args: Callable[..., Any], ndrange: Any, *,
                          backends: Sequence[Any] | None = None, rtol: float | None = None,
                          atol: float | None = None, workgroupsize: Any = None,
                          reference: Callable[..., Any] | None = None,
                          ) -> dict[Any, dict[str, np.ndarray]]:
    """Run ``kernel`` on several backends and check that they write the same arrays.

    Parameters
    ----------
    kernel : Kernel
        The kernel to run (``pk.kernel(...)``, possibly specialized).
    make_args : callable
        ``make_args(backend)`` or ``make_args()``: returns the kernel's arguments
        as a tuple (or a dict keyed by parameter name), freshly made on each
        call. NumPy arrays are copied to each backend with ``backend.to_device``;
        anything else (scalars, arrays already on the backend) is passed as is.
    ndrange : int or tuple of int
        The launch's ndrange.
    backends : sequence, optional
        Backend objects, classes or registered names to run on; the first one is
        the reference. By default every available backend
        (:func:`available_backends`), ``CPU()`` first.
    rtol, atol : float, optional
        Tolerances for floating-point arrays; by default per dtype
        (:func:`default_tolerance`). Integer and bool arrays must match exactly.
    workgroupsize : int or tuple of int, optional
        Passed to every launch; by default each backend picks its own.
    reference : callable, optional
        A NumPy implementation with the kernel's signature that updates the
        written arrays in place (``def ref(y, x, a): y += a * x``). When given, it
        is the reference that every backend is compared with.

    Returns
    -------
    dict
        ``{backend: {parameter name: written array on the host}}`` for every
        backend that ran (``"reference"`` for the NumPy reference), in run order.

    Raises
    ------
    AssertionError
        Naming, for each backend and written argument that differs, how many
        elements differ and where; or naming the backend a launch failed on (the
        exception is the ``__cause__``).
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a portakern Kernel, got {type(kernel).__name__}")
    targets = _resolve_backends(backends)
    params = list(kernel.params)
    written = [p for p in params if p.writable]
    if not written:
        raise ValueError(
            f"kernel {kernel.name!r} writes no array (every pointer parameter is const); "
            f"there is nothing to compare")
    results: dict[Any, dict[str, np.ndarray]] = {}
    failures: list[str] = []
    cause: BaseException | None = None

    if reference is not None:
        args = _make(make_args, targets[0], params)
        host = [a if isinstance(a, np.generic) or np.isscalar(a)
                else np.array(a if isinstance(a, np.ndarray) else targets[0].to_host(a))
                for a in args]
        reference(*host)
        results["reference"] = {p.name: np.asarray(host[p.index]) for p in written}

    for backend in targets:
        args = _make(make_args, backend, params)  # a broken make_args is the caller's error
        try:
            dev = [backend.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
            kernel(backend, workgroupsize)(*dev, ndrange=ndrange)
            backend.synchronize()
            results[backend] = {p.name: np.asarray(backend.to_host(dev[p.index]))
                                for p in written}
        except Exception as exc:  # noqa: BLE001 - reported per backend below
            if not results:
                raise AssertionError(
                    f"kernel {kernel.name!r} failed on the reference backend {backend!r}: "
                    f"{type(exc).__name__}: {exc}") from exc
            failures.append(f"  on {backend!r}: the launch raised {type(exc).__name__}: {exc}")
            cause = cause or exc

    ref_key = next(iter(results))
    ref = results[ref_key]
    ref_name = "the NumPy reference" if ref_key == "reference" else repr(ref_key)
    for key, out in results.items():
        if key is ref_key:
            continue
        for p in written:
            diff = _difference(out[p.name], ref[p.name], rtol, atol)
            if diff is not None:
                failures.append(f"  argument {p.index} {p.name!r} ({p.describe()}, "
                                f"{ref[p.name].dtype}) on {key!r}: {diff}")
    if failures:
        ran = ", ".join("NumPy reference" if k == "reference" else repr(k) for k in results)
        raise AssertionError(
            f"kernel {kernel.name!r} (ndrange={ndrange!r}) gives different results than "
            f"{ref_name}:\n" + "\n".join(failures) + f"\n(compared: {ran})") from cause
    return results
