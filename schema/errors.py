"""The project's own exceptions: every one carries a message a person can act on."""

from __future__ import annotations


class EcocomputeError(Exception):
    """Base of every error the CLI turns into one red line and an exit code."""

    exit_code = 1


class UsageError(EcocomputeError):
    """The command was called wrongly or a file could not be read (exit code 2)."""

    exit_code = 2


class SubmissionError(EcocomputeError):
    """A submission could not be parsed or does not follow the contract."""


class UnknownSchemaVersionError(SubmissionError):
    """A submission declares a schema version this release cannot read."""


class DerivationError(SubmissionError):
    """Windows from which no figure can be derived (zero duration, no tokens, no windows)."""


class SignatureError(EcocomputeError):
    """A signature is missing, malformed, made for another namespace or by an unknown key."""
