#!/usr/bin/env bash
# On the H200 machine: install the carried wheels (ecocompute's own among them), then run queues and scripts
# on one GPU in the background. Usage: [ECO_CPUS=0-15] bash campaigns/h200-2026-11/tools/start.sh GPU ITEM ... (see chain.sh)
set -euo pipefail
gpu=$1
mkdir -p /tmp/eco/out /tmp/eco/logs /tmp/eco/state /tmp/eco/traces
if [ ! -f /tmp/site/.ready ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  touch /tmp/site/.ready
fi
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
setsid nohup bash campaigns/h200-2026-11/tools/chain.sh "$gpu" "${@:2}" \
  > "/tmp/eco/logs/worker-$gpu.log" 2>&1 < /dev/null &
echo "started chain for GPU $gpu (pid $!)"
