"""The four ways findings are written: text for people, JSON, GitHub workflow commands, and SARIF 2.1.0."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ecocompute import __version__
from ecocompute.lint.findings import RULES, Finding, Severity

FORMATS = ("text", "json", "github", "sarif")
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_LEVEL = {Severity.NOTE: "note", Severity.WARNING: "warning", Severity.ERROR: "error"}
GITHUB_COMMAND = {Severity.NOTE: "notice", Severity.WARNING: "warning", Severity.ERROR: "error"}
TOOL = "ecocompute-lint"


def text(findings: Sequence[Finding], errors: Sequence[tuple[str, str]]) -> str:
    """One line per finding, ``path:line:col: ID [severity] message``, then the files that could not be linted."""
    lines = [f"{f.where}: {f.rule} [{f.severity.label}] {f.message}" for f in findings]
    lines += [f"{path}: not linted: {why}" for path, why in errors]
    count = len(findings)
    lines.append(f"{count} finding{'s' if count != 1 else ''}" if count else "no findings")
    return "\n".join(lines) + "\n"


def as_json(findings: Sequence[Finding], errors: Sequence[tuple[str, str]]) -> str:
    """``{"findings": [...], "errors": [...], "version": ...}``, one object per finding."""
    doc = {
        "version": __version__,
        "findings": [
            {
                "rule": f.rule,
                "name": f.rule_name,
                "severity": f.severity.label,
                "path": f.path,
                "line": f.line,
                "column": f.column,
                "end_line": f.end_line,
                "cell": f.cell,
                "cell_line": f.cell_line,
                "message": f.message,
            }
            for f in findings
        ],
        "errors": [{"path": p, "message": m} for p, m in errors],
    }
    return json.dumps(doc, indent=2) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(findings: Sequence[Finding], errors: Sequence[tuple[str, str]]) -> str:
    """GitHub workflow commands, ``::warning file=...,line=...,col=...,endLine=...,title=...::message``."""
    lines = []
    for f in findings:
        props = [f"file={_escape_property(f.path)}", f"line={f.line}", f"col={f.column}"]
        if f.end_line and f.end_line != f.line:
            props.append(f"endLine={f.end_line}")
        props.append(f"title={_escape_property(f'{f.rule} {f.rule_name}')}")
        lines.append(f"::{GITHUB_COMMAND[f.severity]} {','.join(props)}::{_escape_data(f.message)}")
    lines += [f"::warning file={_escape_property(p)}::{_escape_data('not linted: ' + m)}" for p, m in errors]
    return "\n".join(lines) + ("\n" if lines else "")


def _rule_descriptor(rule_id: str) -> dict[str, Any]:
    rule = RULES[rule_id]
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "help": {"text": f"See {rule.doc_path}: what it finds, why, the evidence, how to fix and silence it."},
        "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
        "properties": {"tags": ["energy", "llm", "quantization"]},
    }


def _uri(path: str) -> str:
    p = Path(path)
    return p.as_posix() if not p.is_absolute() else p.as_uri()


def sarif(findings: Sequence[Finding], errors: Sequence[tuple[str, str]]) -> str:
    """A SARIF 2.1.0 log with one run.

    Every rule is described, one result per finding (paths relative to the
    repository root, ``%SRCROOT%``), and the files not linted as tool notifications.
    """
    rule_ids = list(RULES)
    results = []
    for f in findings:
        region: dict[str, Any] = {"startLine": f.line, "startColumn": f.column}
        if f.end_line and f.end_line >= f.line:
            region["endLine"] = f.end_line
        location: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": _uri(f.path)}, "region": region}}
        if not Path(f.path).is_absolute():
            location["physicalLocation"]["artifactLocation"]["uriBaseId"] = "%SRCROOT%"
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": rule_ids.index(f.rule),
            "level": SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [location],
        }
        if f.cell is not None:
            result["properties"] = {"cell": f.cell, "cellLine": f.cell_line}
        results.append(result)
    notifications = [
        {"level": "warning", "message": {"text": f"not linted: {m}"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(p)}}}]}
        for p, m in errors
    ]  # fmt: skip
    run: dict[str, Any] = {
        "tool": {"driver": {"name": TOOL, "version": __version__, "semanticVersion": __version__,
                            "rules": [_rule_descriptor(r) for r in rule_ids]}},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
    }  # fmt: skip
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


WRITERS = {"text": text, "json": as_json, "github": github, "sarif": sarif}
