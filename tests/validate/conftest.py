"""Fixtures of the validator's tests: a submissions tree holding one valid, signed submission."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from validate_helpers import Tree


@pytest.fixture
def tree(signed_file: Path, keys: Any) -> Tree:
    """The shared ``signed_file`` fixture, seen as a tree."""
    return Tree(signed_file.parents[2], signed_file, keys.allowed_signers)
