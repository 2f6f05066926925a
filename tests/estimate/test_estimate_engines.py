"""The estimator keeps engines apart: built from the committed submissions, which hold transformers and llama.cpp."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from factories import committed_ids
from fastapi.testclient import TestClient

from ecocompute.estimate import Question, estimate, load_artifact
from ecocompute.estimate.build import build_artifact
from ecocompute.estimate.server import create_app

ROOT = Path(__file__).resolve().parents[2]
LLAMA = "20261201T172632Z-e1072b8d"  # the first llama.cpp submission: Qwen2.5-1.5B, fp16, q8_0 and q4_k_m
LLAMAS = committed_ids("llama.cpp")  # every committed llama.cpp submission, LLAMA among them


@pytest.fixture(scope="module")
def tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The all tier's measurements and submissions of this checkout, as ``publish build`` writes them."""
    from ecocompute.publish.build import gather
    from ecocompute.publish.cache import RowCache
    from ecocompute.publish.configs import write_configs
    from ecocompute.publish.inputs import Source

    submissions = ROOT / "submissions"
    with tempfile.TemporaryDirectory(prefix="ecocompute-engines-") as tmp:
        cache = RowCache(Path(tmp) / "cache")
        gathered, _ = gather([Source.at(submissions, submissions / "allowed_signers")], cache)
        configs = write_configs(cache, [v.key for v in gathered.kept], Path(tmp) / "configs")
        return configs.read("measurements_all"), configs.read("submissions_all")


def _llama_fp16(measurements: pl.DataFrame) -> float:
    row = measurements.filter((pl.col("submission_id") == LLAMA) & (pl.col("precision") == "fp16"))
    return float(row["j_per_token_mean"][0])


def _size_b(measurements: pl.DataFrame) -> float:
    return float(measurements.filter(pl.col("submission_id") == LLAMA)["params_total"][0]) / 1e9


