"""The artifact built from a checkout's own data (``submissions/``, and ``runs/`` while it holds runs beyond the gate).

The shipped ``estimate/data/artifact.json`` is this build; a test fails when the two differ
(``python -m ecocompute.estimate.repo`` rewrites it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ecocompute.estimate.artifact import ARTIFACT
from ecocompute.estimate.build import build_artifact, write_artifact

SHIPPED = Path(__file__).resolve().parent / "data" / ARTIFACT


def repo_artifact(root: Path, version: str | None = None) -> dict[str, Any]:
    """Every accepted measurement of the checkout at ``root`` (both tiers) and the literature tier, as an artifact."""
    from ecocompute.publish.inputs import Source, gather
    from ecocompute.publish.tables import build_tables
    from ecocompute.publish.versions import resolve_version

    submissions = root / "submissions"
    signers = submissions / "allowed_signers"
    runs = root / "runs"
    beyond = [Source.at(runs, signers)] if runs.is_dir() and any(runs.rglob("*.json")) else []
    gathered = gather([Source.at(submissions, signers)], beyond_gate=beyond)
    tables = build_tables([*gathered.accepted, *gathered.beyond_gate])
    return build_artifact(tables.measurements, tables.submissions, version=resolve_version(version))


def main(argv: list[str]) -> int:
    """Rewrite the shipped artifact from the checkout the package lives in (or the folder given)."""
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    write_artifact(repo_artifact(root), SHIPPED)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
