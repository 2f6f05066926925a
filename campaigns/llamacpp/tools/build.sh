#!/usr/bin/env bash
# On the H200 machine, in the repository root: install the carried wheels into /tmp/site (as the H200 campaign
# does), then build llama-cpp-python from the trimmed sdist with CUDA for sm_90 only, in the background (about
# 5-10 minutes on 16 cores; a command may run 10). /tmp/site/.llama-ready appears when it is done; the log is
# /tmp/eco/logs/llama-build.log. Usage: bash campaigns/llamacpp/tools/build.sh
set -euo pipefail
mkdir -p /tmp/eco/out /tmp/eco/logs /tmp/eco/state
if [ ! -f /tmp/site/.ready ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  touch /tmp/site/.ready
fi
rm -rf /tmp/llama-src && mkdir -p /tmp/llama-src
tar -C /tmp/llama-src -xzf .whl/llama_cpp_python-*-trimmed.tar.gz
src=$(ls -d /tmp/llama-src/llama_cpp_python-*)
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
setsid nohup bash -c "start=\$(date +%s); python3 -m pip install -v --no-index --no-deps --no-build-isolation \
  --no-cache-dir --target /tmp/site '$src' && touch /tmp/site/.llama-ready; \
  echo \"build finished rc=\$? in \$(( \$(date +%s) - start )) s\"" > /tmp/eco/logs/llama-build.log 2>&1 < /dev/null &
echo "building llama-cpp-python (pid $!): tail /tmp/eco/logs/llama-build.log"
