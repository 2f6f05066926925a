#!/usr/bin/env bash
# Run queue files and scripts one after another on one GPU: an item ending in .sh is run as `bash ITEM GPU`
# (a benchmark or the GPU tests), any other item is a queue file for worker.sh.
# Usage (started with setsid by start.sh): chain.sh GPU ITEM [ITEM ...]
set -uo pipefail
gpu=$1; shift
for item in "$@"; do
  echo "[$(date -u +%FT%TZ)] gpu $gpu: $item"
  case "$item" in
    *.sh) bash "$item" "$gpu" ;;
    *) bash campaigns/h200-2026-11/tools/worker.sh "$item" "$gpu" ;;
  esac
done
echo "[$(date -u +%FT%TZ)] chain on GPU $gpu done"
