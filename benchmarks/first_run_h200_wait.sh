#!/usr/bin/env bash
# Wait up to $1 s (or until the chain ends), then copy what there is into $OUT.
end=$(( $(date +%s) + $1 ))
while [ "$(date +%s)" -lt "$end" ]; do
  grep -q "overhead exited" /tmp/res/chain.log 2>/dev/null && break
  grep -q "first_run exited [^0]" /tmp/res/chain.log 2>/dev/null && break
  sleep 5
done
cp /tmp/res/*.json /tmp/res/*.txt /tmp/res/*.log "$OUT"/ 2>/dev/null
tar czf "$OUT/runs.tgz" -C /tmp first-run --exclude='*.safetensors' 2>/dev/null
cat /tmp/res/chain.log 2>/dev/null; tail -n 5 /tmp/res/first_run.log; tail -n 8 /tmp/res/overhead.log 2>/dev/null
ls -la "$OUT"
