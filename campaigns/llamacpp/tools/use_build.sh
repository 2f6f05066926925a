#!/usr/bin/env bash
# On the H200 machine: install the carried wheels and a llama_cpp build packed by pack_build.sh (carried in
# .llb/), in place of build.sh. /tmp/site/.llama-ready then exists, as after a build.
# Usage: bash campaigns/llamacpp/tools/use_build.sh
set -euo pipefail
mkdir -p /tmp/eco/out /tmp/eco/logs /tmp/eco/state
if [ ! -f /tmp/site/.ready ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  touch /tmp/site/.ready
fi
cat .llb/llb.tar.xz.part* > /tmp/llb.tar.xz
(cd /tmp && sha256sum -c --quiet "$OLDPWD/.llb/llb.sha256") || { echo "the carried build is damaged: pack it again"; exit 1; }
xz -dc /tmp/llb.tar.xz | tar -C /tmp/site -xf -
PYTHONPATH=/tmp/site python3 -c "import llama_cpp; assert llama_cpp.llama_supports_gpu_offload(), 'built without CUDA'"
touch /tmp/site/.llama-ready
echo "llama_cpp $(PYTHONPATH=/tmp/site python3 -c 'import llama_cpp; print(llama_cpp.__version__)') ready in /tmp/site"
