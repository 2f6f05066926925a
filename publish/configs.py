"""The six configs of a build: the plain ones (rows that pass the CV gate) and their ``_all`` twins.

``windows``, ``measurements`` and ``submissions`` hold the rows that pass the gate; ``windows_all``,
``measurements_all`` and ``submissions_all`` every row the validator accepts but for its spread, each marked
``passes_cv_gate``.

The rows come from the build cache (:mod:`.cache`), are sorted by their keys (a total order) part by part and
streamed to parquet (:func:`ecocompute.publish.parquet.sink`); nothing holds a whole table.
"""

from __future__ import annotations

import itertools
import tempfile
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


# rows sorted in memory at once: a table is cut by submission id into parts of about this many rows, each part
# sorted alone and spilled to a temporary file, and the parts streamed in order into the config
PART_ROWS = 200_000


def _parts(rows: pl.LazyFrame) -> list[pl.Expr]:
    """Filters that cut ``rows`` into ranges of submission id of about PART_ROWS rows each, in id order.

    The sort keys begin with ``submission_id``, so the parts, each sorted and put one after another, are the
    table sorted whole. Nulls sort first, so they go with the first part.
    """
    sizes = rows.group_by("submission_id").len().sort("submission_id").collect()
    bounds, total = [], 0
    for sid, n in sizes.iter_rows():
        if sid is not None and total >= PART_ROWS:
            bounds.append(sid)
            total = 0
        total += n
    sid = pl.col("submission_id")
    if not bounds:
        return [pl.lit(True)]
    cuts = [sid.is_null() | (sid < bounds[0])]
    cuts += [(sid >= low) & (sid < high) for low, high in itertools.pairwise(bounds)]
    return [*cuts, sid >= bounds[-1]]


def write_configs(cache: RowCache, keys: Sequence[str], folder: Path) -> Tables:
    """Stream the rows of ``keys`` into the six configs under ``folder``; return them.

    Each table is sorted part by part (:func:`_parts`) into temporary files beside ``folder``, so no step holds
    more than about PART_ROWS rows whatever the number of submissions.
    """
    for table in CONFIGS:
        rows = cache.scan(table, keys)
        with tempfile.TemporaryDirectory(prefix=".sort-", dir=folder.parent) as tmp:
            parts = []
            for i, cut in enumerate(_parts(rows)):
                parts.append(Path(tmp) / f"{i:05d}.parquet")
                rows.filter(cut).sort(SORT_KEYS[table]).sink_parquet(parts[-1], compression="lz4")
            sorted_rows = pl.concat([pl.scan_parquet(part) for part in parts], how="vertical")
            sink(sorted_rows.drop(GATE), folder / data_file(table + ALL_SUFFIX))
            sink(sorted_rows.filter(pl.col(GATE)).drop(GATE), folder / data_file(table))
    return Tables(folder)
