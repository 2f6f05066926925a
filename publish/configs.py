"""The six configs of a build: the plain ones (rows that pass the CV gate) and their ``_all`` twins.

``windows``, ``measurements`` and ``submissions`` hold the rows that pass the gate; ``windows_all``,
``measurements_all`` and ``submissions_all`` every row the validator accepts but for its spread, each marked
``passes_cv_gate``.

The rows come from the build cache (:mod:`.cache`), are sorted by their keys (a total order) and streamed to
parquet (:func:`ecocompute.publish.parquet.sink`); nothing holds a whole table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ecocompute.analysis.defaults import ALL_SUFFIX, CONFIGS
from ecocompute.publish.cache import GATE, RowCache
from ecocompute.publish.parquet import data_file, sink

SORT_KEYS = {
    "windows": ("submission_id", "precision", "warmup", "window_index"),
    "measurements": ("submission_id", "precision"),
    "submissions": ("submission_id",),
}


@dataclass(frozen=True)
class Tables:
    """The configs a build wrote, read back from its folder (lazily for the windows)."""

    folder: Path

    def scan(self, config: str) -> pl.LazyFrame:
        """One config of the build, lazily."""
        return pl.scan_parquet(self.folder / data_file(config))

    def read(self, config: str) -> pl.DataFrame:
        """One config of the build, whole (the measurements and submissions are small beside the windows)."""
        return pl.read_parquet(self.folder / data_file(config))

    def height(self, config: str) -> int:
        """Rows of one config."""
        return int(self.scan(config).select(pl.len()).collect().item())


def write_configs(cache: RowCache, keys: Sequence[str], folder: Path) -> Tables:
    """Stream the rows of ``keys`` into the six configs under ``folder``; return them."""
    for table in CONFIGS:
        rows = cache.scan(table, keys).sort(SORT_KEYS[table])
        sink(rows.drop(GATE), folder / data_file(table + ALL_SUFFIX))
        sink(rows.filter(pl.col(GATE)).drop(GATE), folder / data_file(table))
    return Tables(folder)
