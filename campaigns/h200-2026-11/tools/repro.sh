#!/usr/bin/env bash
# On the H200 machine, from chain.sh: the reproducibility benchmark of issue 6, three separate collector processes
# per configuration; their submissions are kept for committing. fp16 and nf4 at a 1.1B and a 7B shape on the
# compiled-all stack (both compiled) and on the compiled stack (nf4 not compiled by transformers, host-bound). The
# fifth sitting measured all but the last (results in campaigns/h200-2026-11/results/reproducibility-*; it finished one process
# of the 7B compiled configuration, submissions/ 7768f85c); the twelfth measured the last, which is left here. A
# configuration whose result exists in /tmp/eco/results is skipped, so a restarted chain goes on.
# The second sitting's TinyLlama-1.1B fp16-only run is campaigns/h200-2026-11/results/reproducibility-tinyllama-compiled.*.
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
for config in "qwen7b-compiled-fp16-nf4 Qwen2.5-7B compiled"; do
  read -r name arch stack <<< "$config"
  result=/tmp/eco/results/reproducibility-$name
  [ -f "$result.json" ] && continue
  echo "[$(date -u +%FT%TZ)] reproducibility $name"
  python3 benchmarks/reproducibility.py --out "$result.json" --keep "/tmp/eco/out/reproducibility-$name" -- \
    --arch "$arch" --precisions fp16,nf4 --stack "$stack" --window-s 10 --min-windows 3 --max-windows 3 \
    --signer ecocompute-reference --device-index "$gpu" ${ECO_CPUS:+--cpu-affinity $ECO_CPUS} > "$result.txt" 2>&1
  echo "reproducibility benchmark exited $?" >> "$result.txt"
done
