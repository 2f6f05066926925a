"""The public API over the shipped artifact: the contract's fields, the basis, the interval and its use."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from ecocompute.estimate import Answer, EstimateError, Question, estimate, load_artifact


def ask(**fields: object) -> Answer:
    return estimate(Question(**fields))  # type: ignore[arg-type]


def measured_cell(artifact: dict, stack: str = "eager", precision: str = "nf4") -> dict:
    group = next(g for g in artifact["groups"] if g["id"] == f"measured/nvidia-h200/{stack}/b1/{precision}/random-init")
    return group["cells"][len(group["cells"]) // 2]


def test_a_measured_cell_answers_with_its_own_figures() -> None:
    artifact = load_artifact()
    cell = measured_cell(artifact)
    answer = ask(gpu="H200", params_b=cell["params_b"], precision="nf4", stack="eager", batch_size=1)
    assert answer.basis == "measured"
    assert answer.change_pct == pytest.approx(100 * (math.exp(cell["y"]) - 1))
    low, high = answer.change_ci95
    assert low < answer.change_pct < high
    assert answer.j_per_token == pytest.approx(math.exp(cell["ln_jq"]))
    assert answer.wh_per_1k_tokens == pytest.approx(answer.j_per_token * 1000 / 3600)
    assert set(cell["submission_ids"]) == set(answer.submission_ids)
    assert answer.dataset_version == artifact["dataset"]["version"]
    assert answer.newest_submission_at == artifact["dataset"]["newest_submission_at"]
    assert answer.crossover is not None and answer.crossover.measured_range_b[0] < answer.crossover.measured_range_b[1]


def test_the_basis_follows_where_the_question_lies() -> None:
    artifact = load_artifact()
    cells = next(g for g in artifact["groups"] if g["id"] == "measured/nvidia-h200/eager/b1/nf4/random-init")["cells"]
    between = math.sqrt(cells[2]["params_b"] * cells[3]["params_b"])
    assert ask(gpu="H200", params_b=between, precision="nf4").basis == "interpolated"
    assert ask(gpu="H200", params_b=cells[-1]["params_b"] * 4, precision="nf4").basis == "extrapolated"
    assert ask(gpu="H100", params_b=between, precision="nf4").basis == "other-card"
    assert ask(gpu="volta", params_b=between, precision="nf4").basis == "other-architecture"


def test_intervals_widen_away_from_the_data() -> None:
    cells = next(g for g in load_artifact()["groups"] if g["id"] == "measured/nvidia-h200/eager/b1/int8/random-init")
    top = cells["cells"][-1]["params_b"]
    widths = []
    for factor in (1.0, 1.5, 3.0, 9.0):
        low, high = ask(gpu="H200", params_b=top * factor, precision="int8").change_ci95
        widths.append(math.log((100 + high) / (100 + low)))
    assert widths == sorted(widths) and widths[0] < widths[-1]


def test_the_recommendation_follows_the_interval() -> None:
    for q in (
        dict(gpu="H200", params_b=7.6, precision="int8"),
        dict(gpu="H200", params_b=1.1, precision="nf4"),
        dict(gpu="A100", params_b=13, precision="nf4"),
        dict(gpu="H200", params_b=32.8, precision="nf4"),
    ):
        answer = ask(**q)
        low, high = answer.change_ci95
        expected = "quantize-saves" if high < 0 else "keep-fp16" if low > 0 else "no-clear-difference"
        assert answer.recommendation.code == expected


def test_unknown_card_names_the_valid_ones() -> None:
    with pytest.raises(EstimateError, match=r"gpu: unknown card 'Z80'.*NVIDIA H200.*hopper"):
        ask(gpu="Z80", params_b=7, precision="nf4")


def test_bad_precision_and_missing_size_are_refused_by_the_model() -> None:
    with pytest.raises(
        ValidationError, match="'fp16', 'bf16', 'fp8-wo', 'fp8-dyn', 'int8', 'int8-t0', 'nf4', 'q8_0' or 'q4_k_m'"
    ):
        Question(gpu="H200", params_b=7, precision="fp8")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="exactly one of params_b"):
        Question(gpu="H200", precision="nf4")


def test_no_cap_or_single_fit_decides_the_crossover_silently() -> None:
    answer = ask(gpu="RTX 5090", params_b=3, precision="nf4")
    assert answer.source == "published" and answer.crossover is not None
    fits = answer.crossover.by_fit
    assert {"interpolation", "loglinear", "saturating-capped", "saturating-uncapped"} <= set(fits)
    assert answer.crossover.status == "crossover" and answer.crossover.ci95 is not None
    low, high = answer.crossover.ci95
    assert low <= answer.crossover.params_b <= high


def test_published_evidence_is_shown_apart_from_measurements() -> None:
    answer = ask(gpu="H100", params_b=7, precision="nf4")
    assert answer.source == "measured" and all(not g.startswith("published/") for g in answer.groups)
    ampere = ask(gpu="A100", params_b=9, precision="nf4")
    assert ampere.source == "published" and ampere.published is None
    assert ampere.dois == ["10.5281/zenodo.19647290"] and ampere.submission_ids == []
