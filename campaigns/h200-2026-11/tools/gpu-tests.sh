#!/usr/bin/env bash
# On the H200 machine, from chain.sh: the GPU-marked tests (pytest and hypothesis travel in .whl/).
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
ECOCOMPUTE_TEST_GPU=$gpu ${ECO_CPUS:+taskset -c $ECO_CPUS} python3 -m pytest -m gpu tests/collector -p no:cacheprovider -q -rs \
  > /tmp/eco/results/pytest-gpu.txt 2>&1
echo "pytest exited $?" >> /tmp/eco/results/pytest-gpu.txt
