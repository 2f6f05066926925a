#!/usr/bin/env bash
# On the H200 machine, from chain.sh: the collector-overhead benchmark (issue 3) on one GPU, on the compiled stack
# first (fp16 time per token spreads by about 3% there, against about 12% eager), then eager.
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
for stack in compiled eager; do
  out=/tmp/eco/results/collector_overhead_h200_$stack
  ${ECO_CPUS:+taskset -c $ECO_CPUS} python3 benchmarks/collector_overhead.py --arch TinyLlama-1.1B --stack "$stack" \
    --windows 8 --window-s 10 --device-index "$gpu" --out "$out.json" > "$out.txt" 2>&1
  echo "overhead benchmark ($stack) exited $?" >> "$out.txt"
done
