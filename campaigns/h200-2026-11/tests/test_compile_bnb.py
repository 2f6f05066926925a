"""tools/compile_bnb.py: its refusal without a GPU (marking a quantizer is tested in tests/collector)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from factories import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "compile_bnb.py"


def test_without_a_gpu_it_stops_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert load_script(SCRIPT).main(["--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no CUDA device") and err.count("\n") == 1
    assert not (tmp_path / "r.json").exists()


def test_match_counts_equal_tokens_position_by_position() -> None:
    script = load_script(SCRIPT)
    uncompiled, compiled = {"tokens": [[1, 2, 3, 4]]}, {"tokens": [[1, 2, 9, 4]]}
    script._match(uncompiled, compiled)
    assert compiled["tokens_matching_uncompiled"] == "3/4"
    failed: dict[str, object] = {"error": "CUDA out of memory"}
    script._match(uncompiled, failed)  # a trial that failed has no tokens: nothing to compare
    assert "tokens_matching_uncompiled" not in failed


def test_summarize_tables_the_control_the_speed_ups_and_a_failed_trial(tmp_path: Path) -> None:
    summarize = load_script(SCRIPT.parent / "report.py")
    row = {"forced_compileable": False, "dynamo_frames": 1, "graph_breaks": 0}
    rows = [
        {**row, "precision": "fp16", "compile_disabled": True, "compiled": False, "tokens_per_s": 50.0},
        {**row, "precision": "fp16", "compiled": True, "tokens_per_s": 200.0, "tokens_matching_uncompiled": "90/256"},
        {**row, "precision": "nf4", "compiled": False, "tokens_per_s": 25.0},
        {**row, "precision": "nf4", "forced_compileable": True, "compiled": True, "tokens_per_s": 100.0},
        {"precision": "int8", "forced_compileable": True, "error": "Unsupported: data-dependent shape"},
    ]
    (tmp_path / "compile-bnb-X.json").write_text(json.dumps({"arch": "X", "rows": rows}))
    lines = summarize.compile_bnb_section([tmp_path / "compile-bnb-X.json"]).splitlines()[2:]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert [c[1:4] + c[5:9] for c in cells[:4]] == [
        ["fp16", "no", "no", "50.0", "", "", ""],  # the control: static cache, not compiled
        ["fp16", "no", "yes", "200.0", "4.00x", "", "90/256"],
        ["nf4", "no", "no", "25.0", "", "0.12x", ""],
        ["nf4", "yes", "yes", "100.0", "4.00x", "0.50x", ""],
    ]
    assert cells[4][1:4] == ["int8", "yes", "error: Unsupported: data-dependent shape"]
    assert {c[-1] for c in cells} == {"`compile-bnb-X.json`"}  # each row names the result it comes from
