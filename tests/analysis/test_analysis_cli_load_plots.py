"""``ecocompute crossover`` / ``ecocompute j-per-token`` on a dataset folder or Hub id, the loader, and the figures."""

from __future__ import annotations

from pathlib import Path

import datasets
import polars as pl
import pytest
from analysis_frames import frames, sweep

from ecocompute.analysis import load as load_module
from ecocompute.analysis.change import change_frame, pooled_change_frame
from ecocompute.analysis.crossovers import crossover_frame
from ecocompute.analysis.load import load_table
from ecocompute.analysis.plots import plot_change
from ecocompute.cli import main
from ecocompute.schema.errors import UsageError

B = 10**9
CHANGES = {B: 30.0, 3 * B: 8.0, 7 * B: -15.0}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    measurements, windows = frames(sweep(CHANGES) + sweep({B: 120.0, 7 * B: 90.0}, prefix="i", precision="int8"))
    for config, frame in (("measurements", measurements), ("windows", windows)):
        for suffix in ("", "_all"):
            (tmp_path / "data" / (config + suffix)).mkdir(parents=True)
            marked = frame.with_columns(pl.lit(True).alias("passes_cv_gate"))
            marked.write_parquet(tmp_path / "data" / (config + suffix) / "train-00000-of-00001.parquet")
    return tmp_path


def test_crossover_command_prints_the_table(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setenv("COLUMNS", "150")
    assert main(["crossover", "--dataset", str(folder), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "Crossover · NVIDIA H200 · 128+256 tokens · random-init" in out
    assert "crosses" in out and "costs more" in out and "seed 20261130" in out and "128+256" in out
    assert main(["crossover", "--dataset", str(folder), "--precision", "int8", "--n-boot", "0"]) == 0
    out = capsys.readouterr().out
    assert "int8" in out and "nf4" not in out


def test_j_per_token_command_has_a_change_column(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["j-per-token", "--dataset", str(folder), "--precision", "NF4,fp16", "--tier", "gated"]) == 0
    out = capsys.readouterr().out
    assert "J/token · NVIDIA H200 · eager · batch 1 · 128+256 tokens · random-init" in out and "2.6000" in out
    assert "change vs FP16" in out and "+30.0%" in out and "int8" not in out
    assert main(["jpt", "--dataset", str(folder)]) == 0  # the deprecated spelling still works, and says so
    assert "deprecated" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["crossover", "--precision", "nf5"], "unknown precision 'nf5': choose from fp16, bf16, fp8-wo, fp8-dyn, int8"),
        (["crossover", "--stack", "eagre"], "unknown stack 'eagre': choose from eager, compiled, compiled-all"),
        (["j-per-token", "--gpu", "a100"], "unknown GPU 'a100': this table holds NVIDIA H200"),
        (["j-per-token", "--batch-size", "one"], "batch size 'one' is not a positive whole number"),
        (["j-per-token", "--tier", "gold"], "unknown tier 'gold': choose from gated, all"),
        (["crossover", "--batch-size", "8"], "no rows at batch size 8: this table holds 1"),
        (["crossover", "--stack", "compiled"], "no measurement of"),
    ],
)
def test_bad_values_exit_non_zero_with_one_line(folder: Path, capsys: pytest.CaptureFixture[str], command: list[str],
                                                message: str) -> None:  # fmt: skip
    assert main([*command, "--dataset", str(folder)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1


def test_a_bad_dataset_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crossover", "--dataset", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "has no data/measurements_all/*.parquet" in err and "Traceback" not in err
    assert main(["crossover", "--dataset", "not a hub id"]) == 2


def test_a_hub_id_goes_through_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    measurements, _ = frames(sweep(CHANGES))
    asked: list[tuple[str, str]] = []

    def fake_load_dataset(name: str, config: str, split: str) -> datasets.Dataset:
        asked.append((name, config))
        return datasets.Dataset.from_pandas(measurements.to_pandas())

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    table = load_table("org/energy", "measurements")
    assert asked == [("org/energy", "measurements")]
    assert table.height == measurements.height
    with pytest.raises(UsageError, match="config 'other'"):
        load_module.load_table("org/energy", "other")


def test_figures_are_byte_stable_in_three_formats(folder: Path, tmp_path: Path) -> None:
    measurements = pl.read_parquet(folder / "data" / "measurements" / "*.parquet")
    windows = pl.read_parquet(folder / "data" / "windows" / "*.parquet")
    pooled = pooled_change_frame(change_frame(measurements))
    crossovers = crossover_frame(measurements, windows, n_boot=50)
    for attempt in ("a", "b"):
        written = plot_change(pooled, crossovers, "change", tmp_path / attempt / "change")
        assert [p.suffix for p in written] == [".svg", ".pdf", ".png"]
    for name, magic in (("change.png", b"\x89PNG"), ("change.svg", b"<?xml"), ("change.pdf", b"%PDF")):
        first, second = (tmp_path / "a" / name).read_bytes(), (tmp_path / "b" / name).read_bytes()
        assert first.startswith(magic) and first == second, name
    svg = (tmp_path / "a" / "change.svg").read_text()
    for label in ("1B", "3B", "7B"):  # a tick and label at each measured size
        assert f">{label}<" in svg or f"{label}" in svg


def test_close_sizes_get_tick_labels_on_two_lines() -> None:
    from ecocompute.analysis.plots import _tick_labels

    labels = _tick_labels([494e6, 1.1e9, 7.62e9, 8.03e9, 32.8e9])
    assert labels == ["494M", "1.1B", "7.62B", "\n8.03B", "32.8B"]
