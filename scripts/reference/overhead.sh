#!/usr/bin/env bash
# On the H200 machine, from chain.sh: the collector-overhead benchmark (issue 3) on one GPU.
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
${ECO_CPUS:+taskset -c $ECO_CPUS} python3 benchmarks/collector_overhead.py --arch TinyLlama-1.1B --windows 8 --window-s 10 --device-index "$gpu" \
  --out /tmp/eco/results/collector_overhead_h200.json > /tmp/eco/results/collector_overhead_h200.txt 2>&1
echo "overhead benchmark exited $?" >> /tmp/eco/results/collector_overhead_h200.txt
