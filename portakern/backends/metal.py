"""The MLX launchers: ``Metal()`` for ``mlx.core.array`` on Apple GPUs, and
``MLXCUDA()`` for MLX's CUDA back-end on NVIDIA GPUs.

Both run kernels through MLX's custom-kernel API (``mx.fast.metal_kernel`` and
``mx.fast.cuda_kernel``) and share the marshalling in :mod:`._mlx`: how the
kernel is rendered in MLX's shape, how scalars and the ndrange reach it, and
how writes reach the caller although MLX arrays are immutable (see
``docs/metal.md`` for what that copies; :attr:`Metal.copies` counts it).

Launches are asynchronous, like MLX's own operations: the kernel is scheduled
with ``mx.async_eval`` and the written arrays are rebound to its results, so
reading them waits for it. :meth:`Metal.synchronize` waits for everything.

Apple GPUs have no float64. A float64 argument is rejected before launch with a
``TypeError`` naming it, unless the backend was made with ``float64="cast"``:
``kernel(pk.Metal(float64="cast"))(...)`` then computes in float32 and writes
float64 results back.

Importing this module does not import MLX; :meth:`Metal.available` does, when
MLX is installed.
"""

from __future__ import annotations

import functools
import importlib.util
import platform
import sys
from typing import Any, ClassVar

import numpy as np

from ..errors import KernelTypeError
from ..subprocesses import fork_safe_lock
from ..types import bfloat16_dtype, type_name_of
from . import _mlx
from .base import ArrayInfo, Availability, Backend, Limits, default_instance
from .cuda_support import CUDA_MAX_BLOCK, DEFAULT_MAX_GRID, launch_config
from .local_sizes import checked_header, sized_arrays, template_constants
from .mlx_optional import NULL
from .mlx_structs import struct_bytes

__all__ = ["Metal", "MLXCUDA", "mlx_source", "mlx_uses_cuda"]

_INSTALL_METAL = 'pip install "portakern[metal]" (MLX, on macOS with Apple silicon)'
_INSTALL_CUDA = 'pip install "mlx[cuda]" (MLX with its CUDA back-end, Linux)'
_FLOAT64_MODES = ("error", "cast")


def _mlx_core() -> Any:
    """``mlx.core`` if MLX is installed (imports it), else None."""
    mx = sys.modules.get("mlx.core")
    if mx is not None:
        return mx
    if importlib.util.find_spec("mlx") is None:
        return None
    try:
        import mlx.core as mx
    except ImportError:
        return None
    return mx


def _mlx_version(mx: Any) -> str:
    return str(getattr(mx, "__version__", "?"))


def _cuda_available(mx: Any) -> bool:
    cuda = getattr(mx, "cuda", None)
    try:
        return bool(cuda is not None and cuda.is_available())
    except Exception:  # noqa: BLE001 - a probe; any failure means "no"
        return False


@functools.lru_cache(maxsize=1)
def mlx_uses_cuda() -> bool:
    """Whether MLX's GPU here is a CUDA GPU (MLX's CUDA back-end, not Metal)."""
    mx = _mlx_core()
    if mx is None:
        return False
    try:
        if mx.metal.is_available():
            return False
    except Exception:  # noqa: BLE001 - builds without Metal may lack the probe
        pass
    return _cuda_available(mx)


