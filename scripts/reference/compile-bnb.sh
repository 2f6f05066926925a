#!/usr/bin/env bash
# On the H200 machine, from chain.sh: can bitsandbytes models be compiled (compile_bnb.py)? Tokens/s of fp16 compiled,
# and of each quantized precision uncompiled and with its quantizer marked compileable, at 1.1B and 7B.
set -uo pipefail
gpu=${1:-0}
mkdir -p /tmp/eco/results
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=$gpu CUDA_DEVICE_ORDER=PCI_BUS_ID
for arch in TinyLlama-1.1B Qwen2.5-7B; do
  out=/tmp/eco/results/compile-bnb-$arch
  ${ECO_CPUS:+taskset -c $ECO_CPUS} python3 scripts/reference/compile_bnb.py --arch "$arch" \
    --precisions nf4,int8-t0,int8 --out "$out.json" > "$out.txt" 2>&1
  echo "compile_bnb.py ($arch) exited $?" >> "$out.txt"
done
