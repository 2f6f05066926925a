"""Shared terminal output for the stage CLIs: one rich console for results, one for errors.

On a terminal tables fit its width; piped (CI logs, ``tee``, a file) they are printed whole, never cut to
80 columns: rich would otherwise assume 80 and truncate every cell that does not fit. Whether output is piped
is the stream's own ``isatty()``: ``FORCE_COLOR`` (or a CI that sets it) colours a log without making it narrow.
A rule (``out.rule(...)``), which spans the console's width, is drawn at most :data:`RULE_WIDTH` wide.
"""

from __future__ import annotations

import sys
from typing import Literal

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.style import Style
from rich.text import Text

PIPED_WIDTH = 100_000  # wider than any table we print: rich then lays tables out at their natural width
RULE_WIDTH = 80  # a rule across a 100,000-column log line helps nobody


class _Console(Console):
    """A console whose rules keep to :data:`RULE_WIDTH` (piped, the console itself is :data:`PIPED_WIDTH` wide)."""

    def rule(
        self,
        title: str | Text = "",
        *,
        characters: str = "─",
        style: str | Style = "rule.line",
        align: Literal["left", "center", "right"] = "center",
    ) -> None:
        """Draw a line with an optional title, at most :data:`RULE_WIDTH` wide."""
        self.print(Rule(title=title, characters=characters, style=style, align=align), width=RULE_WIDTH)


def _is_tty(stderr: bool) -> bool:
    stream = sys.stderr if stderr else sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def _console(stderr: bool) -> Console:
    terminal = _is_tty(stderr)
    return _Console(stderr=stderr, highlight=False, soft_wrap=True, width=None if terminal else PIPED_WIDTH)


out = _console(stderr=False)
err = _console(stderr=True)


def fail_line(message: str) -> None:
    """Print one red error line to standard error; the message is text, never markup (``[collect]`` stays)."""
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True)
