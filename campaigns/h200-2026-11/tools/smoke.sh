#!/usr/bin/env bash
# On the H200 machine: check the software there and run the collector briefly, before a long sweep.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_DEVICE_ORDER=PCI_BUS_ID
nvidia-smi --query-gpu=index,name,power.limit,power.draw,temperature.gpu,clocks.sm,persistence_mode --format=csv
python3 -c "import torch, transformers, accelerate, bitsandbytes, pynvml, typer; print(torch.__version__, torch.version.cuda, transformers.__version__, accelerate.__version__, bitsandbytes.__version__, typer.__version__)"
command -v ssh-keygen || echo "no ssh-keygen"
df -h /dev/shm | tail -1; nproc; free -g | head -2
last=$(( $(nvidia-smi -L | wc -l) - 1 ))
CUDA_VISIBLE_DEVICES=$last python3 -m ecocompute.collector record-trace --seconds 20 --device-index "$last" \
  --out "$OUT/h200-matmul.json" > "$OUT/trace.log" 2>&1 &
CUDA_VISIBLE_DEVICES=0 timeout 400 python3 -m ecocompute.collector collect --arch TinyLlama-1.1B --precisions fp16,nf4,int8 \
  --window-s 3 --warmup-windows 1 --min-windows 3 --max-windows 3 --idle-s 3 --signer ecocompute-reference \
  --out /tmp/smoke --state-dir /tmp/smoke-state --quiet > "$OUT/smoke.log" 2>&1
echo "collect exited $?"
wait
tail -n 25 "$OUT/smoke.log"; tail -n 5 "$OUT/trace.log"
find /tmp/smoke -name '*.json' -exec cp {} "$OUT/" \;
ls -la "$OUT"
