"""MANIFEST.json: what a build used (each submission with its content hash) and what it wrote (each file's hash)."""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from ecocompute.publish.inputs import Accepted, Gathered
from ecocompute.schema.models import SCHEMA_VERSION

MANIFEST = "MANIFEST.json"
GENERATOR_PACKAGES = ("ecocompute", "polars", "pyarrow", "matplotlib")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def submission_entry(item: Accepted) -> dict[str, Any]:
    """A submission as the manifest lists it."""
    p = item.submission.payload
    return {
        "path": item.name,
        "submission_id": p.submission_id,
        "content_sha256": item.content_sha256,
        "windows": sum(len(m.windows) for m in p.measurements),
        "warmup_windows": sum(len(m.warmup) for m in p.measurements),
        "example": p.example,
    }


def file_entries(folder: Path) -> list[dict[str, Any]]:
    """Every file under ``folder`` except the manifest, with its size and SHA-256, in path order."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)
    return [
        {"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size, "sha256": file_sha256(p)} for p in files
    ]


def manifest_text(folder: Path, version: str, gathered: Gathered, include_examples: bool) -> str:
    """The manifest of a finished build folder (no timestamps, so equal inputs give equal bytes).

    ``beyond_gate`` lists the runs the card's "Beyond the gate" section pools with the submissions (not in the
    tables); ``counts`` counts the dataset's submissions only.
    """
    submissions = [submission_entry(item) for item in gathered.accepted]
    document = {
        "dataset": "ecocompute",
        "version": version,
        "schema_version": SCHEMA_VERSION,
        "generator": {name: _version(name) for name in GENERATOR_PACKAGES},
        "include_examples": include_examples,
        "counts": {
            "submissions": len(submissions),
            "windows": sum(s["windows"] for s in submissions),
            "warmup_windows": sum(s["warmup_windows"] for s in submissions),
        },
        "submissions": submissions,
        "skipped_examples": list(gathered.skipped_examples),
        "beyond_gate": [submission_entry(item) for item in gathered.beyond_gate],
        "files": file_entries(folder),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def read_manifest(folder: Path) -> dict[str, Any]:
    """The parsed MANIFEST.json of a build folder."""
    data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{folder / MANIFEST} is not a JSON object")
    return data


def verify_folder(folder: Path) -> dict[str, Any]:
    """Check that ``folder`` is a complete, unchanged build: every file listed with its hash, nothing else."""
    from ecocompute.schema.errors import UsageError

    if not (folder / MANIFEST).is_file():
        raise UsageError(f"{folder} has no {MANIFEST}: pass a folder made by `ecocompute publish build`")
    try:
        manifest = read_manifest(folder)
        listed = {entry["path"]: entry["sha256"] for entry in manifest["files"]}
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{folder / MANIFEST} is not a build manifest ({exc}): build again") from None
    actual = {entry["path"]: entry["sha256"] for entry in file_entries(folder)}
    if actual != listed:
        changed = sorted(set(actual.items()) ^ set(listed.items()))
        names = sorted({path for path, _ in changed})
        raise UsageError(f"{folder} differs from its {MANIFEST} ({', '.join(names[:5])}): build again, do not edit")
    return manifest