def test_the_tables_hold_both_engines_at_one_size(tables: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    measurements, _ = tables
    size = _size_b(measurements)
    fp16 = measurements.filter((pl.col("precision") == "fp16") & ((pl.col("params_total") / 1e9 - size).abs() < 0.01))
    assert set(fp16["engine"]) == {"transformers", "llama.cpp"}


def test_every_group_names_its_engine_and_llamas_are_apart() -> None:
    artifact = load_artifact()
    assert artifact["schema_version"] == "1.1"
    engines = {g["engine"] for g in artifact["groups"]}
    assert engines == {"transformers", "llama.cpp"}
    llama = [g for g in artifact["groups"] if g["engine"] == "llama.cpp"]
    assert {g["precision"] for g in llama} == {"q8_0", "q4_k_m"}
    assert all("/llama.cpp/" in g["id"] for g in llama)
    assert all(c["submission_ids"] and set(c["submission_ids"]) <= LLAMAS for g in llama for c in g["cells"])
    assert {i for g in llama for c in g["cells"] for i in c["submission_ids"]} == LLAMAS
    assert all(run["engine"] == "transformers" for run in artifact["runs"] if run["source"] == "published")


def test_a_llama_precision_is_answered_from_llama_runs_only(tables: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    measurements, _ = tables
    size = _size_b(measurements)
    answer = estimate(Question(gpu="H200", params_b=size, precision="q4_k_m", engine="llama.cpp"))
    assert answer.basis == "measured" and answer.submission_ids == [LLAMA]
    assert all("/llama.cpp/" in g for g in answer.groups)
    rows = measurements.filter(pl.col("submission_id") == LLAMA)
    j = {p: float(v) for p, v in zip(rows["precision"], rows["j_per_token_mean"], strict=True)}
    assert answer.change_pct == pytest.approx(100 * (j["q4_k_m"] / j["fp16"] - 1), rel=1e-6)
    assert answer.published is None  # the literature tier is transformers' and never answers for llama.cpp


@pytest.mark.parametrize(("precision", "engine", "other"), [("q4_k_m", "transformers", "llama.cpp"),
                                                             ("nf4", "llama.cpp", "transformers")])  # fmt: skip
def test_an_engine_without_the_precision_gets_no_figure_from_the_other(precision: str, engine: str, other: str) -> None:
    answer = estimate(Question(gpu="H200", params_b=1.5, precision=precision, engine=engine))  # type: ignore[arg-type]
    assert answer.basis == "not-measured" and answer.change_pct is None and not answer.groups
    assert [r.code for r in answer.reasons] == ["engine-not-measured"]
    assert f"engine {other} does" in answer.reasons[0].text
    assert f"ask with engine {other}" in answer.recommendation.text


def test_each_engines_fp16_baseline_is_its_own(tables: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    measurements, _ = tables
    size = _size_b(measurements)
    llama = estimate(Question(gpu="H200", params_b=size, precision="fp16", engine="llama.cpp"))
    transformers = estimate(Question(gpu="H200", params_b=size, precision="fp16"))
    assert llama.j_per_token == pytest.approx(_llama_fp16(measurements), rel=1e-6)
    assert LLAMA in llama.submission_ids and set(llama.submission_ids) <= LLAMAS
    assert not LLAMAS & set(transformers.submission_ids)
    assert transformers.j_per_token is not None
    assert not math.isclose(transformers.j_per_token, llama.j_per_token or 0.0, rel_tol=0.05)


def test_one_precision_of_both_engines_is_never_pooled(tables: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    """Relabel llama.cpp's q8_0 as bf16: both engines then hold bf16 at one size, and each answers for itself."""
    measurements, submissions = tables
    relabelled = measurements.with_columns(
        pl.when((pl.col("submission_id") == LLAMA) & (pl.col("precision") == "q8_0"))
        .then(pl.lit("bf16"))
        .otherwise(pl.col("precision"))
        .alias("precision")
    )
    artifact = build_artifact(relabelled, submissions, version="0.0.0", literature=[])
    size = _size_b(measurements)
    bf16 = [g for g in artifact["groups"] if g["precision"] == "bf16" and g["gpu"] == "NVIDIA H200"
            and g["stack"] == "eager" and g["batch_size"] == 1 and g["tier"] == "all"]  # fmt: skip
    assert sorted(g["engine"] for g in bf16) == ["llama.cpp", "transformers"]
    for group in bf16:
        ids = {i for c in group["cells"] for i in c["submission_ids"]}
        assert (LLAMA in ids) == (group["engine"] == "llama.cpp")
    runs = [r for r in artifact["runs"] if r["precision"] == "bf16" and abs(r["params_b"] - size) < 0.01]
    assert {r["engine"]: r["j_b"] for r in runs if r["engine"] == "llama.cpp"} == {
        "llama.cpp": pytest.approx(_llama_fp16(measurements))
    }
    answers = {e: estimate(Question(gpu="H200", params_b=size, precision="bf16", engine=e), artifact)  # type: ignore[arg-type]
               for e in ("transformers", "llama.cpp")}  # fmt: skip
    assert answers["llama.cpp"].submission_ids == [LLAMA]
    assert LLAMA not in answers["transformers"].submission_ids
    assert "pooled-groups" not in {r.code for a in answers.values() for r in a.reasons}
    assert answers["llama.cpp"].change_pct != pytest.approx(answers["transformers"].change_pct)


def test_fits_through_two_sizes_are_said_to_agree(tables: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    """With two sizes every fit passes through both points: the reason says they agree, not that they differ."""
    measurements, submissions = tables
    llama = measurements.filter(pl.col("engine") == "llama.cpp")
    sizes = llama.group_by("submission_id").agg(pl.col("params_total").first()).sort("params_total")
    assert sizes.height >= 2
    kept = set(sizes["submission_id"][:2])
    two = measurements.filter((pl.col("engine") != "llama.cpp") | pl.col("submission_id").is_in(kept))
    artifact = build_artifact(two, submissions, version="0.0.0", literature=[])
    low, high = (float(v) / 1e9 for v in sizes["params_total"][:2])
    answer = estimate(Question(gpu="H200", params_b=(low * high) ** 0.5, precision="q4_k_m", engine="llama.cpp"),
                      artifact)  # type: ignore[arg-type]  # fmt: skip
    assert answer.basis == "interpolated" and set(answer.submission_ids) == kept
    fit = [r.text for r in answer.reasons if r.code == "fit-choice"]
    assert fit and fit[0].startswith("the fits agree here (") and "disagree" not in fit[0]
    three = estimate(Question(gpu="H200", params_b=(low * high) ** 0.5, precision="q4_k_m", engine="llama.cpp"))
    assert len(LLAMAS) >= 3  # the shipped artifact's curve has three sizes: there the fits part
    assert any(r.code == "fit-choice" and "disagree" in r.text for r in three.reasons)


def test_a_table_from_before_engines_reads_as_transformers(tables: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    measurements, submissions = tables
    old = measurements.filter(pl.col("engine") == "transformers").drop("engine")
    artifact = build_artifact(old, submissions, version="0.0.0", literature=[])
    assert {g["engine"] for g in artifact["groups"]} == {"transformers"}


def test_an_artifact_of_schema_1_0_is_read_as_transformers(tmp_path: Path) -> None:
    artifact = json.loads(json.dumps(load_artifact()))
    artifact["schema_version"] = "1.0"
    artifact["groups"] = [g for g in artifact["groups"] if g["engine"] == "transformers"]
    for item in (*artifact["groups"], *artifact["runs"]):
        del item["engine"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(artifact))
    old = load_artifact(path)
    question = Question(gpu="H200", params_b=7.6, precision="nf4", stack="compiled-all")
    assert estimate(question, old).change_pct == pytest.approx(estimate(question).change_pct)
    llama = estimate(Question(gpu="H200", params_b=1.5, precision="q8_0", engine="llama.cpp"), old)
    assert llama.basis == "not-measured"


def test_the_http_api_takes_the_engine_and_lists_crossovers_per_engine() -> None:
    client = TestClient(create_app())
    fields: dict[str, Any] = {"gpu": "H200", "params_b": 1.5, "precision": "q8_0", "engine": "llama.cpp"}
    expected = estimate(Question(**fields)).model_dump(mode="json")
    assert client.get("/v1/estimate", params=fields).json() == expected
    assert client.post("/v1/estimate", json=fields).json() == expected
    rows = client.get("/v1/crossovers", params={"engine": "llama.cpp"}).json()["crossovers"]
    assert rows and {r["engine"] for r in rows} == {"llama.cpp"}
    every = client.get("/v1/crossovers").json()["crossovers"]
    assert {r["engine"] for r in every} == {"transformers", "llama.cpp"}
