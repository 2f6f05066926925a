"""The dataset card and what a researcher gets from ``datasets.load_dataset`` on the build folder."""

from __future__ import annotations

import re
from pathlib import Path

import datasets
import polars as pl
import pytest
import yaml
from factories import make_submission

from ecocompute.analysis.defaults import ALL_CONFIGS
from ecocompute.analysis.results import Results, analyse
from ecocompute.analysis.sections import (
    crossover_section,
    j_per_token_sections,
    sensor_section,
    split_sections,
    stack_section,
)
from ecocompute.publish.build import BuildResult
from ecocompute.publish.card import size_category
from ecocompute.publish.columns import BY_CONFIG
from ecocompute.publish.figures import draw_figures
from ecocompute.schema.models import Submission
from ecocompute.schema.tables import (
    MeasurementsTable,
    SubmissionsTable,
    WindowsTable,
    measurement_rows,
    measurements_frame,
    window_rows,
    windows_frame,
)


def _results(subs: list[Submission], n_boot: int = 20, frame: pl.DataFrame | None = None) -> Results:
    measurements = frame if frame is not None else measurements_frame([r for s in subs for r in measurement_rows(s)])
    windows = windows_frame([row for sub in subs for row in window_rows(sub)])
    return analyse(measurements, windows, n_boot=n_boot, seed=1)


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
    assert set(configs) == set(ALL_CONFIGS)
    assert configs["measurements"].get("default") is True
    for name, config in configs.items():
        (files,) = config["data_files"]
        assert files["split"] == "train"
        assert [p.name for p in example_build.out.glob(files["path"])] == ["train-00000-of-00001.parquet"], name


@pytest.mark.parametrize("config", ALL_CONFIGS)
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


