"""benchmarks/reproducibility.py: its table on synthetic submissions, and its refusal without a GPU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from factories import load_script, make_submission, submission_document

from ecocompute.schema.derive import derive
from ecocompute.schema.models import Submission

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "reproducibility.py"


def test_table_spread_and_tolerance() -> None:
    subs = [make_submission(seed) for seed in range(3)]
    rows = load_script(SCRIPT).table(subs)
    assert [r["precision"] for r in rows] == ["fp16", "nf4"]
    fp16 = rows[0]
    means = [derive(s.payload.measurements[0].windows, s.payload.idle.power_w).j_per_token_mean for s in subs]
    assert fp16["j_per_token_means"] == means
    assert fp16["spread_pct"] == pytest.approx((max(means) - min(means)) / (sum(means) / 3) * 100)
    assert (fp16["gpu_bound"], fp16["tolerance_pct"]) == (False, 2.0)
    assert fp16["within"] == (fp16["spread_pct"] <= 2.0)
    compiled = [make_submission(seed, stack="compiled") for seed in range(3)]
    assert [r["tolerance_pct"] for r in load_script(SCRIPT).table(compiled)] == [1.0, 1.0]
    docs = [submission_document(seed, stack="compiled") for seed in range(3)]
    for doc in docs:  # as the collector records it when transformers declines to compile nf4
        doc["payload"]["measurements"][0]["compiled"], doc["payload"]["measurements"][1]["compiled"] = True, False
    rows = load_script(SCRIPT).table([Submission.model_validate(doc) for doc in docs])
    assert [(r["gpu_bound"], r["tolerance_pct"]) for r in rows] == [(True, 1.0), (False, 2.0)]
    batched = [make_submission(seed, batch=8) for seed in range(3)]
    assert load_script(SCRIPT).table(batched)[0]["gpu_bound"] is True


def test_without_the_gpu_it_stops_with_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "x.json"), "--",
                           "--arch", "TinyLlama-1.1B", "--device-index", "99"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert not (tmp_path / "x.json").exists()
