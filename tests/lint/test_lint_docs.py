"""Every rule has its page, the index lists every rule, and the docs retype no measured figure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ecocompute.lint.findings import RULES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "lint"
SECTIONS = ("## What it finds", "## Why", "## Evidence", "## How to fix", "## How to silence")


@pytest.mark.parametrize("rule_id", list(RULES))
def test_each_rule_has_a_page_with_every_section(rule_id: str) -> None:
    rule = RULES[rule_id]
    page = (DOCS / f"{rule_id}.md").read_text(encoding="utf-8")
    assert page.startswith(f"# {rule_id} {rule.name}\n")
    assert f"Default severity: {rule.severity.label}." in page
    positions = [page.find(s) for s in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), positions
    assert f"# noqa: {rule_id}" in page


def test_index_lists_every_rule_and_no_other_page() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for rule in RULES.values():
        assert f"| {rule.id} | {rule.name} | {rule.severity.label} | [{rule.id}]({rule.id}.md) |" in index
    assert {p.stem for p in DOCS.glob("ECO*.md")} == set(RULES)
    for code in ("| 0 |", "| 1 |", "| 2 |", "security-events: write"):
        assert code in index


def test_docs_retype_no_measured_figure() -> None:
    for page in DOCS.glob("*.md"):
        text = re.sub(r"<!-- finding:\S+ -->.*?<!-- /finding -->", "", page.read_text(encoding="utf-8"), flags=re.S)
        policy = text.replace("95% interval", "").replace("16%", "")  # the interval's level, the size tolerance
        assert not re.findall(r"[+-]?\d+(?:\.\d+)?\s?%", policy), page.name
