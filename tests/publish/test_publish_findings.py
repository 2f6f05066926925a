"""findings.json beside the build, and ``publish check-docs`` failing on a span that drifted from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecocompute.cli import main
from ecocompute.publish.build import BuildResult
from ecocompute.publish.findings import SPECS, DocsDriftError, check_docs


def test_every_finding_names_its_config_rows_and_text(example_build: BuildResult) -> None:
    found = json.loads((example_build.out / "findings.json").read_text())
    assert set(found) == {spec.name for spec in SPECS}
    for name, finding in found.items():
        assert finding["config"] == "measurements_all", name
        assert set(finding) >= {"text", "value", "config", "rows", "selection"}
    # the example set has no H200: each finding says so rather than inventing a figure
    assert {f["text"] for f in found.values()} == {"not measured"}


def test_check_docs_passes_matching_spans_and_fails_drifted_ones(
    example_build: BuildResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.md"
    good.write_text(
        "NF4 crosses at <!-- finding:h200_nf4_crossover_compiled_all_b1 -->not measured<!-- /finding -->.\n"
    )
    assert check_docs(example_build.out, [good]) == 1
    bad = tmp_path / "bad.md"
    bad.write_text("x\n<!-- finding:h200_nf4_crossover_compiled_all_b1 -->690M<!-- /finding -->\n"
                   "<!-- finding:no_such_finding -->1<!-- /finding -->\n")  # fmt: skip
    with pytest.raises(DocsDriftError, match="2 finding"):
        check_docs(example_build.out, [bad])
    assert main(["publish", "check-docs", "--dataset", str(example_build.out), str(good)]) == 0
    assert main(["publish", "check-docs", "--dataset", str(example_build.out), str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.md:2: h200_nf4_crossover_compiled_all_b1 says '690M'" in err and "Traceback" not in err


def test_readme_and_docs_agree_with_a_build_of_the_submissions(built: Path) -> None:
    """Every finding span of README.md and docs/*.md is the text a build of submissions/ gives (the session's)."""
    root = Path(__file__).parents[2]
    docs = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    if not any("<!-- finding:" in d.read_text(encoding="utf-8") for d in docs):
        pytest.skip("no doc cites a finding yet")
    check_docs(built, docs)
