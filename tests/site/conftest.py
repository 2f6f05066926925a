"""Fixtures of the site tests: one build of the repository's data."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecocompute.publish.build import build
from ecocompute.publish.inputs import Source

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``publish build`` of the repository's submissions/ (the site is written into its site/ folder)."""
    out = tmp_path_factory.mktemp("build") / "dataset"
    build([Source.at(REPO / "submissions")], out)
    return out
