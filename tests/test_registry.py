"""The backend registry: register_backend, the read-only view, entry points, templates,
the backend contract, and a real plugin installed and loaded lazily."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import portakern as pk
from portakern import registry
from portakern.backends.base import MUST, Backend
from portakern.errors import BackendUnavailableError, PortakernError
from portakern.registry import BackendRegistrationError

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "tests" / "plugins" / "portakern_torchcpu"

SAXPY = """
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
"""


class Boxed:
    """An array type of this test: a NumPy buffer in a box."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data


class BoxedCPU(pk.CPU):
    """Runs Boxed arrays on the CPU device, zero-copy."""

    name = "BoxedCPU"

    def __eq__(self, other: object) -> bool:
        return type(other) is BoxedCPU

    def __hash__(self) -> int:
        return hash(BoxedCPU)

    def __repr__(self) -> str:
        return "BoxedCPU()"

    def array_info(self, array: Any) -> Any:
        return super().array_info(array.data) if isinstance(array, Boxed) else None

    def to_device(self, array: np.ndarray) -> Boxed:
        return Boxed(np.array(array, copy=True))

    def to_host(self, array: Boxed) -> np.ndarray:
        return np.array(array.data, copy=True)

    def allocate(self, shape: Any, dtype: Any) -> Boxed:
        return Boxed(np.empty(shape, dtype))


# -- the read-only view -------------------------------------------------------------------

def test_builtins_are_listed_in_a_stable_order() -> None:
    records = pk.registered_backends()
    assert list(records)[:4] == ["CPU", "OpenCL", "CUDA", "Metal"]
    cpu = records["CPU"]
    assert cpu.cls == "portakern.backends.opencl:CPU"
    assert cpu.array_types == ("numpy.ndarray",)
    assert cpu.origin == "built-in"
    assert "pip install" in records["CUDA"].install_hint
    assert cpu["install_hint"] == cpu.install_hint  # records also read like dicts


