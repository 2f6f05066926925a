"""Reading and writing submission files: the one strict JSON reader, stable JSON out, atomic writes.

Every command reads JSON through :func:`parse_json` (``verify``, ``show``, ``validate``, the collector's own
files): UTF-8 without a byte-order mark, no control bytes, nesting at most :data:`MAX_DEPTH` levels, no
NaN/Infinity (nor a number that overflows to one), no duplicate keys. Each way a file can fail is its own
:class:`JsonReadError` subclass, so the validator maps them to finding codes. A parsed submission is
checked against the strict models (:func:`submission_from_json`): no ``"3328"`` for an integer, no ``"yes"``
for a boolean, no number for a date, as the committed JSON Schema says.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ecocompute.schema.errors import SubmissionError, UnknownSchemaVersionError, UsageError
from ecocompute.schema.models import SCHEMA_VERSIONS, Submission

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 32
KNOWN_VERSIONS = SCHEMA_VERSIONS

_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_TOKENS = re.compile(rb'["\\\[\]{}]')
_BOM = b"\xef\xbb\xbf"
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_ALL_BUT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_INNERMOST = re.compile(r"\[\]|\{\}")


class JsonReadError(SubmissionError):
    """The bytes are not a strict JSON document; subclasses say why."""


class JsonSizeError(JsonReadError):
    """The file is empty or over the size cap."""


class JsonBinaryError(JsonReadError):
    """The bytes hold NUL or another control byte: not a text file."""


class JsonEncodingError(JsonReadError):
    """Not UTF-8, or UTF-8 with a byte-order mark."""


class JsonNestingError(JsonReadError):
    """Nested deeper than :data:`MAX_DEPTH`."""


class JsonSyntaxError(JsonReadError):
    """Not valid JSON."""


class JsonConstantError(JsonReadError):
    """NaN, Infinity, or a number too large for a double."""


class JsonDuplicateKeyError(JsonReadError):
    """An object holds the same key twice."""


class SchemaError(SubmissionError):
    """The document does not follow the strict models; ``errors`` holds pydantic's error dicts."""

    def __init__(self, message: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.errors = errors


def check_size(size: int, limit: int = MAX_FILE_BYTES) -> None:
    """Raise JsonSizeError unless ``size`` is between 1 and ``limit`` bytes."""
    if size == 0:
        raise JsonSizeError("the file is empty: a submission is a JSON object")
    if size > limit:
        raise JsonSizeError(f"the file is {size} bytes, over the {limit}-byte cap for a submission")


def json_depth(data: bytes, stop_at: int = MAX_DEPTH) -> int:
    """Deepest bracket nesting of ``data`` outside JSON strings; stops counting once past ``stop_at``.

    Only quotes, backslashes and brackets are visited, so the cost follows their number, not the file size.
    """
    depth = deepest = 0
    in_string = False
    escaped_at = -1
    for match in _TOKENS.finditer(data):
        pos = match.start()
        if pos == escaped_at:
            continue
        char = data[pos]
        if in_string:
            if char == 0x5C:  # backslash: the next byte is escaped
                escaped_at = pos + 1
            elif char == 0x22:
                in_string = False
        elif char == 0x22:
            in_string = True
        elif char in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    return deepest
        elif char in (0x5D, 0x7D):
            depth -= 1
    return deepest


def nesting_exceeds(text: str, limit: int = MAX_DEPTH) -> bool:
    """True when valid JSON ``text`` nests arrays and objects more than ``limit`` levels deep.

    Strings are dropped and everything but brackets deleted (C-speed regular expressions); then each pass
    removes the innermost ``[]``/``{}`` pairs, so ``limit`` passes empty the skeleton of a document no deeper.
    """
    # First with the brackets inside strings left in (bytes.translate, fast): that depth is never below the
    # document's, so when it is within the limit the document is too.
    rough = text.encode("utf-8", "surrogatepass").translate(None, _ALL_BUT_BRACKETS).decode("ascii")
    if not _reduces_within(rough, limit):
        return _exceeds_exactly(text, limit)
    return False


def _reduces_within(skeleton: str, limit: int) -> bool:
    for _ in range(limit):
        skeleton = _INNERMOST.sub("", skeleton)
        if not skeleton:
            return True
    return not skeleton


def _exceeds_exactly(text: str, limit: int) -> bool:
    return not _reduces_within(_NOT_BRACKET.sub("", _STRING.sub("", text)), limit)


def _reject_constant(name: str) -> Any:
    raise JsonConstantError(f"JSON holds {name}, which is not a number: write a finite value")


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JsonConstantError(f"JSON holds {text[:40]}, which is not a number: write a finite value")
    return value


class EsNumbers(dict[str, Any]):
    """A parsed JSON object whose numbers are already as RFC 8785 writes them (see ``parse_json(es_numbers=)``).

    Every float is finite, non-integral and Python writes it as ECMAScript does (1e-4 <= |x| < 1e16); every
    integral float is an int; every int is safe (|x| < 2**53), so RFC 8785 writes it as the float it stands
    for. ``json.dumps(sort_keys=True)`` of it is its canonical form, so
    :func:`ecocompute.schema.signing.canonical_bytes` skips its own pass over the values.
    """


def _es_numbers() -> tuple[Callable[[str], float | int], Callable[[str], int], list[bool]]:
    """``parse_float`` and ``parse_int`` hooks making integral floats ints, and the flag they clear.

    The flag is cleared by a number ECMAScript writes unlike Python or that is not a safe integer: a float
    below 1e-4 or from 1e16, an integral one beyond 2**53 - 1, an int beyond it.
    """
    ready = [True]

    def parse_float(text: str) -> float | int:
        value = float(text)
        if 1e-4 <= abs(value) <= _MAX_SAFE_INT:
            return int(value) if value.is_integer() else value
        if 1e-4 <= abs(value) < 1e16 and not value.is_integer():
            return value
        if value == 0:
            if math.copysign(1.0, value) > 0:
                return 0
            ready[0] = False  # -0.0 stays a float (ECMAScript writes it "0"): the slower path writes it
            return value
        if value in (_INF, _MINUS_INF):
            raise JsonConstantError(f"JSON holds {text[:40]}, which is not a number: write a finite value")
        ready[0] = False
        return value

    def parse_int(text: str) -> int:
        value = int(text)
        if len(text) > 15 and abs(value) > _MAX_SAFE_INT:
            ready[0] = False
        return value

    return parse_float, parse_int, ready


_MAX_SAFE_INT = 2**53 - 1
_INF, _MINUS_INF = float("inf"), float("-inf")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise JsonDuplicateKeyError(f"a JSON object has the key {key[:80]!r} twice: keep one")
            seen.add(key)
    return result


_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 13))
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL_BYTES)


