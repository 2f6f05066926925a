"""Commands of this stage (none yet)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
