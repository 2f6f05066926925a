"""The committed JSON Schema matches the models, and both accept and reject the same documents."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from factories import submission_document

from ecocompute.schema.errors import SubmissionError
from ecocompute.schema.export import SCHEMA_FILE, json_schema_text
from ecocompute.schema.io import submission_from_document


def test_committed_schema_is_what_the_models_generate() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == json_schema_text(), "run `ecocompute schema export`"


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
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    assert validator.is_valid(doc) == _pydantic_accepts(doc), name


def test_the_mutation_set_has_both_outcomes() -> None:
    outcomes = set()
    for mutate in MUTATIONS.values():
        doc = copy.deepcopy(submission_document(2))
        mutate(doc)
        outcomes.add(_pydantic_accepts(doc))
    assert outcomes == {True, False}
