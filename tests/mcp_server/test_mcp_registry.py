"""``server.json`` says what the MCP Registry needs, and agrees with the package."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_server_json_matches_the_package_and_the_readme() -> None:
    server = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert re.fullmatch(r"io\.github\.[\w-]+/ecocompute", server["name"])
    assert len(server["description"]) <= 100
    assert server["version"] == project["version"]
    (package,) = server["packages"]
    assert package["registryType"] == "pypi"
    assert package["identifier"] == project["name"]
    assert package["version"] == project["version"]
    assert package["transport"] == {"type": "stdio"}
    assert "mcp" in project["optional-dependencies"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"mcp-name: {server['name']}" in readme, "the README needs the registry's mcp-name line"


def test_the_shipped_card_is_the_card_of_the_repositorys_build(built: Path) -> None:
    shipped = (ROOT / "mcp_server" / "data" / "card.md").read_text(encoding="utf-8")
    assert shipped == (built / "README.md").read_text(encoding="utf-8"), (
        "mcp_server/data/card.md is stale: run `ecocompute publish build --submissions submissions --out /tmp/b`"
        " and copy /tmp/b/README.md there"
    )
