"""The dataset card and what a researcher gets from ``datasets.load_dataset`` on the build folder."""

from __future__ import annotations

import re
from pathlib import Path

import datasets
import polars as pl
import pytest
import yaml

from ecocompute.publish.build import BuildResult
from ecocompute.publish.card import size_category
from ecocompute.publish.columns import BY_CONFIG
from ecocompute.schema.tables import MeasurementsTable, SubmissionsTable, WindowsTable


def _front_matter(card: str) -> dict[str, object]:
    assert card.startswith("---\n")
    meta = yaml.safe_load(card.split("---\n")[1])
    assert isinstance(meta, dict)
    return meta


@pytest.fixture(scope="module")
def card(example_build: BuildResult) -> str:
    return (example_build.out / "README.md").read_text(encoding="utf-8")


def test_front_matter_declares_licence_name_tags_size_and_configs(card: str, example_build: BuildResult) -> None:
    meta = _front_matter(card)
    assert meta["license"] == "cc-by-4.0"
    assert meta["pretty_name"] == "ecocompute: measured LLM-inference GPU energy"
    assert {"energy", "quantization"} <= set(meta["tags"])  # type: ignore[arg-type]
    assert meta["size_categories"] == [size_category(example_build.windows)]
    configs = {c["config_name"]: c for c in meta["configs"]}  # type: ignore[attr-defined]
    assert set(configs) == {"windows", "measurements", "submissions"}
    assert configs["measurements"].get("default") is True
    for name, config in configs.items():
        (files,) = config["data_files"]
        assert files["split"] == "train"
        assert [p.name for p in example_build.out.glob(files["path"])] == ["train-00000-of-00001.parquet"], name


@pytest.mark.parametrize("config", ["windows", "measurements", "submissions"])
def test_load_dataset_reads_every_config_offline(
    config: str, example_build: BuildResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    loaded = datasets.load_dataset(str(example_build.out), config, split="train", cache_dir=str(tmp_path))
    frame = loaded.to_polars()
    direct = pl.read_parquet(example_build.out / "data" / config / "train-00000-of-00001.parquet")
    assert frame.shape == direct.shape and frame.height > 0
    assert frame.equals(direct)


def test_default_config_is_measurements(example_build: BuildResult, tmp_path: Path) -> None:
    loaded = datasets.load_dataset(str(example_build.out), split="train", cache_dir=str(tmp_path))
    assert "j_per_token_mean" in loaded.column_names


def test_card_shows_the_researchers_three_line_example(card: str) -> None:
    block = card.split("## Load it", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    code = [line for line in block.splitlines() if line.strip()]
    assert code[0] == "from datasets import load_dataset"
    assert code[1].startswith('measurements = load_dataset("ecocompute/llm-inference-energy", "measurements"')
    assert len(code) == 3


def test_card_explains_method_columns_caveats_and_citation(card: str) -> None:
    for phrase in ("## How a number is made", "## Caveats", "GPU package power only", "Random-init rows stay apart",
                   "INT8 on random weights", "A crossover belongs to a card and a software stack", "## Citation",
                   "doi:10.5281/zenodo.18900289", "@misc{ecocompute_dataset", "--include-examples"):  # fmt: skip
        assert phrase in card, phrase
    columns = card.split("## Columns", 1)[1].split("## Caveats", 1)[0]
    for config, documented in BY_CONFIG.items():
        for name in documented:
            assert f"`{name}`" in columns, (config, name)


def test_every_table_column_has_a_documented_basis() -> None:
    models = {"windows": WindowsTable, "measurements": MeasurementsTable, "submissions": SubmissionsTable}
    for config, model in models.items():
        assert list(BY_CONFIG[config]) == list(model.to_schema().columns), config


def test_card_tables_crossover_and_figures(card: str, example_build: BuildResult) -> None:
    assert "### Synthetic example GPU · eager stack · batch 1 · random-init weights" in card
    assert re.search(r"\| Qwen2\.5-7B \| 7\.62B \| \d\.\d{4} ±\d\.\d\d% \|", card)
    crossover = card.split("## Crossover", 1)[1].split("## Figures", 1)[0]
    assert re.search(
        r"\| Synthetic example GPU \| eager \| 1 \| nf4 \| random-init \| 494M-14\.8B \(6\) "
        r"\| 4\.\d\dB \| 4\.\d\dB-4\.\d\dB \|",
        crossover,
    )
    assert "no crossover between 494M and 14.8B: int8 costs more" in crossover
    assert "seed 20261130" in crossover
    images = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", card)
    assert len(images) == 6
    for image in images:
        assert (example_build.out / image).read_bytes().startswith(b"\x89PNG")


def test_card_sets_the_stack_beside_precision_and_reports_the_sensor(card: str, example_build: BuildResult) -> None:
    stack = card.split("## Stack against precision")[1].split("## The sensor")[0]
    # the example set measures fp16, bf16 and nf4 of six sizes on both stacks at batch 1
    row = r"^\| Synthetic example GPU \| 1 \| random-init \| .+ \| .+ \| (fp16|bf16|nf4) \|"
    assert len(re.findall(row, stack, re.M)) == 18
    windows = pl.read_parquet(example_build.out / "data" / "windows" / "*.parquet").filter(~pl.col("warmup"))
    worst = windows["integral_diff_pct"].max()
    sensor = card.split("## The sensor")[1].split("## Figures")[0]
    assert f"agree within {worst:.2f}% in every one of the {windows.height} measured windows" in sensor


def test_sensor_sentence_is_about_measured_windows_as_the_validator_checks_them() -> None:
    from ecocompute.publish.card import sensor_section

    windows = pl.DataFrame({
        "submission_id": ["s", "s", "s"], "precision": ["fp16"] * 3, "window_index": [0, 0, 1],
        "warmup": [True, False, False], "integral_diff_pct": [30.0, 1.0, 0.5],
    })  # fmt: skip
    text = sensor_section(windows)
    assert "within 1.00% in every one of the 2 measured windows" in text and "measured window 0." in text
    assert sensor_section(windows.filter(pl.col("warmup"))) == "No measured windows yet."


def test_card_carries_the_changelog(card: str, example_build: BuildResult) -> None:
    assert "### 0.1.0" in card.split("## Changelog", 1)[1]
    assert (example_build.out / "CHANGELOG.md").read_text().startswith("# Changelog of the ecocompute dataset")


def test_figures_carry_no_software_or_date_chunk(example_build: BuildResult) -> None:
    for png in (example_build.out / "figures").glob("*.png"):
        data = png.read_bytes()
        assert b"Software" not in data and b"Creation Time" not in data and b"tIME" not in data
