"""Shared terminal output for the stage CLIs: one rich console for results, one for errors."""

from __future__ import annotations

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def fail_line(message: str) -> None:
    """Print one red error line to standard error."""
    err.print(f"[bold red]error:[/] {message}", markup=True)
