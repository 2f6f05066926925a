#!/usr/bin/env bash
# On the H200 machine, at the end of every command (the machine may be gone before the next): pack submissions,
# checkpoints, logs and the queues' .done files into $OUT/eco.tgz, and print the pytorch/ao#4094 check so far.
# Usage: bash campaigns/fp8/tools/pack.sh
set -uo pipefail
export PYTHONPATH=/tmp/site
cp campaigns/fp8/queues/*.done /tmp/eco/logs/ 2>/dev/null || true
bash campaigns/h200-2026-11/tools/collect.sh
python3 campaigns/fp8/tools/anomaly.py /tmp/eco/out /tmp/eco/smoke 2>&1 | tee "$OUT/fp8-anomaly.txt" || true
