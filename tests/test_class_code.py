"""portakern.cache.class_code: dataclass methods compiled once, kept in the disk cache."""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest

from portakern.cache import class_code
from portakern.cache.disk import FORMAT

SOURCE = '''
from __future__ import annotations
from dataclasses import dataclass, field

@dataclass(frozen=True)
class Point:
    x: int
    y: float = 0.5
    tags: tuple[str, ...] = field(default=(), repr=False)

@dataclass(eq=False)
class Node:
    name: str = ""
'''


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A cache folder of its own, and the module's per-process state as at start."""
    monkeypatch.setenv("PORTAKERN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PORTAKERN_CACHE", "1")
    monkeypatch.setattr(class_code, "_codes", None)
    monkeypatch.setattr(class_code, "_used", set())
    monkeypatch.setattr(class_code, "_compiled", False)
    return tmp_path


def _module(name: str, monkeypatch) -> types.ModuleType:
    """A module called ``name`` with SOURCE's classes, made now."""
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(SOURCE, f"<{name}>", "exec"), module.__dict__)
    return module


def _compiles(monkeypatch) -> list[str]:
    seen: list[str] = []

    def counting(source, *args, **kwargs):
        seen.append(source)
        return compile(source, *args, **kwargs)

    monkeypatch.setattr(class_code, "compile", counting, raising=False)
    return seen


def _behaviour(module: types.ModuleType) -> tuple:
    p = module.Point(1, 2.0, ("a",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3
    n = module.Node("k")
    return (repr(p), p == module.Point(1, 2.0, ("b",)), hash(p) == hash(module.Point(1, 2.0)),
            [f.name for f in dataclasses.fields(p)], repr(n), n == module.Node("k"),
            module.Point.__init__.__annotations__, module.Point.__match_args__)


def test_classes_made_in_the_scope_behave_as_without_it(fresh, monkeypatch):
    plain = _behaviour(_module("portakern._plain_classes", monkeypatch))
    with class_code.compiled_methods():
        kept = _behaviour(_module("portakern._kept_classes", monkeypatch))
    assert kept == plain
    assert plain[0] == "Point(x=1, y=2.0)" and plain[1] is False and plain[5] is False


def test_a_later_process_loads_the_code_instead_of_compiling(fresh, monkeypatch):
    seen = _compiles(monkeypatch)
    with class_code.compiled_methods():
        _module("portakern._first", monkeypatch)
    assert len(seen) >= 6  # Point: init, repr, eq, hash, setattr, delattr; Node: init, repr
    (entry,) = [p for p in (fresh / f"v{FORMAT}" / "class-code").rglob("*") if p.is_file()]
    assert entry.stat().st_size > 0
    seen.clear()
    monkeypatch.setattr(class_code, "_codes", None)  # as a new process starts
    with class_code.compiled_methods():
        again = _behaviour(_module("portakern._second", monkeypatch))
    assert seen == []
    assert again[0] == "Point(x=1, y=2.0)"


def test_only_portakern_classes_and_only_inside_the_scope(fresh, monkeypatch):
    seen = _compiles(monkeypatch)
    with class_code.compiled_methods():
        assert dataclasses.__dict__["exec"] is class_code._exec
        _module("not_portakern_classes", monkeypatch)
    assert seen == []
    assert "exec" not in dataclasses.__dict__
    _module("portakern._outside", monkeypatch)
    assert seen == []


def test_the_cache_switched_off_leaves_dataclasses_alone(fresh, monkeypatch):
    monkeypatch.setenv("PORTAKERN_CACHE", "0")
    with class_code.compiled_methods():
        assert "exec" not in dataclasses.__dict__
        _module("portakern._uncached", monkeypatch)
    assert not (fresh / f"v{FORMAT}").exists()


def test_a_damaged_entry_is_compiled_again(fresh, monkeypatch):
    with class_code.compiled_methods():
        _module("portakern._written", monkeypatch)
    (entry,) = [p for p in (fresh / f"v{FORMAT}" / "class-code").rglob("*") if p.is_file()]
    entry.write_bytes(entry.read_bytes()[:-40] + b"\0" * 40)
    monkeypatch.setattr(class_code, "_codes", None)
    seen = _compiles(monkeypatch)
    with class_code.compiled_methods():
        again = _behaviour(_module("portakern._rewritten", monkeypatch))
    assert len(seen) >= 6 and again[0] == "Point(x=1, y=2.0)"


def test_an_untrusted_folder_is_left_to_the_kernel_cache_to_warn_about(fresh, monkeypatch):
    import warnings

    from portakern.cache.disk import CacheWarning, DiskCache

    fresh.chmod(0o777)  # others can write it: nothing is read from it
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with class_code.compiled_methods():
            kept = _behaviour(_module("portakern._untrusted", monkeypatch))
    assert [w for w in seen if issubclass(w.category, CacheWarning)] == []
    assert kept[0] == "Point(x=1, y=2.0)"
    assert not (fresh / f"v{FORMAT}").exists()
    with pytest.warns(CacheWarning, match="does not use its kernel cache"):
        DiskCache(fresh).get("render", "0" * 64)
