#!/usr/bin/env bash
# On the H200 machine: install the carried wheels (ecocompute's own among them), then run a queue of collect commands in the
# background. Usage: bash scripts/reference/start.sh QUEUE_FILE [GPU_INDEX]
set -euo pipefail
queue=$1; gpu=${2:-0}
mkdir -p /tmp/eco/out /tmp/eco/logs /tmp/eco/state /tmp/eco/traces
if [ ! -f /tmp/site/.ready ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  touch /tmp/site/.ready
fi
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
cp "$queue" "/tmp/eco/queue-$gpu.txt"
setsid nohup bash scripts/reference/worker.sh "/tmp/eco/queue-$gpu.txt" "$gpu" \
  > "/tmp/eco/logs/worker-$gpu.log" 2>&1 < /dev/null &
echo "started worker for GPU $gpu (pid $!)"
