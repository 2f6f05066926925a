#!/usr/bin/env bash
# Run queue files one after another on one GPU; the word "overhead" in the list runs the overhead benchmark there.
# Usage (started with setsid by start.sh): chain.sh GPU QUEUE|overhead [QUEUE|overhead ...]
set -uo pipefail
gpu=$1; shift
for item in "$@"; do
  if [ "$item" = overhead ]; then bash scripts/reference/overhead.sh "$gpu"; else bash scripts/reference/worker.sh "$item" "$gpu"; fi
done
echo "chain on GPU $gpu done"
