"""Help that is never cut: piped, it is laid out :data:`PIPED_HELP_WIDTH` wide, and a cell folds, never ``…``.

typer renders ``--help`` with rich at the terminal's width. Piped (a CI log, ``| less``, ``| cat``) with no
``COLUMNS``, rich assumes 80 columns and cuts every cell that does not fit with ``…``: ``--submissions,--r…``,
``[default: ~/.cache/ecocomp…]``. :func:`install` makes piped help wider and every cell of its tables fold a
word too long for its column onto the next line, on a terminal too. ``COLUMNS`` or typer's ``TERMINAL_WIDTH``
still set the width where given. typer imports its rich help module only to show help; so does this.
"""

from __future__ import annotations

import os
from typing import Any

from rich.columns import Columns
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

PIPED_HELP_WIDTH = 120
"""Columns of piped help: room for an option, its metavar and a useful line of help side by side."""


class FoldingTable(Table):
    """A rich table whose columns fold a too-long word instead of cutting it with ``…``."""

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        """Add a row; every column (typer lets rich create them here) folds."""
        super().add_row(*renderables, **kwargs)
        for column in self.columns:
            column.overflow = "fold"


class FoldingColumns(Columns):
    """The pieces of an option's help (text, ``[default: ...]``, ``[required]``) folding a too-long word."""

    def __init__(self, renderables: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(renderables, *args, **kwargs)
        for renderable in self.renderables:
            if isinstance(renderable, Text):
                renderable.overflow = "fold"


def _widen(console: Console, width_set: bool) -> Console:
    isatty = getattr(console.file, "isatty", None)
    piped = not (isatty is not None and isatty())
    if piped and not width_set and not os.environ.get("COLUMNS"):
        console.width = PIPED_HELP_WIDTH
    return console


def _patch_rich_help() -> None:
    from typer import rich_utils

    if getattr(rich_utils, "_ecocompute_help_whole", False):
        return
    original = rich_utils._get_rich_console

    def console(stderr: bool = False) -> Console:
        return _widen(original(stderr), width_set=rich_utils.MAX_WIDTH is not None)

    rich_utils._get_rich_console = console
    rich_utils.Table = FoldingTable  # type: ignore[attr-defined]
    rich_utils.Columns = FoldingColumns  # type: ignore[attr-defined]
    rich_utils._ecocompute_help_whole = True  # type: ignore[attr-defined]


def install() -> None:
    """Make every typer help of this process whole when piped (idempotent; typer's help module loads at help)."""
    for cls in (TyperCommand, TyperGroup):
        original = cls.format_help
        if getattr(original, "_ecocompute_help_whole", False):
            continue

        def format_help(self: Any, ctx: Any, formatter: Any, _original: Any = original) -> None:
            _patch_rich_help()
            _original(self, ctx, formatter)

        format_help._ecocompute_help_whole = True  # type: ignore[attr-defined]
        cls.format_help = format_help  # type: ignore[method-assign]
