"""Shared terminal output for the stage CLIs: one rich console for results, one for errors.

On a terminal tables fit its width; piped (CI logs, ``tee``, a file) they are printed whole, never cut to
80 columns: rich would otherwise assume 80 and truncate every cell that does not fit.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

PIPED_WIDTH = 100_000  # wider than any table we print: rich then lays tables out at their natural width


def _console(stderr: bool) -> Console:
    terminal = Console(stderr=stderr).is_terminal
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=None if terminal else PIPED_WIDTH)


out = _console(stderr=False)
err = _console(stderr=True)


def fail_line(message: str) -> None:
    """Print one red error line to standard error; the message is text, never markup (``[collect]`` stays)."""
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True)
