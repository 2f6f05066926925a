"""Real files of every past schema version stay readable, verify, and keep their bytes.

``tests/data/historic-1.0/`` holds signed 1.0 files copied from ``submissions/`` (and from the campaign's runs),
with the allowed_signers lines that signed them: one written before any field 1.1 names, one with some, one with
all of them and the ``compiled-all`` stack. Never edit them; add a folder per new version instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ecocompute.schema.export import schema_file
from ecocompute.schema.io import dumps, load_document, load_submission
from ecocompute.schema.models import SCHEMA_VERSIONS, Stack
from ecocompute.schema.signing import parse_allowed_signers, verify_document
from ecocompute.schema.tables import measurement_rows, measurements_frame, window_rows, windows_frame

DATA = Path(__file__).resolve().parents[1] / "data"
HISTORIC = {version: sorted((DATA / f"historic-{version}").glob("*.json")) for version in ("1.0",)}
FILES = [(version, path) for version, paths in HISTORIC.items() for path in paths]
SINCE_1_1 = ("idle_settle_s", "host_others_busy_cpus", "compiled")


def _fields_of_1_1(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return {name for name in SINCE_1_1 if f'"{name}"' in text}


NEVER_PUBLISHED = {"1.1"}
"""Versions no committed file was written as: the collector wrote 1.1 only for the hours before 1.2 was cut."""


def test_every_past_version_has_files_from_before_and_after_what_1_1_names() -> None:
    from ecocompute.schema.models import SCHEMA_VERSION

    assert set(HISTORIC) == set(SCHEMA_VERSIONS) - NEVER_PUBLISHED - {SCHEMA_VERSION}
    seen = [_fields_of_1_1(path) for path in HISTORIC["1.0"]]
    assert set() in seen and set(SINCE_1_1) in seen


@pytest.mark.parametrize(("version", "path"), FILES, ids=[p.name for _, p in FILES])
def test_historic_file_reads_verifies_and_round_trips(version: str, path: Path) -> None:
    submission = load_submission(path)
    assert submission.schema_version == version
    allowed = parse_allowed_signers(path.parent / "allowed_signers")
    assert verify_document(load_document(path), allowed).signer == submission.payload.contributor.github
    original = load_document(path)
    if all("compiled" in m for m in original["payload"]["measurements"]):
        assert dumps(submission) == path.read_text(encoding="utf-8")
    for m in original["payload"]["measurements"]:  # compiled, which 1.1 names, is written even when null
        m.setdefault("compiled", None)
    assert json.loads(dumps(submission)) == original  # the other fields 1.1 names stay out when null


@pytest.mark.parametrize(("version", "path"), FILES, ids=[p.name for _, p in FILES])
def test_historic_file_follows_its_versions_json_schema_and_makes_table_rows(version: str, path: Path) -> None:
    schema = json.loads(schema_file(version).read_text(encoding="utf-8"))
    document = load_document(path)
    assert jsonschema.Draft202012Validator(schema).is_valid(document)
    submission = load_submission(path)
    windows = windows_frame(window_rows(submission))
    assert windows.height == sum(len(m.windows) + len(m.warmup) for m in submission.payload.measurements)
    assert measurements_frame(measurement_rows(submission)).height == len(submission.payload.measurements)


def test_the_compiled_all_stack_reads_from_a_1_0_file() -> None:
    stacks = {load_submission(path).payload.workload.stack for path in HISTORIC["1.0"]}
    assert Stack.COMPILED_ALL in stacks


def test_the_reader_knows_the_written_version_and_every_historic_one() -> None:
    """Writing a version the reader does not know, or dropping one it knew, would strand files."""
    from ecocompute.schema.io import KNOWN_VERSIONS
    from ecocompute.schema.models import SCHEMA_VERSION

    assert {SCHEMA_VERSION, *HISTORIC} <= set(KNOWN_VERSIONS) <= set(SCHEMA_VERSIONS)
