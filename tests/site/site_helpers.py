"""Helpers of the site tests: reading a build's tables, opening the site at a view."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import polars as pl


def table(folder: Path, config: str) -> pl.DataFrame:
    """A config of a build, read from its parquet."""
    return pl.read_parquet(folder / "data" / config / "train-00000-of-00001.parquet")


def all_tier(folder: Path, base: str) -> pl.DataFrame:
    """The ``*_all`` config of a build when it has one, else the default one."""
    return table(folder, f"{base}_all") if (folder / "data" / f"{base}_all").is_dir() else table(folder, base)


def column(frame: pl.DataFrame, *names: str) -> str:
    """The first of ``names`` that ``frame`` has (columns renamed by contract 2 read under either name)."""
    return next(n for n in names if n in frame.columns)


def open_view(page: Any, site: Path, state: str) -> None:
    """Load the site's index.html from the folder with ``state`` as its URL hash, and wait until it is drawn."""
    page.goto(f"{(site / 'index.html').as_uri()}#{state}")
    page.wait_for_selector("body[data-ready]")


def download(page: Any, selector: str) -> str:
    """Click a download button and return the downloaded file's text."""
    with page.expect_download() as info:
        page.click(selector)
    return Path(info.value.path()).read_text(encoding="utf-8")


def read_csv(text: str) -> list[dict[str, str]]:
    """A downloaded CSV as rows of strings."""
    return list(csv.DictReader(io.StringIO(text)))


def show_all(page: Any) -> None:
    """Press every 'Show all' button (views draw their first charts, bars or rows, then offer the rest)."""
    while page.locator("button.more").count():
        page.locator("button.more").first.click()
