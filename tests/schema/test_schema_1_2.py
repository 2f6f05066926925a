"""Schema 1.2: the fields and values it added are refused in older documents and left out of their JSON Schemas."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from factories import submission_document

from ecocompute.schema.errors import SubmissionError
from ecocompute.schema.export import schema_file
from ecocompute.schema.io import dumps, submission_from_document
from ecocompute.schema.models import NEW_IN, NEW_VALUES_IN, SCHEMA_VERSION, Submission
from ecocompute.schema.tables import measurement_rows, measurements_frame, submission_row, submissions_frame


def _with_1_2(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` using one of each thing 1.2 added."""
    doc = copy.deepcopy(doc)
    p = doc["payload"]
    p["hardware"]["vendor"] = "amd"
    p["workload"].update(engine="llama.cpp", engine_version="b6000", engine_build_flags={"GGML_CUDA": "ON"})
    p["method"]["energy_source"] = "power_integral"
    p["method"]["counter_absent_reason"] = "NVML: nvmlDeviceGetTotalEnergyConsumption NOT_SUPPORTED"
    window = p["measurements"][0]["windows"][0]
    window.update(power_trace=[[0.0, 150.0], [0.1, 151.0]], power_first_sample_s=0.0)
    window.update(power_last_sample_gap_s=0.0, power_max_gap_s=0.1)
    p["measurements"][1].update(precision="q4_k_m", quantization_type="Q4_K_M", quantization={"type": "Q4_K_M"})
    return doc


def _validators() -> dict[str, jsonschema.Draft202012Validator]:
    versions = ("1.0", "1.1", "1.2")
    return {
        v: jsonschema.Draft202012Validator(json.loads(schema_file(v).read_text(encoding="utf-8"))) for v in versions
    }


def test_new_documents_are_written_as_1_2() -> None:
    assert SCHEMA_VERSION == "1.2"


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_an_older_document_using_what_1_2_added_is_refused_by_models_and_json_schema(version: str) -> None:
    doc = {**_with_1_2(submission_document(1)), "schema_version": version}
    with pytest.raises(SubmissionError, match=f"schema {version} has no Hardware.vendor"):
        submission_from_document(doc)
    assert not _validators()[version].is_valid(doc)


def test_each_thing_1_2_added_alone_makes_an_older_document_invalid() -> None:
    base = submission_document(2)
    doc = _with_1_2(base)
    changed = 0
    for model_fields in NEW_IN["1.2"].values():
        changed += len(model_fields)
    assert changed == 10 and set(NEW_VALUES_IN["1.2"]) == {"Method.energy_source", "Precision"}
    for name in ("vendor", "engine", "counter_absent_reason"):
        for section in ("hardware", "workload", "method"):
            if name in doc["payload"][section]:
                one = copy.deepcopy(base)
                one["payload"][section][name] = doc["payload"][section][name]
                with pytest.raises(SubmissionError, match=name):
                    submission_from_document(one)
                assert not _validators()["1.1"].is_valid(one)
    one = copy.deepcopy(base)
    one["payload"]["method"]["energy_source"] = "amdsmi_energy_counter"
    with pytest.raises(SubmissionError, match="energy_source=amdsmi_energy_counter"):
        submission_from_document(one)
    assert not _validators()["1.0"].is_valid(one)


def test_a_1_2_document_with_everything_reads_round_trips_and_follows_its_json_schema() -> None:
    doc = {**_with_1_2(submission_document(3)), "schema_version": "1.2"}
    sub = submission_from_document(doc)
    assert _validators()["1.2"].is_valid(doc)
    assert submission_from_document(json.loads(dumps(sub))) == sub
    rows = measurement_rows(sub)
    frame = measurements_frame(rows)
    assert frame["engine"].to_list() == ["llama.cpp", "llama.cpp"]
    assert frame["gpu_vendor"].to_list() == ["amd", "amd"]
    assert frame["energy_source"].to_list() == ["power_integral", "power_integral"]
    assert frame["quantization_type"].to_list() == [None, "Q4_K_M"]
    row = submissions_frame([submission_row(sub, "0" * 64)]).row(0, named=True)
    assert (row["engine"], row["engine_version"], row["gpu_vendor"]) == ("llama.cpp", "b6000", "amd")
    assert row["engine_build_flags_json"] == '{"GGML_CUDA": "ON"}'
    assert row["method_energy_source"] == "power_integral"


def test_a_1_0_document_without_them_reads_as_transformers_on_nvidia_with_the_counter() -> None:
    sub = Submission.model_validate(submission_document(4))
    assert sub.schema_version == "1.0"
    (row, _) = measurement_rows(sub)
    assert (row["engine"], row["gpu_vendor"], row["energy_source"]) == (
        "transformers", "nvidia", "nvml_total_energy_counter"
    )  # fmt: skip
    assert row["quantization_type"] is None
    assert "vendor" not in dumps(sub) and "engine" not in json.loads(dumps(sub))["payload"]["workload"]
