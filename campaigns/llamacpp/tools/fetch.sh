#!/usr/bin/env bash
# Here, in the repository root, with network: put what the offline H200 needs for llama.cpp in .whl/ (ignored by
# git; carry it). The H200 campaign's wheels (ecocompute's own among them), the wheels llama-cpp-python's build
# and the GGUF tool need, and llama-cpp-python's sdist trimmed to the CUDA build (about 3 MiB; the whole one is
# 76 MB). Usage: bash campaigns/llamacpp/tools/fetch.sh
set -euo pipefail
LLAMA_CPP_PYTHON=0.3.36
bash campaigns/h200-2026-11/tools/fetch_wheels.sh >/dev/null
# bitsandbytes (43 MB) is the transformers engine's: a llama.cpp sitting leaves it behind (KEEP_BNB=1 keeps it),
# so that the tree (about 9 MB) and .whl stay well inside the 64 MiB that travel
[ "${KEEP_BNB:-0}" = 1 ] || rm -f .whl/bitsandbytes-*.whl
dl() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d .whl "$@"
}
# the build backend and its tools (pip runs it with --no-build-isolation there: no index to fetch it from)
dl scikit-build-core==1.1.2 pathspec==1.1.1 ninja==1.13.2
# llama-cpp-python's and gguf's runtime dependencies the CUDA image may lack (numpy, jinja2, pyyaml, tqdm,
# requests and safetensors come with torch and transformers)
dl diskcache==5.6.3 gguf==0.19.0
mkdir -p build/llamacpp-dl
[ -f "build/llamacpp-dl/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" ] || python3 -m pip download -q --no-deps \
  --no-binary :all: -d build/llamacpp-dl "llama-cpp-python==$LLAMA_CPP_PYTHON"
python3 campaigns/llamacpp/tools/trim_sdist.py "build/llamacpp-dl/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" \
  ".whl/llama_cpp_python-$LLAMA_CPP_PYTHON-trimmed.tar.gz"
du -sh .whl
