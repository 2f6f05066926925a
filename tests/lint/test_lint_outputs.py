"""The four output formats: SARIF 2.1.0 checked against the official schema, GitHub commands, JSON, text."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from lint_helpers import CORPUS, SARIF_SCHEMA, chdir

from ecocompute.lint import output
from ecocompute.lint.api import lint_paths
from ecocompute.lint.config import LintConfig
from ecocompute.lint.findings import RULES, Finding, Severity


@pytest.fixture(scope="module")
def corpus_result() -> tuple[list[Finding], list[tuple[str, str]]]:
    with chdir(CORPUS.parent.parent.parent):
        result = lint_paths([CORPUS.relative_to(Path.cwd())], LintConfig())
    errors = [("tests/lint/corpus/broken.py", "cannot parse (line 3): invalid syntax")]
    return result.findings, errors


def _validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def test_sarif_validates_against_the_official_schema(corpus_result: tuple[list[Finding], list]) -> None:
    findings, errors = corpus_result
    log = json.loads(output.sarif(findings, errors))
    problems = sorted(_validator().iter_errors(log), key=str)
    assert not problems, [f"{'/'.join(map(str, p.path))}: {p.message}" for p in problems[:5]]
    run = log["runs"][0]
    assert log["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "ecocompute-lint"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == list(RULES)
    assert len(run["results"]) == len(findings) > 10
    for result, finding in zip(run["results"], findings, strict=True):
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == finding.rule
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] == finding.line
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    notebook = [r for r in run["results"] if "properties" in r]
    assert notebook and all(r["properties"]["cell"] >= 1 for r in notebook)
    assert run["invocations"][0]["toolExecutionNotifications"][0]["level"] == "warning"


def test_the_schema_check_rejects_a_bad_log(corpus_result: tuple[list[Finding], list]) -> None:
    log = json.loads(output.sarif(*corpus_result))
    log["runs"][0]["results"][0]["level"] = "critical"
    del log["runs"][0]["tool"]["driver"]["name"]
    assert len(list(_validator().iter_errors(log))) == 2


def test_sarif_of_no_findings_is_valid() -> None:
    log = json.loads(output.sarif([], []))
    assert not list(_validator().iter_errors(log))
    assert log["runs"][0]["results"] == []


def _finding(message: str, path: str = "src/a,b:c.py", severity: Severity = Severity.WARNING) -> Finding:
    return Finding("ECO102", path, 4, 9, message, severity, end_line=6)


def test_github_annotations_escape_data_and_properties() -> None:
    text = output.github([_finding("+23% (95% CI a..b)\nnext line", severity=Severity.ERROR)], [])
    assert text == (
        "::error file=src/a%2Cb%3Ac.py,line=4,col=9,endLine=6,title=ECO102 nf4-below-crossover"
        "::+23%25 (95%25 CI a..b)%0Anext line\n"
    )
    notes = output.github([Finding("ECO105", "x.py", 1, 1, "m", Severity.NOTE)], [("y.py", "cannot read")])
    assert notes.splitlines() == ["::notice file=x.py,line=1,col=1,title=ECO105 mixed-8bit-4bit::m",
                                  "::warning file=y.py::not linted: cannot read"]  # fmt: skip


def test_json_output_carries_every_field(corpus_result: tuple[list[Finding], list]) -> None:
    findings, errors = corpus_result
    doc = json.loads(output.as_json(findings, errors))
    assert len(doc["findings"]) == len(findings)
    first = doc["findings"][0]
    assert set(first) == {"rule", "name", "severity", "path", "line", "column", "end_line", "cell", "cell_line",
                          "message"}  # fmt: skip
    assert doc["errors"] == [{"path": errors[0][0], "message": errors[0][1]}]


def test_text_output_one_line_per_finding() -> None:
    text = output.text([_finding("m")], [("y.py", "cannot read")])
    assert text.splitlines() == ["src/a,b:c.py:4:9: ECO102 [warning] m", "y.py: not linted: cannot read", "1 finding"]
    assert output.text([], []) == "no findings\n"
