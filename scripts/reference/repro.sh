#!/usr/bin/env bash
# On the H200 machine, from chain.sh: the reproducibility benchmark (issue 6), TinyLlama-1.1B compiled fp16,
# three separate collector processes; their submissions are kept for committing.
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
python3 benchmarks/reproducibility.py --out /tmp/eco/results/reproducibility-tinyllama-compiled.json \
  --keep /tmp/eco/out/reproducibility -- --arch TinyLlama-1.1B --precisions fp16 --stack compiled \
  --window-s 10 --min-windows 3 --max-windows 3 --signer ecocompute-reference --device-index "$gpu" \
  ${ECO_CPUS:+--cpu-affinity $ECO_CPUS} > /tmp/eco/results/reproducibility-tinyllama-compiled.txt 2>&1
echo "reproducibility benchmark exited $?" >> /tmp/eco/results/reproducibility-tinyllama-compiled.txt
