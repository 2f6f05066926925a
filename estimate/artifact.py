"""The estimator's artifact: one versioned JSON file, the only thing the engine reads."""

from __future__ import annotations

import csv
import json
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ecocompute.schema.errors import UsageError

SCHEMA_VERSION = "1.1"  # 1.1: groups and runs carry their engine; a 1.0 artifact reads as transformers'
ARTIFACT = "artifact.json"


def gpu_table() -> list[dict[str, Any]]:
    """The cards the estimator knows, with their architecture and aliases (``estimate/data/gpus.csv``)."""
    return [{"name": name, "arch": arch, "aliases": list(aliases)} for name, arch, aliases in _gpu_rows()]


@cache
def _gpu_rows() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """The CSV read once per process (a build resolves every run's GPU through it)."""
    text = resources.files("ecocompute.estimate").joinpath("data", "gpus.csv").read_text(encoding="utf-8")
    return tuple(
        (row["name"], row["arch"], tuple(a for a in row["aliases"].split(";") if a))
        for row in csv.DictReader(text.splitlines())
    )


def check_artifact(data: Any, where: str) -> dict[str, Any]:
    """``data`` if it is an artifact of a schema version this release reads, else UsageError."""
    if not isinstance(data, dict) or data.get("kind") != "ecocompute-estimate-artifact":
        raise UsageError(f"{where} is not an ecocompute estimate artifact")
    major = str(data.get("schema_version", "")).split(".")[0]
    if major != SCHEMA_VERSION.split(".")[0]:
        raise UsageError(
            f"{where} has artifact schema {data.get('schema_version')!r}; this release reads {SCHEMA_VERSION}: "
            "rebuild it with `ecocompute publish build` or upgrade ecocompute"
        )
    return data


@lru_cache(maxsize=8)
def _load_path(path: str, mtime_ns: int) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the artifact {path}: {exc}") from exc
    return check_artifact(data, path)


@lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    text = resources.files("ecocompute.estimate").joinpath("data", ARTIFACT).read_text(encoding="utf-8")
    return check_artifact(json.loads(text), "the shipped artifact")


def load_artifact(path: Path | str | None = None) -> dict[str, Any]:
    """The artifact at ``path`` (a file, or a dataset folder holding ``artifact.json``); the shipped one if None.

    Loaded once per file version and cached; treat the result as read-only.
    """
    if path is None:
        return _shipped()
    target = Path(path)
    if target.is_dir():
        target = target / ARTIFACT
    if not target.is_file():
        raise UsageError(
            f"artifact {target} does not exist: pass a file or a folder built by `ecocompute publish build`"
        )
    return _load_path(str(target.resolve()), target.stat().st_mtime_ns)
