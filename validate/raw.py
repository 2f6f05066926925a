"""The file's bytes to a document: :func:`ecocompute.schema.io.parse_json`, its typed errors as findings.

There is one JSON reader (in :mod:`ecocompute.schema.io`), used by every command; this module only maps
each of its error types to the finding code that names it.
"""

from __future__ import annotations

from typing import Any

from ecocompute.schema import io
from ecocompute.validate.findings import Finding, finding

MAX_FILE_BYTES = io.MAX_FILE_BYTES
MAX_DEPTH = io.MAX_DEPTH
json_depth = io.json_depth

CODE_OF_ERROR: dict[type[io.JsonReadError], str] = {
    io.JsonSizeError: "E-SIZE",
    io.JsonBinaryError: "E-BINARY",
    io.JsonEncodingError: "E-ENCODING",
    io.JsonNestingError: "E-NESTING",
    io.JsonSyntaxError: "E-JSON",
    io.JsonConstantError: "E-NAN",
    io.JsonDuplicateKeyError: "E-DUPKEY",
}


def read_error_finding(exc: io.JsonReadError) -> Finding:
    """The finding of one reader error (E-JSON for a type this table does not know)."""
    code = next((c for kind, c in CODE_OF_ERROR.items() if isinstance(exc, kind)), "E-JSON")
    return finding(code, "", str(exc))


def check_size(size: int, limit: int = MAX_FILE_BYTES) -> list[Finding]:
    """A submission is a non-empty file of at most ``limit`` bytes."""
    try:
        io.check_size(size, limit)
    except io.JsonSizeError as exc:
        return [read_error_finding(exc)]
    return []


def check_bytes(data: bytes) -> tuple[Any, list[Finding]]:
    """Parse ``data`` with the one strict reader: (document, []) or (None, [the finding saying why not]).

    Numbers are parsed for the signature's canonical form (``es_numbers``): integral floats as ints, the values
    unchanged.
    """
    try:
        return io.parse_json(data, es_numbers=True), []
    except io.JsonReadError as exc:
        return None, [read_error_finding(exc)]