class _MLXBackend(Backend, abstract=True):
    """What the MLX launchers share; subclasses set the dialect."""

    synchronous: ClassVar[bool] = False
    preferred_group_size: ClassVar[int] = 256

    def __init__(self, *, float64: str = "error") -> None:
        if float64 not in _FLOAT64_MODES:
            raise KernelTypeError(
                f"float64 must be 'error' (reject float64 arguments) or 'cast' (compute "
                f"them in float32), got {float64!r}")
        self.float64 = float64
        #: Whole-array copies made by launches (see docs/metal.md), and their bytes.
        self.copies = 0
        self.copied_bytes = 0
        self._lock = fork_safe_lock()

    def count(self, nbytes: int) -> None:
        """Record one whole-array copy of ``nbytes`` bytes."""
        with self._lock:
            self.copies += 1
            self.copied_bytes += int(nbytes)

    def reset_counters(self) -> None:
        """Set :attr:`copies` and :attr:`copied_bytes` back to zero."""
        with self._lock:
            self.copies = 0
            self.copied_bytes = 0

    def __repr__(self) -> str:
        extra = "" if self.float64 == "error" else f"float64={self.float64!r}"
        return f"{type(self).__name__}({extra})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.float64 == self.float64  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.float64))

    def pickle_recipe(self) -> tuple[tuple, dict]:
        """An MLX backend travels as its ``float64`` mode (its copy counters stay here)."""
        return (), {"float64": self.float64}

    @property
    def cache_key(self) -> Any:
        return ("mlx", self.target, self.float64)

    # -- compile and launch -------------------------------------------------------------------
    def compile(self, rendered: Any) -> _mlx.Program:
        # MLX compiles at the first launch; this renders the kernel in MLX's shape.
        program = _mlx.build_program(rendered, self.target, cast64=self.float64 == "cast")
        program.sized = sized_arrays(rendered)  # @localmem sized at launch
        return program

    def _factory(self) -> Any:
        raise NotImplementedError

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        # @localmem sized at launch: each count a template constant (a variant per size).
        template = template_constants(compiled, args, local_size, self)
        _mlx.launch(compiled, self._factory(), args, global_size, local_size, self,
                    {"template": template} if template else None)

    def max_workgroup_size(self, compiled: Any) -> int:
        # MLX checks the pipeline's own limit when it runs the kernel.
        return 1024

    def max_workitem_sizes(self) -> tuple[int, ...]:
        return (1024, 1024, 1024)

    @property
    def limits(self) -> Limits:
        """Apple's documented figures for its GPUs (Metal feature set tables): 1024
        threads and 32 KiB of threadgroup memory per threadgroup, SIMD-groups of 32;
        through MLX's CUDA backend, CUDA's 48 KiB of static shared memory. MLX does
        not report the number of GPU cores: ``compute_units`` is 0."""
        return Limits(1024, 32 * 1024 if self.target == "metal" else 48 * 1024, 32, 0)

    def supports(self, feature: str) -> bool:
        if feature == "float64":
            return self.float64 == "cast"
        if feature == "int64_atomics":
            # Apple GPUs have 64-bit atomic min/max at most; CUDA has them all.
            return self.target == "cuda"
        return True

    # -- arrays ---------------------------------------------------------------------------------
    def null_array(self) -> Any:
        """An optional array passed None: MLX cannot bind null (see mlx_optional)."""
        return NULL

    def array_info(self, array: Any) -> ArrayInfo | None:
        if not _mlx.is_mlx_array(array):
            return None
        dtype = _mlx.numpy_dtype(array.dtype)
        if dtype is None:
            raise KernelTypeError(
                f"an MLX array of dtype {array.dtype} has no portakern kernel type; "
                f"convert it (e.g. .astype(mlx.core.float32))")
        # MLX arrays are row-major to their users; MLX itself copies a strided
        # view into a contiguous array before the kernel (ensure_row_contiguous).
        return ArrayInfo(dtype, tuple(array.shape), True, True, array)

    def synchronize(self) -> None:
        mx = sys.modules.get("mlx.core")
        if mx is not None:
            mx.synchronize()

    def allocate(self, shape: Any, dtype: Any) -> Any:
        # MLX has no uninitialised allocation.
        return self.zeros(shape, dtype)

    def zeros(self, shape: Any, dtype: Any) -> Any:
        import mlx.core as mx

        return mx.zeros(shape, dtype=_mlx.mlx_dtype(dtype))

    def to_device(self, array: np.ndarray) -> Any:
        import mlx.core as mx

        host = np.ascontiguousarray(array)
        if type_name_of(host.dtype) == "bfloat16":  # ml_dtypes.bfloat16: by its bits
            return mx.array(host.view(np.uint16)).view(mx.bfloat16)
        if host.dtype.fields is not None:
            # MLX has no structured dtypes: an array of structs is its bytes (mlx_structs).
            return mx.array(struct_bytes(host))
        # mx.array would turn float64 into float32 unless told the dtype.
        return mx.array(host, dtype=_mlx.mlx_dtype(host.dtype))

    def to_host(self, array: Any) -> np.ndarray:
        import mlx.core as mx

        if array.dtype == mx.bfloat16:  # NumPy's is ml_dtypes.bfloat16: by its bits
            return np.array(array.view(mx.uint16), copy=True).view(bfloat16_dtype())
        return np.array(array, copy=True)


