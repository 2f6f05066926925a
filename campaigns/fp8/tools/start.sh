#!/usr/bin/env bash
# On the H200 machine, after smoke.sh: run FP8 queues one after another on one GPU in the background, each line as
# `ecocompute collect LINE --resume` through the H200 campaign's chain.sh and worker.sh: a finished line goes into
# QUEUE.done and is skipped, a cut one resumes from its checkpoint. Run it again in every command of the session:
# a chain already running is left alone. Usage: [ECO_CPUS=0-15] bash campaigns/fp8/tools/start.sh GPU QUEUE ...
# End every command with: bash campaigns/fp8/tools/pack.sh
set -euo pipefail
gpu=$1
source campaigns/fp8/tools/install.sh
pidfile=/tmp/eco/logs/fp8-chain-$gpu.pid
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "the chain on GPU $gpu is running (pid $(cat "$pidfile")): tail /tmp/eco/logs/worker-$gpu.log"
  exit 0
fi
setsid nohup bash campaigns/h200-2026-11/tools/chain.sh "$gpu" "${@:2}" \
  >> "/tmp/eco/logs/worker-$gpu.log" 2>&1 < /dev/null &
echo $! > "$pidfile"
echo "started chain for GPU $gpu (pid $!): ${*:2}"
