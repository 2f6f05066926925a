"""What the linter reports: a finding of one rule at one place, and the rules' stable ids.

An id never changes meaning once released; docs/lint/<ID>.md documents each rule in :data:`RULES`, and a test
keeps the two in agreement.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.IntEnum):
    """How much a finding matters; ``--severity`` and the config's ``severity`` pick the level that fails."""

    NOTE = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        """``"warning"`` -> ``Severity.WARNING``; a bad name raises ``ValueError`` listing the valid ones."""
        try:
            return cls[text.strip().upper()]
        except KeyError:
            valid = ", ".join(s.name.lower() for s in cls)
            raise ValueError(f"unknown severity {text!r}: use one of {valid}") from None

    @property
    def label(self) -> str:
        """The lowercase name, as written in config files, JSON and SARIF (``note``, ``warning``, ``error``)."""
        return self.name.lower()


@dataclass(frozen=True)
class Rule:
    """One rule: a stable id, a short name, its default severity and a one-line summary."""

    id: str
    name: str
    severity: Severity
    summary: str

    @property
    def doc_path(self) -> str:
        """The rule's page, relative to the repository root."""
        return f"docs/lint/{self.id}.md"


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule(
            "ECO101",
            "int8-default-threshold",
            Severity.ERROR,
            "bitsandbytes 8-bit loading with the default outlier threshold (llm_int8_threshold=6.0)",
        ),
        Rule(
            "ECO102",
            "nf4-below-crossover",
            Severity.WARNING,
            "4-bit loading of a model below the measured crossover for the target card and stack",
        ),
        Rule(
            "ECO103",
            "batch1-generate-loop",
            Severity.WARNING,
            "generation at batch size 1 in a loop over prompts, where batching measured large cuts",
        ),
        Rule(
            "ECO104",
            "generate-without-static-cache",
            Severity.WARNING,
            "generate() without a static cache and torch.compile, where compiling measured large cuts",
        ),
        Rule(
            "ECO105",
            "mixed-8bit-4bit",
            Severity.NOTE,
            "8-bit and 4-bit loads mixed in one file",
        ),
    )
}


@dataclass(frozen=True)
class Finding:
    """One finding of one rule at one place.

    ``line`` and ``column`` are 1-based, in the file on disk. In a notebook ``line`` is the line of
    the notebook's JSON that holds the source line, and ``cell``/``cell_line`` say where it is in the notebook
    (the code cell's 1-based index among all cells, the line within it).
    """

    rule: str
    path: str
    line: int
    column: int
    message: str
    severity: Severity
    end_line: int | None = None
    cell: int | None = None
    cell_line: int | None = None

    @property
    def where(self) -> str:
        """``path:line:column``, with the notebook cell when there is one."""
        cell = f" (cell {self.cell}, line {self.cell_line})" if self.cell is not None else ""
        return f"{self.path}:{self.line}:{self.column}{cell}"

    @property
    def rule_name(self) -> str:
        """The rule's short name."""
        return RULES[self.rule].name
