#!/usr/bin/env bash
# Run each line of a queue file as `ecocompute collect <line>` on one GPU, resuming unfinished runs.
# Lines that finished are recorded in QUEUE.done, so a restarted worker skips them and resumes the others. With ECO_CPUS set (e.g. 0-15),
# a line without its own --cpu-affinity is pinned there (recorded in the submission's method), which keeps the
# collectors of two GPUs on one host off each other's CPUs.
set -uo pipefail
queue=$1; gpu=$2; name=$(basename "$queue" .txt)
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
touch "$queue.done"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  [ -z "$line" ] && continue
  case "$line" in \#*) continue ;; esac
  grep -qxF -- "$line" "$queue.done" && continue
  extra=""
  if [ -n "${ECO_CPUS:-}" ] && [[ "$line" != *--cpu-affinity* ]]; then extra="--cpu-affinity $ECO_CPUS"; fi
  echo "[$(date -u +%FT%TZ)] gpu $gpu job $n: $line $extra"
  # shellcheck disable=SC2086
  python3 -m ecocompute.collector collect $line $extra --device-index "$gpu" --out /tmp/eco/out \
    --state-dir /tmp/eco/state --resume --quiet > "/tmp/eco/logs/gpu$gpu-$name-job$n.log" 2>&1
  rc=$?
  echo "[$(date -u +%FT%TZ)] gpu $gpu job $n exited $rc"
  [ "$rc" -eq 0 ] && echo "$line" >> "$queue.done"
done < "$queue"
echo "[$(date -u +%FT%TZ)] gpu $gpu queue finished"
