"""Checks of a parsed submission's contract and identity: schema, signature, signer, path, structure.

Each check is a small pure function returning a list of findings; the window-level and plausibility
checks live in :mod:`ecocompute.validate.windows`. :mod:`ecocompute.validate.core` runs them all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from ecocompute.schema.errors import SignatureError
from ecocompute.schema.io import KNOWN_VERSIONS, SchemaError, submission_from_json
from ecocompute.schema.models import Measurement, Payload, Submission
from ecocompute.schema.signing import AllowedSigners, Sha1SignatureError, UnknownSignerError, verify_document
from ecocompute.validate.findings import Finding, finding
from ecocompute.validate.paths import submission_relpath

MAX_SCHEMA_FINDINGS = 20
PLACEHOLDERS = frozenset({"", "unknown", "n/a", "na", "none", "null", "?", "-"})


def loc_path(loc: Sequence[int | str]) -> str:
    """A pydantic location tuple as a dotted path with list indices: ``payload.measurements[0].windows``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def check_version(document: Any) -> list[Finding]:
    """The document is a JSON object declaring a schema version this release reads."""
    if not isinstance(document, dict):
        return [finding("E-VERSION", "", f"a submission is a JSON object, not a JSON {type(document).__name__}")]
    version = document.get("schema_version")
    if version is None:
        return [finding("E-VERSION", "schema_version", 'missing: a submission starts with "schema_version": "1.0"')]
    if version not in KNOWN_VERSIONS:
        known = ", ".join(KNOWN_VERSIONS)
        return [
            finding("E-VERSION", "schema_version", f"{str(version)[:40]!r} is not one this release reads ({known})")
        ]
    return []


def check_schema(data: bytes) -> tuple[Submission | None, list[Finding]]:
    """Validate the file's JSON against the strict models, as ``verify`` and the JSON Schema do.

    No ``"3328"`` for an integer, no ``"yes"`` or 1 for a boolean, no number for a date. One finding per
    problem (at most 20).
    """
    try:
        return submission_from_json(data), []
    except SchemaError as exc:
        errors = exc.errors
        found = [finding("E-SCHEMA", loc_path(err["loc"]), err["msg"]) for err in errors[:MAX_SCHEMA_FINDINGS]]
        if len(errors) > MAX_SCHEMA_FINDINGS:
            found.append(finding("E-SCHEMA", "", f"... and {len(errors) - MAX_SCHEMA_FINDINGS} more schema errors"))
        return None, found


def check_signature(
    document: dict[str, Any], submission: Submission, allowed: AllowedSigners, now: datetime | None = None
) -> list[Finding]:
    """The signature exists, its signer has a usable key in allowed_signers, and it verifies the content.

    A line is usable as ``ssh-keygen -Y verify`` would use it at ``now``: its namespaces and validity window.
    """
    signature = submission.signature
    if signature is None:
        return [finding("E-UNSIGNED", "signature", "not signed: run `ecocompute sign FILE --key KEY --signer LOGIN`")]
    if signature.signer not in allowed and not allowed.problems_for(signature.signer):
        return [
            finding(
                "E-SIGNER-UNKNOWN",
                "signature.signer",
                f"{signature.signer!r} has no key in allowed_signers: add a line for the key you signed with "
                "(it must be one of the keys GitHub publishes for you at https://github.com/<login>.keys)",
            )
        ]
    try:
        verify_document(document, allowed, now=now)
    except UnknownSignerError as exc:
        return [finding("E-SIGNER-UNKNOWN", "signature.signer", str(exc))]
    except Sha1SignatureError as exc:
        return [finding("E-SIGNATURE-SHA1", "signature.armored", str(exc))]
    except SignatureError as exc:
        return [finding("E-SIGNATURE", "signature", f"{exc}; re-sign the file after your last edit")]
    return []


def check_signer(submission: Submission, pr_author: str | None) -> list[Finding]:
    """The signer is the contributor and, when given, the pull request's author (case-insensitive)."""
    signature = submission.signature
    if signature is None:
        return []
    found = []
    contributor = submission.payload.contributor.github
    if signature.signer.lower() != contributor.lower():
        found.append(
            finding(
                "E-SIGNER",
                "signature.signer",
                f"signed by {signature.signer!r} but the contributor is {contributor!r}: contributors sign their own",
            )
        )
    if pr_author is not None and signature.signer.lower() != pr_author.lower():
        found.append(
            finding(
                "E-PR-AUTHOR",
                "signature.signer",
                f"signed by {signature.signer!r} but the pull request is by {pr_author!r}: "
                "open the pull request from the signer's account",
            )
        )
    return found


