"""Linting files: read, parse, scan, check, silence, place; in worker processes when there are many files."""

from __future__ import annotations

import ast
import multiprocessing
import os
import re
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
# Every rule needs a model load in the file (ECO103/ECO104 read the precision and size of the model a generate()
# call uses from its load), so a file whose text names neither kind of load is not parsed at all.
PIPELINE_CALL = re.compile(r"\bpipeline\s*\(")


def _may_load(text: str) -> bool:
    return "from_pretrained" in text or ("pipeline" in text and PIPELINE_CALL.search(text) is not None)


MAX_BAD_CELLS = 20  # a notebook with more cells that do not parse is reported as not linted
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


def _parse(text: str, path: str, notebook: NotebookSource | None) -> tuple[ast.Module, str]:
    """The tree of a file, and the text it was parsed from.

    In a notebook, top-level ``await`` is allowed and a cell that does not parse is left out (its lines blanked,
    so the other cells keep their places). Raises SyntaxError when nothing parses.
    """
    flags = ast.PyCF_ONLY_AST | (ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if notebook else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        for _ in range(MAX_BAD_CELLS if notebook else 1):
            try:
                return compile(text, path, "exec", flags, dont_inherit=True), text
            except SyntaxError as exc:
                if notebook is None or not exc.lineno or (bad := notebook.origin(exc.lineno)) is None:
                    raise
                lines = text.split("\n")
                for number, origin in enumerate(notebook.origins, start=1):
                    if origin.cell == bad.cell:
                        lines[number - 1] = ""
                text = "\n".join(lines)
        return compile(text, path, "exec", flags, dont_inherit=True), text


def lint_text(text: str, path: str, config: LintConfig, evidence: Evidence) -> FileReport:
    """Lint the text of one file (a notebook's JSON when ``path`` ends in .ipynb)."""
    notebook: NotebookSource | None = None
    if path.endswith(".ipynb"):
        try:
            notebook = read_notebook(text, path)
        except UsageError as exc:
            return FileReport(path, error=str(exc))
        text = notebook.text
    if not _may_load(text):
        return FileReport(path)
    try:
        tree, text = _parse(text, path, notebook)
        facts = scan(tree)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        return FileReport(path, error=f"cannot parse{where}: {getattr(exc, 'msg', exc)}")
    except RecursionError:
        return FileReport(path, error="cannot parse: expressions nested too deeply for Python's parser")
    table = noqa.suppressions(text)
    lines = text.splitlines()
    findings = []
    for hit in check(facts, config.settings, evidence, config.select, notebook.line_name if notebook else None):
        if noqa.silenced(hit.rule, (hit.line, hit.end_line), table):
            continue
        line, end_line, cell, cell_line = hit.line, hit.end_line, None, None
        origin = notebook.origin(hit.line) if notebook else None
        if origin is not None:
            line, cell, cell_line = origin.file_line, origin.cell, origin.cell_line
            end = notebook.origin(hit.end_line) if notebook else None
            end_line = end.file_line if end else line
        severity = RULES[hit.rule].severity
        column = _char_column(lines, hit.line, hit.column)
        findings.append(Finding(hit.rule, path, line, column, hit.message, severity, end_line, cell, cell_line))
    return FileReport(path, findings)


def _char_column(lines: list[str], line: int, byte_column: int) -> int:
    """The 1-based column in characters of a 1-based column in UTF-8 bytes (what ``ast`` gives)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if text.isascii():
        return byte_column
    return len(text.encode("utf-8")[: byte_column - 1].decode("utf-8", "replace")) + 1


def lint_file(path: Path, config: LintConfig, evidence: Evidence) -> FileReport:
    """Lint one file on disk."""
    name = path.as_posix()
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return FileReport(name, error=f"cannot read: {exc}")
    return lint_text(text, name, config, evidence)


_WORKER: dict[str, tuple[LintConfig, Evidence]] = {}  # set before the pool forks, so workers inherit its caches


def _chunk(files: list[Path]) -> list[FileReport]:
    config, evidence = _WORKER["run"]
    return [lint_file(f, config, evidence) for f in files]


def _start_worker(config: LintConfig, evidence: Evidence | None) -> None:
    if evidence is None:  # a spawned worker (no fork): its own evidence, caches filled as it goes
        evidence = Evidence(config.settings.gpu)
    _WORKER["run"] = (config, evidence)


def lint_files(
    files: list[Path], config: LintConfig, evidence: Evidence, jobs: int | None = None
) -> Iterator[FileReport]:
    """Reports for ``files`` in their order; in ``jobs`` worker processes (default: one per CPU) for many files."""
    workers = jobs or os.cpu_count() or 1
    if workers <= 1 or len(files) < PARALLEL_FROM:
        for f in files:
            yield lint_file(f, config, evidence)
        return
    chunks = [files[i : i + CHUNK] for i in range(0, len(files), CHUNK)]
    _ = evidence.artifact  # loaded once here; forked workers share it
    forked = multiprocessing.get_start_method() == "fork"
    with ProcessPoolExecutor(
        max_workers=workers, initializer=_start_worker, initargs=(config, evidence if forked else None)
    ) as pool:
        for reports in pool.map(_chunk, chunks):
            yield from reports
