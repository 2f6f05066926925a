"""Checks on a file's raw bytes, run before anything large is parsed, and the strict JSON parse.

Every function here is pure: bytes or text in, findings (and a document) out.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ecocompute.validate.findings import Finding, finding

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 32

_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_TOKENS = re.compile(rb'["\\\[\]{}]')
_BOM = b"\xef\xbb\xbf"


class _DuplicateKeyError(ValueError):
    pass


class _ConstantError(ValueError):
    pass


def check_size(size: int, limit: int = MAX_FILE_BYTES) -> list[Finding]:
    """A submission is a non-empty file of at most ``limit`` bytes."""
    if size == 0:
        return [finding("E-SIZE", "", "the file is empty: a submission is a JSON object")]
    if size > limit:
        return [finding("E-SIZE", "", f"the file is {size} bytes, over the {limit}-byte cap for a submission")]
    return []


def check_binary(data: bytes) -> list[Finding]:
    """Reject control bytes (NUL and friends) that no JSON text contains outside escapes."""
    match = _CONTROL.search(data)
    if match is None:
        return []
    return [
        finding("E-BINARY", "", f"byte {match.start()} is 0x{data[match.start()]:02x}: this is not a JSON text file")
    ]


def check_encoding(data: bytes) -> list[Finding]:
    """The file must be UTF-8 without a byte-order mark."""
    if data.startswith(_BOM):
        return [finding("E-ENCODING", "", "the file starts with a UTF-8 byte-order mark: save it without one")]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [finding("E-ENCODING", "", f"not UTF-8 text (byte {exc.start}): a submission is a UTF-8 JSON file")]
    return []


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


def check_nesting(data: bytes, limit: int = MAX_DEPTH) -> list[Finding]:
    """Reject JSON nested more than ``limit`` levels deep, before a parser recurses into it."""
    depth = json_depth(data, limit)
    if depth > limit:
        return [finding("E-NESTING", "", f"JSON is nested more than {limit} levels deep; a submission needs ~6")]
    return []


def _reject_constant(name: str) -> Any:
    raise _ConstantError(name)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _ConstantError(text[:40])
    return value


def parse_document(data: bytes) -> tuple[Any, list[Finding]]:
    """Parse strict JSON: no NaN/Infinity (nor numbers that overflow to it), no duplicate keys.

    Returns the document, or None and the findings saying why not. Run the byte checks first.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, check_encoding(data)
    try:
        document = json.loads(text, parse_constant=_reject_constant, parse_float=_parse_float, object_pairs_hook=_pairs)
    except _ConstantError as exc:
        return None, [finding("E-NAN", "", f"JSON holds {exc}, which is not a finite number: write a finite value")]
    except _DuplicateKeyError as exc:
        key = str(exc)[:80]
        return None, [finding("E-DUPKEY", "", f"a JSON object has the key {key!r} twice: keep one")]
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        return None, [finding("E-JSON", "", f"not valid JSON: {exc.msg} at {where}")]
    except (ValueError, RecursionError) as exc:  # e.g. an integer longer than Python's 4300-digit limit
        return None, [finding("E-JSON", "", f"not valid JSON: {str(exc)[:120]}")]
    return document, []


def check_bytes(data: bytes) -> tuple[Any, list[Finding]]:
    """All raw-byte checks then the parse; stops at the first stage that fails."""
    for check in (check_binary, check_encoding, check_nesting):
        found = check(data)
        if found:
            return None, found
    return parse_document(data)
