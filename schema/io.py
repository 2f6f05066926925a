"""Reading and writing submission files: strict JSON in, stable JSON out, atomic writes."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ecocompute.schema.errors import SubmissionError, UnknownSchemaVersionError, UsageError
from ecocompute.schema.models import SCHEMA_VERSION, Submission

MAX_FILE_BYTES = 5 * 1024 * 1024
KNOWN_VERSIONS = (SCHEMA_VERSION,)


def _reject_constant(name: str) -> Any:
    raise SubmissionError(f"JSON holds {name}, which is not a number: write a finite value or null")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise SubmissionError(f"JSON object has the key {key!r} twice: keep one")
        result[key] = value
    return result


def parse_json(data: bytes) -> Any:
    """Parse strict JSON: UTF-8, no NaN/Infinity, no duplicate keys. Raise SubmissionError otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError(f"not UTF-8 text (byte {exc.start}): a submission is a UTF-8 JSON file") from None
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise SubmissionError("JSON is nested too deeply to read") from None


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """Read a file of at most ``limit`` bytes; raise UsageError naming the problem otherwise."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > limit:
            raise SubmissionError(f"{p} is {size} bytes, over the {limit}-byte cap for a submission")
        return p.read_bytes()
    except IsADirectoryError:
        raise UsageError(f"{p} is a directory, not a submission file") from None
    except FileNotFoundError:
        raise UsageError(f"{p} does not exist") from None
    except OSError as exc:
        raise UsageError(f"cannot read {p}: {exc.strerror}") from None


def format_validation_error(exc: ValidationError, limit: int = 8) -> str:
    """Turn pydantic's errors into one readable line per problem, naming each field path."""
    lines = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(part) for part in err["loc"]) or "(document)"
        lines.append(f"{where}: {err['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        lines.append(f"... and {more} more")
    return "; ".join(lines)


def check_schema_version(document: Any) -> None:
    """Raise a clear error unless ``document`` declares a schema version this release reads."""
    if not isinstance(document, dict):
        raise SubmissionError(f"a submission is a JSON object, not {type(document).__name__}")
    version = document.get("schema_version")
    if version is None:
        raise SubmissionError('schema_version is missing: a submission starts with "schema_version": "1.0"')
    if version not in KNOWN_VERSIONS:
        known = ", ".join(KNOWN_VERSIONS)
        raise UnknownSchemaVersionError(
            f"schema_version {version!r} is not one this ecocompute reads ({known}): upgrade ecocompute"
        )


def submission_from_document(document: Any) -> Submission:
    """Validate a parsed JSON document into a Submission, or raise SubmissionError.

    Validation is strict (no "1" for 1, no 1 for true), as the committed JSON Schema is.
    """
    check_schema_version(document)
    try:
        text = json.dumps(document, allow_nan=False)
    except ValueError:  # a non-finite float: let the lax validator name the field
        text = None
    try:
        if text is None:
            Submission.model_validate(document)
            raise SubmissionError("document holds a value that is not valid JSON")
        return Submission.model_validate_json(text, strict=True)
    except ValidationError as exc:
        raise SubmissionError(format_validation_error(exc)) from None


def load_document(path: str | os.PathLike[str]) -> Any:
    """Read and parse a submission file without validating it against the models."""
    return parse_json(read_bytes(path))


def load_submission(path: str | os.PathLike[str]) -> Submission:
    """Read, parse and validate a submission file."""
    return submission_from_document(load_document(path))


def dumps(submission: Submission) -> str:
    """The stable text form of a submission: what ``to_file`` writes and the signature covers."""
    document = submission.model_dump(mode="json", exclude_none=False)
    if document.get("signature") is None:
        document.pop("signature", None)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename; see :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, so no partial file replaces a good one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_submission(submission: Submission, path: str | os.PathLike[str]) -> None:
    """Write a submission atomically with stable formatting."""
    write_text_atomic(path, dumps(submission))
