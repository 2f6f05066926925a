"""MANIFEST.json: what a build used (each submission with its content hash) and what it wrote (each file's hash)."""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from ecocompute.publish.inputs import Gathered, Verdict
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


def submission_entry(v: Verdict) -> dict[str, Any]:
    """A submission as the manifest lists it."""
    return {
        "path": v.name,
        "submission_id": v.submission_id,
        "content_sha256": v.content_sha256,
        "windows": v.windows,
        "warmup_windows": v.warmup_windows,
        "example": v.example,
        "passes_cv_gate": v.passes_cv_gate,
    }


def file_entries(folder: Path) -> list[dict[str, Any]]:
    """Every file under ``folder`` except the manifest, with its size and SHA-256, in path order."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)
    return [
        {"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size, "sha256": file_sha256(p)} for p in files
    ]


def manifest_text(folder: Path, version: str, gathered: Gathered) -> str:
    """The manifest of a finished build folder (no timestamps, so equal inputs give equal bytes).

    ``submissions`` lists every file whose rows are in the ``_all`` configs, each with ``passes_cv_gate``;
    ``counts`` counts the gated tier and the whole; ``rejected`` names the files ``rejections.json`` details.
    """
    submissions = [submission_entry(v) for v in gathered.kept]
    gated = [s for s in submissions if s["passes_cv_gate"]]
    document = {
        "dataset": "ecocompute",
        "version": version,
        "schema_version": SCHEMA_VERSION,
        "generator": {name: _version(name) for name in GENERATOR_PACKAGES},
        "include_examples": gathered.include_examples,
        "counts": {
            "submissions": len(gated),
            "windows": sum(s["windows"] for s in gated),
            "warmup_windows": sum(s["warmup_windows"] for s in gated),
            "submissions_all": len(submissions),
            "windows_all": sum(s["windows"] for s in submissions),
            "rejected": len(gathered.rejected),
        },
        "submissions": submissions,
        "skipped_examples": list(gathered.skipped_examples),
        "rejected": [v.name for v in gathered.rejected],
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
