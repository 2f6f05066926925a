#!/usr/bin/env bash
# On the H200 machine, once /tmp/site/.llama-ready exists: the build has CUDA for sm_90, collect has --engine,
# and the tiny architecture runs through llama.cpp on the GPU (a few seconds). Usage: bash campaigns/llamacpp/tools/smoke.sh
set -euo pipefail
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
tail -n 3 /tmp/eco/logs/llama-build.log
test -f /tmp/site/.llama-ready
python3 - <<'PY'
import llama_cpp
info = llama_cpp.llama_print_system_info().decode()
print(info)
assert llama_cpp.llama_supports_gpu_offload(), "llama.cpp was built without CUDA"
assert "CUDA" in info, info
PY
ecocompute collect --help | grep -q -- '--engine' || { echo "collect has no --engine: merge the wiring first"; exit 1; }
python3 -m ecocompute.collector.model.gguf_weights --arch tiny-llama-test --out /tmp/eco/smoke-gguf
ecocompute collect --engine llama.cpp --arch tiny-llama-test --precisions fp16,q8_0,q4_k_m --stack eager \
  --batch-size 1 --window-s 10 --warmup-windows 1 --min-windows 3 --max-windows 3 --idle-s 5 \
  --weights-cache /tmp/eco/smoke-gguf --signer ecocompute-reference --out /tmp/eco/smoke --state-dir /tmp/eco/smoke-state --quiet
