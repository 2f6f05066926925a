"""Sensors a GPU lacks are recorded as missing (null), never as 0: schema, collector, validator and tables."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from factories import submission_document

from ecocompute.schema.errors import SubmissionError
from ecocompute.schema.export import schema_file
from ecocompute.schema.io import submission_from_document

SENSOR_FIELDS = ("temp_c_start", "temp_c_end", "sm_clock_mhz_mean", "throttle_reasons")


def _schema(version: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_file(version).read_text(encoding="utf-8")))


def _with_null(doc: dict[str, Any], name: str, version: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["schema_version"] = version
    doc["payload"]["measurements"][0]["windows"][0][name] = None
    return doc


@pytest.mark.parametrize("name", SENSOR_FIELDS)
def test_a_1_2_window_may_hold_null_for_a_missing_sensor(name: str) -> None:
    doc = _with_null(submission_document(1), name, "1.2")
    sub = submission_from_document(doc)
    assert getattr(sub.payload.measurements[0].windows[0], name) is None
    assert _schema("1.2").is_valid(doc)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
@pytest.mark.parametrize("name", SENSOR_FIELDS)
def test_a_1_0_or_1_1_window_with_a_null_sensor_is_refused(name: str, version: str) -> None:
    doc = _with_null(submission_document(2), name, version)
    with pytest.raises(SubmissionError, match=f"schema {version} has no Window.{name}=null"):
        submission_from_document(doc)
    assert not _schema(version).is_valid(doc)
    assert _schema(version).is_valid({**submission_document(2), "schema_version": version})
