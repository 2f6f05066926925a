#!/usr/bin/env bash
# On the H200 machine, first: the software, the GPU's compute capability, the FP8 GPU tests (both precisions on
# eager and compiled-all, tiny shape) and one short eager collect of the four precisions; writes into $OUT. It
# keeps inside one 10-minute command (each step has its timeout), leaving room for start.sh and pack.sh after it.
# Usage: bash campaigns/fp8/tools/smoke.sh
set -uo pipefail
source campaigns/fp8/tools/install.sh || exit 1
nvidia-smi --query-gpu=index,name,compute_cap,power.limit,power.draw,temperature.gpu --format=csv
python3 - <<'PY' || exit 1
import importlib.metadata as md
import torch
from ecocompute.collector.model.torchao_fp8 import MIN_COMPUTE_CAPABILITY, software_problem
print({name: md.version(name) for name in ("torch", "transformers", "torchao", "ecocompute")}, torch.version.cuda)
problem = software_problem()
assert problem is None, problem
cc = torch.cuda.get_device_capability(0)
assert cc >= MIN_COMPUTE_CAPABILITY, f"compute capability {cc}: no FP8 tensor cores"
import torchao  # noqa: F401  (the extensions' load warnings, if any, show here)
print("compute capability", cc, "ok")
PY
CUDA_VISIBLE_DEVICES=0 timeout 240 python3 -m pytest -m gpu tests/collector/test_fp8.py -p no:cacheprovider -q -rs \
  > "$OUT/fp8-gpu-tests.txt" 2>&1
echo "gpu tests exited $?"; tail -n 5 "$OUT/fp8-gpu-tests.txt"
CUDA_VISIBLE_DEVICES=0 timeout 270 ecocompute collect --arch tiny-llama-test --precisions fp16,bf16,fp8-wo,fp8-dyn \
  --stack eager --batch-size 1 --window-s 10 --warmup-windows 1 --min-windows 3 --max-windows 3 --idle-s 5 \
  --signer ecocompute-reference --out /tmp/eco/smoke --state-dir /tmp/eco/smoke-state --device-index 0 \
  > "$OUT/fp8-smoke.log" 2>&1
echo "collect exited $?"; tail -n 20 "$OUT/fp8-smoke.log"
find /tmp/eco/smoke -name '*.json' -exec cp {} "$OUT/" \;
