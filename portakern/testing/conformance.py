"""The conformance suite: what every backend must get right, as pytest tests.

A backend adopts it in a few lines, the way each GPU package of
KernelAbstractions.jl runs its shared ``test/testsuite.jl``::

    from portakern.testing import ConformanceSuite

    class TestMyBackend(ConformanceSuite):
        backend = MyBackend          # a class, an instance, a factory or a name

The class is instantiated once per suite class; when it is unavailable
(``available()`` is false, or it cannot be constructed) every test is skipped
with the reason. Tests needing an optional feature (``"float64"``,
``"float16"``, ``"int64_atomics"``) are skipped with the reason where
``backend.supports(feature)`` is false.

What is covered: backend basics (arrays in and out, resolution), index kinds
(Global/Local/Group x Linear/NTuple, 1 to 3 axes, ``@ndrange``, ``@groupsize``),
partial last workgroups and the bounds mask, 0-axis and empty ndranges, launch
order, workgroup memory with barriers (a reduction, a tiled transpose), atomics
(add, sub, min, max, xchg, cas on global and local memory), every element type,
scalar passing, math functions, and the argument checks (count, dtype,
contiguity, read-only, scalars, ndrange, workgroup size, foreign arrays).

The kernels live in ``portakern/testing/kernels/*.pk`` and are loaded with
:mod:`importlib.resources`, as a library ships its own kernels.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
from typing import Any, ClassVar

import numpy as np
import pytest

from .. import registry
from ..backends.base import Backend
from ..errors import PortakernError
from ..kernels import Kernel
from ..launch.resolve import get_backend
from .agree import default_tolerance

__all__ = ["ConformanceSuite", "suite_kernel"]


@functools.cache
def suite_kernel(file: str, name: str, **constants: Any) -> Kernel:
    """Kernel ``name`` of the suite's ``kernels/<file>``, with constants bound."""
    source = (importlib.resources.files(__package__) / "kernels" / file).read_text("utf-8")
    return Kernel(source, name, filename=f"portakern/testing/kernels/{file}", **constants)


_SUITE_BACKENDS: dict[type, Backend | str] = {}


def _instantiate(spec: Any) -> Backend | str:
    """A backend object, or the reason there is none here."""
    if spec is None:
        return "set the suite's class attribute 'backend' (a Backend class or instance)"
    try:
        if isinstance(spec, str):
            status = registry.backend_status(spec)
            return registry.backend_by_name(spec) if status else status.reason
        if isinstance(spec, type) and issubclass(spec, Backend):
            status = spec.available()
            return spec() if status else status.reason
        backend = spec if isinstance(spec, Backend) else spec()
    except Exception as exc:  # noqa: BLE001 - any failure to construct is a reason to skip
        return f"{type(exc).__name__}: {exc}"
    if not isinstance(backend, Backend):
        return f"'backend' gave {backend!r}, which is not a portakern Backend"
    status = backend.available()
    return backend if status else status.reason


# Element types: (dtype, feature the device needs or None).
ALL_DTYPES = [
    (np.bool_, None), (np.int8, None), (np.uint8, None), (np.int16, None), (np.uint16, None),
    (np.int32, None), (np.uint32, None), (np.int64, None), (np.uint64, None),
    (np.float16, "float16"), (np.float32, None), (np.float64, "float64"),
]
ATOMIC_DTYPES = [
    (np.int32, ()), (np.uint32, ()), (np.float32, ()),
    (np.int64, ("int64_atomics",)), (np.uint64, ("int64_atomics",)),
    (np.float64, ("float64", "int64_atomics")),
]
_NUMERIC_DTYPES = [d for d in ALL_DTYPES if d[0] is not np.bool_]
_REDUCE_DTYPES = [(np.int32, None), (np.float32, None), (np.float64, "float64")]
_ROUND_TRIP = [np.float32, np.int32, np.uint8]
# (ndrange, workgroupsize) with partial last groups on purpose; None lets the backend choose.
SHAPES = [
    ((100,), (16,)), ((1009,), None), ((13, 7), (4, 4)), ((9, 10), (3, 5)),
    ((5, 6, 7), (2, 2, 4)), ((3, 1, 17), None),
]


