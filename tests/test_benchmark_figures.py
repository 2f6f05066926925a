"""The docs' claims about committed benchmark results hold for those results: a re-run that breaks one fails
here until the docs follow."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def test_overhead_claim_holds_for_the_dose_result() -> None:
    summary = json.loads((RESULTS / "collector_overhead_h200_dose.json").read_text())["summary"]
    doc = " ".join((ROOT / "docs" / "collecting.md").read_text(encoding="utf-8").split())
    assert "collector_overhead_h200_dose.txt`: the fit's interval at 10 Hz is narrower than half a point" in doc
    half, cost = summary["overhead_pct_at_default_ci95_half"], summary["overhead_pct_at_default"]
    assert summary["default_hz"] == 10.0
    assert 2 * half < 0.5, "the interval is no longer narrower than half a point"
    assert cost + half <= 0.5, "the upper end is above the 0.5% goal"
    # the fit's slope times 10 Hz is the figure the doc and the txt cite
    assert abs(cost - 10.0 * summary["overhead_pct_per_sample_hz"]) < 1e-12
    txt = (RESULTS / "collector_overhead_h200_dose.txt").read_text()
    assert f"at the default 10 Hz: {cost:+.3f}% ± {half:.3f}% (95% CI)" in txt


def test_first_run_tally_holds_the_contributing_claim() -> None:
    files = sorted(RESULTS.glob("first_run_h200_batch128_[a-z].json"))
    runs = [run for f in files for run in json.loads(f.read_text())["runs"]]
    accepted = sum(1 for run in runs if run["accepted"])
    tally = (RESULTS / "first_run_h200_batch128_tally.txt").read_text()
    assert f"{accepted} of {len(runs)} fresh processes accepted by validate" in tally
    assert len(runs) >= 10 and accepted >= 0.9 * len(runs), "the issue asks for 9 of 10"
    # CONTRIBUTING says every batch-128 run so far passed: true only while the tally has no failure
    contributing = " ".join((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split())
    claim = "every fresh process run so far at batch 128 passed the gate"
    assert (claim in contributing) == (accepted == len(runs))
