#!/usr/bin/env bash
# Download the wheels the offline H200 machine lacks into .whl/ (run here, in the repository root).
set -euo pipefail
grep -qx '/.whl/' .git/info/exclude || echo '/.whl/' >> .git/info/exclude
dl() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any -d .whl "$@"
}
dl bitsandbytes==0.50.2
dl pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5
dl rfc8785==0.1.4 sshsig==0.3.1 cryptography==50.0.2 cffi==2.1.1 pycparser==3.12 typer==0.29.2 shellingham==1.5.4
# the GPU tests (campaigns/h200-2026-11/tools/gpu-tests.sh)
dl pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 pygments==2.21.0 hypothesis==6.170.17 attrs==26.1.0 sortedcontainers==2.4.0 packaging==26.4
# ecocompute itself, built here from the working tree (rebuild after every change)
rm -f .whl/ecocompute-*.whl
python3 -m pip wheel -q --no-deps -w .whl .
ls -la .whl
