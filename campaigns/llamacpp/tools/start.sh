#!/usr/bin/env bash
# On the H200 machine, after smoke.sh: run a queue's lines one after another in the background, each as
# `ecocompute collect --engine llama.cpp LINE --resume` (the GGUF files are made in /dev/shm/ecocompute before
# the first window of each shape). Usage: [ECO_CPUS=0-15] bash campaigns/llamacpp/tools/start.sh GPU QUEUE
# Pack the results with campaigns/h200-2026-11/tools/collect.sh, as the H200 campaign does.
set -euo pipefail
gpu=$1 queue=$2
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
mkdir -p /tmp/eco/out /tmp/eco/logs /tmp/eco/state
run_queue() {
  grep -v '^\s*\(#\|$\)' "$queue" | while read -r line; do
    echo "== $(date -u +%FT%TZ) $line"
    # shellcheck disable=SC2086
    ${ECO_CPUS:+taskset -c $ECO_CPUS} ecocompute collect --engine llama.cpp $line --device-index "$gpu" \
      --out /tmp/eco/out --state-dir /tmp/eco/state --weights-cache /dev/shm/ecocompute --resume --quiet \
      || echo "== failed: rc=$?"
  done
  echo "== queue done $(date -u +%FT%TZ)"
}
export -f run_queue
export gpu queue
setsid nohup bash -c run_queue > "/tmp/eco/logs/llamacpp-$gpu.log" 2>&1 < /dev/null &
echo "started $queue on GPU $gpu (pid $!): tail /tmp/eco/logs/llamacpp-$gpu.log"
