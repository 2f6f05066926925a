"""Schema 1.0: what the models accept and reject, and how files are read and written."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from factories import submission_document

from ecocompute.schema.errors import SubmissionError, UnknownSchemaVersionError, UsageError
from ecocompute.schema.io import dumps, load_submission, submission_from_document, write_submission
from ecocompute.schema.models import Submission

EXAMPLE = Path(__file__).parents[1] / "data" / "example" / "submission.json"


def test_example_round_trips_byte_for_byte(tmp_path: Path) -> None:
    sub = Submission.from_file(EXAMPLE)
    out = tmp_path / "again.json"
    sub.to_file(out)
    assert out.read_bytes() == EXAMPLE.read_bytes()


def test_example_is_labelled_as_an_example() -> None:
    payload = Submission.from_file(EXAMPLE).payload
    assert payload.example is True
    assert payload.notes is not None
    assert "EXAMPLE" in payload.notes


def test_unknown_schema_version_names_the_versions_known() -> None:
    doc = submission_document()
    doc["schema_version"] = "2.0"
    with pytest.raises(UnknownSchemaVersionError, match=r"'2\.0'.*1\.0.*upgrade"):
        submission_from_document(doc)


def test_missing_schema_version_says_how_to_start() -> None:
    doc = submission_document()
    del doc["schema_version"]
    with pytest.raises(SubmissionError, match="schema_version is missing"):
        submission_from_document(doc)


def test_extra_field_is_rejected_with_its_path() -> None:
    doc = submission_document()
    doc["payload"]["hardware"]["overclocked"] = True
    with pytest.raises(SubmissionError, match=r"payload\.hardware\.overclocked"):
        submission_from_document(doc)


def test_bad_precision_lists_the_valid_values() -> None:
    doc = submission_document()
    doc["payload"]["measurements"][0]["precision"] = "fp8x"
    with pytest.raises(SubmissionError) as info:
        submission_from_document(doc)
    for valid in ("fp16", "bf16", "int8", "int8-t0", "nf4", "nf4-dq", "fp4"):
        assert f"'{valid}'" in str(info.value)


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_rejected(tmp_path: Path, bad: str) -> None:
    text = dumps(Submission.model_validate(submission_document()))
    text = text.replace('"energy_j": ', f'"energy_j": {bad}, "x": ', 1)
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(SubmissionError, match="not a number"):
        load_submission(path)


def test_infinite_float_in_python_is_rejected() -> None:
    doc = submission_document()
    doc["payload"]["measurements"][0]["windows"][0]["energy_j"] = float("inf")
    with pytest.raises(SubmissionError, match="energy_j"):
        submission_from_document(doc)


def test_naive_timestamp_is_rejected() -> None:
    doc = submission_document()
    doc["payload"]["created_at"] = "2026-11-30T12:00:00"
    with pytest.raises(SubmissionError, match="created_at"):
        submission_from_document(doc)


def test_duplicate_keys_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"schema_version": "1.0", "schema_version": "1.0"}')
    with pytest.raises(SubmissionError, match="twice"):
        load_submission(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"\xff\xfe\x00garbage", "not UTF-8"), (b"{not json", "not valid JSON"), (b"[1, 2]", "JSON object")],
)
def test_unreadable_files_get_clear_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(SubmissionError, match=message):
        load_submission(path)


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_submission(tmp_path / "nope.json")


def test_write_is_atomic_and_keeps_the_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.json"
    good = Submission.model_validate(submission_document())
    write_submission(good, path)
    before = path.read_bytes()

    def broken_dumps(*args: object, **kwargs: object) -> str:
        raise OSError("disk full")

    monkeypatch.setattr("os.fsync", broken_dumps)
    with pytest.raises(OSError, match="disk full"):
        write_submission(Submission.model_validate(submission_document(5)), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_stable_formatting_is_indented_utf8_with_newline() -> None:
    doc = copy.deepcopy(submission_document())
    doc["payload"]["contributor"]["name"] = "Zoë Ångström"
    text = dumps(Submission.model_validate(doc))
    assert text.endswith("}\n")
    assert "Zoë Ångström" in text
    assert json.loads(text)["payload"]["contributor"]["name"] == "Zoë Ångström"
