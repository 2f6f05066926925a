"""A GPU that reports no power limit: null in ``payload.hardware`` (schema 1.2), judged with W-SENSOR-MISSING."""

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
from ecocompute.schema.models import Hardware
from ecocompute.validate import windows
from ecocompute.validate.gpus import bounds_for

LIMITS = ("power_limit_w", "default_power_limit_w")


def _schema(version: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_file(version).read_text(encoding="utf-8")))


def _without(names: tuple[str, ...], version: str = "1.2", **hardware: Any) -> dict[str, Any]:
    doc = copy.deepcopy(submission_document(1))
    doc["schema_version"] = version
    doc["payload"]["hardware"].update({name: None for name in names}, **hardware)
    return doc


def _hardware(names: tuple[str, ...], **values: Any) -> Hardware:
    return submission_from_document(_without(names, **values)).payload.hardware


@pytest.mark.parametrize("names", [(LIMITS[0],), (LIMITS[1],), LIMITS])
def test_a_1_2_file_may_hold_null_power_limits(names: tuple[str, ...]) -> None:
    doc = _without(names)
    hardware = submission_from_document(doc).payload.hardware
    assert all(getattr(hardware, name) is None for name in names)
    assert _schema("1.2").is_valid(doc)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
@pytest.mark.parametrize("name", LIMITS)
def test_a_1_0_or_1_1_file_with_a_null_power_limit_is_refused(version: str, name: str) -> None:
    doc = _without((name,), version)
    with pytest.raises(SubmissionError, match=f"schema {version} has no Hardware.{name}=null"):
        submission_from_document(doc)
    assert not _schema(version).is_valid(doc)
    assert _schema(version).is_valid(_without((), version))


@pytest.mark.parametrize("name", LIMITS)
def test_a_power_limit_is_still_required_and_never_0(name: str) -> None:
    doc = _without(())
    del doc["payload"]["hardware"][name]
    with pytest.raises(SubmissionError):
        submission_from_document(doc)
    with pytest.raises(SubmissionError):
        submission_from_document(_without((), **{name: 0}))


def test_no_power_limit_skips_the_limit_checks_with_w_sensor_missing() -> None:
    hardware = _hardware(LIMITS)
    found = windows.check_hardware(hardware, bounds_for(hardware.gpu_name))
    assert [(f.code, f.path) for f in found] == [
        ("W-SENSOR-MISSING", "payload.hardware.power_limit_w"),
        ("W-SENSOR-MISSING", "payload.hardware.default_power_limit_w"),
    ]
    assert "W-POWER-LIMIT" in found[0].message and "E-POWER and E-IDLE" in found[0].message


def test_a_limit_without_its_default_is_not_called_non_default() -> None:
    hardware = _hardware((LIMITS[1],), power_limit_w=500.0)
    found = windows.check_hardware(hardware, bounds_for(hardware.gpu_name))
    assert [(f.code, f.path) for f in found] == [("W-SENSOR-MISSING", "payload.hardware.default_power_limit_w")]
    assert "W-POWER-LIMIT" in found[0].message


def test_a_reported_non_default_limit_still_warns() -> None:
    hardware = _hardware((), power_limit_w=500.0)
    found = windows.check_hardware(hardware, bounds_for(hardware.gpu_name))
    assert [f.code for f in found] == ["W-POWER-LIMIT"]


def test_without_a_limit_the_power_ceiling_is_the_gpus_highest_limit() -> None:
    sub = submission_from_document(_without(LIMITS))
    hardware, (m, *_) = sub.payload.hardware, sub.payload.measurements
    bounds = bounds_for(hardware.gpu_name)
    assert bounds is not None
    assert windows.power_ceiling_w(hardware, bounds) == bounds.power_limit_max_w
    window = m.windows[0].model_copy(update={"power_limit_w": None})
    assert windows.power_bounds(hardware, bounds, window)[1] == bounds.power_limit_max_w
    assert windows.check_power(m, hardware, bounds, 0) == []
    assert windows.check_idle(sub.payload.idle, hardware, bounds) == []
    hot = sub.payload.idle.model_copy(update={"power_w_before": bounds.power_limit_max_w + 1})
    assert [f.code for f in windows.check_idle(hot, hardware, bounds)] == ["E-IDLE"]