def test_view_is_read_only() -> None:
    records = pk.registered_backends()
    with pytest.raises(TypeError):
        records["Mine"] = records["CPU"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        records["CPU"].cls = "x:y"  # type: ignore[misc]


# -- registering by call ------------------------------------------------------------------

def test_register_by_class_resolves_and_launches(clean_registry: Any) -> None:
    pk.register_backend("BoxedCPU", BoxedCPU, array_types=Boxed)
    y, x = Boxed(np.ones(100, np.float32)), Boxed(np.arange(100, dtype=np.float32))
    assert pk.get_backend(y) == BoxedCPU()
    pk.kernel(SAXPY)(y, x, np.float32(2), ndrange=100)
    np.testing.assert_array_equal(y.data, 2 * np.arange(100) + 1)
    record = pk.registered_backends()["BoxedCPU"]
    assert record.origin == "register_backend"
    assert record.array_types == (f"{__name__}.Boxed",)


def test_register_by_path_imports_nothing_until_resolved(clean_registry: Any,
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lazy_arrays_mod.py").write_text(textwrap.dedent("""
        class Arr:
            def __init__(self, data):
                self.data = data
    """))
    (tmp_path / "lazy_backend_mod.py").write_text(textwrap.dedent(f"""
        from {__name__} import BoxedCPU

        class LazyCPU(BoxedCPU):
            name = "LazyCPU"

            def array_info(self, array):
                return super(BoxedCPU, self).array_info(array.data)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    pk.register_backend("LazyCPU", "lazy_backend_mod:LazyCPU",
                        array_types="lazy_arrays_mod.Arr", install_hint="pip install lazy")
    assert "lazy_backend_mod" not in sys.modules
    assert "lazy_arrays_mod" not in sys.modules  # a type path is never imported either
    import lazy_arrays_mod

    arr = lazy_arrays_mod.Arr(np.zeros(3))
    backend = pk.get_backend(arr)
    assert type(backend).__name__ == "LazyCPU"
    assert "lazy_backend_mod" in sys.modules


def test_same_registration_twice_is_harmless(clean_registry: Any) -> None:
    pk.register_backend("BoxedCPU", BoxedCPU, array_types=Boxed)
    pk.register_backend("BoxedCPU", BoxedCPU, array_types=[Boxed])
    pk.register_backend("BoxedCPU", f"{__name__}:BoxedCPU", array_types=f"{__name__}.Boxed")


def test_name_clash_is_an_error_unless_clobber(clean_registry: Any) -> None:
    pk.register_backend("BoxedCPU", BoxedCPU, array_types=Boxed)
    with pytest.raises(BackendRegistrationError, match=r"'BoxedCPU' is already registered.*"
                                                       r"clobber=True") as info:
        pk.register_backend("BoxedCPU", "elsewhere:Other")
    assert isinstance(info.value, ValueError) and isinstance(info.value, PortakernError)
    pk.register_backend("BoxedCPU", "elsewhere:Other", clobber=True)
    assert pk.registered_backends()["BoxedCPU"].cls == "elsewhere:Other"
    # Replaced by name, the backend keeps its arrays unless given others.
    assert pk.registered_backends()["BoxedCPU"].array_types == (f"{__name__}.Boxed",)
    pk.register_backend("BoxedCPU", BoxedCPU, array_types="other.Type", clobber=True)
    assert registry.backend_for_type(Boxed) is None


def test_array_type_clash_names_both_backends(clean_registry: Any) -> None:
    pk.register_backend("BoxedCPU", BoxedCPU, array_types=Boxed)
    with pytest.raises(BackendRegistrationError,
                       match=rf"array type {__name__}.Boxed is already handled by backend "
                             r"'BoxedCPU'.*clobber=True"):
        pk.register_backend("Other", BoxedCPU, array_types=Boxed)
    pk.register_backend("Other", BoxedCPU, array_types=Boxed, clobber=True)
    assert pk.registered_backends()["BoxedCPU"].array_types == ()
    assert registry.backend_for_type(Boxed) == "Other"


def test_builtin_type_needs_clobber_and_comes_back(clean_registry: Any) -> None:
    with pytest.raises(BackendRegistrationError, match="numpy.ndarray is already handled by "
                                                       "backend 'CPU'"):
        pk.register_backend("MyNumPy", BoxedCPU, array_types=np.ndarray)
    pk.register_backend("MyNumPy", BoxedCPU, array_types=np.ndarray, clobber=True)
    assert registry.backend_for_type(np.ndarray) == "MyNumPy"
    registry.unregister_backend("MyNumPy")
    assert registry.backend_for_type(np.ndarray) == "CPU"
    assert pk.get_backend(np.zeros(2)) == pk.CPU()
    assert pk.registered_backends()["CPU"].array_types == ("numpy.ndarray",)


def test_builtin_name_needs_clobber(clean_registry: Any) -> None:
    with pytest.raises(BackendRegistrationError, match="'CPU' is already registered"):
        pk.register_backend("CPU", BoxedCPU)
    pk.register_backend("CPU", BoxedCPU, clobber=True)
    assert registry.backend_class("CPU") is BoxedCPU
    assert registry.backend_for_type(np.ndarray) == "CPU"  # NumPy arrays now go to BoxedCPU
    registry.unregister_backend("CPU")
    assert registry.backend_class("CPU") is pk.CPU
    with pytest.raises(BackendRegistrationError, match="registered with register_backend"):
        registry.unregister_backend("CPU")


@pytest.mark.parametrize("cls, types, match", [
    (int, (), "not a portakern.Backend subclass"),
    ("not a path!", (), "'package.module:Class' path"),
    (BoxedCPU, [3], "must be a type or a dotted path"),
    (BoxedCPU, ["torch"], "must be a type or a dotted path"),
    (BoxedCPU, 3, "array_types must be"),
])
def test_bad_arguments_are_type_errors(clean_registry: Any, cls: Any, types: Any,
                                       match: str) -> None:
    with pytest.raises(TypeError, match=match):
        pk.register_backend("Bad", cls, array_types=types)
    with pytest.raises(TypeError, match="non-empty str"):
        pk.register_backend("", BoxedCPU)


def test_missing_module_is_an_import_error_with_the_hint(clean_registry: Any) -> None:
    pk.register_backend("Ghost", "no_such_module_xyz:Ghost", install_hint="pip install ghost")
    with pytest.raises(BackendUnavailableError, match=r"'Ghost'.*cannot be imported.*"
                                                      r"pip install ghost") as info:
        registry.backend_class("Ghost")
    assert isinstance(info.value, ImportError)
    status = registry.backend_status("Ghost")
    assert not status and "pip install ghost" in status.reason


def test_path_to_something_else_is_named(clean_registry: Any) -> None:
    pk.register_backend("NotABackend", "numpy:ndarray")
    with pytest.raises(BackendRegistrationError, match="not a portakern.Backend subclass"):
        registry.backend_class("NotABackend")


def test_unknown_name_lists_the_registered_ones() -> None:
    with pytest.raises(TypeError, match=r"no backend named 'Nope'; registered: CPU, CUDA"):
        registry.backend_by_name("Nope")


# -- templates ---------------------------------------------------------------------------------

def _opencl_templates() -> Path:
    from portakern.render.emit import _packaged_templates

    return _packaged_templates() / "opencl"


def test_plugin_template_folder_adds_a_target(clean_registry: Any, tmp_path: Path) -> None:
    folder = tmp_path / "templates" / "pkdemo"
    shutil.copytree(_opencl_templates(), folder)
    module = folder / "module.j2"
    module.write_text("/* rendered by the pkdemo templates */\n" + module.read_text())

    class PkDemo(pk.CPU):
        # A new dialect (here OpenCL C in disguise) on the CPU device.
        name = "PkDemo"
        target = "pkdemo"

        @property
        def cache_key(self) -> Any:
            return ("pkdemo", *super().cache_key)

        def __eq__(self, other: object) -> bool:
            return type(other) is PkDemo

        def __hash__(self) -> int:
            return hash(PkDemo)

    pk.register_backend("PkDemo", PkDemo, templates=tmp_path / "templates")
    k = pk.kernel(SAXPY)
    assert "rendered by the pkdemo templates" in k.render("pkdemo", T="float")
    y, x = np.ones(10, np.float32), np.arange(10, dtype=np.float32)
    k(PkDemo())(y, x, np.float32(3), ndrange=10)
    np.testing.assert_array_equal(y, 3 * np.arange(10) + 1)
    assert pk.registered_backends()["PkDemo"].templates == str(tmp_path / "templates")


def test_plugin_template_overrides_one_file(clean_registry: Any, tmp_path: Path) -> None:
    prelude = tmp_path / "opencl" / "prelude.j2"
    prelude.parent.mkdir()
    prelude.write_text("/* plugin prelude */\n" + (_opencl_templates() / "prelude.j2").read_text())

    class Themed(BoxedCPU):
        name = "Themed"
        templates = str(tmp_path)  # applied when the class is created

    k = pk.kernel(SAXPY)
    source = k.render("opencl", T="float")
    assert "/* plugin prelude */" in source
    assert "__kernel void saxpy" in source  # the other files are still portakern's
    assert Themed.templates == str(tmp_path)


# -- the backend contract ------------------------------------------------------------------

def test_missing_must_methods_are_named_at_class_creation() -> None:
    with pytest.raises(TypeError, match=r"must implement available, compile, launch, "
                                        r"array_info, synchronize, allocate, to_device, "
                                        r"to_host \(the backend contract"):
        class Empty(Backend):
            name = "Empty"
            target = "opencl"


def test_one_missing_method_is_named() -> None:
    with pytest.raises(TypeError, match=r"HalfDone must implement to_host \("):
        class HalfDone(Backend):
            name = "HalfDone"
            target = "opencl"
            available = classmethod(lambda cls: True)  # type: ignore[assignment]
            compile = launch = array_info = synchronize = allocate = to_device = (
                lambda self, *a: None)


def test_name_and_target_are_required() -> None:
    methods = {m: (lambda self, *a: None) for m in MUST}
    with pytest.raises(TypeError, match="must set the class attributes 'name' and 'target'"):
        type("Anon", (Backend,), dict(methods))
    with pytest.raises(TypeError, match="must set the class attribute 'target'"):
        type("Anon", (Backend,), dict(methods, name="Anon"))
    assert type("Ok", (Backend,), dict(methods, name="Ok", target="opencl"))


def test_abstract_intermediate_classes_opt_out() -> None:
    class Base(Backend, abstract=True):
        target = "opencl"

    with pytest.raises(TypeError, match="must implement"):
        class Concrete(Base):
            name = "Concrete"


def test_availability_is_checked_once_per_class() -> None:
    calls = []

    class Counted(BoxedCPU):
        @classmethod
        def available(cls) -> Any:
            calls.append(1)
            return pk.CPU.available()

    b = Counted()
    for _ in range(5):
        b.check_available()
    assert len(calls) == 1


# -- entry points ---------------------------------------------------------------------------

def _ep(name: str, value: str, dist: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, value=value,
                           dist=SimpleNamespace(metadata={"Name": dist}, version="1.0"))


@pytest.fixture
def fake_entry_points(clean_registry: Any, monkeypatch: pytest.MonkeyPatch) -> list:
    eps: list = []
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group=None: list(eps))
    registry._reset_entry_points()
    return eps


def test_entry_points_are_read_as_strings(fake_entry_points: list) -> None:
    fake_entry_points.append(_ep(f"{__name__}.Boxed", f"{__name__}:BoxedCPU", "boxed-plugin"))
    record = pk.registered_backends()["BoxedCPU"]
    assert record.origin == "entry point of boxed-plugin 1.0"
    assert record.array_types == (f"{__name__}.Boxed",)
    assert pk.get_backend(Boxed(np.zeros(2))) == BoxedCPU()


def test_registration_by_call_beats_an_entry_point(fake_entry_points: list) -> None:
    fake_entry_points.append(_ep(f"{__name__}.Boxed", "plugin_mod:PluginCPU", "plugin"))
    pk.register_backend("Mine", BoxedCPU, array_types=Boxed)
    assert registry.backend_for_type(Boxed) == "Mine"


def test_two_plugins_claiming_one_type_is_an_error_naming_both(fake_entry_points: list) -> None:
    fake_entry_points += [_ep(f"{__name__}.Boxed", "one_mod:OneCPU", "plugin-one"),
                          _ep(f"{__name__}.Boxed", "two_mod:TwoCPU", "plugin-two")]
    with pytest.raises(BackendRegistrationError,
                       match=r"two installed plugins claim array type .*Boxed.*plugin-one.*"
                             r"plugin-two.*clobber=True"):
        pk.get_backend(Boxed(np.zeros(2)))
    # The user settles it by registering the one they want.
    pk.register_backend("TwoCPU", BoxedCPU, array_types=Boxed)
    assert pk.get_backend(Boxed(np.zeros(2))) == BoxedCPU()


def test_a_plugin_cannot_take_a_builtin(fake_entry_points: list) -> None:
    fake_entry_points += [_ep("numpy.ndarray", "evil_mod:CPU", "evil"),
                          _ep("bad value", "not a path", "broken")]
    with pytest.warns(RuntimeWarning) as warned:
        records = pk.registered_backends()
    assert records["CPU"].origin == "built-in"
    assert any("built-in" in str(w.message) for w in warned)
    assert any("'package.module:BackendClass'" in str(w.message) for w in warned)
    assert pk.get_backend(np.zeros(2)) == pk.CPU()


def test_import_portakern_reads_no_entry_point_and_imports_no_plugin() -> None:
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import portakern as pk
        from portakern import registry
        assert not registry._EP_LOADED, "entry points read at import"
        pk.get_backend(np.zeros(2))
        assert not registry._EP_LOADED, "entry points read for a built-in type"
        heavy = [m for m in ("torch", "cupy", "mlx", "portakern_torchcpu", "portakern.testing")
                 if m in sys.modules]
        assert not heavy, heavy
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# -- a real plugin, installed -------------------------------------------------------------------

LAZY_CHECK = textwrap.dedent("""
    import sys
    import numpy as np
    import portakern as pk

    pk.get_backend(np.zeros(2))
    record = pk.registered_backends()["TorchCPU"]
    assert record.origin.startswith("entry point of portakern-torchcpu"), record
    assert record.array_types == ("torch.Tensor",), record

    class Unknown:
        pass

    try:
        pk.get_backend(Unknown())
    except TypeError as exc:
        assert "TorchCPU" in str(exc), exc
    else:
        raise AssertionError("an unknown type resolved")
    # Entry points were read twice over, yet nothing of the plugin was imported.
    assert "portakern_torchcpu" not in sys.modules
    assert "torch" not in sys.modules
    try:
        import torch
    except ImportError:
        print("lazy loading checked; torch not installed")
        raise SystemExit(0)
    t = torch.ones(8)
    assert "portakern_torchcpu" not in sys.modules
    backend = pk.get_backend(t)
    assert type(backend).__name__ == "TorchCPU", backend
    assert "portakern_torchcpu" in sys.modules
    y, x = torch.ones(100), torch.arange(100, dtype=torch.float32)
    pk.kernel('''{saxpy}''')(y, x, 2.0, ndrange=100)
    assert (y.numpy() == 2 * np.arange(100) + 1).all()
    print("lazy loading and a launch on tensors checked")
""").replace("{saxpy}", SAXPY)


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment in which the plugin is installed, as pip installs it.

    Where CI installed it already, that installation is used; otherwise pip
    installs it into a folder put on PYTHONPATH (its dist-info, entry points
    included, is found there like in site-packages).
    """
    env = dict(os.environ)
    if importlib.util.find_spec("portakern_torchcpu") is not None:
        return env
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling, the plugin's build backend, is not installed: pip install "
                    "hatchling (or install the plugin: pip install --no-deps -e "
                    "tests/plugins/portakern_torchcpu)")
    target = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--target", str(target), str(PLUGIN)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH")]))
    return env


@pytest.mark.slow
def test_plugin_entry_point_loads_lazily(installed_plugin: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-c", LAZY_CHECK], env=installed_plugin,
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_plugin_passes_the_conformance_suite(installed_plugin: dict[str, str]) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed: pip install torch==2.13.0")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         str(PLUGIN / "tests")],
        env=installed_plugin, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert " passed" in proc.stdout and "plugin is not installed" not in proc.stdout


def test_docs_plugins_examples_run(clean_registry: Any, run_doc: Any) -> None:
    run_doc("plugins.md")
