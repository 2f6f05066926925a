"""Parquet files that come out byte-identical for the same rows.

polars writes no timestamp into a file; what could vary is fixed here: one shard per config, zstd at a fixed
level, a fixed row-group size and statistics on. The writer names its polars version, so bytes are identical for
the same software (the MANIFEST records it). Tables are streamed (``sink_parquet``), never held whole.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

SHARD = "train-00000-of-00001.parquet"
ROW_GROUP_ROWS = 131_072
ZSTD_LEVEL = 9


def sink(rows: pl.LazyFrame, path: Path) -> None:
    """Stream ``rows`` to ``path`` with fixed settings (the caller makes it atomic)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows.sink_parquet(
        path, compression="zstd", compression_level=ZSTD_LEVEL, statistics=True, row_group_size=ROW_GROUP_ROWS
    )


def write_parquet(frame: pl.DataFrame, path: Path) -> None:
    """Write a small ``frame`` to ``path`` with the same settings as :func:`sink`."""
    sink(frame.lazy(), path)


def data_file(config: str) -> str:
    """The path of a config's single shard inside the dataset folder."""
    return f"data/{config}/{SHARD}"
