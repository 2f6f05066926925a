#!/usr/bin/env bash
# On the H200 machine, after start.sh: the collector-overhead benchmark on one GPU, in the background.
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
python3 benchmarks/collector_overhead.py --arch TinyLlama-1.1B --windows 8 --window-s 10 --device-index "$gpu" \
  --out /tmp/eco/results/collector_overhead.json > /tmp/eco/logs/overhead.log 2>&1
echo "overhead benchmark exited $?" >> /tmp/eco/logs/overhead.log
