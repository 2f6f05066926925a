"""Reading the published dataset: a local build folder or a Hugging Face Hub dataset id."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ecocompute.analysis.defaults import ALL_CONFIGS
from ecocompute.schema.errors import UsageError


def _read_local(folder: Path, config: str) -> pl.DataFrame:
    files = sorted((folder / "data" / config).glob("*.parquet"))
    if not files:
        raise UsageError(f"{folder} has no data/{config}/*.parquet: pass a folder built by `ecocompute publish build`")
    return pl.concat([pl.read_parquet(f) for f in files], how="vertical")


def _read_hub(dataset_id: str, config: str) -> pl.DataFrame:
    try:
        import datasets
    except ImportError:
        raise UsageError(
            "reading from the Hub needs the `datasets` package: pip install 'ecocompute[publish]'"
        ) from None
    try:
        loaded = datasets.load_dataset(dataset_id, config, split="train")
    except Exception as exc:  # datasets raises many kinds; each becomes one actionable line
        raise UsageError(
            f"cannot load {dataset_id!r} ({config}) from the Hub: {exc}; pass a local folder or a dataset id"
        ) from None
    result = loaded.to_polars()
    if not isinstance(result, pl.DataFrame):  # pragma: no cover - datasets returns a DataFrame here
        raise UsageError(f"{dataset_id!r} ({config}) did not load as a table")
    return result


def load_table(source: str | Path, config: str) -> pl.DataFrame:
    """One config (``measurements``, ``windows_all``, ...) from a build folder or a Hub dataset id."""
    if config not in ALL_CONFIGS:
        raise UsageError(f"config {config!r} is not one of {', '.join(ALL_CONFIGS)}")
    folder = Path(source)
    if folder.is_dir():
        return _read_local(folder, config)
    if folder.exists() or str(source).startswith((".", "/")) or str(source).count("/") != 1:
        raise UsageError(f"{source} is neither a dataset folder nor a Hub dataset id like ORG/NAME")
    return _read_hub(str(source), config)
