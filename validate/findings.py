"""Findings: what the validator reports, each with a stable, documented code.

A code never changes meaning once released; docs/validator.md documents every code in
:data:`CODES`, and a test keeps the two in agreement.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.StrEnum):
    """An error rejects the file; a warning is reported and does not."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    """One problem found in one file.

    ``path`` is where in the document the problem is, as a dotted path with list indices
    (``payload.measurements[1].windows[0].duration_s``); an empty string means the file as a whole.
    """

    code: str
    path: str
    message: str
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        """True when this finding rejects the file."""
        return self.severity is Severity.ERROR


# code -> one-line summary. Codes starting with "E-" are errors, "W-" warnings.
CODES: dict[str, str] = {
    # the file itself, before any parsing
    "E-READ": "the file or folder cannot be read (missing, unreadable, a folder where a file should be)",
    "E-SPECIAL": "a FIFO, socket or device: skipped, never opened",
    "E-SYMLINK": "the path is, or passes through, a symbolic link",
    "E-OUTSIDE": "the path lies outside the submissions folder",
    "E-SIZE": "the file is empty or larger than the 5 MB cap",
    "E-NESTING": "JSON nested deeper than the cap (32 levels)",
    "E-BINARY": "the file holds NUL or other control bytes: it is not a text file",
    "E-ENCODING": "the file is not UTF-8 text (or starts with a byte-order mark)",
    "E-JSON": "the file is not valid JSON",
    "E-NAN": "the JSON holds NaN or Infinity, or a number too large for a double",
    "E-DUPKEY": "a JSON object has the same key twice",
    # the contract
    "E-VERSION": "schema_version is missing or not one this release reads",
    "E-SCHEMA": "the document does not follow the schema (a field is missing, extra or of the wrong type)",
    "E-UNSIGNED": "the submission carries no signature",
    "E-SIGNER-UNKNOWN": "the signer has no key in the allowed_signers file",
    "E-SIGNATURE": "the signature does not verify against the signer's keys and the content",
    "E-SIGNATURE-SHA1": "an RSA signature made with SHA-1 (ssh-rsa), which OpenSSH refuses",
    "E-SIGNER": "the signer is not the contributor named in the payload",
    "E-PR-AUTHOR": "the signer is not the author of the pull request",
    "E-PATH": "the file is not at submissions/<login>/<gpu-slug>/<submission-id>.json",
    "E-DUPLICATE-ID": "another file already has this submission_id",
    "E-DUPLICATE-PAYLOAD": "a copy: another file already holds one of its measured windows",
    # the measurement
    "E-MEASUREMENT": "a measurement has windows and an error, or neither",
    "E-PRECISION-REPEATED": "two measurements of one submission have the same precision",
    "E-QUANTIZATION": "a quantized precision without a quantization config, or a baseline with one",
    "E-BASELINE": "a quantized precision is present without an fp16 or bf16 measurement",
    "E-WINDOW-COUNT": "fewer windows than the floor (3) or method.min_windows, more than max_windows, or "
    "interleaved precisions with different counts",
    "E-STOPPING-RULE": "the window count is not where the recorded stopping rule stops",
    "E-WINDOW-GAP": "a gap in the timeline where a measured window is missing",
    "E-WINDOW-OVERLAP": "two windows of the submission overlap in time",
    "E-WINDOW-REPEATED": "two windows hold the same energy, duration and tokens",
    "E-WINDOW-SHORT": "a window is shorter than method.window_min_s",
    "E-WINDOW-INDEX": "window indices are not 0, 1, 2, ... (warm-ups in their own list)",
    "E-CV": "the CV of J/token is above the gate (2% by default): accepted into the all tier only",
    "E-DERIVE": "no J/token or CV can be derived from a measurement's windows",
    "E-POWER": "a window's average power is below the floor or above the power limit",
    "E-IDLE-ABOVE-LOAD": "a window draws less than the idle power (negative dynamic energy)",
    "E-BANDWIDTH": "tokens/s above what the GPU's memory bandwidth allows for the model at that batch",
    "E-INTEGRAL": "counter energy and integrated-power energy differ by more than 5%",
    "E-TOKENS": "a window's tokens differ from batch_size x new_tokens x generate_calls",
    "E-THROUGHPUT": "a window generated more tokens than its duration allows",
    "E-TEMPERATURE": "a temperature outside 0..110 C",
    "E-CLOCK": "a mean SM clock outside 0..the GPU's maximum",
    "E-TIME-ORDER": "window start times are not strictly increasing",
    "E-TIME-RANGE": "a timestamp in the future, before 2020, or a window after created_at",
    "E-IDLE": "idle power below the floor or above the power limit",
    "E-HARDWARE": "gpu_count is not 1, or a power limit or the memory is outside the named GPU's range",
    "E-GPU-UNKNOWN": "the GPU is not in validate/data/gpus.csv: add its bounds in the same pull request",
    "E-SESSION-SPAN": "the session spans more than 72 h from its first window to created_at",
    "E-PARAMS": "params_total is not the named architecture's parameter count",
    "E-FINGERPRINT": "a version or identifier of the software or hardware stack is missing",
    # windows measured without an energy counter (validate/counterless.py, docs/counterless.md)
    "E-SAMPLING": "power_integral: fewer than 5 power readings per second of window, or a method rate below 5 Hz",
    "E-COVERAGE": "power_integral: the readings start or end over 0.25 s from the window's edges, or leave a gap "
    "over 0.5 s",
    "E-INTEGRAL-RECOMPUTED": "power_integral: energy_j is not the integral of the window's power_trace (1%), "
    "or differs from energy_j_power_integrated",
    "E-COUNTERLESS-RECORD": "power_integral: a window has neither power_trace nor power_samples and its coverage",
    "E-INTERNAL": "a check failed unexpectedly (a validator bug): the file stays rejected until it is fixed",
    # warnings
    "W-GPU-UNKNOWN": "an example names a GPU the table does not know: generic bounds were used",
    "W-ARCH-UNKNOWN": "the architecture is not in validate/data/architectures.csv: params are not checked",
    "W-SIGNERS-LINE": "an allowed_signers line the verifier cannot use (the others still count)",
    "W-POWER-LIMIT": "the power limit is not the GPU's default",
    "W-INTEGRAL": "counter and integrated-power energy differ by more than 2% (below the 5% gate)",
    "W-WARMUP": "fewer warm-up windows than method.warmup_windows",
    "W-THROTTLE": "a window reports throttle reasons",
    "W-SENSOR-MISSING": "a sensor or power limit the GPU does not report is null (schema 1.2): the check that needs "
    "it is skipped",
    "W-SHARED": "other processes used the GPU during a window",
    "W-EXAMPLE": "the submission is marked as an example, not a measurement",
}


# Error codes that keep a file out of the gate-passing tier but not out of the dataset: a file whose only
# errors are these is accepted into the *all* tier (exit 0, ``FileResult.passes_cv_gate`` False).
GATE_CODES = frozenset({"E-CV"})


def severity_of(code: str) -> Severity:
    """The severity a code carries: errors start with ``E-``, warnings with ``W-``."""
    return Severity.WARNING if code.startswith("W-") else Severity.ERROR


def finding(code: str, path: str, message: str) -> Finding:
    """Build a finding for a registered code, with the code's severity."""
    if code not in CODES:
        raise KeyError(f"unregistered finding code {code!r}: add it to CODES and docs/validator.md")
    return Finding(code=code, path=path, message=message, severity=severity_of(code))