class Metal(_MLXBackend):
    """MLX arrays on an Apple GPU, through ``mx.fast.metal_kernel``.

    Parameters
    ----------
    float64 : {"error", "cast"}, optional
        What a float64 argument does: ``"error"`` (the default) rejects it with a
        ``TypeError`` naming it; ``"cast"`` computes in float32 (arrays are
        converted on the way in and their results on the way out, scalars are
        narrowed, every ``double`` in the kernel becomes ``float``).

    Attributes
    ----------
    copies, copied_bytes : int
        Whole-array copies the launches of this object made so that writes
        reach the caller, and their total size (see ``docs/metal.md``).
    """

    name: ClassVar[str] = "Metal"
    target: ClassVar[str] = "metal"

    @classmethod
    def available(cls) -> Availability:
        mx = _mlx_core()
        if mx is None:
            return Availability(False, f"no Metal device: MLX is not installed; {_INSTALL_METAL}")
        try:
            if mx.metal.is_available():
                return Availability(True)
        except Exception as exc:  # noqa: BLE001 - report the probe's failure as the reason
            return Availability(False, f"no Metal device: MLX could not probe Metal ({exc})")
        where = f"{platform.system()} {platform.machine()}"
        reason = (f"no Metal device: MLX {_mlx_version(mx)} on {where} has no Metal back-end "
                  f"(Metal needs macOS on Apple silicon); `portakern check` still checks "
                  f"Metal sources here")
        if _cuda_available(mx):
            reason += "; MLX's CUDA back-end is available: use pk.MLXCUDA()"
        return Availability(False, reason)

    @classmethod
    def for_array(cls, array: Any) -> Backend:
        # MLX arrays live wherever MLX's GPU is: on an MLX CUDA build that is CUDA.
        if cls is Metal and mlx_uses_cuda():
            return default_instance(MLXCUDA)
        return default_instance(cls)

    def _factory(self) -> Any:
        import mlx.core as mx

        return mx.fast.metal_kernel


class MLXCUDA(_MLXBackend):
    """MLX arrays on an NVIDIA GPU, through ``mx.fast.cuda_kernel`` (MLX >= 0.29).

    The same marshalling as :class:`Metal`, with the CUDA rendering. Parameters
    and attributes as for :class:`Metal`.
    """

    name: ClassVar[str] = "MLX-CUDA"
    target: ClassVar[str] = "cuda"

    @classmethod
    def available(cls) -> Availability:
        mx = _mlx_core()
        if mx is None:
            return Availability(False, f"no CUDA device for MLX: MLX is not installed; "
                                       f"{_INSTALL_CUDA}")
        if not hasattr(getattr(mx, "fast", None), "cuda_kernel"):
            return Availability(False, f"no CUDA device for MLX: MLX {_mlx_version(mx)} has no "
                                       f"mx.fast.cuda_kernel (MLX >= 0.29 has it)")
        if not _cuda_available(mx):
            return Availability(False, f"no CUDA device for MLX: MLX {_mlx_version(mx)} here "
                                       f"has no CUDA back-end or sees no NVIDIA GPU; "
                                       f"{_INSTALL_CUDA}")
        return Availability(True)

    # CUDA's limits hold whoever launches: MLX hands the grid to the driver, which
    # would fail the launch (or MLX would split it wrongly) rather than say why.
    def max_workitem_sizes(self) -> tuple[int, ...]:
        return CUDA_MAX_BLOCK

    def launch(self, compiled: Any, args: list, global_size: tuple[int, ...],
               local_size: tuple[int, ...]) -> None:
        # Blocks along y and z are limited to 65535: the same check and message as
        # pk.CUDA, before anything is copied or scheduled.
        launch_config(global_size, local_size, DEFAULT_MAX_GRID)
        super().launch(compiled, args, global_size, local_size)

    def _factory(self) -> Any:
        import mlx.core as mx

        return mx.fast.cuda_kernel


def mlx_source(rendered: Any, *, float64: str = "error",
               shapes: dict[str, tuple[int, ...]] | None = None, **wrap: Any) -> str:
    """The whole source MLX compiles for a rendered kernel, written as MLX writes it.

    For compile checks without the GPU: ``check_metal(mlx_source(r), sources=r.sources())``
    checks a ``metal`` rendering exactly as :class:`Metal` hands it to
    ``mx.fast.metal_kernel`` (MLX's signature included); a ``cuda`` rendering
    gives what :class:`MLXCUDA` hands to ``mx.fast.cuda_kernel``.

    Parameters
    ----------
    rendered : portakern.render.emit.RenderedKernel
        From ``kernel.rendered("metal" or "cuda", bindings, ndim)``.
    float64 : {"error", "cast"}, optional
        As for :class:`Metal`; ``"cast"`` renders doubles as floats.
    shapes : dict, optional
        Shapes of MLX inputs by name; MLX declares inputs of fewer than 8
        elements in the constant address space, and 0-d ones by reference.
        Default: scalars 0-d, arrays of 1024 elements.
    **wrap
        ``utils=`` (Metal) or ``default_header=`` (CUDA): what stands for the
        header MLX puts first (see :mod:`portakern.backends._mlx`).
    """
    dialect = "cuda" if rendered.target == "cuda" else "metal"
    program = _mlx.build_program(rendered, dialect, cast64=float64 == "cast")
    # @localmem sized at launch: the check compiles the variant of one element.
    program.header = checked_header(program.header, sized_arrays(rendered))
    return _mlx.translation_unit(program, shapes=shapes, **wrap)
