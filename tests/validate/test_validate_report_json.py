"""The JSON report: the same document as ``json.dumps(indent=2)`` of its parts, each file's entry on one line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from test_validate_attacks import Signers, measured

from ecocompute.validate import report
from ecocompute.validate.findings import finding


def _rows_the_long_way(result: report.FileResult) -> list[dict[str, object]]:
    return [
        {"precision": r.precision, "windows": r.windows, "error": r.error, "accepted": r.accepted,
         "passes_cv_gate": r.passes_cv_gate, "derived": report._derived_json(r.derived)}
        for r in report.measurement_rows(result)
    ]  # fmt: skip


def test_the_report_is_the_document_of_its_parts(tmp_path: Path) -> None:
    signers = Signers(tmp_path)
    paths = [signers.write(measured(seed)) for seed in (11, 12)]
    results = signers.check(*paths)
    gate = finding("E-CV", "payload.measurements[1].windows", "CV above the gate")
    results.append(replace(results[0], findings=(gate,)))  # one with a finding: the rows say which measurement
    text = report.json_report(results, [finding("W-SIGNERS-LINE", "line 3", "an ECDSA key nobody can use")])
    document = json.loads(text)
    assert [f["path"] for f in document["files"]] == [report.clean(r.path, 4096) for r in results]
    for entry, result in zip(document["files"], results, strict=True):
        assert entry == report.result_json(result)
        assert entry["measurements"] == _rows_the_long_way(result)
    assert document["files"][2]["tier"] == "all" and not document["files"][2]["measurements"][1]["passes_cv_gate"]
    assert document["allowed_signers"][0]["code"] == "W-SIGNERS-LINE" and document["accepted"] is True
    lines = text.splitlines()
    start = lines.index('  "files": [') + 1
    assert all(line.startswith('    {"path": ') for line in lines[start : start + len(results)])  # a line a file
    assert lines[start + len(results) :] == ["  ]", "}"]


def test_an_empty_report_is_valid_json() -> None:
    assert json.loads(report.json_report([])) == {"report_version": 1, "accepted": True, "allowed_signers": [],
                                                   "files": []}  # fmt: skip
