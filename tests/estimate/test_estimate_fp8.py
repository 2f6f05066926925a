"""FP8 through the estimator: accepted everywhere, "not measured yet" (no figure) until the dataset has FP8 runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, get_args

import pytest
from factories import run_async
from fastapi.testclient import TestClient
from mcp.client import Client

from ecocompute.analysis.defaults import PRECISION_ORDER
from ecocompute.cli import main
from ecocompute.estimate import Question, estimate, load_artifact
from ecocompute.estimate.models import PRECISIONS, Precision
from ecocompute.estimate.server import create_app
from ecocompute.mcp_server.server import build_server
from ecocompute.mcp_server.sources import Sources

FP8 = ("fp8-wo", "fp8-dyn")


def without_fp8() -> dict[str, Any]:
    """The shipped artifact with any FP8 evidence taken out: the dataset before an FP8 run lands."""
    artifact = load_artifact()
    return {**artifact, "groups": [g for g in artifact["groups"] if g["precision"] not in FP8]}


def with_fp8(precision: str) -> dict[str, Any]:
    """The artifact plus one measured FP8 group (the H200 eager INT8 group's cells, renamed)."""
    artifact = without_fp8()
    source = next(g for g in artifact["groups"] if g["id"] == "measured/nvidia-h200/eager/b1/int8/random-init")
    group = {**copy.deepcopy(source), "precision": precision, "id": source["id"].replace("int8", precision)}
    return {**artifact, "groups": [*artifact["groups"], group]}


def test_the_estimators_precisions_follow_the_display_order() -> None:
    assert get_args(Precision) == PRECISIONS
    assert [p for p in PRECISION_ORDER if p in PRECISIONS] == list(PRECISIONS)
    assert set(FP8) <= set(PRECISIONS)


@pytest.mark.parametrize("precision", FP8)
@pytest.mark.parametrize("tier", ["all", "gate", "published"])
def test_fp8_without_runs_is_not_measured_and_has_no_figure(precision: str, tier: str) -> None:
    q = Question(gpu="H200", params_b=7.6, precision=precision, stack="compiled-all", tier=tier)  # type: ignore[arg-type]
    answer = estimate(q, without_fp8())
    assert answer.basis == "not-measured" and answer.source == "none" and answer.confidence == "low"
    assert answer.change_pct is None and answer.change_ci95 is None and answer.j_per_token is None
    assert answer.crossover is None and answer.quality is None and answer.published is None
    assert answer.submission_ids == [] and answer.groups == []
    assert answer.recommendation.code == "not-measured"
    assert f"--precisions fp16,{precision}" in answer.recommendation.text
    (reason,) = answer.reasons
    assert reason.code == "not-measured" and f"{precision} has not been measured yet" in reason.text
    assert "nf4" in reason.text  # what the tier does hold


def test_fp8_with_runs_is_answered_like_any_precision() -> None:
    artifact = with_fp8("fp8-wo")
    cells = artifact["groups"][-1]["cells"]
    answer = estimate(Question(gpu="H200", params_b=cells[0]["params_b"], precision="fp8-wo"), artifact)
    assert answer.basis == "measured" and answer.change_pct is not None and answer.change_ci95 is not None
    assert answer.groups == ["measured/nvidia-h200/eager/b1/fp8-wo/random-init"]
    assert estimate(Question(gpu="H200", params_b=7.6, precision="fp8-dyn"), artifact).basis == "not-measured"
    assert artifact["groups"][-1]["tier"] == "all"  # runs above the CV gate only
    gated = estimate(Question(gpu="H200", params_b=7.6, precision="fp8-wo", tier="gate"), artifact)
    assert gated.basis == "not-measured" and gated.change_pct is None
    assert "tier all does" in gated.reasons[0].text and "ask with tier all" in gated.recommendation.text


def test_cli_says_not_measured_and_prints_no_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "artifact.json"
    path.write_text(json.dumps(without_fp8()))
    args = ["estimate", "--gpu", "H200", "--params-b", "7.6", "--precision", "fp8-dyn", "--artifact", str(path)]
    assert main([*args, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = estimate(Question(gpu="H200", params_b=7.6, precision="fp8-dyn"), without_fp8())
    assert printed == expected.model_dump(mode="json")
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "not measured yet" in table and "%" not in table.split("basis")[0]


def test_http_and_mcp_give_the_cli_answer(tmp_path: Path) -> None:
    path = tmp_path / "artifact.json"
    path.write_text(json.dumps(without_fp8()))
    fields = {"gpu": "H200", "params_b": 7.6, "precision": "fp8-wo", "stack": "compiled-all"}
    expected = estimate(Question(**fields), without_fp8()).model_dump(mode="json")  # type: ignore[arg-type]
    client = TestClient(create_app(path))
    assert client.get("/v1/estimate", params=fields).json() == expected
    assert client.post("/v1/estimate", json=fields).json() == expected

    shipped = Sources.load()
    sources = Sources(without_fp8(), shipped.card, shipped.method)  # the dataset before an FP8 run lands

    async def ask() -> Any:
        async with Client(build_server(sources)) as client:
            return await client.call_tool("estimate", fields), await client.call_tool(
                "crossover", {"gpu": "H200", "precision": "fp8-wo"}
            )

    answer, crossover = run_async(ask)
    assert not answer.is_error and answer.structured_content == expected
    assert not crossover.is_error
    assert crossover.structured_content["crossover"] is None
    assert crossover.structured_content["basis"] == "not-measured"
