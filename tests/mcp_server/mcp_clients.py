"""Shared calls of the MCP tests: one conversation that lists, calls and reads everything, over any client."""

from __future__ import annotations

import json
from typing import Any

from mcp.client import Client

GOOD_CALLS: dict[str, dict[str, Any]] = {
    "estimate": {"gpu": "H200", "params_b": 7.6, "precision": "nf4", "stack": "compiled-all", "batch_size": 1},
    "crossover": {"gpu": "H200", "precision": "nf4", "stack": "compiled-all", "batch_size": 1},
    "find_measurements": {"gpu": "H200", "precision": "nf4", "limit": 3},
    "recommend_config": {"gpu": "H200", "params_b": 7.6, "objective": "energy"},
    "check_code": {
        "code": "from transformers import AutoModelForCausalLM\n"
        "m = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-7B', load_in_8bit=True)\n",
        "gpu": "H200",
    },
}
RESOURCES = ("ecocompute://method", "ecocompute://schema/submission", "ecocompute://card", "ecocompute://gpus")


async def conversation(client: Client) -> dict[str, Any]:
    """Tools and resources listed, every tool called with good arguments, every resource read."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    results = {name: await client.call_tool(name, args) for name, args in GOOD_CALLS.items()}
    listed = [str(res.uri) for res in (await client.list_resources()).resources]
    bodies = {uri: (await client.read_resource(uri)).contents[0].text for uri in RESOURCES}  # type: ignore[union-attr]
    return {"tools": tools, "results": results, "resources": listed, "bodies": bodies}


def check_conversation(seen: dict[str, Any]) -> list[str]:
    """Every problem with one conversation, as sentences (empty: all good)."""
    errors = []
    for name in GOOD_CALLS:
        tool = seen["tools"].get(name)
        if tool is None:
            errors.append(f"tool {name} is not listed")
            continue
        if not tool.output_schema or not tool.description or not tool.annotations.read_only_hint:
            errors.append(f"tool {name} lacks an output schema, a description or readOnlyHint")
        result = seen["results"][name]
        if result.is_error or not result.structured_content:
            errors.append(f"{name} failed: {result.content}")
            continue
        content = result.structured_content
        prov = content.get("provenance", content)
        for key in ("dataset_version", "doi", "newest_submission_at", "citation"):
            if key not in prov:
                errors.append(f"{name}'s result has no {key}")
    if sorted(seen["resources"]) != sorted(RESOURCES):
        errors.append(f"resources listed: {seen['resources']}")
    json.loads(seen["bodies"]["ecocompute://schema/submission"])
    if not json.loads(seen["bodies"]["ecocompute://gpus"]):
        errors.append("the gpus resource lists no card")
    return errors
