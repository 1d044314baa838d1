"""The plugin adopts portakern's conformance suite, and resolves through its entry point.

Needs torch and this package installed (``pip install --no-deps -e
tests/plugins/portakern_torchcpu``); skipped with the reason otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

import portakern as pk
from portakern.testing import ConformanceSuite, assert_backends_agree

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
portakern_torchcpu = pytest.importorskip(
    "portakern_torchcpu",
    reason="the plugin is not installed: pip install --no-deps -e tests/plugins/portakern_torchcpu")


class TestTorchCPU(ConformanceSuite):
    backend = portakern_torchcpu.TorchCPU


def test_registered_by_entry_point() -> None:
    record = pk.registered_backends()["TorchCPU"]
    assert record.origin.startswith("entry point of portakern-torchcpu")
    assert record.array_types == ("torch.Tensor",)
    assert pk.get_backend(torch.zeros(3)) == portakern_torchcpu.TorchCPU()


def test_tensors_are_written_in_place_without_a_copy() -> None:
    saxpy = pk.kernel("""
        @kernel void saxpy(T* y, const T* x, T a) {
            const long i = @index(Global, Linear);
            y[i] = a * x[i] + y[i];
        }""")
    y = torch.ones(1000)
    alias = y[:]  # shares y's storage: a copy inside the launch would leave it stale
    x = torch.arange(1000, dtype=torch.float32)
    saxpy(y, x, 2.0, ndrange=y.shape)
    np.testing.assert_array_equal(alias.numpy(), 2 * np.arange(1000) + 1)


def test_agrees_with_numpy_on_cpu() -> None:
    k = pk.kernel("""
        @kernel void square(T* y, const T* x) {
            const long i = @index(Global, Linear);
            y[i] = x[i] * x[i];
        }""")
    assert_backends_agree(
        k, lambda: (np.zeros(100, np.float32), np.linspace(0, 1, 100, dtype=np.float32)),
        ndrange=100, backends=["CPU", "TorchCPU"])


def test_mixing_tensors_and_numpy_arrays_names_both() -> None:
    k = pk.kernel("@kernel void copy(T* y, const T* x) { y[@index(Global, Linear)] = "
                  "x[@index(Global, Linear)]; }")
    with pytest.raises(TypeError, match=r"(?s)torch\.Tensor -> TorchCPU\(\).*CPU\(\)"):
        k(torch.zeros(4), np.zeros(4, np.float32), ndrange=4)


def test_bfloat16_tensors_run_in_place_by_their_bits() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 arrays are ml_dtypes arrays")
    k = pk.kernel("""
        @kernel void halve(T* y, const T* x) {
            const long i = @index(Global, Linear);
            y[i] = x[i] * 0.5f + 1.0f;
        }""")
    x = torch.linspace(-7, 7, 200, dtype=torch.float32).to(torch.bfloat16)
    y = torch.zeros(200, dtype=torch.bfloat16)
    k(y, x, ndrange=200)  # binds T=bfloat16 from the tensors
    host = x.float().numpy()
    want = (host * np.float32(0.5) + np.float32(1)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(y.view(torch.uint16).numpy(), want.view(np.uint16))
