"""Parquet files that come out byte-identical for the same rows.

pyarrow writes no timestamp into a file; what could vary is fixed here: one shard per table, zstd at a fixed
level, a fixed row-group size, dictionary encoding and statistics on, page index off. The ``created_by``
string names the pyarrow version, so bytes are identical for the same software (the MANIFEST records it).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

SHARD = "train-00000-of-00001.parquet"
ROW_GROUP_ROWS = 131_072
ZSTD_LEVEL = 9


def write_parquet(frame: pl.DataFrame, path: Path) -> None:
    """Write ``frame`` to ``path`` with fixed settings (the caller makes it atomic)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        frame.to_arrow(),
        path,
        row_group_size=ROW_GROUP_ROWS,
        compression="zstd",
        compression_level=ZSTD_LEVEL,
        use_dictionary=True,
        write_statistics=True,
        write_page_index=False,
        store_schema=True,
    )


def data_file(config: str) -> str:
    """The path of a config's single shard inside the dataset folder."""
    return f"data/{config}/{SHARD}"
