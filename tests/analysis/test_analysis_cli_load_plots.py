"""``ecocompute crossover`` / ``ecocompute jpt`` on a dataset folder or Hub id, the loader, and the figures."""

from __future__ import annotations

from pathlib import Path

import datasets
import polars as pl
import pytest
from analysis_frames import frames, sweep

from ecocompute.analysis import load as load_module
from ecocompute.analysis.change import change_frame
from ecocompute.analysis.crossovers import crossover_frame
from ecocompute.analysis.load import load_table
from ecocompute.analysis.plots import plot_change, plot_jpt
from ecocompute.analysis.tables import jpt_frame
from ecocompute.cli import main
from ecocompute.schema.errors import UsageError

B = 10**9
CHANGES = {B: 30.0, 3 * B: 8.0, 7 * B: -15.0}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    measurements, windows = frames(sweep(CHANGES) + sweep({B: 120.0, 7 * B: 90.0}, prefix="i", precision="int8"))
    for config, frame in (("measurements", measurements), ("windows", windows)):
        (tmp_path / "data" / config).mkdir(parents=True)
        frame.write_parquet(tmp_path / "data" / config / "train-00000-of-00001.parquet")
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


def test_jpt_command(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "150")
    assert main(["jpt", "--dataset", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "J/token · NVIDIA H200 · eager · batch 1 · 128+256 tokens · random-init" in out and "2.6000" in out


def test_a_bad_dataset_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crossover", "--dataset", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "has no data/measurements/*.parquet" in err and "Traceback" not in err
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


def test_figures_are_byte_stable_pngs(folder: Path, tmp_path: Path) -> None:
    measurements = pl.read_parquet(folder / "data" / "measurements" / "*.parquet")
    windows = pl.read_parquet(folder / "data" / "windows" / "*.parquet")
    changes = change_frame(measurements)
    crossovers = crossover_frame(measurements, windows, n_boot=50)
    for attempt in ("a", "b"):
        plot_jpt(jpt_frame(measurements), "J/token", tmp_path / attempt / "jpt.png")
        plot_change(changes, crossovers, "change", tmp_path / attempt / "change.png")
    for name in ("jpt.png", "change.png"):
        first, second = (tmp_path / "a" / name).read_bytes(), (tmp_path / "b" / name).read_bytes()
        assert first.startswith(b"\x89PNG") and first == second
        assert b"Software" not in first
