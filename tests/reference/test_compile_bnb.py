"""scripts/reference/compile_bnb.py: its refusal without a GPU (marking a quantizer is tested in tests/collector)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from factories import load_script

SCRIPT = Path(__file__).parents[2] / "scripts" / "reference" / "compile_bnb.py"


def test_without_a_gpu_it_stops_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert load_script(SCRIPT).main(["--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no CUDA device") and err.count("\n") == 1
    assert not (tmp_path / "r.json").exists()
