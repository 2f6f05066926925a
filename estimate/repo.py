"""The artifact built from a checkout's own data (``submissions/``, and ``runs/`` while it holds runs beyond the gate).

The shipped ``estimate/data/artifact.json`` is this build; a test fails when the two differ
(``python -m ecocompute.estimate.repo`` rewrites it).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from ecocompute.estimate.artifact import ARTIFACT
from ecocompute.estimate.build import build_artifact, write_artifact

SHIPPED = Path(__file__).resolve().parent / "data" / ARTIFACT


def repo_artifact(root: Path, version: str | None = None) -> dict[str, Any]:
    """Every measurement of the checkout at ``root`` in the dataset's all tier, and the literature tier.

    The rows are the ones ``publish build`` would write into ``measurements_all``/``submissions_all`` (the same
    gather and configs), from ``submissions/`` and, while it still holds runs, ``runs/``.
    """
    from ecocompute.publish.build import gather
    from ecocompute.publish.cache import RowCache
    from ecocompute.publish.configs import write_configs
    from ecocompute.publish.inputs import Source
    from ecocompute.publish.versions import resolve_version

    submissions = root / "submissions"
    signers = submissions / "allowed_signers"
    runs = root / "runs"
    sources = [Source.at(submissions, signers)]
    if runs.is_dir() and any(runs.rglob("*.json")):
        sources.append(Source.at(runs, signers))
    with tempfile.TemporaryDirectory(prefix="ecocompute-estimate-") as tmp:
        cache = RowCache(Path(tmp) / "cache")
        gathered, _ = gather(sources, cache)
        tables = write_configs(cache, [v.key for v in gathered.kept], Path(tmp) / "configs")
        measurements, subs = tables.read("measurements_all"), tables.read("submissions_all")
    return build_artifact(measurements, subs, version=resolve_version(version))


def main(argv: list[str]) -> int:
    """Rewrite the shipped artifact from the checkout the package lives in (or the folder given)."""
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    write_artifact(repo_artifact(root), SHIPPED)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
