"""The command line (portakern/cli.py), in-process and as ``python -m portakern``."""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

import portakern as pk
from portakern.cli import main as cli
from portakern.examples import EXAMPLES
from portakern.registry import registered_backends

needs_cpu = pytest.mark.skipif(not pk.CPU.available(),
                               reason=f"no CPU OpenCL device: {pk.CPU.available().reason}")

BAD_KERNEL = """\
// a kernel that uses a name nobody defined
@kernel void scale(T* y, const T* x) {
    const long i = @index(Global, Linear);
    y[i] = x[i] * undefined_scale;
}
"""

MALFORMED_KERNEL = """\
@kernel void fill(float* y) {
    const long i = @index(Global, Linaer);
    y[i] = 1.0f;
}
"""

SIGNATURES = {
    "opencl": "__kernel void saxpy(",
    "cuda": 'extern "C" __global__ void saxpy(',
    "metal": "[[kernel]] void saxpy(",
}


def run_cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_module(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "portakern", *argv], capture_output=True,
                          text=True, timeout=timeout, check=False)


# -- info -----------------------------------------------------------------------------------

def test_info_lists_compile_checks_from_the_targets_table(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each target's line comes from its TargetInfo facts (or the built-in checks' table)."""
    import dataclasses

    from portakern import targets

    answers = {"cuda": (False, "planted: no NVRTC"), "metal": (True, "planted: clang 0")}
    fake = types.ModuleType("pk_fake_checks")
    for name, answer in answers.items():
        setattr(fake, f"status_{name}", lambda answer=answer: answer)
    monkeypatch.setitem(sys.modules, "pk_fake_checks", fake)
    table = {t: targets.target_info(t) for t in targets.builtin_targets()}
    for name in answers:
        targets.register_target(dataclasses.replace(
            table[name], checker_status=f"pk_fake_checks:status_{name}"))
    targets.register_target(dataclasses.replace(table["c"], checker_note="planted note"))
    try:
        _, out, _ = run_cli("info", capsys=capsys)
    finally:
        for info in table.values():
            targets.register_target(info)
    checks = out.split("compile checks (portakern check):\n", 1)[1].splitlines()
    lines = {ln.split()[0]: ln for ln in checks if ln.strip()}
    assert set(lines) == set(table)
    for name, (ok, detail) in answers.items():
        assert lines[name].split(None, 1)[1] == f"{'yes' if ok else 'no'}: {detail}"
    assert lines["c"].split(None, 1)[1] == "planted note"
    from portakern.cli.check_targets import note_of

    assert lines["opencl"].split(None, 1)[1] == note_of(table["opencl"]) != ""


def _backend_line(out: str, name: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.strip().startswith(f"{name} ")]
    assert lines, f"no line for backend {name} in:\n{out}"
    return lines[0]


@needs_cpu
def test_info_lists_backends_with_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("info", capsys=capsys)
    assert code == 0
    assert "available" in _backend_line(out, "CPU")
    assert "unavailable" not in _backend_line(out, "CPU")
    assert "unavailable" not in _backend_line(out, "OpenCL")
    for name in registered_backends():
        line = _backend_line(out, name)
        if "unavailable" in line:
            reason = line.split("unavailable:", 1)[1].strip()
            assert reason, f"{name} is unavailable without a reason"
            # The install command is on the line or the one after it.
            following = out.split(line, 1)[1].splitlines()[1:2]
            assert "pip install" in line or any("install" in ln for ln in following)
    for package in ("numpy", "jinja2", "pyopencl"):
        assert package in out
    assert "OpenCL devices" in out


@needs_cpu
def test_info_on_this_machine_has_no_cuda_or_metal(capsys: pytest.CaptureFixture[str]) -> None:
    from portakern.registry import backend_status

    if backend_status("CUDA") or backend_status("Metal"):
        pytest.skip("this machine has CUDA or Metal")
    _, out, _ = run_cli("info", capsys=capsys)
    assert "unavailable:" in _backend_line(out, "CUDA")
    assert "unavailable:" in _backend_line(out, "Metal")


def test_info_as_module() -> None:
    proc = run_module("info")
    assert proc.returncode == 0, proc.stderr
    assert "CPU" in proc.stdout and "CUDA" in proc.stdout and "Metal" in proc.stdout
    assert "Traceback" not in proc.stderr


# -- render ---------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["opencl", "cuda", "metal"])
def test_render_example_for_each_target(target: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("render", "saxpy", "--target", target, capsys=capsys)
    assert code == 0
    assert SIGNATURES[target] in out
    assert "float" in out and "double" not in out  # T defaults to float
    assert '#line 6 "' in out and "saxpy.pk" in out


def test_render_binds_type_variables_and_constants(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES["matmul_tiled"].path)
    code, out, _ = run_cli("render", path, "-t", "cuda", "-D", "T=double", "-D", "TILE=8",
                           capsys=capsys)
    assert code == 0
    assert "typedef double T;" in out and "__shared__ T ta[8][8];" in out
    assert "ta[li][7]" in out and "ta[li][8]" not in out  # the unrolled loop follows TILE


def test_render_file_with_several_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("render", "image", "--target", "opencl", capsys=capsys)
    assert code == 0
    for name in ("rgb_to_gray", "negative", "darken"):
        assert f"kernel {name} for opencl" in out
    code, out, _ = run_cli("render", "image", "-t", "metal", "--kernel", "darken",
                           capsys=capsys)
    assert code == 0
    assert "[[kernel]] void darken(" in out and "void rgb_to_gray" not in out


def test_render_missing_file_is_an_error_not_the_shipped_example(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # no saxpy.pk here, though an example has that file name
    with pytest.raises(SystemExit) as exc:
        cli.main(["render", "saxpy.pk", "--target", "cuda"])
    out, err = capsys.readouterr()
    assert exc.value.code != 0 and "__global__" not in out
    assert "no such file: saxpy.pk" in err and "write its name: saxpy" in err
    with pytest.raises(SystemExit) as exc:
        cli.main(["render", "kernels/nope.pk", "-t", "cuda"])
    assert exc.value.code != 0 and "no such file: kernels/nope.pk" in capsys.readouterr().err


def test_render_as_module_and_script(tmp_path: Path) -> None:
    path = tmp_path / "saxpy.pk"
    path.write_text(EXAMPLES["saxpy"].source)
    proc = run_module("render", str(path), "--target", "cuda")
    assert proc.returncode == 0, proc.stderr
    assert SIGNATURES["cuda"] in proc.stdout and f'"{path}"' in proc.stdout
    script = shutil.which("portakern")
    if script is None:
        pytest.skip("the portakern console script is not on PATH")
    proc = subprocess.run([script, "render", str(path), "-t", "metal"], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert SIGNATURES["metal"] in proc.stdout


def test_render_errors_are_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "fill.pk"
    bad.write_text(MALFORMED_KERNEL)
    code, out, err = run_cli("render", str(bad), "-t", "cuda", capsys=capsys)
    assert code == 1 and out == ""
    assert f'File "{bad}", line 2' in err and "Linaer" in err and "^" in err
    assert "Traceback" not in err
    # A missing Jinja constant names the -D option that fixes it.
    tiled = tmp_path / "tiled.pk"
    tiled.write_text(EXAMPLES["matmul_tiled"].source)
    code, _, err = run_cli("render", str(tiled), "-t", "cuda", capsys=capsys)
    assert code == 1 and "-D TILE=VALUE" in err


def test_render_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["render", "saxpy", "--target", "vulkan"])
    assert exc.value.code == 2
    assert "unknown target 'vulkan'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["render", "no_such_kernel.pk", "--target", "cuda"])
    assert exc.value.code == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["render", "saxpy"])  # --target is required
    assert exc.value.code == 2


# -- check ----------------------------------------------------------------------------------

@needs_cpu
def test_check_good_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("check", "matmul_tiled", capsys=capsys)
    assert code == 0, out
    for target in ("opencl", "cuda", "metal"):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(target))
        assert "OK" in line or "SKIPPED" in line
    assert "opencl  OK" in out
    assert "FAILED" not in out


def test_check_a_struct_parameter_is_no_type_variable(capsys: pytest.CaptureFixture[str]) -> None:
    # q4_0's blocks are an array of a struct with a half field: checked on every target.
    code, out, _ = run_cli("check", "q4_0", capsys=capsys)
    assert code == 0, out
    assert "block_q4_0=" not in out and "FAILED" not in out
    for target in ("opencl", "cuda", "metal", "c"):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(target))
        assert "OK" in line or "SKIPPED" in line, line


@needs_cpu
def test_check_double_skips_metal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("check", "saxpy", "-D", "T=double", capsys=capsys)
    assert code == 0, out
    assert "T=double" in out and "Metal has no double" in out


@needs_cpu
def test_check_undefined_name_fails_with_the_users_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scale.pk"
    path.write_text(BAD_KERNEL)
    code, out, _ = run_cli("check", str(path), capsys=capsys)
    assert code == 1
    assert "opencl  FAILED" in out
    assert f"{path}:4" in out
    assert "y[i] = x[i] * undefined_scale;" in out
    assert "Traceback" not in out


def test_check_undefined_name_as_module(tmp_path: Path) -> None:
    path = tmp_path / "scale.pk"
    path.write_text(BAD_KERNEL)
    proc = run_module("check", str(path))
    assert proc.returncode != 0
    assert "y[i] = x[i] * undefined_scale;" in proc.stdout
    assert f"{path}:4" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_check_malformed_kernel_fails_before_compiling(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fill.pk"
    path.write_text(MALFORMED_KERNEL)
    code, out, _ = run_cli("check", str(path), capsys=capsys)
    assert code == 1
    assert "FAILED before any compiler ran" in out
    assert "const long i = @index(Global, Linaer);" in out
    assert out.count("Linaer'") == 1  # reported once, not once per target


DEFAULT_ARGUMENT = """
float scale(float v, float k = 2.0f) { return v * k; }
@kernel void twice(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = scale(x[i]);
}
"""


def test_check_a_refusal_on_one_target_fails_that_target_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """OpenCL C has no default arguments: the opencl line fails with portakern's refusal,
    and the other targets are still checked (the canonical rendering is OpenCL's)."""
    path = tmp_path / "twice.pk"
    path.write_text(DEFAULT_ARGUMENT)
    with pytest.warns(pk.PortabilityWarning):
        code, out, _ = run_cli("check", str(path), capsys=capsys)
    assert code == 1
    assert "before any compiler ran" not in out
    lines = {ln.split()[0]: ln.split()[1] for ln in out.splitlines()
             if ln.startswith("  ") and ln.split()[0] in ("c", "opencl", "cuda", "metal")}
    assert lines["opencl"] == "FAILED"
    assert "a default argument of helper 'scale'" in out
    assert set(lines) == {"c", "opencl", "cuda", "metal"}
    assert all(lines[t] in ("OK", "SKIPPED") for t in ("c", "cuda", "metal")), out


def test_check_an_opencl_word_skips_the_c_line_as_cpu_runs_it_on_opencl(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gid.pk"
    path.write_text("@kernel void gid(float* y) {\n    const long i = @index(Global, Linear);\n"
                    "    y[i] = (float)get_global_id(0);\n}\n")
    with pytest.warns(pk.PortabilityWarning):
        code, out, _ = run_cli("check", str(path), "--target", "c", capsys=capsys)
    assert code == 0, out
    assert "c       SKIPPED (the C++ rendering is refused: CPU() runs it on its OpenCL" in out


def test_check_only_some_targets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("check", "negative", "--target", "metal", capsys=capsys)
    assert code == 0
    assert "metal" in out and "opencl" not in out and "cuda" not in out


# -- -D parsing -----------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("TILE=16", ("TILE", 16)), ("N=0x10", ("N", 16)), ("SCALE=0.5", ("SCALE", 0.5)),
    ("FAST=true", ("FAST", True)), ("FAST=False", ("FAST", False)),
    ("T=double", ("T", "double")), ("T=float32", ("T", "float")), ("U=int64", ("U", "long")),
    ("T=uint8_t", ("T", "uint8_t")),
])
def test_parse_define(text: str, expected: tuple) -> None:
    assert cli.parse_define(text) == expected


