"""The corpus: snippets in the shapes people write, each with the findings expected in a sidecar file.

A sidecar ``NAME.expected`` lists ``RULE LINE VERDICT WHY`` (verdict ``tp`` for a true positive, ``fp`` for a false
positive the linter is known to make), ``#`` comments for what it must stay silent on, and an optional
``settings key=value ...`` line. The test fails on any difference, in either direction.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ecocompute.lint.api import lint_paths
from ecocompute.lint.config import resolve
from ecocompute.lint.evidence import Evidence

CORPUS = Path(__file__).parent / "corpus"
SNIPPETS = sorted(p for p in CORPUS.iterdir() if p.suffix in (".py", ".ipynb"))


def read_sidecar(path: Path) -> tuple[dict[str, str], set[tuple[str, int]], dict[str, int]]:
    settings: dict[str, str] = {}
    expected: set[tuple[str, int]] = set()
    verdicts = {"tp": 0, "fp": 0}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("settings "):
            settings.update(item.split("=", 1) for item in line.split()[1:])
            continue
        rule, number, verdict, *why = line.split()
        assert verdict in verdicts, f"{path.name}: verdict {verdict!r} is not tp or fp"
        assert why, f"{path.name}: {rule} {number} says not why"
        verdicts[verdict] += 1
        expected.add((rule, int(number)))
    return settings, expected, verdicts


def test_every_snippet_has_a_sidecar() -> None:
    assert len(SNIPPETS) >= 15
    assert any(p.suffix == ".ipynb" for p in SNIPPETS)
    missing = [p.name for p in SNIPPETS if not p.with_suffix(".expected").is_file()]
    orphans = [p.name for p in CORPUS.glob("*.expected") if not any(s.stem == p.stem for s in SNIPPETS)]
    assert not missing and not orphans, (missing, orphans)


def test_corpus_holds_false_positives_and_silent_cases() -> None:
    totals = {"tp": 0, "fp": 0}
    silent = 0
    for snippet in SNIPPETS:
        _, expected, verdicts = read_sidecar(snippet.with_suffix(".expected"))
        totals = {k: totals[k] + verdicts[k] for k in totals}
        silent += not expected
    assert totals["tp"] >= 20 and totals["fp"] >= 1 and silent >= 3, (totals, silent)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda p: p.name)
def test_snippet_findings_match_sidecar(snippet: Path) -> None:
    settings, expected, _ = read_sidecar(snippet.with_suffix(".expected"))
    config = resolve({}, settings)
    result = lint_paths([snippet], config, evidence=Evidence(config.settings.gpu))
    assert not result.errors
    found = {(f.rule, f.line) for f in result.findings}
    assert found == expected, f"unexpected {sorted(found - expected)}, missing {sorted(expected - found)}"
    for finding in result.findings:  # every message cites a measurement: change, interval, card, stack, batch, data
        for part in ("% J/token vs ", "95% CI", " on NVIDIA H200, stack ", ", batch ", "; dataset "):
            assert part in finding.message, (finding.rule, part, finding.message)
