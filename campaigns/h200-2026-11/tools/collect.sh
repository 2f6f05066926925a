#!/usr/bin/env bash
# On the H200 machine: pack what the workers have written into $OUT (one tar, plus the worker logs' tails).
set -uo pipefail
tar -C /tmp/eco -czf "$OUT/eco.tgz" out logs traces results state 2>/dev/null || true
for f in /tmp/eco/logs/worker-*.log; do [ -f "$f" ] && tail -n 15 "$f"; done
ls -R /tmp/eco/out 2>/dev/null | tail -n 30
nvidia-smi --query-gpu=index,power.draw,temperature.gpu,utilization.gpu,memory.used --format=csv,noheader
