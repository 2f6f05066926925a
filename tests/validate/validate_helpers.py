"""Helpers of the validator's tests (a uniquely named module, importable from every test file here)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

NOW = datetime(2026, 12, 1, tzinfo=UTC)
TESTS = Path(__file__).resolve().parents[1]
EXAMPLE = TESTS / "data" / "example" / "submission.json"
EXAMPLE_SIGNERS = TESTS / "data" / "example" / "allowed_signers"
EXAMPLE_RELPATH = Path("example-user/synthetic-example-gpu/20261130T120000Z-5feceb66.json")


@dataclass(frozen=True)
class Tree:
    """A tmp submissions/ tree, its one valid file and the allowed_signers file that verifies it."""

    root: Path
    file: Path
    allowed_signers: Path


def example_tree(tmp_path: Path) -> Tree:
    """The committed example submission copied into a tmp submissions tree at its right path."""
    root = tmp_path / "submissions"
    target = root / EXAMPLE_RELPATH
    target.parent.mkdir(parents=True)
    shutil.copyfile(EXAMPLE, target)
    return Tree(root, target, EXAMPLE_SIGNERS)
