#!/usr/bin/env bash
# On the H200 machine, from chain.sh: can bitsandbytes models be compiled (compile_bnb.py)? Tokens/s of fp16 uncompiled
# (the token-match control) and compiled, and of each quantized precision uncompiled and with its quantizer marked
# compileable (as the compiled-all stack does): NF4 and INT8 threshold 0 at
# 1.1B, NF4 at 7B (INT8 with the default threshold is left out: its outlier split is the slowest and least likely
# to trace, and the whole experiment has to fit beside a sweep in one lease).
# The fourth sitting ran it before the fp16 control was added; the twelfth with it (results in
# campaigns/h200-2026-11/results/compile-bnb-*).
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
for config in "TinyLlama-1.1B nf4,int8-t0" "Qwen2.5-7B nf4"; do
  read -r arch precisions <<< "$config"
  out=/tmp/eco/results/compile-bnb-$arch
  [ -f "$out.json" ] && continue
  echo "[$(date -u +%FT%TZ)] compile_bnb.py $arch $precisions"
  ${ECO_CPUS:+taskset -c $ECO_CPUS} python3 campaigns/h200-2026-11/tools/compile_bnb.py --arch "$arch" \
    --precisions "$precisions" --out "$out.json" > "$out.txt" 2>&1
  echo "compile_bnb.py ($arch) exited $?" >> "$out.txt"
done