def check_path(relpath: PurePosixPath, submission: Submission) -> list[Finding]:
    """``relpath`` (relative to the submissions folder) is the one the content implies.

    The login part is compared case-insensitively, as GitHub compares logins.
    """
    expected = submission_relpath(submission)
    parts, want = relpath.parts, expected.parts
    same = len(parts) == len(want) and parts[0].lower() == want[0].lower() and parts[1:] == want[1:]
    if same:
        return []
    return [finding("E-PATH", "", f"the file is at {relpath} but its content puts it at {expected}: move it there")]


def check_measurement_state(measurement: Measurement, index: int) -> list[Finding]:
    """A measurement either has windows and no error, or an error and no windows."""
    where = f"payload.measurements[{index}]"
    if measurement.error is not None and measurement.windows:
        return [finding("E-MEASUREMENT", where, "has both an error and windows: a failed measurement has no windows")]
    if measurement.error is None and not measurement.windows:
        return [finding("E-MEASUREMENT", where, "has no windows and no error: say why it failed or measure it")]
    return []


def check_repeated_precisions(measurements: Sequence[Measurement]) -> list[Finding]:
    """Each precision appears once in a submission."""
    counts = Counter(m.precision.value for m in measurements)
    repeated = sorted(name for name, count in counts.items() if count > 1)
    if not repeated:
        return []
    return [finding("E-PRECISION-REPEATED", "payload.measurements", f"precision {', '.join(repeated)} measured twice")]


def check_quantization(measurement: Measurement, index: int) -> list[Finding]:
    """A quantized precision records its quantization config; fp16/bf16 record none."""
    where = f"payload.measurements[{index}].quantization"
    if measurement.precision.is_baseline and measurement.quantization:
        return [finding("E-QUANTIZATION", where, f"{measurement.precision.value} is unquantized: set it to null")]
    if not measurement.precision.is_baseline and not measurement.quantization:
        return [
            finding(
                "E-QUANTIZATION",
                where,
                f"{measurement.precision.value} needs its full quantization config (the BitsAndBytesConfig used)",
            )
        ]
    return []


def check_baseline(measurements: Sequence[Measurement]) -> list[Finding]:
    """Whenever a quantized precision is present, an fp16 or bf16 measurement is too (failed ones count)."""
    quantized = [m.precision.value for m in measurements if not m.precision.is_baseline]
    if not quantized or any(m.precision.is_baseline for m in measurements):
        return []
    return [
        finding(
            "E-BASELINE",
            "payload.measurements",
            f"{', '.join(quantized)} without an fp16 or bf16 baseline of the same model: measure one "
            "(if it does not fit in memory, record it with its error)",
        )
    ]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in PLACEHOLDERS)


def check_fingerprint(payload: Payload) -> list[Finding]:
    """The versions and identifiers a reader needs to reproduce the stack are all present."""
    hw, sw = payload.hardware, payload.software
    fields: dict[str, object] = {
        "hardware.driver_version": hw.driver_version,
        "hardware.vbios_version": hw.vbios_version,
        "hardware.cpu_model": hw.cpu_model,
        "hardware.host_os": hw.host_os,
        "software.python": sw.python,
        "software.torch": sw.torch,
        "software.cuda_runtime": sw.cuda_runtime,
        "software.transformers": sw.transformers,
        "software.nvml": sw.nvml,
    }
    if any(m.precision.uses_bitsandbytes for m in payload.measurements):  # not llama.cpp's nor torchao's
        fields["software.bitsandbytes"] = sw.bitsandbytes
    return [
        finding("E-FINGERPRINT", f"payload.{name}", f"{name} is missing ({value!r}): record the real version")
        for name, value in fields.items()
        if _missing(value)
    ]


def check_example(payload: Payload) -> list[Finding]:
    """Example data is reported, so nobody mistakes it for a measurement."""
    if not payload.example:
        return []
    return [
        finding(
            "W-EXAMPLE",
            "payload.example",
            "marked as an example: it is not a measurement, is never published, and its timeline and stopping "
            "rule are not checked",
        )
    ]
