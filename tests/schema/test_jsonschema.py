"""The committed JSON Schema matches the models, and both accept and reject the same documents."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from factories import submission_document

from ecocompute.cli import main
from ecocompute.schema.errors import SubmissionError
from ecocompute.schema.export import json_schema_text, schema_file
from ecocompute.schema.io import submission_from_document
from ecocompute.schema.models import SCHEMA_VERSIONS


@pytest.mark.parametrize("version", SCHEMA_VERSIONS)
def test_committed_schema_is_what_the_models_generate(version: str) -> None:
    committed = schema_file(version).read_text(encoding="utf-8")
    assert committed == json_schema_text(version), "run `ecocompute schema export`"
    assert json.loads(committed)["properties"]["schema_version"]["const"] == version


def test_export_writes_every_version_and_check_names_a_stale_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", "export", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [schema_file(v).name for v in SCHEMA_VERSIONS]
    assert main(["schema", "export", "--check", "--out", str(tmp_path)]) == 0
    schema_file("1.0", tmp_path).write_text("{}\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["schema", "export", "--check", "--out", str(tmp_path)]) != 0
    assert "submission-1.0.schema.json" in capsys.readouterr().err.replace("\n", "")


def test_each_versions_schema_takes_only_its_own_version() -> None:
    doc = submission_document(3)
    for version in SCHEMA_VERSIONS:
        schema = json.loads(schema_file(version).read_text(encoding="utf-8"))
        validator = jsonschema.Draft202012Validator(schema)
        assert [validator.is_valid({**doc, "schema_version": v}) for v in SCHEMA_VERSIONS] == [
            v == version for v in SCHEMA_VERSIONS
        ]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if value is _DELETE:
            del node[leaf]
        else:
            node[leaf] = value

    return mutate


_DELETE = object()
MUTATIONS = {
    "valid as is": lambda doc: None,
    "unknown top-level key": _set("extra", 1),
    "negative energy": _set("payload.measurements.0.windows.0.energy_j", -1.0),
    "zero duration": _set("payload.measurements.0.windows.0.duration_s", 0),
    "string for int": _set("payload.workload.batch_size", "1"),
    "bad precision": _set("payload.measurements.0.precision", "int4"),
    "bad weights": _set("payload.workload.weights", "finetuned"),
    "bad login": _set("payload.contributor.github", "-bad-"),
    "bad sha": _set("payload.hardware.gpu_uuid_sha256", "xyz"),
    "missing idle": _set("payload.idle", _DELETE),
    "no measurements": _set("payload.measurements", []),
    "utilisation over 100": _set("payload.measurements.0.windows.0.gpu_util_pct_mean", 101.0),
    "null optional": _set("payload.notes", None),
    "bad submission id": _set("payload.submission_id", "abc"),
    "stack unknown": _set("payload.workload.stack", "vllm"),
}


def _pydantic_accepts(doc: dict[str, Any]) -> bool:
    try:
        submission_from_document(doc)
    except SubmissionError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_pydantic_and_json_schema_agree(name: str) -> None:
    doc = copy.deepcopy(submission_document(2))
    MUTATIONS[name](doc)
    schema = json.loads(schema_file(doc["schema_version"]).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    assert validator.is_valid(doc) == _pydantic_accepts(doc), name


def test_the_mutation_set_has_both_outcomes() -> None:
    outcomes = set()
    for mutate in MUTATIONS.values():
        doc = copy.deepcopy(submission_document(2))
        mutate(doc)
        outcomes.add(_pydantic_accepts(doc))
    assert outcomes == {True, False}
