#!/usr/bin/env bash
# The checks that need a real NVIDIA GPU, as one short script (about two
# minutes on one H100/H200, most of it compiling the kernels once):
#   1. the CUDA tests on the device (NUMBA_ENABLE_CUDASIM=0: the same checks
#      as under the simulator, on larger problems);
#   2. the GPU section of bench/compare.py, written to bench/compare-gpu.md.
#
# Run it from a Python environment that already has the package with its
# cuda and test extras and a CUDA build of torch (plus the entmax package
# for the entmax15 peer), e.g.
#   pip install -e ".[cuda,test]" torch entmax
# Usage: bench/gpu_check.sh [--small]   (--small: the benchmark's smaller shapes)
set -euo pipefail
cd "$(dirname "$0")/.."
shapes=full
if [[ "${1:-}" == "--small" ]]; then shapes=small; fi
export NUMBA_ENABLE_CUDASIM=0

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python -c "import fastrbfkm.cuda as c; c.require(); print('fastrbfkm.cuda: the GPU is usable')"

start=$(date +%s)
timeout 240 python -m pytest tests/test_cuda.py tests/test_cuda_rows.py -q -x -p no:cacheprovider
echo "GPU tests: $(( $(date +%s) - start )) s"

start=$(date +%s)
(cd bench && timeout 240 python compare.py --section gpu --shapes "$shapes" --repeats 5 \
    --out compare-gpu.md)
echo "GPU benchmark: $(( $(date +%s) - start )) s"
cat bench/compare-gpu.md
