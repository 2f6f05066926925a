"""``ecocompute show``: each precision's change against FP16, with its CI, is the analysis' own figure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ecocompute.analysis import change_vs_baseline
from ecocompute.cli import main
from ecocompute.schema.cli import change_cells
from ecocompute.schema.io import load_submission
from ecocompute.schema.tables import measurement_rows, measurements_frame

EXAMPLE = Path(__file__).parents[1] / "data" / "example" / "submission.json"


def test_show_has_the_change_against_fp16_with_its_ci(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    assert main(["show", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "vs FP16 (95% CI)" in out
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith("│")}
    jpt = {p: float(line.split("│")[3]) for p, line in rows.items()}
    assert "baseline" in rows["fp16"]
    for precision in ("bf16", "nf4", "int8", "int8-t0"):
        shown = re.search(r"([+-][\d.]+)% \(([+-][\d.]+) to ([+-][\d.]+)\)", rows[precision])
        assert shown is not None, rows[precision]
        change, low, high = (float(g) for g in shown.groups())
        assert change == pytest.approx(100 * (jpt[precision] / jpt["fp16"] - 1), abs=0.1)  # from the J/token shown
        assert low < change < high


def test_show_cells_are_the_published_changes() -> None:
    submission = load_submission(EXAMPLE)
    published = change_vs_baseline(measurements_frame(measurement_rows(submission)))
    baseline, cells = change_cells(submission)
    assert baseline == "fp16" and set(cells) == {"fp16", *published["precision"].to_list()}
    for row in published.iter_rows(named=True):
        expected = f"{row['change_pct']:+.1f}% ({row['ci95_low_pct']:+.1f} to {row['ci95_high_pct']:+.1f})"
        assert cells[row["precision"]] == expected


def test_a_submission_without_a_baseline_shows_no_change() -> None:
    submission = load_submission(EXAMPLE)
    payload = submission.payload
    kept = [m for m in payload.measurements if m.precision.value not in ("fp16", "bf16")]
    lone = submission.model_copy(update={"payload": payload.model_copy(update={"measurements": kept})})
    assert change_cells(lone) == (None, {})
