"""The server through the SDK's in-process client: every tool, every resource, good and bad arguments."""

from __future__ import annotations

import math
from typing import Any

import pytest
from factories import run_async
from mcp.client import Client
from mcp_clients import check_conversation, conversation

from ecocompute.estimate import Question, estimate
from ecocompute.mcp_server.server import build_server
from ecocompute.mcp_server.sources import Sources


@pytest.fixture(scope="module")
def server() -> Any:
    return build_server(Sources.load())


def _run(server: Any, fn: Any) -> Any:
    async def go() -> Any:
        async with Client(server) as client:
            return await fn(client)

    return run_async(go)


def test_every_tool_and_resource_answers_with_provenance(server: Any) -> None:
    errors = check_conversation(_run(server, conversation))
    assert not errors, "\n".join(errors)


def test_estimate_tool_answers_what_the_estimator_answers(server: Any) -> None:
    args = {"gpu": "H200", "params_b": 3.0, "precision": "int8-t0", "stack": "compiled-all", "batch_size": 1}
    result = _run(server, lambda c: c.call_tool("estimate", args))
    direct = estimate(Question(**args)).model_dump(mode="json")
    assert result.structured_content["change_pct"] == pytest.approx(direct["change_pct"])
    assert result.structured_content["change_ci95"] == pytest.approx(direct["change_ci95"])
    assert result.structured_content["basis"] == direct["basis"]


@pytest.mark.parametrize(
    ("tool", "args", "named"),
    [
        ("estimate", {"gpu": "H200", "params_b": 7.6, "precision": "nf5"}, ["precision", "'nf4'", "'int8-t0'"]),
        ("estimate", {"gpu": "Voodoo 3", "params_b": 7.6, "precision": "nf4"}, ["gpu", "H200"]),
        ("estimate", {"gpu": "H200", "precision": "nf4"}, ["params_b", "model"]),
        ("estimate", {"gpu": "H200", "params_b": -1, "precision": "nf4"}, ["params_b"]),
        ("crossover", {"gpu": "H200", "precision": "fp16"}, ["precision", "baseline"]),
        ("crossover", {"gpu": "H200", "stack": "jit"}, ["stack", "'compiled-all'"]),
        ("find_measurements", {"gpu": "Voodoo 3"}, ["gpu", "NVIDIA H200"]),
        ("find_measurements", {"tier": "gold"}, ["tier", "'gate'"]),
        ("recommend_config", {"gpu": "T4", "params_b": 7.0}, ["gpu", "NVIDIA H200"]),
        ("recommend_config", {"gpu": "H200", "params_b": 7.0, "objective": "cheap"}, ["objective", "'energy'"]),
    ],
)
def test_bad_arguments_name_the_field_and_the_valid_values(server: Any, tool: str, args: dict[str, Any],
                                                           named: list[str]) -> None:  # fmt: skip
    result = _run(server, lambda c: c.call_tool(tool, args))
    assert result.is_error
    text = result.content[0].text
    missing = [word for word in named if word not in text]
    assert not missing, f"{tool} error does not name {missing}: {text}"


def test_find_measurements_filters_and_dates_its_rows(server: Any) -> None:
    result = _run(server, lambda c: c.call_tool("find_measurements", {"gpu": "H200", "tier": "gate", "limit": 500}))
    content = result.structured_content
    rows = content["rows"]
    assert rows and content["count"] == len(rows)
    assert {row["tier"] for row in rows} == {"gate"}
    assert all(row["submission_id"] for row in rows)
    assert content["provenance"]["newest_submission_at"] == max(row["created_at"] for row in rows)


def test_recommendation_respects_the_limits_and_its_front_is_not_dominated(server: Any) -> None:
    args = {"gpu": "H200", "params_b": 7.6, "objective": "energy", "max_vram_gb": 10}
    content = _run(server, lambda c: c.call_tool("recommend_config", args)).structured_content
    chosen = [content["choice"], *content["alternatives"]]
    assert chosen[0] is not None
    assert all(c["weights_gb"] <= 10 for c in chosen)
    assert any("max_vram_gb" in why for why in content["excluded"])
    energies = [c["j_per_token"] for c in chosen]
    assert energies == sorted(energies)
    front = content["pareto_front"]
    assert front and all(c["ms_per_token"] is not None for c in front)
    for c in front:
        assert not any(o["j_per_token"] < c["j_per_token"] and o["ms_per_token"] < c["ms_per_token"] for o in front)
    assert all(math.isfinite(c["j_per_token"]) for c in chosen)


def test_check_code_cites_the_measurement_and_says_why_it_cannot_lint(server: Any) -> None:
    code = (
        "from transformers import AutoModelForCausalLM\n"
        "m = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-7B', load_in_8bit=True)\n"
    )
    content = _run(server, lambda c: c.call_tool("check_code", {"code": code, "gpu": "H200"})).structured_content
    (finding,) = [f for f in content["findings"] if f["rule"] == "ECO101"]
    assert finding["line"] == 2 and "95% CI" in finding["message"]
    broken = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained(\n"
    content = _run(server, lambda c: c.call_tool("check_code", {"code": broken})).structured_content
    assert content["findings"] == [] and "cannot parse" in content["error"]
    result = _run(server, lambda c: c.call_tool("check_code", {"code": code, "filename": "x.txt"}))
    assert result.is_error and "filename" in result.content[0].text
