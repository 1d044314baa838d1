"""Golden renderings: the generated source of a set of kernels, for every target.

The files under ``tests/golden/<target>/`` are reviewed like code: a change to the
lowering or a template shows up here as a diff. After an intended change,
regenerate them and review the diff::

    PORTAKERN_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py

The catalog is every example kernel of :data:`portakern.examples.EXAMPLES` (bound
to its first dtype, rank and default constants) plus the kernels below, which
cover what the examples do not. The same renderings are compile-checked: CUDA
with NVRTC (``portakern.checks``) and with ``nvcc --ptx -arch=compute_90``, Metal
with clang's Metal shim, OpenCL with the PoCL device; each check is skipped with
the reason where its tool is missing.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import portakern as pk
from portakern.types import type_name_of

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("PORTAKERN_REGEN_GOLDEN", "") not in ("", "0")
EXTENSIONS = {"opencl": "cl", "cuda": "cu", "metal": "metal", "c": "cpp"}
TARGETS = tuple(EXTENSIONS)


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    filename: str
    kernel: str | None = None
    constants: dict = field(default_factory=dict)
    bindings: dict = field(default_factory=dict)
    ndim: int | None = None

    def render(self, target: str) -> str:
        k = pk.Kernel(self.source, self.kernel, filename=self.filename, **self.constants)
        return k.render(target, ndim=self.ndim, **self.bindings)


OWN = {
    "generic_saxpy_double": ("""\
@kernel void saxpy(T* y, const T* x, T a) {
    const long i = @index(Global, Linear);
    y[i] = a * x[i] + y[i];
}
""", {}, {"T": "double"}, None),
    "masked_reduction": ("""\
#define WG {{ WG }}
// Declarations before a barrier are hoisted above their masked segment.
@kernel void block_sum(float* partial, const float* x) {
    @localmem float buf[WG];
    @uniform const long n = @ndrange(0);
    const long i = @index(Global, Linear);
    const long li = @index(Local, Linear);
    float v = x[i], unused;
    buf[li] = v;
    @synchronize();
    for (long s = WG / 2; s > 0; s >>= 1) {
        if (li < s && i + s < n) buf[li] += buf[li + s];
        @synchronize();
    }
    if (li == 0) partial[@index(Group, Linear)] = buf[0];
}
""", {"WG": 128}, {}, None),
    "ntuple_3d": ("""\
@kernel void stencil(T* out, const T* in) {
    auto [i, j, k] = @index(Global, NTuple);
    auto [gi, gj, gk] = @index(Group, NTuple);
    const long nj = @ndrange(1), nk = @ndrange(2);
    const long o = (i * nj + j) * nk + k;
    out[o] = in[o] * (T)(gi + gj + gk + @groupsize(0) + @groupsize());
}
""", {}, {"T": "float"}, None),
    "atomics_all_types": ("""\
@kernel void atomics(int* a, uint* b, float* c, long* d, double* e, const int* v) {
    const long i = @index(Global, Linear);
    @atomic_add(&a[0], v[i]);
    @atomic_sub(&b[0], (uint)v[i]);
    @atomic_max(&c[0], (float)v[i]);
    @atomic_min(&d[0], (long)v[i]);
    @atomic_xchg(&e[0], (double)v[i]);
    @atomic_cas(&a[1], 0, v[i]);
    @atomic_and(&a[2], v[i]);
    @atomic_or(&b[1], (uint)v[i]);
    @atomic_xor(&d[1], (long)v[i]);
}
""", {}, {}, None),
    "zero_axis_scalars": ("""\
@kernel void scalars(uint8_t* out, bool flag, int8_t a, uint16_t b, int64_t c, ulong d, half h) {
    out[0] = flag ? (uint8_t)(a + b + c + d) : (uint8_t)(float)h;
}
""", {}, {}, 0),
    "unsafe_and_target_branch": ("""\
@kernel(unsafe_indices) void branch(float* y) {
    auto [i, j] = @index(Global, NTuple);
{% if target == "cuda" %}
    y[i * @ndrange(1) + j] = 1.0f;
{% elif target == "metal" %}
    y[i * @ndrange(1) + j] = 2.0f;
{% else %}
    y[i * @ndrange(1) + j] = 3.0f;
{% endif %}
{% for k in range(UNROLL) %}
    y[0] += {{ k }} * {{ SCALE }};
{% endfor %}
}
""", {"UNROLL": 3, "SCALE": 0.5}, {}, None),
    "private_uniform_loop_barrier": ("""\
#define TILE 8
float clampf(float v) { return fmin(fmax(v, 0.0f), 1.0f); }
@kernel void smooth(float* y, const float* x, int steps) {
    @localmem float tile[TILE + 2];
    @private float acc[2];
    const long li = @index(Local, Linear);
    const long i = @index(Global, Linear);
    tile[li + 1] = x[i];
    acc[0] = 0;
    for (int s = 0; s < steps; ++s) {
        @synchronize();
        float left = tile[li], right = tile[li + 2];
        acc[0] += clampf(0.5f * (left + right));
        @synchronize();
    }
    y[i] = acc[0] + sqrt(fabs(tanh(x[i])));
}
""", {}, {}, None),
    "declared_size_groups_print": ("""\
