"""The submission contract: models, the one derivation, canonical JSON and signatures, table schemas.

Imports nothing heavy (no torch): every stage depends on it.
"""

from typing import TYPE_CHECKING, Any

from ecocompute.schema.derive import (
    Derived,
    derive,
    integral_diff_pct,
    mean_std,
    static_share_pct,
    window_cpu_per_wall,
    window_j_per_token,
    window_power_w,
    window_s_per_token,
    window_tokens_per_s,
)
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
    Method,
    Payload,
    Precision,
    Stack,
    Submission,
    Window,
)

if TYPE_CHECKING:
    from ecocompute.schema.tables import measurement_rows, measurements_frame, window_rows, windows_frame

TABLE_EXPORTS = ("measurement_rows", "measurements_frame", "window_rows", "windows_frame")
"""The table row builders and frames, imported on first use (they need pandera and polars)."""

__all__ = [
    "NAMESPACE",
    "SCHEMA_VERSION",
    "DerivationError",
    "Derived",
    "EcocomputeError",
    "Idle",
    "Measurement",
    "Method",
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
    "integral_diff_pct",
    "load_submission",
    "mean_std",
    "measurement_rows",
    "measurements_frame",
    "static_share_pct",
    "window_cpu_per_wall",
    "window_j_per_token",
    "window_power_w",
    "window_rows",
    "window_s_per_token",
    "window_tokens_per_s",
    "windows_frame",
    "write_submission",
]


def __getattr__(name: str) -> Any:
    """The table builders on first use, so importing the contract needs no pandera."""
    if name in TABLE_EXPORTS:
        from ecocompute.schema import tables

        value = getattr(tables, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ecocompute.schema' has no attribute {name!r}")