def _decode(data: bytes) -> str:
    if data.startswith(_BOM):
        raise JsonEncodingError("the file starts with a UTF-8 byte-order mark: save it without one")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonEncodingError(f"not UTF-8 text (byte {exc.start}): a submission is a UTF-8 JSON file") from None
    match = _CONTROL.search(data) if data.translate(None, _NOT_CONTROL) else None
    if match is not None:
        byte = data[match.start()]
        raise JsonBinaryError(f"byte {match.start()} is 0x{byte:02x}: this is not a JSON text file")
    return text


def parse_json(data: bytes, max_depth: int = MAX_DEPTH, *, es_numbers: bool = False) -> Any:
    """Parse strict JSON (see the module doc); raise the JsonReadError subclass that says why not.

    ``es_numbers=True`` (the validator, which canonicalizes every document it reads) parses integral floats
    as ints (``100.0`` -> ``100``, the value unchanged) and returns an :class:`EsNumbers` object when every
    number of the document is then written by ``json.dumps`` as RFC 8785 writes it.
    """
    text = _decode(data)
    nesting = JsonNestingError(f"JSON is nested more than {max_depth} levels deep; a submission needs ~6")
    floats, ints, ready = _es_numbers() if es_numbers else (_parse_float, int, [False])
    try:
        document = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=floats,
            parse_int=ints,
            object_pairs_hook=_no_duplicate_keys,
        )
    except RecursionError:
        raise nesting from None
    except json.JSONDecodeError as exc:
        if json_depth(data, max_depth) > max_depth:  # unclosed brackets: say it is the nesting
            raise nesting from None
        raise JsonSyntaxError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # e.g. an integer longer than Python's 4300-digit limit
        if isinstance(exc, JsonReadError):
            raise
        raise JsonSyntaxError(f"not valid JSON: {str(exc)[:120]}") from None
    if nesting_exceeds(text, max_depth):
        raise nesting
    if ready[0] and type(document) is dict:
        return EsNumbers(document)
    return document


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
    return format_errors(exc.errors(include_url=False, include_input=False), limit)


def format_errors(errors: list[Any], limit: int = 8) -> str:
    """One readable line per pydantic error dict, naming each field path."""
    lines = []
    for err in errors[:limit]:
        where = ".".join(str(part) for part in err["loc"]) or "(document)"
        lines.append(f"{where}: {err['msg']}")
    more = len(errors) - limit
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
            f"schema_version {str(version)[:40]!r} is not one this ecocompute reads ({known}): upgrade ecocompute"
        )


def submission_from_json(data: bytes | str) -> Submission:
    """Validate JSON text (already read by :func:`parse_json`) against the strict models; raise SchemaError.

    Strict as the committed JSON Schema is: no "1" for 1, no 1 or "yes" for true, no number for a date.
    """
    try:
        return Submission.model_validate_json(data, strict=True)
    except ValidationError as exc:
        errors: list[dict[str, Any]] = [dict(e) for e in exc.errors(include_url=False, include_input=False)]
        raise SchemaError(format_errors(errors), errors) from None


def submission_from_document(document: Any) -> Submission:
    """Validate a parsed JSON document into a Submission (strictly, as :func:`submission_from_json`)."""
    check_schema_version(document)
    try:
        text = json.dumps(document, allow_nan=False)
    except (ValueError, TypeError):  # NaN, Infinity or a non-JSON type: let the models name the field
        try:
            Submission.model_validate(document)
        except ValidationError as exc:
            errors: list[dict[str, Any]] = [dict(e) for e in exc.errors(include_url=False, include_input=False)]
            raise SchemaError(format_errors(errors), errors) from None
        raise SubmissionError("document holds a value that is not valid JSON (NaN, Infinity)") from None
    return submission_from_json(text)


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
