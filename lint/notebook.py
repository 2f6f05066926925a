"""Jupyter notebooks: their code cells as one Python source, and the way back from its lines to the notebook.

IPython magics (``%pip``, ``!ls``, ``%%time``) are blanked so the rest parses; line numbers are kept. A source line
is mapped to the line of the notebook's JSON text that holds it, when the file is written one source line per JSON
line (as Jupyter writes it), else to the line of the cell's ``"source"`` key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ecocompute.schema.errors import UsageError

_SOURCE_KEY = re.compile(r'^\s*"source"\s*:\s*(\[?)')


@dataclass(frozen=True)
class Origin:
    """Where a line of the joined source comes from.

    The cell (1-based, among all cells) and its line in the
    cell (1-based), and the line of the notebook file (1-based).
    """

    cell: int
    cell_line: int
    file_line: int


@dataclass(frozen=True)
class NotebookSource:
    """The code cells of a notebook joined into one source, with each line's :class:`Origin`."""

    text: str
    origins: list[Origin]

    def origin(self, line: int) -> Origin | None:
        """The origin of a 1-based line of :attr:`text`."""
        return self.origins[line - 1] if 0 < line <= len(self.origins) else None

    def line_name(self, line: int) -> str:
        """How a message names a line of :attr:`text`: ``cell 6, line 2``."""
        origin = self.origin(line)
        return f"cell {origin.cell}, line {origin.cell_line}" if origin else f"line {line}"


def _cell_lines(cell: dict[str, object]) -> list[str]:
    source = cell.get("source", "")
    text = "".join(str(s) for s in source) if isinstance(source, list) else str(source)
    return text.split("\n")


def _blank_magic(line: str) -> str:
    stripped = line.lstrip()
    return "" if stripped.startswith(("%", "!", "?")) or (stripped.endswith("?") and " " not in stripped) else line


def _source_key_lines(raw: str) -> list[tuple[int, bool]]:
    """For each cell in order, the 1-based JSON line of its ``"source"`` key and whether a list opens there."""
    found = []
    for number, line in enumerate(raw.splitlines(), start=1):
        match = _SOURCE_KEY.match(line)
        if match:
            found.append((number, bool(match.group(1)) and not line.rstrip().endswith("]")))
    return found


def read_notebook(raw: str, path: str) -> NotebookSource:
    """Join a notebook's code cells; raise :class:`UsageError` when it is not notebook JSON."""
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise UsageError(f"{path} is not a notebook (invalid JSON: {exc})") from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise UsageError(f"{path} is not a notebook (no cells list)")
    keys = _source_key_lines(raw)
    aligned = len(keys) == len(cells)
    lines: list[str] = []
    origins: list[Origin] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        key_line, listed = keys[index] if aligned else (1, False)
        for number, line in enumerate(_cell_lines(cell), start=1):
            lines.append(_blank_magic(line))
            origins.append(Origin(index + 1, number, key_line + number if listed else key_line))
    return NotebookSource("\n".join(lines) + "\n", origins)
