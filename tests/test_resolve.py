"""get_backend: the resolution order, its stability, its errors and its speed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern import registry
from portakern.backends.base import default_instance
from portakern.launch import resolve


class Box:
    def __init__(self, data: np.ndarray) -> None:
        self.data = data


class SubBox(Box):
    pass


def _backend(label: str) -> type:
    """A distinct CPU-device backend class, named ``label``."""

    def array_info(self: Any, array: Any) -> Any:
        return pk.CPU.array_info(self, array.data) if isinstance(array, Box) else None

    return type(label, (pk.CPU,), {
        "name": label,
        "array_info": array_info,
        "__eq__": lambda self, other: type(other) is type(self),
        "__hash__": lambda self: hash(type(self)),
        "__repr__": lambda self: f"{label}()",
    })


BoxA = _backend("BoxA")
BoxB = _backend("BoxB")


def test_resolution_order_is_documented() -> None:
    assert resolve.RESOLUTION_ORDER[0] == "type(array).__portakern_backend__"
    doc = " ".join(resolve.__doc__.split())
    for step in ("__portakern_backend__", "register_backend", "entry points",
                 "__cuda_array_interface__"):
        assert step in doc


def test_numpy_and_subclasses_resolve_to_cpu(tmp_path: Any) -> None:
    class Sub(np.ndarray):
        pass

    assert pk.get_backend(np.zeros(3)) == pk.CPU()
    assert pk.get_backend(np.zeros(3).view(Sub)) == pk.CPU()
    mm = np.memmap(tmp_path / "m.bin", dtype=np.float32, mode="w+", shape=(4,))
    assert pk.get_backend(mm, np.zeros(2)) == pk.CPU()


def test_pyopencl_arrays_resolve_per_queue() -> None:
    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla

    status = pk.OpenCL.available()
    if not status:
        pytest.skip(status.reason)
    ctx = pk.CPU().context
    q1, q2 = cl.CommandQueue(ctx), cl.CommandQueue(ctx)
    a, b = cla.zeros(q1, 4, np.float32), cla.zeros(q1, 4, np.float32)
    c = cla.zeros(q2, 4, np.float32)
    assert pk.get_backend(a, b) is pk.get_backend(a)
    assert pk.get_backend(a).queue == q1
    with pytest.raises(TypeError, match=r"(?s)different backends.*argument 0.*argument 1"):
        pk.get_backend(a, c)


def test_protocol_forms() -> None:
    cpu = pk.CPU()

    class ByInstance:
        __portakern_backend__ = cpu

    class ByClass:
        __portakern_backend__ = pk.CPU

    class ByName:
        __portakern_backend__ = "CPU"

    class ByMethod:
        def __portakern_backend__(self) -> Any:
            return "CPU"

    for tp in (ByInstance, ByClass, ByName, ByMethod):
        assert pk.get_backend(tp()) == cpu, tp


def test_protocol_with_a_wrong_value_says_what_it_expected() -> None:
    class Wrong:
        __portakern_backend__ = 42

    with pytest.raises(TypeError, match=r"Wrong.__portakern_backend__ gave 42; expected a "
                                        r"portakern Backend"):
        pk.get_backend(Wrong())


def test_protocol_beats_a_registration(clean_registry: Any) -> None:
    class Claimed(Box):
        __portakern_backend__ = BoxB

    pk.register_backend("BoxA", BoxA, array_types=Box)
    assert pk.get_backend(Box(np.zeros(1))) == BoxA()
    assert pk.get_backend(Claimed(np.zeros(1))) == BoxB()


@pytest.mark.parametrize("order", ["base first", "subclass first"])
def test_most_derived_registration_wins_whatever_the_order(clean_registry: Any,
                                                           order: str) -> None:
    steps = [("BoxA", BoxA, Box), ("BoxB", BoxB, SubBox)]
    for name, cls, tp in steps if order == "base first" else steps[::-1]:
        pk.register_backend(name, cls, array_types=tp)
    assert pk.get_backend(Box(np.zeros(1))) == BoxA()
    assert pk.get_backend(SubBox(np.zeros(1))) == BoxB()


def test_registering_clears_the_per_type_cache(clean_registry: Any) -> None:
    with pytest.raises(TypeError):
        pk.get_backend(Box(np.zeros(1)))
    pk.register_backend("BoxA", BoxA, array_types=Box)
    assert pk.get_backend(Box(np.zeros(1))) == BoxA()
    registry.unregister_backend("BoxA")
    with pytest.raises(TypeError):
        pk.get_backend(Box(np.zeros(1)))


class FakeCUDA(pk.CPU):
    """Stands in for the CUDA backend, so duck typing can be checked without a GPU."""

    name = "FakeCUDA"

    def __eq__(self, other: object) -> bool:
        return type(other) is FakeCUDA

    def __hash__(self) -> int:
        return hash(FakeCUDA)


class CAI:
    __cuda_array_interface__ = {"shape": (1,), "typestr": "<f4", "data": (0, False),
                                "version": 3}


class DLPack:
    def __init__(self, device_type: int) -> None:
        self.device_type = device_type

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device_type, 0)


def test_duck_types_go_to_cuda_per_array(clean_registry: Any) -> None:
    pk.register_backend("CUDA", FakeCUDA, clobber=True)
    assert pk.get_backend(CAI()) == FakeCUDA()
    assert pk.get_backend(DLPack(2)) == FakeCUDA()  # kDLCUDA
    # The same type on the host is not a CUDA array: decided per array, not per type.
    with pytest.raises(TypeError, match="which no backend handles"):
        pk.get_backend(DLPack(1))
    assert pk.get_backend(DLPack(13)) == FakeCUDA()  # kDLCUDAManaged


def test_unknown_type_names_the_fixes() -> None:
    class Mystery:
        pass

    with pytest.raises(TypeError) as info:
        pk.get_backend(np.zeros(1), Mystery())
    msg = str(info.value)
    assert "argument 1 has type" in msg and "Mystery" in msg
    assert "pk.register_backend" in msg and "__portakern_backend__" in msg
    assert isinstance(info.value, pk.BackendMismatchError)


def test_mixed_backends_name_each_argument(clean_registry: Any) -> None:
    pk.register_backend("BoxA", BoxA, array_types=Box)
    with pytest.raises(TypeError, match=r"(?s)argument 0: numpy.ndarray -> CPU\(\).*"
                                        r"argument 1: .*Box -> BoxA\(\)"):
        pk.get_backend(np.zeros(1), Box(np.zeros(1)))


def test_kernel_call_with_mixed_arrays_names_parameters(clean_registry: Any) -> None:
    pk.register_backend("BoxA", BoxA, array_types=Box)
    k = pk.kernel("@kernel void copy(T* y, const T* x) { y[@index(Global, Linear)] = "
                  "x[@index(Global, Linear)]; }")
    with pytest.raises(TypeError, match=r"(?s)argument 0 'y'.*CPU\(\).*argument 1 'x'.*BoxA"):
        k(np.zeros(2, np.float32), Box(np.zeros(2, np.float32)), ndrange=2)


def test_stable_when_several_array_libraries_are_loaded() -> None:
    """Importing more array libraries never changes where an existing type goes."""
    before = pk.get_backend(np.zeros(1))
    for name in ("mlx.core", "pyopencl.array"):
        try:
            __import__(name)
        except ImportError:
            continue
    resolve.clear_resolution_cache()
    assert pk.get_backend(np.zeros(1)) == before
    mx = sys.modules.get("mlx.core")
    if mx is not None:
        assert registry.backend_for_type(type(mx.zeros(1))) == "Metal"
    assert registry.backend_for_type(np.ndarray) == "CPU"


def test_resolution_imports_no_array_library() -> None:
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import portakern as pk

        class Mystery:
            pass

        pk.get_backend(np.zeros(1))
        try:
            pk.get_backend(Mystery())
        except TypeError:
            pass
        loaded = [m for m in ("cupy", "mlx", "mlx.core", "torch", "jax") if m in sys.modules]
        assert not loaded, loaded
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_get_backend_cache_hit_does_no_work() -> None:
    # The contract (under 1 us) is a time, measured by ``portakern bench``'s get_backend
    # row, where a loaded machine shows as a number. A test that timed it failed once
    # under heavy load (issue 12); this one checks why the time holds, which no load
    # changes: a hit is the get_backend call, dict lookups, and the resolver it finds.
    a = np.zeros(4)
    get = pk.get_backend
    get(a)
    events: list[tuple[str, str]] = []

    def profile(frame, event, arg):
        if event == "call":
            events.append((event, frame.f_code.co_name))
        elif event == "c_call":
            events.append((event, getattr(arg, "__qualname__", repr(arg))))

    sys.setprofile(profile)
    try:
        got = get(a)
    finally:
        sys.setprofile(None)
    assert got is default_instance(pk.CPU)
    python_calls = [name for kind, name in events if kind == "call"]
    c_calls = [name for kind, name in events if kind == "c_call" and name != "setprofile"]
    assert python_calls[0] == "get_backend" and len(python_calls) <= 2, python_calls
    assert set(c_calls) <= {"dict.get"} and len(c_calls) <= 2, c_calls


def test_default_instance_is_shared() -> None:
    assert default_instance(pk.CPU) is default_instance(pk.CPU)
    assert pk.get_backend(np.zeros(1)) is default_instance(pk.CPU)
