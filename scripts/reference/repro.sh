#!/usr/bin/env bash
# On the H200 machine, from chain.sh: the reproducibility benchmark of issue 6, three separate collector processes
# per configuration; their submissions are kept for committing. Configurations not yet measured come first (fp16
# and nf4 at a 1.1B and a 7B shape, compiled stack: fp16 compiled and GPU-bound, nf4 not compiled by transformers and
# host-bound); a configuration whose result exists in /tmp/eco/results is skipped, so a restarted chain goes on.
# The second sitting's TinyLlama-1.1B fp16-only run is benchmarks/results/reproducibility-tinyllama-compiled.*.
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
for config in "tinyllama-compiled-fp16-nf4 TinyLlama-1.1B" "qwen7b-compiled-fp16-nf4 Qwen2.5-7B"; do
  read -r name arch <<< "$config"
  result=/tmp/eco/results/reproducibility-$name
  [ -f "$result.json" ] && continue
  echo "[$(date -u +%FT%TZ)] reproducibility $name"
  python3 benchmarks/reproducibility.py --out "$result.json" --keep "/tmp/eco/out/reproducibility-$name" -- \
    --arch "$arch" --precisions fp16,nf4 --stack compiled --window-s 10 --min-windows 3 --max-windows 3 \
    --signer ecocompute-reference --device-index "$gpu" ${ECO_CPUS:+--cpu-affinity $ECO_CPUS} > "$result.txt" 2>&1
  echo "reproducibility benchmark exited $?" >> "$result.txt"
done
