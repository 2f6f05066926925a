"""The three tables of a build, flattened by :mod:`ecocompute.schema.tables`, checked, and sorted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from ecocompute.publish.inputs import Accepted
from ecocompute.schema.tables import (
    measurement_rows,
    measurements_frame,
    submission_row,
    submissions_frame,
    window_rows,
    windows_frame,
)

CONFIGS = ("windows", "measurements", "submissions")
SORT_KEYS = {
    "windows": ("submission_id", "precision", "warmup", "window_index"),
    "measurements": ("submission_id", "precision"),
    "submissions": ("submission_id",),
}


@dataclass(frozen=True)
class Tables:
    """The ``windows``, ``measurements`` and ``submissions`` tables, each checked by its pandera model."""

    windows: pl.DataFrame
    measurements: pl.DataFrame
    submissions: pl.DataFrame

    def by_config(self) -> dict[str, pl.DataFrame]:
        """The tables keyed by their dataset config name."""
        return {"windows": self.windows, "measurements": self.measurements, "submissions": self.submissions}


def build_tables(accepted: Sequence[Accepted]) -> Tables:
    """Flatten every accepted submission into the three tables, sorted by their keys (a total order)."""
    windows, measurements, submissions = [], [], []
    for item in accepted:
        windows += window_rows(item.submission)
        measurements += measurement_rows(item.submission)
        submissions.append(submission_row(item.submission, item.content_sha256))
    return Tables(
        windows=windows_frame(windows).sort(SORT_KEYS["windows"]),
        measurements=measurements_frame(measurements).sort(SORT_KEYS["measurements"]),
        submissions=submissions_frame(submissions).sort(SORT_KEYS["submissions"]),
    )
