#!/usr/bin/env bash
# The H200 sitting of 2026-12-01 (device tool, carry .whl .devtree; .devtree = CONTRIBUTING.md, benchmarks/, submissions/allowed_signers).
# Call 1: BUDGET_S=1200 bash first_run_h200_go.sh && bash first_run_h200_wait.sh 530; then: bash first_run_h200_wait.sh 560; bash first_run_h200_wait.sh 300
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/ossh /tmp/res
command -v ssh-keygen >/dev/null || dpkg -x .whl/openssh-client.deb /tmp/ossh
cat > /tmp/env.sh <<'EOT'
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:/tmp/ossh/usr/bin:$PATH PYTHONUNBUFFERED=1 HOME=/root
EOT
. /tmp/env.sh
which ssh-keygen ecocompute; ssh-keygen -V 2>&1 | head -1 || true
ecocompute --version || exit 1
nvidia-smi --query-gpu=name,driver_version,power.limit,power.default_limit,persistence_mode,clocks.sm,temperature.gpu --format=csv
cp -r .devtree /tmp/dev  # the folder carried beside the wheels
cat > /tmp/chain.sh <<'EOT'
. /tmp/env.sh
cd /tmp/dev
python3 benchmarks/first_run.py --runs 10 --budget-s "$1" --out /tmp/res/first_run_h200.json > /tmp/res/first_run.log 2>&1
echo "first_run exited $?" >> /tmp/res/chain.log
python3 benchmarks/collector_overhead.py --out /tmp/res/collector_overhead_h200.json > /tmp/res/overhead.log 2>&1
echo "overhead exited $?" >> /tmp/res/chain.log
EOT
setsid bash /tmp/chain.sh "${BUDGET_S:-1250}" > /tmp/res/chain.out 2>&1 < /dev/null &
echo started