@pytest.mark.parametrize("text", ["TILE", "=3", "T=", "T=vec4", "1X=2", "T=f(x)"])
def test_parse_define_rejects(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        cli.parse_define(text)


# -- demo -----------------------------------------------------------------------------------

@needs_cpu
def test_demo_small(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli("demo", "--small", "--repeats", "1", capsys=capsys)
    # What it is doing goes to stderr as it happens, one line per example.
    assert "probes the C++ compiler" in err.splitlines()[0]
    assert sum("building" in line for line in err.splitlines()) == len(EXAMPLES)
    assert code == 0, out
    for name in EXAMPLES:
        assert any(ln.startswith(name + " ") and ln.endswith("OK") for ln in out.splitlines()), \
            name
    assert f"{len(EXAMPLES)}/{len(EXAMPLES)} examples agree" in out


@needs_cpu
@pytest.mark.slow
def test_demo_as_module() -> None:
    proc = run_module("demo")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in EXAMPLES:
        assert name in proc.stdout
    assert "FAIL" not in proc.stdout


@needs_cpu
def test_demo_reports_a_mismatch(monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    ex = EXAMPLES["saxpy"]

    def wrong(args: tuple, constants: object) -> dict:
        y, x, a = args
        return {"y": a * x + y + 1}

    monkeypatch.setitem(EXAMPLES, "saxpy", type(ex)(**{**ex.__dict__, "reference_fn": wrong}))
    code, out, _ = run_cli("demo", "--small", "--only", "saxpy", "--only", "negative",
                           capsys=capsys)
    assert code == 1
    assert any(ln.startswith("saxpy") and ln.endswith("FAIL") for ln in out.splitlines())
    assert "1/2 examples agree" in out
    # bench's spelling, a comma-separated list, selects the same two.
    code, out, _ = run_cli("demo", "--small", "--only", "saxpy,negative", "--repeat", "1",
                           capsys=capsys)
    assert code == 1 and "1/2 examples agree" in out


def test_demo_unknown_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", "--only", "sapxy"])
    assert exc.value.code == 2
    assert "no example named 'sapxy'" in capsys.readouterr().err


# -- bench and the rest ---------------------------------------------------------------------

def test_bench_dispatches_to_portakern_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    fake = types.ModuleType("portakern.bench")
    fake.main = lambda argv: seen.append(argv) or 3  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "portakern.bench", fake)
    assert cli.main(["bench", "--help", "--quick"]) == 3
    assert seen == [["--help", "--quick"]]


def test_bench_without_the_module(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    import importlib

    real = importlib.import_module

    def fake_import(name: str, *args: object) -> object:
        if name == "portakern.bench":
            raise ModuleNotFoundError("No module named 'portakern.bench'", name=name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    assert cli.main(["bench"]) == 2
    assert "portakern.bench" in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    out = capsys.readouterr().out
    for command in ("info", "render", "check", "demo", "bench"):
        assert command in out


def test_version() -> None:
    proc = run_module("--version")
    assert proc.returncode == 0
    assert pk.__version__ in proc.stdout


# -- check and render decide as the library does (issue 22) ---------------------------------

TWO_KERNELS = """\
@kernel void first(float* y) {
    const long i = @index(Global, Linear);
    y[i] = {{ A }};
}

@kernel void second(float* y) {
    const long i = @index(Global, Linear);
    y[i] = {{ B }};
}
"""


@pytest.mark.parametrize("command", ["check", "render"])
def test_named_kernel_needs_only_its_own_constants(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As pk.kernel(source, name="first", A=1): B, which only 'second' uses, may be unbound."""
    path = tmp_path / "two.pk"
    path.write_text(TWO_KERNELS)
    code, out, err = run_cli(command, str(path), "--kernel", "first", "-D", "A=3",
                             "--target", "opencl", capsys=capsys)
    assert code == 0, out + err
    assert "'B'" not in out + err
    if command == "render":
        assert "y[i] = 3;" in out and "second" not in out
    else:
        assert "kernel first" in out and "second" not in out


def test_check_without_kernel_checks_each_with_its_own_constants(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.pk"
    path.write_text(TWO_KERNELS)
    code, out, _ = run_cli("check", str(path), "-D", "A=3", "--target", "opencl",
                           capsys=capsys)
    assert code == 1  # 'second' lacks B: its failure, not first's
    first, second = out.split(f"{path}: kernel second", 1)
    assert "kernel first" in first and "FAILED" not in first
    assert "FAILED before any compiler ran" in second
    assert "bind it with -D B=VALUE" in second and "'A'" not in second
    code, out, _ = run_cli("check", str(path), "-D", "A=3", "-D", "B=4", "--target",
                           "opencl", capsys=capsys)
    assert code == 0, out


def test_named_kernel_that_the_file_lacks_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.pk"
    path.write_text(TWO_KERNELS)
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", str(path), "--kernel", "third", "-D", "A=1"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no @kernel named 'third'" in err and "first, second" in err


HALF_KERNEL = """\
@kernel void halve(half* y, const half* x) {
    const long i = @index(Global, Linear);
    y[i] = x[i] * (half)0.5f;
}
"""

DOUBLE_KERNEL = """\
@kernel void twice(double* y, const double* x) {
    const long i = @index(Global, Linear);
    y[i] = 2.0 * x[i];
}
"""


@needs_cpu
def test_half_on_an_opencl_device_without_half_builds_as_storage(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not pk.CPU.opencl_available():
        pytest.skip("no CPU OpenCL device")
    if "cl_khr_fp16" in pk.CPU().device.extensions:
        pytest.skip("this CPU OpenCL device has half arithmetic")
    path = tmp_path / "halve.pk"
    path.write_text(HALF_KERNEL)
    code, out, _ = run_cli("check", str(path), "--target", "opencl", capsys=capsys)
    # Built with vload_half/vstore_half (portakern.lower.half_storage), not skipped.
    assert code == 0 and "opencl  OK" in out, out


def test_double_kernel_is_skipped_on_metal(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from portakern.checks import metal_check_available

    if not metal_check_available()[0]:
        pytest.skip(metal_check_available()[1])
    path = tmp_path / "twice.pk"
    path.write_text(DOUBLE_KERNEL)
    code, out, _ = run_cli("check", str(path), "--target", "metal", capsys=capsys)
    assert code == 0, out
    assert "metal   SKIPPED (Metal has no double" in out
    # A kernel that only says "double" in a comment is checked.
    path.write_text("// no double here\n" + BAD_KERNEL.replace("undefined_scale", "2"))
    code, out, _ = run_cli("check", str(path), "--target", "metal", capsys=capsys)
    assert code == 0 and "metal   OK" in out


# Kernels CPU() runs on each of its paths; `check`'s c line must agree with a launch.
C_TARGET_CASES = {
    "elementwise": """\
@kernel void k(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = 2.0f * x[i];
}
""",
    "barrier": """\
@kernel void k(float* y, const float* x) {
    @localmem float t[64];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    t[l] = x[i];
    @synchronize();
    y[i] = t[l] + 1.0f;
}
""",
    "barrier_with_return": """\
@kernel void k(float* y, const float* x) {
    @localmem float t[64];
    const long i = @index(Global, Linear);
    const long l = @index(Local, Linear);
    t[l] = x[i];
    @synchronize();
    if (i >= 64) return;
    y[i] = t[l] + 1.0f;
}
""",
    "opencl_only_builtin": """\
@kernel void k(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = native_sin(x[i]);
}
""",
}


@needs_cpu
@pytest.mark.parametrize("case", sorted(C_TARGET_CASES))
def test_check_c_is_what_cpu_runs(case: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The c line is OK exactly when CPU() runs the kernel natively, on the same C++."""
    import warnings

    import numpy as np

    from portakern.backends import native

    if not native.NativeCPU.available():
        pytest.skip("no C++ compiler with OpenMP")
    compiled: list[str] = []
    real = native.NativeCPU.compile

    def recording(self: object, rendered: object) -> object:
        compiled.append(rendered.source)  # type: ignore[attr-defined]
        return real(self, rendered)  # type: ignore[arg-type]

    monkeypatch.setattr(native.NativeCPU, "compile", recording)
    source = C_TARGET_CASES[case]
    path = tmp_path / "k.pk"
    path.write_text(source)
    code, out, _ = run_cli("check", str(path), "--target", "c", "--target", "opencl",
                           capsys=capsys)
    assert code == 0, out
    checked = list(compiled)
    compiled.clear()
    kernel = pk.kernel.from_file(path)
    launcher = kernel(pk.CPU())
    x = np.arange(64, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pk.NativeFallbackWarning)
        launcher(np.zeros_like(x), x, ndrange=64, workgroupsize=64)
    runs_natively = isinstance(launcher.runner, native.NativeCPU)
    assert ("c       OK" in out) == runs_natively, out
    assert ("c       SKIPPED" in out) == (not runs_natively), out
    if runs_natively:
        # The very C++ a launch compiles (the native path's own variant).
        assert compiled and compiled[-1] == checked[-1]
