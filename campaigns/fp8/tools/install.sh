#!/usr/bin/env bash
# On the H200 machine: install the carried wheels into /tmp/site once (torch and transformers are the image's),
# and bring back checkpoints a former session packed (campaigns/fp8/state/, in the tree; one resumes only on
# the GPU that wrote it). Usage: source campaigns/fp8/tools/install.sh   (smoke.sh and start.sh do)
if [ ! -f /tmp/site/.fp8-ready ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || return 1
  touch /tmp/site/.ready /tmp/site/.fp8-ready
fi
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1 CUDA_DEVICE_ORDER=PCI_BUS_ID
mkdir -p /tmp/eco/out /tmp/eco/logs /tmp/eco/state /tmp/eco/results /tmp/eco/traces
if [ -d campaigns/fp8/state ]; then cp -n campaigns/fp8/state/* /tmp/eco/state/ 2>/dev/null || true; fi
