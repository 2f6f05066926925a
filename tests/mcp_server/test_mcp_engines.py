"""The MCP tools keep engines apart, on the shipped artifact (built from submissions of transformers and llama.cpp)."""

from __future__ import annotations

from typing import Any

import pytest
from factories import committed_ids, run_async
from mcp.client import Client

from ecocompute.estimate import Question, estimate
from ecocompute.mcp_server.recommend import candidates
from ecocompute.mcp_server.server import build_server
from ecocompute.mcp_server.sources import Sources, gpu_ranges

LLAMA = "20261201T172632Z-e1072b8d"  # the first llama.cpp submission: Qwen2.5-1.5B, fp16, q8_0 and q4_k_m
LLAMAS = committed_ids("llama.cpp")  # every committed llama.cpp submission, LLAMA among them


@pytest.fixture(scope="module")
def server() -> Any:
    return build_server(Sources.load())


def _call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(server) as client:
            return await client.call_tool(tool, args)

    return run_async(go)


def test_the_estimate_tool_takes_the_engine(server: Any) -> None:
    args = {"gpu": "H200", "params_b": 1.54, "precision": "q8_0", "engine": "llama.cpp"}
    content = _call(server, "estimate", args).structured_content
    direct = estimate(Question(**args)).model_dump(mode="json")
    assert content["change_pct"] == pytest.approx(direct["change_pct"])
    assert content["submission_ids"] == [LLAMA] and content["question"]["engine"] == "llama.cpp"
    default = _call(server, "estimate", {k: v for k, v in args.items() if k != "engine"}).structured_content
    assert default["basis"] == "not-measured" and default["change_pct"] is None
    assert [r["code"] for r in default["reasons"]] == ["engine-not-measured"]


def test_a_bad_engine_names_the_valid_ones(server: Any) -> None:
    result = _call(server, "estimate", {"gpu": "H200", "params_b": 1.5, "precision": "nf4", "engine": "vllm"})
    assert result.is_error and "engine" in result.content[0].text and "'llama.cpp'" in result.content[0].text


def test_rows_crossovers_and_ranges_name_their_engine(server: Any) -> None:
    rows = _call(server, "find_measurements", {"engine": "llama.cpp", "limit": 500}).structured_content["rows"]
    assert rows and {r["engine"] for r in rows} == {"llama.cpp"} and {r["submission_id"] for r in rows} == LLAMAS
    every = _call(server, "find_measurements", {"limit": 500}).structured_content["rows"]
    assert {r["engine"] for r in every} == {"transformers", "llama.cpp"}
    cross = _call(server, "crossover", {"gpu": "H200", "precision": "q4_k_m", "engine": "llama.cpp"})
    assert cross.structured_content["engine"] == "llama.cpp" and cross.structured_content["crossover"] is not None
    ranges = gpu_ranges(Sources.load())
    llama = [r for r in ranges if r.engine == "llama.cpp"]
    assert llama and all(set(r.precisions) == {"q8_0", "q4_k_m"} for r in llama)


def test_recommend_config_keeps_each_engines_fp16_apart(server: Any) -> None:
    sources = Sources.load()
    found, _ = candidates(sources, "H200", 1.54)
    fp16 = {c.engine: c for c in found if c.precision == "fp16" and c.stack == "eager" and c.batch_size == 1}
    assert set(fp16) == {"transformers", "llama.cpp"}
    llama_fp16 = {r["j_b"] for r in sources.runs() if r.get("submission_id") == LLAMA}
    assert len(llama_fp16) == 1 and fp16["llama.cpp"].j_per_token == pytest.approx(llama_fp16.pop())
    assert fp16["llama.cpp"].submission_ids == [LLAMA] and LLAMA not in fp16["transformers"].submission_ids
    for c in found:
        assert (LLAMA in c.submission_ids) == (c.engine == "llama.cpp")
    content = _call(server, "recommend_config", {"gpu": "H200", "params_b": 1.54}).structured_content
    assert content["choice"]["engine"] in ("transformers", "llama.cpp")
