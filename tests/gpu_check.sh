#!/usr/bin/env bash
# ember on a CUDA GPU, in one go: the GPU tests, the op table with ember on the GPU (torch on the
# CPU as the oracle), then the benchmark workloads on the GPU in both libraries.
#   bash tests/gpu_check.sh [out-dir]        (needs CuPy, an NVIDIA GPU, torch, pytest-xdist)
# Logs go to out-dir (default: gpu-check/). Each part has a time limit, so one slow part
# cannot take the others' time.
OUT_DIR=${1:-gpu-check}
PY=${PYTHON:-python3}
mkdir -p "$OUT_DIR"
export PYTHONUNBUFFERED=1
WORKERS=$(( $(nproc) > 12 ? 12 : $(nproc) ))

nvidia-smi -L
$PY -c "import cupy, numpy, torch; print('cupy', cupy.__version__, 'numpy', numpy.__version__,
'torch', torch.__version__, 'torch sees the GPU:', torch.cuda.is_available())"

echo "== GPU tests"
timeout 110 $PY -m pytest -q -p no:cacheprovider tests/test_cuda.py --tb=short -rfE \
    >"$OUT_DIR/cuda.log" 2>&1
tail -30 "$OUT_DIR/cuda.log"

echo "== the op table, ember on the GPU"
EMBER_TEST_DEVICE=cuda timeout 200 $PY -m pytest -q -p no:cacheprovider -n "$WORKERS" \
    tests/test_ops.py tests/test_pointwise.py tests/test_reduce.py tests/test_indexing.py \
    tests/test_linalg.py tests/test_views.py tests/test_autograd.py tests/test_nn_*.py \
    --tb=line -rfE >"$OUT_DIR/table.log" 2>&1
grep -E "passed|failed" "$OUT_DIR/table.log" | tail -3

echo "== benchmark on the GPU"
timeout 120 $PY bench/run.py --device cuda --rounds 3 --repeats 5 \
    --only mlp,cnn,resnet,gpt,gpt_sdpa,lstm,lstm_cell,gpt_inference >"$OUT_DIR/bench.log" 2>&1
tail -14 "$OUT_DIR/bench.log"