@kernel(workgroupsize=(8, 4), contract=false) void blocks(float* y, const float* a) {
    @localmem float tile[@groupsize(0)][@groupsize(1)];
    @localmem float total;
    auto [i, j] = @index(Global, NTuple);
    auto [li, lj] = @index(Local, NTuple);
    if (li == 0 && lj == 0) total = 0;
    tile[li][lj] = a[i * @ndrange(1) + j];
    @synchronize();
    y[i * @ndrange(1) + j] = tile[li][lj] * a[0] + (float)(@groups(0) * @groups());
    if (i == 0 && j == 0) @print("groups: %ld\\n", (long)@groups());
}
""", {}, {}, 2),
}


def catalog() -> list[Case]:
    cases = []
    try:
        from portakern.examples import EXAMPLES
    except ImportError:  # pragma: no cover - the examples ship with portakern
        EXAMPLES = {}
    for name, ex in sorted(EXAMPLES.items()):
        probe = pk.Kernel(ex.source, ex.kernel, filename=ex.file, **dict(ex.constants))
        type_name = type_name_of(np.dtype(ex.dtypes[0]))
        bindings = {tv: type_name for tv in probe.type_vars}
        # A machine-independent file name: #line directives quote it.
        cases.append(Case(f"example_{name}", ex.source, f"portakern/examples/{ex.file}",
                          ex.kernel, dict(ex.constants), bindings, ex.ndims[0]))
    for name, (source, constants, bindings, ndim) in OWN.items():
        cases.append(Case(name, source, f"tests/{name}.pk", None, constants, bindings, ndim))
    return cases


CASES = catalog()
IDS = [c.name for c in CASES]


def golden_path(case: Case, target: str) -> Path:
    return GOLDEN / target / f"{case.name}.{EXTENSIONS[target]}"


def test_catalog_has_the_examples():
    from portakern.examples import EXAMPLES

    assert len(EXAMPLES) >= 10
    assert {f"example_{n}" for n in EXAMPLES} <= set(IDS)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden(case, target):
    path = golden_path(case, target)
    got = case.render(target)
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", got, flags=re.S)
    assert not re.search(r"@\w", code)  # every construct was lowered
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"missing golden file {path}; create it with "
                    f"PORTAKERN_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py")
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(
            want.splitlines(True), got.splitlines(True), str(path), "rendered now"))
        pytest.fail(f"rendering changed (review, then regenerate with "
                    f"PORTAKERN_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py):\n"
                    f"{diff}")


def test_no_stale_goldens():
    expected = {golden_path(c, t) for c in CASES for t in TARGETS}
    present = {p for t in TARGETS for p in (GOLDEN / t).glob("*") if p.is_file()}
    stale = present - expected
    if REGEN:
        for p in stale:
            p.unlink()
        return
    assert not stale, f"golden files with no catalog entry: {sorted(map(str, stale))}"


def test_rendering_is_deterministic():
    case = next(c for c in CASES if c.name == "masked_reduction")
    assert case.render("cuda") == case.render("cuda")


# -- compile checks of the same renderings ----------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cuda_renderings_compile_nvrtc(case):
    from portakern.checks import compile_cuda_ptx, cuda_check_available

    ok, why = cuda_check_available()
    if not ok:
        pytest.skip(f"no CUDA compiler: {why}")
    ptx = compile_cuda_ptx(case.render("cuda"), arch="compute_90",
                           sources={case.filename: case.source})
    assert ".entry" in ptx


NVCC = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists()
                                else None)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed (CUDA toolkit)")
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cuda_renderings_compile_nvcc(case, tmp_path):
    src = tmp_path / f"{case.name}.cu"
    src.write_text(case.render("cuda"))
    proc = subprocess.run([NVCC, "--ptx", "-arch=compute_90", str(src), "-o",
                           str(tmp_path / "out.ptx")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ".entry" in (tmp_path / "out.ptx").read_text()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_metal_renderings_check(case):
    from portakern.checks import check_metal, metal_check_available

    ok, why = metal_check_available()
    if not ok:
        pytest.skip(f"no Metal syntax check: {why}")
    if _uses_type(case.render("metal"), "double"):
        pytest.skip("Metal has no double")
    check_metal(case.render("metal"), sources={case.filename: case.source})


def _uses_type(source: str, word: str) -> bool:
    """Whether rendered code (not its comments: "half the bytes") names the type ``word``."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.DOTALL)
    return re.search(rf"\b{word}\d*\b", code) is not None


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_opencl_renderings_build(case):
    if not pk.CPU.opencl_available():
        pytest.skip(f"no CPU OpenCL device: {pk.CPU.opencl_available().reason}")
    backend = pk.CPU()
    k = pk.Kernel(case.source, case.kernel, filename=case.filename, **case.constants)
    ndim = case.ndim if case.ndim is not None else None
    from portakern.lower.lowering import infer_ndim

    kdef = k.parsed("opencl")[1]
    rendered = k.rendered("opencl", case.bindings, infer_ndim(kdef) if ndim is None else ndim)
    if _uses_type(rendered.source, "double") and not backend.supports("float64"):
        pytest.skip("the CPU device has no float64")
    backend.compile(rendered)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_c_renderings_build(case):
    from portakern.backends.native import NativeCPU
    from portakern.lower.lowering import infer_ndim

    if not NativeCPU.available():
        pytest.skip(f"no native CPU path: {NativeCPU.available().reason}")
    k = pk.Kernel(case.source, case.kernel, filename=case.filename, **case.constants)
    facts = k.facts("c")
    backend = NativeCPU(lockstep=facts.lockstep)
    kdef = k.parsed("c")[1]
    if facts.lockstep_blocker:
        pytest.skip(f"CPU() runs this kernel on OpenCL: {facts.lockstep_blocker} in a kernel "
                    f"with barriers")
    ndim = infer_ndim(kdef) if case.ndim is None else case.ndim
    compiled = backend.compile(k.rendered("c", case.bindings, ndim))
    assert compiled.fn is not None