def _ids(params: list) -> list[str]:
    return [np.dtype(p[0] if isinstance(p, tuple) else p).name for p in params]


def _expected_ids(shape: tuple[int, ...], wg: tuple[int, ...]) -> dict[str, np.ndarray]:
    n = math.prod(shape)
    idx = np.array(np.unravel_index(np.arange(n), shape))  # (D, n), last axis fastest
    w = np.array(wg)[:, None]
    groups = tuple(-(-s // g) for s, g in zip(shape, wg, strict=True))
    loc, grp = idx % w, idx // w
    return {
        "loc": loc.T.ravel(),
        "grp": grp.T.ravel(),
        "loc_lin": np.ravel_multi_index(tuple(loc), wg),
        "grp_lin": np.ravel_multi_index(tuple(grp), groups),
    }


class ConformanceSuite:
    """Base class of a backend's conformance tests (see the module docstring).

    Attributes
    ----------
    backend : Backend, Backend subclass, str or callable
        What to test: an instance, a class (instantiated with no arguments), a
        registered backend name, or a zero-argument factory. Inside a test,
        ``self.backend`` is the instance.
    """

    backend: ClassVar[Any] = None

    @pytest.fixture(autouse=True)
    def _portakern_backend(self) -> None:
        cls = type(self)
        hit = _SUITE_BACKENDS.get(cls)
        if hit is None:
            hit = _SUITE_BACKENDS[cls] = _instantiate(cls.backend)
        if isinstance(hit, str):
            pytest.skip(f"backend unavailable: {hit}")
        self.backend = hit

    # -- hooks a backend may override ------------------------------------------------
    def to_device(self, host: np.ndarray) -> Any:
        """Copy a NumPy array to the backend."""
        return self.backend.to_device(np.ascontiguousarray(host))

    def to_host(self, array: Any) -> np.ndarray:
        """Wait for the backend, then copy an array back."""
        self.backend.synchronize()
        return np.asarray(self.backend.to_host(array))

    def make_readonly(self, host: np.ndarray) -> Any:
        """A read-only array of the backend holding ``host``, or ``pytest.skip``.

        The default works where the backend launches on NumPy arrays; a backend
        whose arrays can be read-only overrides it.
        """
        if self.backend.array_info(host) is None:
            pytest.skip(f"{self.backend!r} has no read-only arrays (override make_readonly)")
        out = host.copy()
        out.setflags(write=False)
        return out

    def make_noncontiguous(self, host: np.ndarray) -> Any:
        """A non-contiguous view of a backend array holding ``host`` (every other item)."""
        try:
            view = self.to_device(host)[::2]
        except Exception as exc:  # noqa: BLE001 - not every array library slices with steps
            pytest.skip(f"{self.backend!r} arrays cannot be sliced with a step: {exc}")
        info = self.backend.array_info(view)
        if info is not None and info.c_contiguous:
            # MLX: a sliced array is an array of its own, with no strides its users see
            # (MLX copies it into a row-contiguous buffer for a kernel).
            pytest.skip(f"{self.backend!r} arrays have no visible strides: a view sliced "
                        f"with a step is contiguous to the backend")
        return view

    # -- helpers ------------------------------------------------------------------
    def require(self, *features: str) -> None:
        """Skip the test unless the backend supports every feature."""
        for f in features:
            if not self.backend.supports(f):
                pytest.skip(f"{self.backend!r} does not support {f}")

    def run(self, kernel: Kernel, *args: Any, ndrange: Any,
            workgroupsize: Any = None) -> list[np.ndarray | None]:
        """Launch with NumPy arguments moved to the backend; return every array back."""
        dev = [self.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        kernel(self.backend, workgroupsize)(*dev, ndrange=ndrange)
        return [self.to_host(d) if isinstance(a, np.ndarray) else None
                for a, d in zip(args, dev, strict=True)]

    # -- the backend itself ----------------------------------------------------------
    def test_contract_attributes(self) -> None:
        b = self.backend
        assert isinstance(b.name, str) and b.name
        assert isinstance(b.target, str) and b.target
        assert type(b).available()
        assert isinstance(repr(b), str)
        assert b == b and hash(b) == hash(b)

    @pytest.mark.parametrize("dtype", _ROUND_TRIP, ids=_ids(_ROUND_TRIP))
    def test_arrays_round_trip(self, dtype: Any) -> None:
        host = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
        dev = self.to_device(host)
        back = self.to_host(dev)
        np.testing.assert_array_equal(back, host)
        assert back.dtype == host.dtype
        back[0, 0] = 5
        np.testing.assert_array_equal(self.to_host(dev), host)  # to_host copies
        # Every way of making an array gives one of the backend's own arrays.
        made = {"to_device": dev, "zeros": self.backend.zeros((3, 5), dtype),
                "allocate": self.backend.allocate((2, 3), dtype)}
        for how, array in made.items():
            assert self.backend.array_info(array) is not None, (
                f"{self.backend!r}.{how}() returned a {type(array).__name__}, which the "
                f"backend's array_info() does not accept as its own array")
        zeros = self.to_host(made["zeros"])
        assert zeros.shape == (3, 5) and zeros.dtype == np.dtype(dtype) and not zeros.any()
        info = self.backend.array_info(made["allocate"])
        assert info is not None and info.dtype == np.dtype(dtype) and info.c_contiguous

    def test_arrays_resolve_to_backend(self) -> None:
        dev = self.to_device(np.zeros(8, np.float32))
        assert get_backend(dev) == self.backend

    def test_direct_call_form(self) -> None:
        y = self.to_device(np.ones(50, np.float32))
        x = self.to_device(np.arange(50, dtype=np.float32))
        suite_kernel("types.pk", "saxpy")(y, x, 2.0, ndrange=50)
        np.testing.assert_array_equal(self.to_host(y), 2 * np.arange(50) + 1)

    # -- index kinds ----------------------------------------------------------------
    @pytest.mark.parametrize("n, wg", [(1, 64), (63, 64), (64, 64), (65, 64), (1000, 64),
                                       (1000, None), (1009, 7)])
    def test_global_linear_partial_groups(self, n: int, wg: Any) -> None:
        out = np.full(n + 16, -1, np.int64)  # the tail guards against stray writes
        (got,) = self.run(suite_kernel("index.pk", "global_linear", D=1), out, ndrange=n,
                          workgroupsize=wg)
        np.testing.assert_array_equal(got[:n], np.arange(n))
        np.testing.assert_array_equal(got[n:], -1)

    @pytest.mark.parametrize("shape, wg", SHAPES)
    def test_global_linear_is_row_major(self, shape: tuple, wg: Any) -> None:
        n = math.prod(shape)
        out = np.full(n + 16, -1, np.int64)
        (got,) = self.run(suite_kernel("index.pk", "global_linear_nd", D=1), out,
                          ndrange=shape, workgroupsize=wg)
        np.testing.assert_array_equal(got[:n], np.arange(n))
        np.testing.assert_array_equal(got[n:], -1)

    @pytest.mark.parametrize("shape, wg", [((13, 7), (4, 4)), ((1, 1), None), ((64, 3), (8, 2)),
                                           ((5, 300), None), ((2, 129), (1, 64))])
    def test_global_ntuple_2d(self, shape: tuple, wg: Any) -> None:
        n = math.prod(shape)
        out = np.full(n + 16, -1, np.int64)
        (got,) = self.run(suite_kernel("index.pk", "global_ntuple_2d", D=2), out,
                          ndrange=shape, workgroupsize=wg)
        i, j = np.indices(shape)
        np.testing.assert_array_equal(got[:n], (i * 1000 + j).ravel())
        np.testing.assert_array_equal(got[n:], -1)

    @pytest.mark.parametrize("shape, wg", [((5, 6, 7), (2, 2, 4)), ((3, 1, 17), None),
                                           ((1, 9, 2), (1, 4, 2))])
    def test_global_ntuple_3d(self, shape: tuple, wg: Any) -> None:
        n = math.prod(shape)
        out = np.full(n + 16, -1, np.int64)
        (got,) = self.run(suite_kernel("index.pk", "global_ntuple_3d", D=3), out,
                          ndrange=shape, workgroupsize=wg)
        i, j, k = np.indices(shape)
        np.testing.assert_array_equal(got[:n], ((i * 1000 + j) * 1000 + k).ravel())
        np.testing.assert_array_equal(got[n:], -1)

    @pytest.mark.parametrize("shape, wg", [s for s in SHAPES if s[1] is not None])
    def test_local_and_group_indices(self, shape: tuple, wg: tuple) -> None:
        d, n = len(shape), math.prod(shape)
        args = [np.full(n * d, -1, np.int64), np.full(n * d, -1, np.int64),
                np.full(n, -1, np.int64), np.full(n, -1, np.int64)]
        got = self.run(suite_kernel("index.pk", "ids", D=d), *args, ndrange=shape,
                       workgroupsize=wg)
        want = _expected_ids(shape, wg)
        for name, value in zip(("loc", "grp", "loc_lin", "grp_lin"), got, strict=True):
            np.testing.assert_array_equal(value, want[name], err_msg=name)

    @pytest.mark.parametrize("shape, wg", [s for s in SHAPES if s[1] is not None])
    def test_ndrange_and_groupsize(self, shape: tuple, wg: tuple) -> None:
        d = len(shape)
        out = np.full(2 * d + 2, -1, np.int64)
        (got,) = self.run(suite_kernel("index.pk", "sizes", D=d), out, ndrange=shape,
                          workgroupsize=wg)
        np.testing.assert_array_equal(
            got, [*shape, *wg, math.prod(shape), math.prod(wg)])

    def test_default_workgroupsize_fits(self) -> None:
        for shape in [(1009,), (33, 17), (3, 5, 7)]:
            out = np.full(math.prod(shape), -1, np.int64)
            (got,) = self.run(suite_kernel("index.pk", "global_linear_nd", D=1), out,
                              ndrange=shape)
            np.testing.assert_array_equal(got, np.arange(out.size), err_msg=str(shape))

    def test_zero_axis_ndrange_runs_one_item(self) -> None:
        (got,) = self.run(suite_kernel("index.pk", "one_item", D=1), np.zeros(2, np.int64),
                          ndrange=())
        np.testing.assert_array_equal(got, [42, 0])

    @pytest.mark.parametrize("shape", [0, (0, 5), (4, 0, 2)])
    def test_empty_ndrange_launches_nothing(self, shape: Any) -> None:
        (got,) = self.run(suite_kernel("index.pk", "global_linear_nd", D=1),
                          np.full(4, -1, np.int64), ndrange=shape)
        np.testing.assert_array_equal(got, -1)

    def test_launches_run_in_order(self) -> None:
        y = self.to_device(np.arange(1000, dtype=np.float32))
        add_one = suite_kernel("index.pk", "add_one", D=1)(self.backend)
        twice = suite_kernel("index.pk", "twice", D=1)(self.backend)
        for _ in range(3):
            add_one(y, ndrange=1000)
            twice(y, ndrange=1000)
        want = np.arange(1000, dtype=np.float32)
        for _ in range(3):
            want = (want + 1) * 2
        np.testing.assert_array_equal(self.to_host(y), want)

    def test_static_workgroupsize(self) -> None:
        launch = suite_kernel("index.pk", "global_linear", D=1)(self.backend, 32)
        y = self.to_device(np.zeros(100, np.int64))
        launch(y, ndrange=100)
        np.testing.assert_array_equal(self.to_host(y), np.arange(100))
        with pytest.raises(ValueError, match="conflicts with the static workgroupsize"):
            launch(y, ndrange=100, workgroupsize=16)

    # -- workgroup memory and barriers ----------------------------------------------------
    @pytest.mark.parametrize("dtype, feature", _REDUCE_DTYPES, ids=_ids(_REDUCE_DTYPES))
    @pytest.mark.parametrize("n", [1, 64, 129, 1000])
    def test_localmem_reduction(self, dtype: Any, feature: str | None, n: int) -> None:
        if feature:
            self.require(feature)
        group = 64
        x = np.random.default_rng(n).integers(0, 100, n).astype(dtype)
        partial = np.zeros(-(-n // group), dtype)
        k = suite_kernel("localmem.pk", "group_sum", GROUP=group, TILE=8)
        (got, _) = self.run(k, partial, x, ndrange=n, workgroupsize=group)
        padded = np.zeros(partial.size * group, dtype)
        padded[:n] = x
        np.testing.assert_array_equal(got, padded.reshape(-1, group).sum(axis=1, dtype=dtype))

    @pytest.mark.parametrize("shape", [(37, 45), (16, 16), (1, 33), (9, 1)])
    def test_localmem_tiled_transpose(self, shape: tuple) -> None:
        tile = 8
        x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
        out = np.full(shape[::-1], -1, np.float32)
        (got, _) = self.run(suite_kernel("localmem.pk", "transpose", GROUP=64, TILE=tile), out, x,
                            ndrange=shape, workgroupsize=(tile, tile))
        np.testing.assert_array_equal(got, x.T)

    # -- atomics --------------------------------------------------------------------
    @pytest.mark.parametrize("dtype, features", ATOMIC_DTYPES, ids=_ids(ATOMIC_DTYPES))
    def test_atomic_add_sub_min_max(self, dtype: Any, features: tuple) -> None:
        self.require(*features)
        # Small integers: every order of additions gives the same, exact, float sum.
        x = np.random.default_rng(1).integers(1, 16, 1000).astype(dtype)
        acc = np.array([0, 20000, 100, 0], dtype)
        (got, _) = self.run(suite_kernel("atomics.pk", "atomic_arith"), acc, x, ndrange=x.size,
                            workgroupsize=64)
        total = x.sum(dtype=np.int64)
        np.testing.assert_array_equal(got, np.array([total, 20000 - total, min(100, x.min()),
                                                     max(0, x.max())]).astype(dtype))

    @pytest.mark.parametrize("dtype, features", ATOMIC_DTYPES, ids=_ids(ATOMIC_DTYPES))
    def test_atomic_cas(self, dtype: Any, features: tuple) -> None:
        self.require(*features)
        n = 500
        counter, tickets = self.run(suite_kernel("atomics.pk", "cas_tickets"),
                                    np.zeros(1, dtype), np.zeros(n, dtype), ndrange=n)
        assert counter[0] == n
        np.testing.assert_array_equal(np.sort(tickets), np.arange(n, dtype=dtype))

    @pytest.mark.parametrize("dtype, features", ATOMIC_DTYPES, ids=_ids(ATOMIC_DTYPES))
    def test_atomic_xchg(self, dtype: Any, features: tuple) -> None:
        self.require(*features)
        n = 300
        x = np.arange(1, n + 1, dtype=dtype)
        slot, found, _ = self.run(suite_kernel("atomics.pk", "xchg_chain"),
                                  np.zeros(1, dtype), np.zeros(n, dtype), x, ndrange=n)
        # The swaps form one chain: every value ends up exactly once in found or slot.
        np.testing.assert_array_equal(np.sort(np.concatenate([found, slot])),
                                      np.arange(n + 1, dtype=dtype))

    @pytest.mark.parametrize("n", [1, 64, 1000])
    def test_atomic_on_local_memory(self, n: int) -> None:
        x = np.random.default_rng(2).integers(0, 1000, n).astype(np.uint32)
        (got, _) = self.run(suite_kernel("atomics.pk", "local_count"), np.zeros(1, np.uint32),
                            x, ndrange=n, workgroupsize=64)
        assert got[0] == np.count_nonzero(x & 1)

    def test_int64_atomics_missing_is_a_clear_error(self) -> None:
        if self.backend.supports("int64_atomics"):
            pytest.skip(f"{self.backend!r} supports int64 atomics")
        with pytest.raises(PortakernError):
            self.run(suite_kernel("atomics.pk", "atomic_arith"), np.zeros(4, np.int64),
                     np.ones(8, np.int64), ndrange=8)

    # -- element types, scalars, math -----------------------------------------------------
    @pytest.mark.parametrize("dtype, feature", ALL_DTYPES, ids=_ids(ALL_DTYPES))
    def test_dtype_copy(self, dtype: Any, feature: str | None) -> None:
        if feature:
            self.require(feature)
        rng = np.random.default_rng(3)
        if np.dtype(dtype).kind == "f":
            x = rng.standard_normal(257).astype(dtype)
        elif np.dtype(dtype).kind == "b":
            x = rng.integers(0, 2, 257).astype(dtype)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, 257, dtype=dtype, endpoint=True)
        (got, _) = self.run(suite_kernel("types.pk", "copy"), np.zeros_like(x), x, ndrange=257)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, x)

    @pytest.mark.parametrize("dtype, feature", _NUMERIC_DTYPES, ids=_ids(_NUMERIC_DTYPES))
    def test_dtype_arithmetic(self, dtype: Any, feature: str | None) -> None:
        if feature:
            self.require(feature)
        x = (np.arange(100) % 10).astype(dtype)
        a, b = np.dtype(dtype).type(2), np.dtype(dtype).type(3)
        (got, _, _, _) = self.run(suite_kernel("types.pk", "affine"), np.zeros_like(x), x, a, b,
                                  ndrange=100)
        np.testing.assert_array_equal(got, (a * x + b).astype(dtype))

    @pytest.mark.parametrize("dtype, feature", ALL_DTYPES, ids=_ids(ALL_DTYPES))
    def test_scalar_extremes(self, dtype: Any, feature: str | None) -> None:
        if feature:
            self.require(feature)
        dt = np.dtype(dtype)
        if dt.kind == "b":
            values = [True, False]
        elif dt.kind == "f":
            fi = np.finfo(dt)
            values = [fi.max, -fi.max, fi.smallest_normal, dt.type(np.pi), dt.type(-0.0)]
        else:
            ii = np.iinfo(dt)
            values = [ii.max, ii.min, 1]
        for v in values:
            (got, _) = self.run(suite_kernel("types.pk", "fill"), np.zeros(5, dt), dt.type(v),
                                ndrange=5)
            np.testing.assert_array_equal(got, np.full(5, v, dt), err_msg=repr(v))
            if dt.kind == "f":
                assert np.signbit(got[0]) == np.signbit(dt.type(v))

    def test_math_functions(self) -> None:
        x = np.linspace(0.1, 2.0, 200, dtype=np.float32)
        (got, _) = self.run(suite_kernel("types.pk", "math"), np.zeros(200 * 16, np.float32), x,
                            ndrange=200)
        v = x.astype(np.float64)
        three = (x * np.float32(3)).astype(np.float64)
        want = np.stack([np.sqrt(v), np.exp(v), np.log(v), np.sin(v), np.cos(v), np.tanh(v),
                         v ** 1.5, v, np.minimum(v, 0.5), np.maximum(v, 0.5), v * 2 + 1,
                         np.floor(three), np.ceil(three), np.minimum(v, 0.5),
                         np.maximum(v, 0.5), np.clip(v, 0.25, 0.75)], axis=1)
        names = ["sqrt", "exp", "log", "sin", "cos", "tanh", "pow", "fabs", "fmin", "fmax",
                 "fma", "floor", "ceil", "min", "max", "clamp"]
        got = got.reshape(200, 16)
        rtol, atol = default_tolerance(np.float32)
        for k, name in enumerate(names):
            np.testing.assert_allclose(got[:, k], want[:, k].astype(np.float32), rtol=rtol * 2,
                                       atol=atol * 10, err_msg=name)

    # -- argument checks ------------------------------------------------------------
    def _saxpy_args(self) -> tuple[Any, Any]:
        return (self.to_device(np.ones(16, np.float32)),
                self.to_device(np.arange(16, dtype=np.float32)))

    def test_error_argument_count(self) -> None:
        y, x = self._saxpy_args()
        launch = suite_kernel("types.pk", "saxpy")(self.backend)
        with pytest.raises(TypeError, match="takes 3 arguments"):
            launch(y, x, ndrange=16)
        with pytest.raises(TypeError, match="takes 3 arguments"):
            launch(y, x, 1.0, 2.0, ndrange=16)

    def test_error_dtype(self) -> None:
        y, _ = self._saxpy_args()
        bad = self.to_device(np.arange(16, dtype=np.int32))
        launch = suite_kernel("types.pk", "saxpy")(self.backend)
        with pytest.raises(TypeError, match=r"argument 1 'x'.*float32.*int32"):
            launch(y, bad, 2.0, ndrange=16)
        np.testing.assert_array_equal(self.to_host(y), 1)  # a rejected call writes nothing

    def test_error_type_variable_conflict(self) -> None:
        y = self.to_device(np.zeros(4, np.float32))
        x = self.to_device(np.zeros(4, np.int32))
        with pytest.raises(TypeError, match=r"'x'.*T is already"):
            suite_kernel("types.pk", "copy")(self.backend)(y, x, ndrange=4)

    def test_error_noncontiguous(self) -> None:
        _, x = self._saxpy_args()
        y = self.make_noncontiguous(np.ones(32, np.float32))
        with pytest.raises(ValueError, match=r"'y'.*C-contiguous"):
            suite_kernel("types.pk", "saxpy")(self.backend)(y, x, 2.0, ndrange=16)

    def test_error_readonly(self) -> None:
        _, x = self._saxpy_args()
        y = self.make_readonly(np.ones(16, np.float32))
        with pytest.raises(ValueError, match=r"'y'.*read-only"):
            suite_kernel("types.pk", "saxpy")(self.backend)(y, x, 2.0, ndrange=16)

    @pytest.mark.parametrize("value, error, match", [
        (2**24 + 1, ValueError, "exactly"), (1e39, ValueError, "overflows"),
        ("2", TypeError, "must be a number"), (None, TypeError, "must be a number"),
    ])
    def test_error_scalar(self, value: Any, error: type, match: str) -> None:
        y, x = self._saxpy_args()
        with pytest.raises(error, match=match):
            suite_kernel("types.pk", "saxpy")(self.backend)(y, x, value, ndrange=16)

    def test_error_integer_scalar(self) -> None:
        fill = suite_kernel("types.pk", "fill")(self.backend)
        y = self.to_device(np.zeros(4, np.int32))
        with pytest.raises(TypeError, match="must be an integer"):
            fill(y, 1.5, ndrange=4)
        with pytest.raises(ValueError, match="out of range"):
            fill(y, 2**31, ndrange=4)

    @pytest.mark.parametrize("ndrange", [(1, 2, 3, 4), -1, (4, -2), 2.5, None, "16"])
    def test_error_ndrange(self, ndrange: Any) -> None:
        y, x = self._saxpy_args()
        with pytest.raises(ValueError, match="ndrange"):
            suite_kernel("types.pk", "saxpy")(self.backend)(y, x, 2.0, ndrange=ndrange)

    def test_error_workgroup_too_big(self) -> None:
        y, x = self._saxpy_args()
        launch = suite_kernel("types.pk", "saxpy")(self.backend)
        with pytest.raises(ValueError, match="workgroupsize"):
            launch(y, x, 2.0, ndrange=16, workgroupsize=1 << 24)
        with pytest.raises(ValueError, match="workgroupsize"):
            launch(y, x, 2.0, ndrange=16, workgroupsize=(4, 4))
        with pytest.raises(ValueError, match="workgroupsize"):
            launch(y, x, 2.0, ndrange=16, workgroupsize=0)
        np.testing.assert_array_equal(self.to_host(y), 1)

    def test_error_foreign_array(self) -> None:
        host = np.ones(16, np.float32)
        if self.backend.array_info(host) is not None:
            pytest.skip(f"{self.backend!r} launches on NumPy arrays directly")
        _, x = self._saxpy_args()
        with pytest.raises(TypeError, match=r"argument 0 'y'"):
            suite_kernel("types.pk", "saxpy")(self.backend)(host, x, 2.0, ndrange=16)
