"""Linting files: read, parse, scan, check, silence, place; in worker processes when there are many files."""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ecocompute.lint import noqa
from ecocompute.lint.config import LintConfig
from ecocompute.lint.evidence import Evidence
from ecocompute.lint.findings import RULES, Finding
from ecocompute.lint.notebook import NotebookSource, read_notebook
from ecocompute.lint.rules import check
from ecocompute.lint.scan import scan
from ecocompute.schema.errors import UsageError

SUFFIXES = (".py", ".ipynb")
SKIP_DIRS = frozenset(
    {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".tox", "site-packages"}
)
# A file none of whose text names one of these cannot trigger any rule, so it is not parsed at all.
TRIGGERS = ("from_pretrained", "generate", "pipeline")
PARALLEL_FROM = 200  # files: below this, worker start-up costs more than it saves
CHUNK = 64


@dataclass
class FileReport:
    """One file's findings, or why it could not be linted."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None


def discover(paths: Iterable[Path]) -> list[Path]:
    """Python files and notebooks named or under the folders named (skipping virtualenvs, caches, hidden folders)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                files += [Path(root) / n for n in sorted(names) if n.endswith(SUFFIXES)]
        elif path.is_file():
            files.append(path)
        else:
            raise UsageError(f"{path} does not exist: pass Python files, notebooks or folders")
    return files


def lint_text(text: str, path: str, config: LintConfig, evidence: Evidence) -> FileReport:
    """Lint the text of one file (a notebook's JSON when ``path`` ends in .ipynb)."""
    notebook: NotebookSource | None = None
    if path.endswith(".ipynb"):
        try:
            notebook = read_notebook(text, path)
        except UsageError as exc:
            return FileReport(path, error=str(exc))
        text = notebook.text
    if not any(word in text for word in TRIGGERS):
        return FileReport(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        return FileReport(path, error=f"cannot parse{where}: {getattr(exc, 'msg', exc)}")
    table = noqa.suppressions(text)
    findings = []
    for hit in check(scan(tree), config.settings, evidence, config.select, notebook.line_name if notebook else None):
        if noqa.silenced(hit.rule, (hit.line, hit.end_line), table):
            continue
        line, end_line, cell, cell_line = hit.line, hit.end_line, None, None
        origin = notebook.origin(hit.line) if notebook else None
        if origin is not None:
            line, cell, cell_line = origin.file_line, origin.cell, origin.cell_line
            end = notebook.origin(hit.end_line) if notebook else None
            end_line = end.file_line if end else line
        severity = RULES[hit.rule].severity
        findings.append(Finding(hit.rule, path, line, hit.column, hit.message, severity, end_line, cell, cell_line))
    return FileReport(path, findings)


def lint_file(path: Path, config: LintConfig, evidence: Evidence) -> FileReport:
    """Lint one file on disk."""
    name = path.as_posix()
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return FileReport(name, error=f"cannot read: {exc}")
    return lint_text(text, name, config, evidence)


def _chunk(args: tuple[list[Path], LintConfig]) -> list[FileReport]:
    files, config = args
    evidence = Evidence(config.settings.gpu)
    return [lint_file(f, config, evidence) for f in files]


def lint_files(
    files: list[Path], config: LintConfig, evidence: Evidence, jobs: int | None = None
) -> Iterator[FileReport]:
    """Reports for ``files`` in their order; in ``jobs`` worker processes (default: one per CPU) for many files."""
    workers = jobs or os.cpu_count() or 1
    if workers <= 1 or len(files) < PARALLEL_FROM:
        for f in files:
            yield lint_file(f, config, evidence)
        return
    chunks = [(files[i : i + CHUNK], config) for i in range(0, len(files), CHUNK)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for reports in pool.map(_chunk, chunks):
            yield from reports