def test_card_shows_the_researchers_snippets(card: str) -> None:
    block = card.split("## Load it", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    code = [line for line in block.splitlines() if line.strip()]
    assert code[0] == "from datasets import load_dataset"
    assert code[1].startswith('m = load_dataset("ecocompute/llm-inference-energy", "measurements"')
    reproduce = card.split("## How to reproduce every number", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert "from ecocompute.analysis import change_table, crossover, select" in reproduce
    assert '"measurements_all"' in reproduce and '"windows_all"' in reproduce


def test_card_prose_before_the_columns_is_short_and_cites_with_a_url(card: str) -> None:
    body = card.split("\n---\n", 1)[1]
    assert body.split("## Columns", 1)[0].count("\n") <= 200
    for phrase in ("## How a number is made", "## Caveats", "GPU package power only", "Random-init rows stay apart",
                   "## Citation", "doi:10.5281/zenodo.18900289", "@misc{ecocompute_dataset",
                   "url      = {https://huggingface.co/datasets/ecocompute/llm-inference-energy}",
                   "version  = {0.1.0}", "## Findings", "rejections.json"):  # fmt: skip
        assert phrase in card, phrase
    columns = card.split("## Columns", 1)[1].split("## Changelog", 1)[0]
    for config, documented in BY_CONFIG.items():
        for name in documented:
            assert f"`{name}`" in columns, (config, name)


def test_every_table_column_has_a_documented_basis() -> None:
    models = {"windows": WindowsTable, "measurements": MeasurementsTable, "submissions": SubmissionsTable}
    for config, model in models.items():
        assert list(BY_CONFIG[config]) == list(model.to_schema().columns), config


def test_card_tables_crossover_and_figures(card: str, example_build: BuildResult) -> None:
    assert "### Synthetic example GPU · eager stack · batch 1 · 128+256 tokens · random-init weights" in card
    assert re.search(r"\| Qwen2\.5-7B \| 7\.62B \| \d\.\d{4} ±\d\.\d\d% \|", card)
    crossover = card.split("## Crossover", 1)[1].split("## Beyond the gate", 1)[0]
    assert re.search(
        r"\| Synthetic example GPU \| transformers \| eager \| 1 \| 128\+256 \| nf4 \| random-init \| "
        r"494M-14\.8B \(6\) \| 4\.\d\dB \| 4\.\d\dB-4\.\d\dB \|",
        crossover,
    )
    assert "no crossover between 494M and 14.8B: int8 costs more" in crossover
    images = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", card)
    assert len(images) == 3  # one change figure per stack x batch measured at two sizes or more
    for image in images:
        assert (example_build.out / image).read_bytes().startswith(b"\x89PNG")
        stem = image.removesuffix(".png")
        assert (example_build.out / f"{stem}.svg").read_bytes().startswith(b"<?xml")
        assert (example_build.out / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
    captions = re.findall(r"^\*(Change in J/token.+)\* \(\[SVG\]", card, re.M)
    assert len(captions) == 3 and all("From `measurements_all`:" in c for c in captions)


def test_png_figures_are_300_dpi(example_build: BuildResult) -> None:
    from PIL import Image

    for png in (example_build.out / "figures").glob("*.png"):
        with Image.open(png) as image:
            assert round(image.info["dpi"][0]) == 300 and image.size[0] >= 2000


def test_card_sets_the_stack_beside_precision_and_reports_the_sensor(card: str, example_build: BuildResult) -> None:
    stack = card.split("## Stack against precision")[1].split("## The sensor")[0]
    # the example set measures fp16, bf16 and nf4 of six sizes on both stacks at batch 1: one line each
    row = r"^\| Synthetic example GPU \| 1 \| 128\+256 \| random-init \| compiled \| (fp16|bf16|nf4) \| "
    row += r"494M-14.8B \(6\) \|"
    assert len(re.findall(row, stack, re.M)) == 3
    windows = pl.read_parquet(example_build.out / "data" / "windows_all" / "*.parquet").filter(~pl.col("warmup"))
    worst = windows["integral_diff_pct"].max()
    sensor = card.split("## The sensor")[1].split("## Figures")[0]
    assert f"agree within {worst:.2f}% in every one of the {windows.height} measured windows" in sensor


def _with_length(sub: Submission, submission_id: str, **length: int) -> Submission:
    """``sub`` under another id at another workload length, everything else the same."""
    workload = sub.payload.workload.model_copy(update=length)
    payload = sub.payload.model_copy(update={"submission_id": submission_id, "workload": workload})
    return sub.model_copy(update={"payload": payload})


@pytest.mark.parametrize("length", [{"new_tokens": 64}, {"prompt_tokens": 512}])
def test_two_workload_lengths_are_never_pooled_in_the_card_or_the_figures(length: dict[str, int],
                                                                          tmp_path: Path) -> None:  # fmt: skip
    """Submissions identical but for their length: their own rows, sections, crossovers and figures."""
    subs = []
    for seed, (architecture, params) in enumerate((("TinyLlama-1.1B", 1_100_048_384), ("Qwen2.5-7B", 7_615_616_512))):
        sub = make_submission(40 + seed, precisions=("fp16", "nf4"), params_total=params, architecture=architecture)
        subs += [sub, _with_length(sub, f"20261130T13000{seed}Z-0000000{seed}", **length)]
    subs.append(make_submission(50, precisions=("fp16", "nf4"), stack="compiled"))  # at the default length only
    measurements = measurements_frame([row for sub in subs for row in measurement_rows(sub)])
    windows = windows_frame([row for sub in subs for row in window_rows(sub)])
    results = analyse(measurements, windows, n_boot=20, seed=1)
    assert results.j_per_token.height == 10 and results.j_per_token["n_submissions"].to_list() == [1] * 10
    other = "128+64" if "new_tokens" in length else "512+256"
    sections = j_per_token_sections(results)
    for tokens in ("128+256", other):
        assert f"### NVIDIA H200 · eager stack · batch 1 · {tokens} tokens · random-init weights" in sections
    assert results.crossovers.filter(pl.col("software_stack") == "eager").height == 2
    table = crossover_section(results)
    assert f"| NVIDIA H200 | transformers | eager | 1 | {other} | nf4 | random-init | 1.1B-7.62B (2) |" in table
    assert "| NVIDIA H200 | transformers | eager | 1 | 128+256 | nf4 | random-init | 1.1B-7.62B (2) |" in table
    stack = stack_section(results)
    assert stack.count("| NVIDIA H200 | 1 | 128+256 | random-init | TinyLlama-1.1B |") == 2 and other not in stack
    figures = draw_figures(results, tmp_path)
    eager = sorted(f.stem for f in figures if "-eager-" in f.stem)
    slug = "p128-n64" if "new_tokens" in length else "p512-n256"
    assert eager == [f"figures/change-nvidia-h200-eager-b1-{s}-random-init" for s in sorted(("p128-n256", slug))]
    assert any(f"{other} tokens" in f.caption for f in figures)


def test_sensor_sentence_is_about_measured_windows_as_the_validator_checks_them() -> None:
    from ecocompute.analysis.results import sensor_frame

    windows = pl.DataFrame({
        "submission_id": ["s", "s", "s"], "precision": ["fp16"] * 3, "window_index": [0, 0, 1],
        "warmup": [True, False, False], "integral_diff_pct": [30.0, 1.0, 0.5],
    })  # fmt: skip
    results = _results([make_submission(1)])
    text = sensor_section(results.__class__(**{**results.__dict__, "sensor": sensor_frame(windows)}))
    assert "within 1.00% in every one of the 2 measured windows" in text and "measured window 0." in text
    empty = sensor_frame(windows.filter(pl.col("warmup")))
    assert sensor_section(results.__class__(**{**results.__dict__, "sensor": empty})) == "No measured windows yet."


def test_card_carries_the_changelog(card: str, example_build: BuildResult) -> None:
    assert "### 0.1.0" in card.split("## Changelog", 1)[1]
    assert (example_build.out / "CHANGELOG.md").read_text().startswith("# Changelog of the ecocompute dataset")


def test_figures_carry_no_software_or_date_chunk(example_build: BuildResult) -> None:
    for png in (example_build.out / "figures").glob("*.png"):
        data = png.read_bytes()
        assert b"Software" not in data and b"Creation Time" not in data and b"tIME" not in data
    for svg in (example_build.out / "figures").glob("*.svg"):
        assert b"<dc:date>" not in svg.read_bytes()
    for pdf in (example_build.out / "figures").glob("*.pdf"):
        assert b"CreationDate" not in pdf.read_bytes()


def test_stack_section_says_where_torch_compile_did_not_run() -> None:
    """A compiled side that transformers did not compile (bitsandbytes) is the static cache alone: the card says so."""
    eager = make_submission(60, precisions=("fp16", "nf4"))
    compiled = make_submission(61, precisions=("fp16", "nf4"), stack="compiled")
    fp16, nf4 = compiled.payload.measurements
    measured = [fp16.model_copy(update={"compiled": True}), nf4.model_copy(update={"compiled": False})]
    compiled = compiled.model_copy(update={"payload": compiled.payload.model_copy(update={"measurements": measured})})
    older = make_submission(62, precisions=("fp16", "nf4"), stack="compiled")  # before the field: not recorded
    stack = stack_section(_results([eager, compiled]))
    assert "| torch.compile ran |" in stack
    cells = {line.split(" | ")[6]: line.split(" | ")[7:11:3] for line in stack.splitlines() if "| TinyLlama" in line}
    assert cells == {"fp16": ["compiled", "yes"], "nf4": ["compiled", "no"]}
    both = stack_section(_results([eager, compiled, older]))
    cells = {line.split(" | ")[6]: line.split(" | ")[10] for line in both.splitlines() if "| TinyLlama" in line}
    assert cells == {"fp16": "1 of 2 (1 not recorded)", "nf4": "0 of 2 (1 not recorded)"}


def test_split_cell_of_several_submissions_is_the_mean_share_and_the_mean_dynamic_energy() -> None:
    """Two submissions of one cell, 90% and 10% static: the mean share is 50%, not the 37% of the pooled means."""
    subs = [make_submission(70, precisions=("fp16",)), make_submission(71, precisions=("fp16",))]
    frame = measurements_frame([row for sub in subs for row in measurement_rows(sub)]).with_columns(
        j_per_token_mean=pl.Series([1.0, 2.0]), static_j_per_token=pl.Series([0.9, 0.2]),
        dynamic_j_per_token=pl.Series([0.1, 1.8]),
    )  # fmt: skip
    text = split_sections(_results(subs, frame=frame))
    assert "| TinyLlama-1.1B | 1.1B | 0.9500 (50% static) |" in text


def test_split_table_says_not_recorded_for_a_table_without_the_split() -> None:
    subs = [make_submission(63, precisions=("fp16", "nf4"))]
    rows = measurement_rows(subs[0])
    older = measurements_frame(rows).drop("dynamic_j_per_token", "static_j_per_token")
    text = split_sections(_results(subs, frame=older))
    assert "| TinyLlama-1.1B | 1.1B | not recorded | not recorded |" in text
    assert split_sections(_results(subs)).count("% static)") == 2
    untyped = measurements_frame(rows).with_columns(pl.lit(None, dtype=pl.String).alias("dynamic_j_per_token"))
    assert "| TinyLlama-1.1B | 1.1B | not recorded | not recorded |" in split_sections(_results(subs, frame=untyped))
