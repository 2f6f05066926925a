"""The submission contract: models, the one derivation, canonical JSON and signatures, table schemas.

Imports nothing heavy (no torch): every stage depends on it.
"""

from ecocompute.schema.derive import Derived, derive
from ecocompute.schema.errors import (
    DerivationError,
    EcocomputeError,
    SignatureError,
    SubmissionError,
    UnknownSchemaVersionError,
    UsageError,
)
from ecocompute.schema.io import load_submission, write_submission
from ecocompute.schema.models import (
    NAMESPACE,
    SCHEMA_VERSION,
    Idle,
    Measurement,
    Payload,
    Precision,
    Stack,
    Submission,
    Window,
)

__all__ = [
    "NAMESPACE",
    "SCHEMA_VERSION",
    "DerivationError",
    "Derived",
    "EcocomputeError",
    "Idle",
    "Measurement",
    "Payload",
    "Precision",
    "SignatureError",
    "Stack",
    "Submission",
    "SubmissionError",
    "UnknownSchemaVersionError",
    "UsageError",
    "Window",
    "derive",
    "load_submission",
    "write_submission",
]
