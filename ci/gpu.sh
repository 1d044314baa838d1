#!/usr/bin/env bash
# The CUDA backend on a real NVIDIA GPU: install CuPy for the driver, run the GPU tests
# (every test marked gpu: tests/test_cuda.py's examples, atomics, streams, interop, faults
# and the conformance suite, and the CUDA cases of the backend-parametrized tests), then
# the CUDA rows of the benchmark. Meant to finish in
# under 5 minutes on one GPU.
#
# Usage:  bash ci/gpu.sh
# Offline machine: download the wheels elsewhere into a folder and point PORTAKERN_WHEELS
# at it (pip then installs with --no-index --find-links):
#   pip download -d wheels cupy-cuda13x "cuda-toolkit[cudart,nvrtc,cublas]==13.*"
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "ci/gpu.sh: no NVIDIA GPU or driver here (nvidia-smi fails); nothing to run" >&2
    exit 2
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# The driver's CUDA version picks the CuPy wheel: cupy-cuda13x needs a CUDA 13 driver
# (580 or later); a CUDA 12 driver needs cupy-cuda12x.
cuda_major=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\)\..*/\1/p' | head -n 1)
if [ "${cuda_major:-12}" -ge 13 ]; then
    wheels=(cupy-cuda13x "cuda-toolkit[cudart,nvrtc,cublas]==13.*")
else
    wheels=(cupy-cuda12x "cuda-toolkit[cudart,nvrtc,cublas]==12.*")
fi
# CuPy's wheels ship no NVRTC, cuBLAS or CUDA headers: the cuda-toolkit wheels bring
# NVRTC (RawModule), cuBLAS (cupy.matmul, the benchmark's reference) and cuda_fp16.h.
pip_install=(python -m pip install -q)
if [ -n "${PORTAKERN_WHEELS:-}" ]; then
    pip_install+=(--no-index --find-links "$PORTAKERN_WHEELS")
fi
if ! python -c "import portakern" >/dev/null 2>&1; then
    "${pip_install[@]}" -e ".[test]"
fi
if ! python -c "import cupy; cupy.cuda.runtime.getDeviceCount()" >/dev/null 2>&1; then
    echo "installing ${wheels[*]} for CUDA ${cuda_major:-12}"
    "${pip_install[@]}" "${wheels[@]}"
fi
python - <<'EOF'
import cupy

from portakern.backends.cuda import CUDA

print("cupy", cupy.__version__, "| CUDA runtime", cupy.cuda.runtime.runtimeGetVersion(),
      "| devices", cupy.cuda.runtime.getDeviceCount())

status = CUDA.available()
print("portakern CUDA backend:", "available" if status else status.reason)
raise SystemExit(0 if status else 1)
EOF

# -rs lists every skip with its reason: on a GPU only the two-device test should skip.
# Every test marked gpu (without a GPU they run on the CPU stand-in; here on the GPU).
timeout 300 python -m pytest -q -m gpu -rs

if python -c "import portakern.bench" >/dev/null 2>&1; then
    timeout 90 python -m portakern bench --backend CUDA
else
    echo "portakern.bench is not in this tree yet: no benchmark rows" >&2
fi
