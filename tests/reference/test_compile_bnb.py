"""scripts/reference/compile_bnb.py: marking one model's quantizer compileable, and its refusal without a GPU."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from factories import load_script

SCRIPT = Path(__file__).parents[2] / "scripts" / "reference" / "compile_bnb.py"


class FakeQuantizer:
    """Stands in for a transformers quantizer that declines compilation (as its bitsandbytes ones do)."""

    @property
    def is_compileable(self) -> bool:
        return False


def test_force_compileable_changes_that_model_only() -> None:
    script = load_script(SCRIPT)
    mine, other = SimpleNamespace(hf_quantizer=FakeQuantizer()), SimpleNamespace(hf_quantizer=FakeQuantizer())
    assert script.force_compileable(mine) is True
    assert mine.hf_quantizer.is_compileable is True
    assert isinstance(mine.hf_quantizer, FakeQuantizer)
    assert other.hf_quantizer.is_compileable is False
    assert script.force_compileable(SimpleNamespace()) is False  # fp16: no quantizer to mark


def test_without_a_gpu_it_stops_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert load_script(SCRIPT).main(["--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no CUDA device") and err.count("\n") == 1
    assert not (tmp_path / "r.json").exists()
