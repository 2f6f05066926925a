#!/usr/bin/env bash
# Here, in the repository root, with network: put what the offline H200 needs for FP8 in .whl/ (ignored by git;
# carry it). The H200 campaign's wheels (ecocompute's own among them, rebuilt from this tree) and torchao's wheel
# for CPython 3.12 on x86-64 Linux. Usage: bash campaigns/fp8/tools/fetch.sh
set -euo pipefail
TORCHAO=0.18.0  # the version pinned by pyproject's fp8 extra (a test keeps them equal)
bash campaigns/h200-2026-11/tools/fetch_wheels.sh >/dev/null
# bitsandbytes (43 MB) is for the bitsandbytes precisions, which the FP8 queues do not measure: leave it behind
# (KEEP_BNB=1 keeps it) so the tree and .whl stay inside the 64 MiB a run carries
[ "${KEEP_BNB:-0}" = 1 ] || rm -f .whl/bitsandbytes-*.whl
# torchao's wheel is cp310-abi3 manylinux_2_24/2_28 (CUDA extensions inside, not pure Python): one file for 3.12
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 -d .whl "torchao==$TORCHAO"
ls .whl/torchao-"$TORCHAO"-*.whl
du -sh .whl
